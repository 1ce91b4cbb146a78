"""The independent checker: the verdict of docs/verdict.md,
from a :class:`~simkit.truth.ground.GroundTruth` only.

It reads the provider's log of every response and the pages it can still serve, the store's log of durable
writes, reads and receipts, and the sink's log of effects and handler decisions. It never asks the
consumer anything. An ``applied`` receipt counts as a terminal outcome only once its effect is in the sink.

Seed 001 adds ``settlement_violations``, from the history of the store's operation records and the external
service's log of every request (a reply's true identity is read there, not from the reply): a committed
success downgraded, and a result attached to the wrong reservation. The duplicated effects they cause are
``duplicated``.
"""
from __future__ import annotations

import bisect
import heapq
import math
from array import array
from itertools import islice

from simkit.model import NON_TERMINAL
from simkit.truth import passes
from simkit.truth.derived import late_arrivals, stream_index, stream_order
from simkit.truth.ground import GroundTruth, as_truth

from .claims import unjustified_writes
from .facts import FATES, event_fates, lost_at
from .halts import halt_justified, unhalted
from .order import inversions
from .outcomes import NONE, Outcomes, outcome_since, terminal_since, void_claims
from .settlement import SETTLEMENT_KINDS, settlement_violations
from .verdict import Verdict

__all__ = ["FATES", "SETTLEMENT_KINDS", "Verdict", "check", "event_fates", "lost_at", "outcome_since",
           "settlement_violations", "terminal_since"]


class _Stream:
    """The stream in position order, for invariant 2: which events a write of ``applied_position`` covers.

    ``applied_position`` P claims every event of the stream at or below P has a durable outcome, not only the
    events of the page its worker fetched ("never the maximum position merely observed": docs/vocabulary.md,
    invariant 2). The claim is about the stream as it stood, so an event that joins it late
    (:func:`~simkit.truth.derived.late_arrivals`) is not part of it: a watermark proves nothing about it, and
    it is judged by receipts alone, at the barrier (invariants 1 and 5) and as ``lost`` (docs/verdict.md).
    Counting it from the moment some response served it would make the verdict depend on when a worker
    fetched, not on what became durable: a consumer that reads the next page ahead would break invariant 2
    with exactly ``safe``'s checkpoint writes.
    """

    __slots__ = ("ids", "positions", "_truth", "_late")

    def __init__(self, truth: GroundTruth):
        self._truth = truth
        self.ids, self.positions = stream_order(truth)
        # built on first need: a run that keeps its prefix never asks
        self._late: frozenset[str] | None = None

    def known(self, eid: str) -> bool:
        """Is this event part of the stream an ``applied_position`` makes a claim about?"""
        if self._late is None:
            self._late = late_arrivals(self._truth)
        return eid not in self._late


def _applied_receipts_twice(receipt_log, candidates, events) -> dict[str, list[tuple[float, int]]]:
    """``duplicated`` in its receipt form (docs/verdict.md): of ``candidates`` (events with more than one
    terminal receipt), those of ``events`` with more than one ``applied`` receipt, each with the (time,
    worker) of every one. (The store refuses a second terminal receipt: only a store that does not, or a
    hand-built history, has candidates at all.)"""
    rows: dict[str, list] = {}
    if candidates:
        for _s, t, w, eid, outcome in receipt_log:
            if outcome == "applied" and eid in candidates and eid in events:
                rows.setdefault(eid, []).append((t, w))
    return {eid: r for eid, r in rows.items() if len(r) > 1}


class _Holds:
    """The non-terminal durable receipts (retry later, dead letter, review, reversible hold), looked up only
    for an event a barrier passed without an outcome: built on first need."""

    def __init__(self, receipt_log):
        self._log = receipt_log
        self._rows: dict[str, list] | None = None

    def at(self, eid: str, seq: int) -> str | None:
        """The event's last receipt written by ``seq``, if it is a non-terminal one."""
        if self._rows is None:
            rows: dict[str, list] = {}
            for s, _t, _w, e, outcome in self._log:
                if outcome in NON_TERMINAL or e in rows:     # an event's receipts from its first hold on
                    rows.setdefault(e, []).append((s, outcome))
            self._rows = rows
        last = None
        for s, outcome in self._rows.get(eid, ()):
            if s > seq:
                break
            last = outcome
        return last if last in NON_TERMINAL else None


