"""Seed 000 step 3 judged both ways (docs/verdict.md, ``halt_justified`` and ``unhalted``): "an unexpected
regression, conflicting identity at the same position, or a gap that violates the provider contract stops the
attempt for investigation".

*A halt is a claim that the provider broke its contract.* It is justified only by what the halting worker was
itself served by its last fetch before the halt (any number of ``Load`` requests in between change nothing),
or by its latest fetch with the durable ``resume_cursor`` (its attempt's page, when it read the next one
ahead): that response has a regression inside the page, two ids at one position (within the page, or an id
already served or holding a receipt at that position), or, under a contract without backfills, an event
slipped in behind served positions; or it is the provider refusing a cursor it issued as the ``next_cursor``
of a page it served (or its start). A refused cursor is never "issued": a refusal's row carries no
``next_cursor``.

*A missing halt is a broken step 3.* A worker served a page whose breach it could see in what it was handed
(the page's own order, the receipts at the page's positions, the ``applied_position`` it loaded, or its own
barrier wrote, before the fetch) and that then commits a receipt or an effect for an event of that page, or
a barrier publishing its ``next_cursor``, while that page was the one it acted on (the attempt's, or a page
read ahead it processed), went on where it had to stop. Only breaches a consumer can see count here, so that
a consumer doing exactly what ``safe`` does is never reported.
"""
from __future__ import annotations

import bisect
import heapq

from simkit.model import TERMINAL
from simkit.truth.derived import cursor_history, disordered_pages, late_arrivals

from .outcomes import NONE, Outcomes

__all__ = ["Attempts", "breaches", "halt_justified", "unhalted"]

_DISORDER = "a source-order regression or two ids at one position inside the page"


def _refused(next_cursor: str, ids) -> bool:
    """Is the provider log row with this ``next_cursor`` and these event ids a refusal (neither)?"""
    return not ids and not next_cursor


def halt_justified(halt: tuple[float, int, str], truth) -> bool:
    """Did what the worker was served before ``halt`` (``(time, worker, reason)``) give it cause to stop: its
    last response, or its latest response to the durable ``resume_cursor`` then, the page of its attempt (a
    consumer that read the next page ahead, or fetched it before validating, halts on the page it has:
    seed 000 allows read-ahead)?"""
    time, worker, _reason = halt
    cursor = _durable_cursor(truth, time)
    last = attempt = None
    for row in truth.provider.log:
        _s, served_at, served_to, served_cursor, _n, _ids = row
        if served_at > time:
            break
        if served_to == worker:
            last = row
            if served_cursor == cursor:
                attempt = row
    if last is None:                                      # it stopped before it was served anything
        return False
    return _shows_breach(last, time, truth) or (attempt is not None and attempt is not last
                                                 and _shows_breach(attempt, time, truth))


def _durable_cursor(truth, time: float) -> str:
    """The durable ``resume_cursor`` at ``time``: the last checkpoint write's by then."""
    history = cursor_history(truth)
    return history[bisect.bisect_right([t for t, *_ in history], time) - 1][1]


def _shows_breach(response, time: float, truth) -> bool:
    """Does this response (a row of the provider's log) show a breach of the provider contract by ``time``?"""
    provider = truth.provider
    seq, _t, _w, cursor, next_cursor, ids = response
    if _refused(next_cursor, ids):
        return cursor == provider.start or any(n == cursor and not _refused(n, page)
                                               for s, _t, _w, _c, n, page in provider.log if s < seq)
    if cursor in disordered_pages(truth):
        return True
    return _conflicting_identity(ids, time, provider, truth.store) or (
        not truth.backfills and not late_arrivals(truth).isdisjoint(ids)
    )


def _conflicting_identity(ids, time: float, provider, store) -> bool:
    """Does an event of the page share its position with
    another id served or holding a receipt by ``time``?"""
    events = provider.events
    wanted = {events[eid].position: eid for eid in ids}
    if len(wanted) < len(ids):
        return True
    others = {eid for eid, e in events.items() if e.position in wanted and eid != wanted[e.position]}
    if not others:
        return False
    if any(eid in others for _s, t, _w, eid, _o in store.receipt_log if t <= time):
        return True
    return any(eid in others for _s, t, _w, _c, _n, ids in provider.log if t <= time for eid in ids)


class _Receipts:
    """The first terminal receipt of each event, built on first need: an outcome in ground truth answers for
    nearly every event; a receipt that claims more than the sink shows (an ``applied`` receipt without its
    effect) is still what the consumer's ``Lookup`` showed it."""

    def __init__(self, receipt_log):
        self._log = receipt_log
        self._first: dict[str, int] | None = None

    def before(self, eid: str, seq: int) -> bool:
        if self._first is None:
            first: dict[str, int] = {}
            for s, _t, _w, e, outcome in self._log:
                if outcome in TERMINAL and e not in first:
                    first[e] = s
            self._first = first
        return self._first.get(eid, seq) < seq


