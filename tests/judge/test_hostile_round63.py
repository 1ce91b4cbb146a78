"""Round 63 (a fresh tester): bounded time and memory, with legal inputs that are large and costs that grow
faster than them. Found:

1. The check of step 4 and step 3 (``unhalted``: :func:`simkit.judge.order.inversions` and
   :func:`simkit.judge.halts.unhalted`) read a response's ids again for each write it judged:
   ``Attempts.page_of`` built the whole page's ids (and searched them) for every receipt and effect,
   ``attempt_page`` and the detail line built them to read the cursor. A consumer that processes one page of P
   events last to first, keeping ``applied_position`` at the loaded prefix (nothing lost, one inversion), made
   the check cost P²: ``simkit run`` took 1.9, 7.7 and 30.8 s at 5,000, 10,000 and 20,000 events (page
   ``C1`` alone; the run itself 0.1-0.4 s), and a page of the 1,000,000 positions a file may carry would pass
   the 900 s guard. A page served last to first to a consumer that skips step 3 likewise (0.8, 3.2, 13.7 s
   at 2,500 to 10,000). Now the cursors come from their columns and a response's ids are read once into a
   set (the last two asked are kept): 0.1, 0.2, 0.5 s. Counted here, not timed: the ids read. The same
   check copied a worker's responses before each write it judged, so the page served after R stuck answers
   cost R·P more (3.7 s of 9.9 at 80,000 answers and 20,000 events; now 2.1 s in all): the rows it looked at,
   counted.
2. Invariants 1 and 5 judge a write that publishes a page's ``next_cursor`` by every event of that page, and
   read all of its outcomes (and, with one event left undone, all of its ids) at each such write: a consumer
   that publishes one page's ``next_cursor`` again and again with unfenced writes (each a request that costs
   the run nothing per event) made the check cost writes times events: 3.9 and 15.3 s for 1,000 and 4,000
   writes over a 10,000-event page. A row published again now keeps the events left undone the time before
   (writes are judged in sequence order: done stays done), and reads only those: 0.2 s.
3. ``simkit serve``'s memory query keeps each namespace's record ids in order and inserts those added since
   its last page one by one (:class:`simkit.service.memory.Order`), each insertion moving the list: records
   added in bulk (``/_simkit/append``, or ``mutate`` in the model) made the next page cost their number times
   the namespace's. 50,000, 100,000 and 200,000 mutations (ids added last to first) took 1.5, 3.3 and 6.1 s,
   the page after them 0.26, 0.99 and 4.03 s, where the docs say a page costs its ``scan_limit``. More than
   an eighth new are now sorted with the rest: 0.01 s. Counted here: the insertions.
4. An invariant violation's ``detail`` quotes the cursor a write published, and the verdict kept it whole for
   each write: a consumer publishing two cursors of 1 MiB in turn (two strings, shared by its requests) made
   ``simkit run`` hold a megabyte a write, 511 MB after 400 writes and a megabyte more for each (its text
   output showed 1,000 characters of each). A detail past 1,000 characters now keeps its start and its length,
   as the text output shows it: 114 MB. Measured here: the details' length.
"""
from __future__ import annotations

import bisect
import json

import pytest

import simkit
from simkit.judge import halts
from simkit.model import Page
from simkit.ops import Fetch, Load, Overwrite, Wait
from simkit.service import DEV_SCOPE, DEV_TENANT, dev_service
from simkit.world import provider

EVENTS = 300


def _page(positions: list[int]) -> simkit.Scenario:
    return simkit.parse({"name": "one_page", "pages": [
        {"cursor": "C1", "positions": positions, "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"}]})


class LastToFirst(simkit.Consumer):
    """Processes each page's events last to first, each commit keeping the loaded ``applied_position``."""

    def resulting_applied_position(self, event, page, applied_position):
        return applied_position

    def process(self, checkpoint, page, receipts):
        backwards = Page(page.cursor, tuple(reversed(page.events)), page.next_cursor)
        return (yield from super().process(checkpoint, backwards, receipts))


class NoStepThree(simkit.Consumer):
    """Skips step 3's validation, each commit keeping the loaded ``applied_position``."""

    def validate(self, checkpoint, page, ids_at):
        return None

    def resulting_applied_position(self, event, page, applied_position):
        return applied_position


@pytest.mark.parametrize(("consumer", "positions"), [
    (LastToFirst, list(range(1, EVENTS + 1))),        # step 4: written newest first
    (NoStepThree, list(range(EVENTS, 0, -1))),        # step 3: a page out of order, not stopped
])
def test_a_page_written_out_of_order_is_judged_reading_its_ids_once(monkeypatch, consumer, positions):
    sc = _page(positions)
    run = simkit.simulate(sc, consumer)
    reads = []
    ids = provider._PageIds._ids
    monkeypatch.setattr(provider._PageIds, "_ids", lambda self, entry: reads.append(1) or ids(self, entry))
    verdict = simkit.check(run.world)
    assert verdict == run.verdict                   # the same verdict, an inversion of the page named
    assert verdict.unhalted and not verdict.lost
    assert len(reads) <= 10, f"{EVENTS} ids read {len(reads)} times: a few for the page, not one per event"