def check(run) -> Verdict:
    """Judge a finished run from its ground truth (docs/verdict.md). ``run``: a
    :class:`~simkit.truth.ground.GroundTruth`, or what :func:`~simkit.truth.ground.as_truth` reads one from (a
    World, a Run, a hand-built history)."""
    return _check(as_truth(run))


def _check(truth: GroundTruth) -> Verdict:
    unordered = unjustified_writes(truth)
    found = Outcomes(truth.store.receipt_log, truth.sink.effects, stream_index(truth), void_claims(unordered))
    v = Verdict(halted=truth.halts[0][2] if truth.halts else None)
    if truth.halts:
        v.halt_justified = all(halt_justified(h, truth) for h in truth.halts)
    v.completed = truth.completed and v.halt_justified is not False
    _judge_events(truth, found, v)
    v.regressions = _judge_writes(truth, found, v.violate)
    for _seq, time, worker, _outcome, detail in unordered.values():
        v.violate(5, time, worker, detail)
    _judge_duplicates(truth, found, v)
    v.invariant_violations.sort(key=lambda d: (d["time"], d["invariant"]))
    v.settlement_violations = settlement_violations(truth.store.operations, truth.service, truth.scenario)
    # steps 3 and 4: where the procedure stops, and the worker went on
    v.unhalted = sorted(unhalted(truth, found) + inversions(truth, found, halted=v.halt_justified is True),
                        key=lambda d: (d["time"], d["worker"]))
    return v


def _in_order(events, ids) -> list[str]:
    """Stream order: by position, then id (sorting only the few reported)."""
    return sorted(ids, key=lambda eid: (events[eid].position, eid))


def _judge_events(truth: GroundTruth, found: Outcomes, v: Verdict) -> None:
    """``lost`` and ``pending``: the events without an outcome, by whether the durable cursor can still
    deliver them; and ``completed`` false for a run caught up in memory only, or whose durable
    ``applied_position`` stayed below an event whose outcome the run made durable ("the applied position says
    what work is durably complete": with every event done, the whole stream)."""
    provider, final = truth.provider, truth.store.checkpoint
    for eid in _in_order(provider.events, found.undone()):
        (v.pending if provider.deliverable(eid, final.resume_cursor) else v.lost).append(eid)
    if truth.halts:
        return
    if not (provider.at_end(final.resume_cursor) and not v.pending) or (
            not v.lost and final.applied_position < _last_done_by_run(found)):
        # caught up in memory only: the durable checkpoint must say so too ("the cursor says where to fetch",
        # "the applied position says what work is durably complete"), unless a justified halt stopped it
        v.completed = False


def _last_done_by_run(found: Outcomes) -> float:
    """The greatest position of an event of the stream whose terminal outcome this run wrote (an initial
    receipt's sequence number is 0), or -inf."""
    at, positions = found.at, found.stream.positions
    for i in range(len(positions) - 1, -1, -1):
        if at[i] > 0:
            return positions[i]
    return -math.inf


def _judge_duplicates(truth: GroundTruth, found: Outcomes, v: Verdict) -> None:
    """``duplicated`` and invariant 4: an effect in the sink more than once, or two ``applied`` receipts."""
    events = truth.provider.events
    receipts_twice = _applied_receipts_twice(truth.store.receipt_log, set(found.again), events)
    effects_twice = []
    if len(truth.sink.effects) > len(truth.sink.effect_count):     # some event's effect ran more than once
        effects_twice = [eid for eid, n in truth.sink.effect_count.items() if n > 1 and eid in events]
    v.duplicated = _in_order(events, set(effects_twice).union(receipts_twice))
    runs: dict[str, list] = {eid: [] for eid in effects_twice}
    if runs:
        for _s, t, w, e in truth.sink.effects:
            if e in runs:
                runs[e].append((t, w))
    for eid, times in runs.items():
        v.violate(4, times[1][0], times[1][1], f"effect of {eid} ran {len(times)} times")
    for eid, rows in receipts_twice.items():
        v.violate(4, rows[1][0], rows[1][1], f"{eid} holds {len(rows)} applied receipts")