def _shared(events) -> dict[int, list[str]]:
    """Position -> the ids of the stream at it, where there is more than one (only a stream that names its ids
    can have any)."""
    if getattr(events, "ids", ()) is None:      # an event table of default ids: one id per position
        return {}
    by: dict[int, list[str]] = {}
    for eid in events:
        by.setdefault(events[eid].position, []).append(eid)
    return {p: ids for p, ids in by.items() if len(ids) > 1}


def breaches(truth, found: Outcomes) -> dict[int, str]:
    """Every response (by its row in the provider's log) whose breach of the provider contract its worker
    could see when it was served: row -> what the breach is (step 3's words). A page's own order is the
    provider's fact (``disordered``); the receipts and the loaded ``applied_position`` are read only where
    they can show a breach: a stream with two ids at one position, or a contract without backfills."""
    provider = truth.provider
    log, disordered = provider.log, disordered_pages(truth)
    out: dict[int, str] = {}
    if disordered:                  # a page's own order: its cursor says it (a stuck answer serves nothing)
        for k, (cursor, _next) in enumerate(log.fields(3, 4)):
            if cursor in disordered and log[k].event_ids:
                out[k] = _DISORDER
    shared = _shared(provider.events)
    if not shared and truth.backfills:
        return out
    events, receipts = provider.events, _Receipts(truth.store.receipt_log)
    initial = truth.scenario.initial.applied_position if truth.scenario is not None else None
    # one id per position: a page whose first event is above what its worker loaded shows nothing, and its
    # first position is read from the provider's table, where it knows the page's rows (no id built)
    ranks = provider.served_ranks if not shared else None
    loaded: dict[int, int] = {}
    # what a worker holds of the checkpoint: what it last loaded, or the checkpoint its own barrier just wrote
    # (a consumer may take that as its next attempt identity and load nothing: a gap behind it went unseen)
    reads = ((seq, 0, w, checkpoint.applied_position) for seq, _t, w, checkpoint in truth.store.reads)
    wrote = ((seq, 0, w, applied) for seq, w, applied in truth.store.writes.besides("commit"))
    rows = ((seq, 1, k, w) for k, (seq, w) in enumerate(log.fields(0, 2)))
    for _seq, kind, who, value in heapq.merge(reads, wrote, rows):
        if kind == 0:
            loaded[who] = value
            continue
        if who in out:
            continue
        applied = None if truth.backfills else loaded.get(value, initial)
        served = ranks(who) if ranks is not None else None
        if served is not None and (not served or applied is None or events.positions[served[0]] > applied):
            continue
        seq, _t, _w, _cursor, _next, ids = log[who]
        why = _seen(found, receipts, shared, events, ids, seq, applied)
        if why:
            out[who] = why
    return out


def _seen(found: Outcomes, receipts: _Receipts, shared: dict, events, ids, seq: int,
          applied: int | None) -> str | None:
    """A breach the worker could see in the page's receipts: another id holding an outcome at an event's
    position (conflicting identity), or, without backfills (``applied`` given), an event at or below the
    ``applied_position`` it loaded with no outcome at its position (a gap). The page is in source order, so
    with one id per position only the events up to ``applied`` are read."""
    def holds(eid):                     # what a Lookup showed: a terminal receipt written before the fetch
        return NONE < found.of(eid) < seq or receipts.before(eid, seq)

    for eid in ids:
        p = events[eid].position
        others = shared.get(p, ()) if shared else ()
        if not others and (applied is None or p > applied):
            if shared:
                continue
            return None                 # the rest of the page is above the prefix: nothing more to see
        holder = next((o for o in others if o != eid and holds(o)), None)
        if holder is not None:
            return f"conflicting identity at position {p}: {eid}, and {holder} holds a receipt there"
        if applied is not None and p <= applied and not holds(eid):
            return f"gap: {eid} at position {p} is behind applied_position {applied} with no receipt there"
    return None


def unhalted(truth, found: Outcomes) -> list[dict]:
    """Step 3's missing halts: for each response :func:`breaches` names, the first receipt or effect its
    worker wrote for an event of that page, or barrier it passed publishing the page's ``next_cursor``, while
    that page was the one the write acted on (:class:`Attempts`). Each as ``{time, worker, detail}``."""
    bad = breaches(truth, found)
    if not bad:
        return []
    log = truth.provider.log
    watched = {eid for k in bad for eid in log[k][5]}
    attempts = Attempts(truth)
    first: dict[int, tuple[int, float, str]] = {}       # bad row -> its first write: (seq, time, what)

    def note(row, seq: int, time: float, what: str) -> None:
        if row in bad and (row not in first or seq < first[row][0]):
            first[row] = (seq, time, what)

    for seq, t, w, eid, outcome in truth.store.receipt_log:
        if w and eid in watched:
            note(attempts.page_of(w, seq, eid), seq, t, f"{outcome} receipt for {eid}")
    for seq, t, w, eid in truth.sink.effects:
        if w and eid in watched:
            note(attempts.page_of(w, seq, eid), seq, t, f"effect of {eid}")
    for seq, t, w, kind, before, after in truth.store.writes.states():
        if kind != "commit" and after[0] != before[0]:
            note(attempts.published(w, seq, before[0], after[0]), seq, t, f"{kind} publishing {after[0]!r}")
    out = []
    for k, (_seq, time, what) in first.items():
        _s, _t, worker, cursor, _next, _ids = log[k]
        detail = f"{what} after page {cursor!r} showed {bad[k]}, where step 3 stops the attempt"
        out.append({"time": time, "worker": worker, "detail": detail})
    out.sort(key=lambda d: (d["time"], d["worker"]))
    return out


