"""Round 24's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), each
run by ``tests/judge/test_hostile_round24.py`` on the smallest scenario that shows what it does. Written
against the public API only."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import Page
from simkit.ops import LOST, Fetch, Halt, Load, Lookup, Wait


def _identity_and_gap(consumer: Consumer, checkpoint, page, ids_at) -> str | None:
    """The rest of ``safe``'s step 3, as the two validators below keep it: two ids at one position across
    receipts, and (without backfills) a gap behind the applied prefix."""
    for e in page.events:
        holder = ids_at.get(e.position)
        if holder is not None and holder != e.id:
            return f"conflicting identity at position {e.position}"
        if holder is None and not consumer.contract.backfills and e.position <= checkpoint.applied_position:
            return f"gap at position {e.position}"
    return None


class OrderAgainstFirst(Consumer):
    """"A page must not reach back before where it starts: check every event against the first one."

    Halts on a page whose second event is below its first (the audit's only page out of order, 5 then 4),
    but not on 4, 6, 5, 7, where no event is below the first: it applies 6 before 5.

    Breaks seed 000 step 3: "Validate that new events respect the source order ... An unexpected regression
    ... stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        events = page.events
        for e in events[1:]:
            if e.position <= events[0].position:
                return f"source-order regression: position {e.position} at or before {events[0].position}"
        return _identity_and_gap(self, checkpoint, page, ids_at)


class StrictlyBackwards(Consumer):
    """"A regression is a position lower than the one before it."

    Compares with ``<`` where ``safe`` compares with ``<=``: two ids at one position inside a page (e5, then
    x5) pass, and both are applied. The audit had no page holding two ids at one position.

    Breaks seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap
    that violates the provider contract stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        previous = None
        for e in page.events:
            if previous is not None and e.position < previous:
                return f"source-order regression: position {e.position} after {previous}"
            previous = e.position
        return _identity_and_gap(self, checkpoint, page, ids_at)


class PrefetchBeforeValidating(Consumer):
    """Correct. As soon as a page arrives, fetches the page after it (to warm the provider's cache for the
    next attempt) and drops it, then goes on as ``safe``: validates the page it has, and halts on it when it
    breaks the provider contract, before any effect.

    Seed 000 lets a worker read ahead (invariant 3); the halt is about the page of the attempt, fetched with
    the durable ``resume_cursor``. It was judged unjustified (``completed`` false) because the page it fetched
    last, the one after, is fine.
    """

    def after_fetch(self, checkpoint, page):
        if page.next_cursor != checkpoint.resume_cursor:
            yield Fetch(page.next_cursor)
        return None


class BulkOfAHundred(Consumer):
    """"The sink's bulk API takes at most 100 events a call: hand it the first 100 of the page, then move on."

    ``safe`` but for step 4 on a page of more than 100 events: it processes the first 100 and passes the page
    barrier, so the rest are never processed. The audit's widest pages held 50 events.

    Breaks seed 000 invariant 1: "A returned continuation token remains pending until every event in that
    response is durably classified".
    """

    BULK = 100

    def run(self):
        while True:
            checkpoint = yield Load()
            page = yield Fetch(checkpoint.resume_cursor)
            if page is LOST:
                continue
            if page is None:
                yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
            receipts, ids_at = yield Lookup(page.events)
            problem = self.validate(checkpoint, page, ids_at)
            if problem:
                yield Halt(problem)
            if self.is_caught_up(checkpoint, page):
                yield Wait("caught_up")
                continue
            bulk = Page(page.cursor, page.events[:self.BULK], page.next_cursor)
            status, applied = yield from self.process(checkpoint, bulk, receipts)
            if status == "blocked":
                yield Wait("blocked")
            elif status == "done":
                yield from self.page_barrier(checkpoint, page, applied)


class BackOffAsBlocked(Consumer):
    """Correct. Backs off the same way whatever the attempt said, as ``blocked`` (one metric, one log line):
    at the end of the stream too, where ``safe`` says ``caught_up``. Its durable writes are ``safe``'s, in the
    same order; seed 000 step 7 asks only that it "stop or back off instead of spinning". It was judged
    incomplete: the run went on to its time limit, the worker never counted as caught up."""

    def run(self):
        while True:
            result = yield from self.attempt()
            if result in ("caught_up", "blocked"):
                yield Wait("blocked")


class GapAtPageStart(Consumer):
    """"A gap shows where the page starts: if its first event is behind the prefix with no receipt, halt."

    Checks order and identities as ``safe`` does, but looks for a gap at the page's first event only. A page
    that overlaps (2 again, a replay) before the gap (3, behind applied_position 5, no receipt) passes: 3 is
    taken for a replay by the watermark, and lost. The audit's only gap was a page's first event.

    Breaks seed 000 step 3: "a gap that violates the provider contract stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        previous = None
        for e in page.events:
            if previous is not None and e.position <= previous:
                return f"source-order regression: position {e.position} after {previous}"
            previous = e.position
            holder = ids_at.get(e.position)
            if holder is not None and holder != e.id:
                return f"conflicting identity at position {e.position}"
        first = page.events[0] if page.events else None
        behind = first is not None and first.position <= checkpoint.applied_position
        if behind and not self.contract.backfills and first.position not in ids_at:
            return f"gap at position {first.position}"
        return None


class FreshStartTrustsThePage(Consumer):
    """"Version 0 means nothing was consumed yet: there is no prefix to check the first page against."

    Skips step 3 while the loaded checkpoint is at version 0. Every page out of order in the audit came after
    a first barrier; a first page out of order (1, 2, 4, 3) is applied as served.

    Breaks seed 000 step 3: "Validate that new events respect the source order ... An unexpected regression
    ... stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        if checkpoint.checkpoint_version == 0:
            return None
        return super().validate(checkpoint, page, ids_at)


class NeverRaisesApplied(Consumer):
    """Buggy (seed 000, "keep two kinds of progress"): commits and barriers keep the ``applied_position`` it
    loaded, so the checkpoint never says what work is durably complete, and (without backfills) step 3 no
    longer sees an event slipped in behind the real prefix (``gap_behind_applied``: it applies it)."""

    def resulting_applied_position(self, event, page, applied_position):
        return applied_position

    def page_barrier(self, checkpoint, page, applied):
        return super().page_barrier(checkpoint, page, checkpoint.applied_position)