class _Pages:
    """What each worker had read and been served, replayed in sequence order beside the store's writes. A
    response is kept as its row in the provider's log, read again only for a write that publishes its
    ``next_cursor``: its ids are not kept (every page the run served would keep an id string per event)."""

    def __init__(self, truth: GroundTruth, late: frozenset[str] = frozenset()):
        self._log = truth.provider.log
        self._ranks = truth.provider.served_ranks
        self._late = late
        #: (worker, request cursor) -> its latest response to that cursor, as (ids, the late ones), if it
        #: served late events
        self.held_late: dict[tuple[int, str], tuple[tuple, list[str]]] = {}
        # at one sequence number reads, responses and decisions come before the write
        self._context = heapq.merge(((r[0], 0, r) for r in truth.store.reads),
                                    ((r[0], 1, (i, *r[1:]))
                                     for i, r in enumerate(self._log.fields(0, 2, 3, 4))),
                                    ((r[0], 2, r) for r in truth.sink.decisions))
        self._upcoming = next(self._context, None)
        self.decisions: dict[str, str] = {}
        self._read: dict[int, object] = {}
        #: (worker, request cursor, next cursor) -> (the latest such response's row, the checkpoint read
        #: before it)
        self.fetched: dict[tuple, tuple] = {}
        #: (worker, next cursor) -> the latest response that returned it, and the read before it
        self.returned: dict[tuple, tuple] = {}
        self._once: set[int] = set()                    # rows published, whose events :meth:`undone` read
        self._left: dict[int, tuple[int, list[str]]] = {}  # rows published again -> (seq, events undone then)

    def until(self, seq: int) -> None:
        """Take in everything that happened before the write at ``seq``."""
        while self._upcoming is not None and self._upcoming[0] <= seq:
            _s, kind, r = self._upcoming
            if kind == 0:
                self._read[r[2]] = r[3]
            elif kind == 1:
                row, worker, cursor, next_cursor = r
                seen = (row, self._read.get(worker))
                self.fetched[(worker, cursor, next_cursor)] = seen
                self.returned[(worker, next_cursor)] = seen
                if self._late:
                    self._served(worker, cursor, row)
            else:
                self.decisions[r[3]] = r[4]
            self._upcoming = next(self._context, None)

    def _served(self, worker: int, cursor: str, row: int) -> None:
        """Remember the late events of a worker's latest response to ``cursor`` (invariant 2 judges a write by
        what its worker held in the attempt)."""
        ids = self._log[row][5]
        held = [eid for eid in ids if eid in self._late]
        if held:
            self.held_late[(worker, cursor)] = (ids, held)
        else:
            self.held_late.pop((worker, cursor), None)

    def ranks(self, row: int):
        """The ranks of the events row ``row`` of the provider's log served, or ``None`` where
        only their ids tell (:attr:`~simkit.truth.ground.ProviderTruth.served_ranks`)."""
        return self._ranks(row) if self._ranks is not None else None

    def response(self, row: int) -> tuple:
        """Row ``row`` of the provider's log: ``(seq, time, worker, cursor, next_cursor, ids)``."""
        return self._log[row]

    def undone(self, row: int, found: Outcomes, seq: int) -> list[str]:
        """The ids of the events row ``row`` served with no outcome from before the write at ``seq``, in page
        order. Done before one write is done before every later one: a row published again keeps what it left
        (K publishings of P events cost K·P: 15.6 s for 4,000 over 10,000). One published once keeps none."""
        since, ids = self._left.get(row, (seq + 1, None))
        if since > seq or ids is None:
            if (ranks := self.ranks(row)) is not None:   # every event holds an outcome from before ``seq``:
                at = list(map(found.at.__getitem__, ranks))     # nothing to report, no id read
                if not at or (min(at) >= 0 and max(at) <= seq):
                    self._left[row] = (seq, [])
                    return []
            ids = self.response(row)[5]
        left = [eid for eid in ids if (s := found.of(eid)) == NONE or s > seq]
        if row in self._left or row in self._once:
            self._left[row] = (seq, left)
        self._once.add(row)
        return left