class Attempts:
    """Which response a worker's write acted on. A receipt or an effect acts on the worker's latest response
    to the durable ``resume_cursor`` (the attempt's page) if that serves the event, else on its latest
    response that served the event (a page read ahead, processed before its turn); a barrier on the latest
    response fetched with the cursor it replaces that returned the cursor it publishes (else the latest
    that returned it, as invariant 3 reads it). Not "the writes before the worker fetches again": a
    consumer that reads the next page ahead fetches before it processes the page it has, so a breach was
    dodged by a fetch of another page, and a write of the current page was blamed on the page read ahead
    where the two overlap."""

    def __init__(self, truth):
        self._log = log = truth.provider.log
        self._seqs: dict[int, list[int]] = {}           # worker -> the seqs of its responses, in order
        self._rows: dict[int, list[int]] = {}           # worker -> their rows in the provider's log
        self._fetched: list[tuple[str, str]] = []        # per row: its cursor and next_cursor
        for k, (seq, w, cursor, next_cursor) in enumerate(log.fields(0, 2, 3, 4)):
            self._seqs.setdefault(w, []).append(seq)
            self._rows.setdefault(w, []).append(k)
            self._fetched.append((cursor, next_cursor))
        self._served: dict[int, frozenset[str]] = {}     # the ids of the last rows :meth:`serves` read
        self._write_seqs, self._cursors = [], []      # each write's seq and the durable cursor before it
        for seq, _t, _w, _kind, before, _after in truth.store.writes.states():
            self._write_seqs.append(seq)
            self._cursors.append(before[0])
        self._final = truth.store.checkpoint.resume_cursor

    def _cursor_at(self, seq: int) -> str:
        """The durable ``resume_cursor`` when the write at ``seq`` was made (a commit keeps it)."""
        i = bisect.bisect_left(self._write_seqs, seq)
        return self._cursors[i] if i < len(self._cursors) else self._final

    def _before(self, worker: int, seq: int):
        """The rows of ``worker``'s responses before ``seq``, the latest first, read as they are asked for (a
        copy of those before ``seq`` at each write cost responses times writes: a page served after 80,000
        stuck answers and written last to first, 20,000 events, spent 3.7 s copying)."""
        rows = self._rows.get(worker, [])
        return map(rows.__getitem__, range(bisect.bisect_left(self._seqs.get(worker, []), seq) - 1, -1, -1))

    def cursor(self, k: int) -> str:
        """The cursor of row ``k``, read without its ids (a row of the log builds an id string per event)."""
        return self._fetched[k][0]

    def serves(self, k: int, eid: str) -> bool:
        """Does row ``k`` serve ``eid``? Its ids are read once into a set, kept for the last two rows asked:
        the writes of one page ask of the same response, and reading its ids for each made a page of P events
        written out of order cost P², 30 s at 20,000 events."""
        ids = self._served.get(k)
        if ids is None:
            if len(self._served) == 2:
                del self._served[next(iter(self._served))]
            ids = self._served[k] = frozenset(self._log[k][5])
        return eid in ids

    def page_of(self, worker: int, seq: int, eid: str) -> int | None:
        """The row of the response the receipt or effect of ``eid`` at ``seq`` acted on, if any."""
        cursor, attempt_seen, serving = self._cursor_at(seq), False, None
        for k in self._before(worker, seq):
            if self._fetched[k][0] == cursor and not attempt_seen:
                if self.serves(k, eid):
                    return k
                if serving is not None:
                    return serving
                attempt_seen = True
            elif serving is None and self.serves(k, eid):
                if attempt_seen:
                    return k
                serving = k
        return serving

    def attempt_page(self, worker: int, seq: int) -> int | None:
        """The row of ``worker``'s latest response before ``seq`` to the durable ``resume_cursor`` then (the
        page of its attempt), if any."""
        cursor = self._cursor_at(seq)
        return next((k for k in self._before(worker, seq) if self._fetched[k][0] == cursor), None)

    def published(self, worker: int, seq: int, cursor: str, next_cursor: str) -> int | None:
        """The row of the response whose ``next_cursor`` the write at ``seq`` published from ``cursor``."""
        returned = None
        for k in self._before(worker, seq):
            c, n = self._fetched[k]
            if n == next_cursor:
                if c == cursor:
                    return k
                if returned is None:
                    returned = k
        return returned