class _Counted(list):
    """A worker's rows of the provider's log, counting each row read."""

    read = 0

    def __getitem__(self, i):
        got = super().__getitem__(i)
        _Counted.read += len(got) if isinstance(i, slice) else 1
        return got


def test_a_page_written_out_of_order_after_many_fetches_is_judged_reading_few_rows(monkeypatch):
    stuck = 400                                     # answered empty 400 times first: 401 responses before
    sc = simkit.parse({"name": "stuck_page", "timing": {"backoff": 0.01, "time_limit": 1e9}, "pages": [
        {"cursor": "C1", "positions": list(range(1, EVENTS + 1)), "next_cursor": "C2", "stuck": stuck},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"}]})
    run = simkit.simulate(sc, LastToFirst)
    init = halts.Attempts.__init__

    def counting(self, truth):
        init(self, truth)
        self._rows = {worker: _Counted(rows) for worker, rows in self._rows.items()}
    monkeypatch.setattr(halts.Attempts, "__init__", counting)
    _Counted.read = 0
    assert simkit.check(run.world) == run.verdict and run.verdict.unhalted
    assert _Counted.read <= 10 * EVENTS, f"{_Counted.read} rows read: {EVENTS} writes after {stuck} fetches"


class PublishOverAndOver(simkit.Consumer):
    """Processes the first page but its first event, then publishes its ``next_cursor`` and its cursor in
    turn with unfenced writes, 100 times."""

    def run(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        rest = Page(page.cursor, page.events[1:], page.next_cursor)
        yield from self.process(checkpoint, rest, {})
        version = checkpoint.checkpoint_version
        for i in range(100):
            yield Overwrite(page.cursor if i % 2 else page.next_cursor, version + i + 1, 0)
        while True:
            yield Wait("caught_up")


def test_a_page_published_again_and_again_is_judged_reading_its_ids_a_few_times(monkeypatch):
    run = simkit.simulate(_page(list(range(1, EVENTS + 1))), PublishOverAndOver)
    reads = []
    ids = provider._PageIds._ids
    monkeypatch.setattr(provider._PageIds, "_ids", lambda self, entry: reads.append(1) or ids(self, entry))
    verdict = simkit.check(run.world)
    assert verdict == run.verdict
    published = [v for v in verdict.invariant_violations if "published while e1 " in v["detail"]]
    assert len(published) == 50                     # each of the 50 writes publishing C2 named e1, undone
    assert len(reads) <= 5, f"{EVENTS} ids read {len(reads)} times: a few for the page, not one per write"


def test_records_added_in_bulk_are_sorted_once_for_the_next_query_page(monkeypatch):
    svc = dev_service()
    body = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "filter": {"limit": 5}}).encode()
    assert svc.call("/api/v1/memory/query", "Bearer dev", body).status == 200       # the ids held in order
    for i in range(2_000, 0, -1):
        svc.mutate(DEV_TENANT, DEV_SCOPE, "created", f"note-{i:05d}", author="operator")
    inserted = []
    insort = bisect.insort
    monkeypatch.setattr(bisect, "insort", lambda *a, **k: inserted.append(1) or insort(*a, **k))
    page = svc.call("/api/v1/memory/query", "Bearer dev", body)
    first = ["archive-3"] + [f"note-{i:05d}" for i in range(1, 5)]     # id order, the unavailable skipped
    assert [r["record_id"] for r in page.body["records"]] == first
    assert len(inserted) <= 250, f"{len(inserted)} ids inserted one by one into the namespace's order"


class LongCursors(simkit.Consumer):
    """Publishes two cursors of 100,000 characters the provider never issued, in turn, 20 times."""

    def run(self):
        checkpoint = yield Load()
        cursors = ("a" * 100_000, "b" * 100_000)
        for i in range(20):
            yield Overwrite(cursors[i % 2], checkpoint.checkpoint_version + i + 1, 0)
        while True:
            yield Wait("caught_up")


def test_a_violation_quoting_a_long_cursor_keeps_its_start_and_its_length():
    run = simkit.simulate(simkit.load("retry_walkthrough"), LongCursors)
    details = [v["detail"] for v in run.verdict.invariant_violations if v["invariant"] == 3]
    assert len(details) >= 20
    assert all(len(d) <= 1_000 and d.endswith(" characters)") and "(1000" in d for d in details), details[0]