def _judge_writes(truth: GroundTruth, found: Outcomes, violate) -> int:
    """Every durable checkpoint write: regressions, invariant 2 over the whole stream, and for a write that
    publishes a cursor, invariants 3, 1 and 5 against the page that returned it (docs/verdict.md)."""
    place = truth.provider.place
    stream = _Stream(truth)
    ids, positions, at, bisect_right = stream.ids, stream.positions, found.at, bisect.bisect_right
    end = len(positions)
    last, hi = None, 0  # the last write's applied_position and the end of the range it covered
    late = late_arrivals(truth)
    pages = _Pages(truth, late)
    receipt_seqs = None
    holds = _Holds(truth.store.receipt_log)
    regressions, row, rows = 0, 0, truth.store.writes.states()
    commits = None if late else _commits(truth, positions, at)
    for seq, time, worker, wkind, before, after in rows:
        if commits is not None and row:   # the plain commits from here are the pass's: skipped, counted
            plain, more, last, hi = commits(row, last, hi)
            regressions += more
            if plain > row:            # on to row ``plain``, past the plain commits before it
                following = next(islice(rows, plain - row - 1, None), None)
                if following is None:
                    break
                seq, time, worker, wkind, before, after = following
                row = plain
        row += 1
        b_applied, a_applied = before[1], after[1]
        pages.until(seq)
        if after[2] < before[2] or a_applied < b_applied or (after[0] != before[0]
                                                              and place(after[0]) < place(before[0])):
            regressions += 1
        if a_applied > b_applied:        # invariant 2: every event of the newly covered range is done
            if last == b_applied:  # walk on from where the last write ended: a commit covers an event or two
                lo = hi
                while hi < end and positions[hi] <= a_applied:
                    hi += 1
            else:
                lo = bisect_right(positions, b_applied)
                hi = bisect_right(positions, a_applied, lo)
            last = a_applied
            undone = None
            for i in range(lo, hi):
                s = at[i]
                if (s == NONE or s > seq) and stream.known(ids[i]):
                    undone = undone or []
                    undone.append((positions[i], ids[i]))
            held = pages.held_late.get((worker, before[0])) if wkind == "commit" and pages.held_late else None
            if held is not None:
                if receipt_seqs is None:
                    receipt_seqs = array("q", (s for s, _w in truth.store.receipt_log.fields(0, 2)))
                undone = (undone or []) + _held_late(truth, found, held, receipt_seqs, seq, a_applied)
            for pos, eid in sorted(undone) if undone else ():
                violate(2, time, worker, f"applied_position {a_applied} written while {eid} "
                                         f"(position {pos}) has no durable outcome")
        # a compare-and-swap keeping the cursor (a claim, a barrier's first commit) replaces nothing:
        # invariant 3 judges what replaces resume_cursor; an unconditional write is unfenced, whatever it is
        if wkind != "commit" and not (wkind == "barrier" and after[0] == before[0]):
            _judge_publish(pages, holds, found, (seq, time, worker, wkind, before, after), violate)
    return regressions


def _commits(truth: GroundTruth, positions, at):
    """The pass over plain commits (:func:`~simkit.truth.passes.commits`: invariant 2 where every newly
    covered event holds its outcome, and regressions) bound to this run's writes, as ``(row, last, hi) ->
    (row, regressions, last, hi)``; ``None`` if the writes are not column-stored."""
    log = truth.store.writes.log()
    if log is None or not isinstance(positions, array) or passes.NATIVE is None:  # else the loop is as fast
        return None
    seqs, _t, _w, kinds, cursors, applied, versions = log.columns
    commit = passes.code_of(kinds, "commit")
    versions, mark = passes.ints(versions)
    return lambda i, last, hi: passes.commits(seqs, kinds.codes, commit, cursors.codes, applied, versions,
                                              mark, positions, at, i, last, hi)


def _held_late(truth: GroundTruth, found: Outcomes, held, receipt_seqs, seq: int, applied: int) -> list:
    """Invariant 2 by what the writer held: the late events at or below ``applied`` with no outcome yet of the
    page the commit at ``seq`` belongs to: ``held``, its worker's latest response to the durable resume_cursor
    (the attempt's page; a page read ahead is the next attempt's), if it serves the committed event. An event
    that joins the stream late is exempt only when its writer had not been served it."""
    k = bisect.bisect_left(receipt_seqs, seq)
    ids, late = held
    if k == len(receipt_seqs) or receipt_seqs[k] != seq or truth.store.receipt_log[k].event_id not in ids:
        return []
    events = truth.provider.events
    return [(events[eid].position, eid) for eid in late if events[eid].position <= applied
            and (found.of(eid) == NONE or found.of(eid) > seq)]


def _judge_publish(pages: _Pages, holds: _Holds, found: Outcomes, write, violate) -> None:
    """A write that publishes a cursor: invariant 3, then invariants 1 and 5 for every event of the page whose
    ``next_cursor`` it publishes."""
    seq, time, worker, wkind, before, after = write
    row = _page_published(pages, worker, wkind, before, after, time, violate)
    if row is None:
        return
    for eid in pages.undone(row, found, seq):
        # invariant 5: the handler's last decision, or failing that the event's durable receipt, is a
        # failure, dead letter, review or reversible hold; invariant 1: no outcome at all
        held = pages.decisions.get(eid)
        if held not in NON_TERMINAL:
            held = holds.at(eid, seq)
        violate(5 if held else 1, time, worker, f"token {after[0]!r} published while {eid} "
                                                + (f"is {held}" if held else "has no durable outcome"))


def _page_published(pages: _Pages, worker, wkind, before, after, time, violate):
    """Invariant 3 for one cursor-publishing write; the row of the response whose page it closes, if any.

    Seed 000 step 5: the barrier swaps "from the attempt cursor and version to the returned next cursor and a
    greater version". It must publish the ``next_cursor`` of a page its worker fetched with the durable cursor
    it replaces, at any time before (read-ahead and a remembered attempt identity are fine); a
    compare-and-swap (``barrier``) matched the durable (cursor, version) by construction, an unconditional
    write must have read it before that fetch.
    """
    (b_cursor, _a, b_version), (a_cursor, _b, a_version) = before, after
    found = pages.fetched.get((worker, b_cursor, a_cursor))
    if found is None:
        other = pages.returned.get((worker, a_cursor))
        if other is None:
            violate(3, time, worker, f"cursor {a_cursor!r} published but the provider never returned "
                                     f"it for this worker's fetch")
            return None
        was, cas = pages.response(other[0])[3], wkind == "barrier"  # a swap matched: its page is wrong
        violate(3, time, worker, f"barrier over ({b_cursor!r}, v{b_version}) published {a_cursor!r}, the "
                f"next_cursor of a page fetched with {was!r}, not with the cursor it replaces" if cas
                else f"barrier from {was!r} overwrote checkpoint ({b_cursor!r}, v{b_version}) it did not "
                     "read before fetching")
        return other[0]
    row, read = found
    if a_version <= b_version:
        violate(3, time, worker, f"barrier from {b_cursor!r} over checkpoint ({b_cursor!r}, v{b_version}) "
                                 f"does not raise checkpoint_version (v{a_version})")
    elif wkind != "barrier" and (read is None or read.resume_cursor != b_cursor
                                 or read.checkpoint_version != b_version):
        violate(3, time, worker, f"barrier from {b_cursor!r} overwrote checkpoint ({b_cursor!r}, "
                                 f"v{b_version}) it did not read before fetching")
    return row
