"""The independent checker: the verdict of CONTRACT §4, from ground truth only.

It reads the provider's log of every response and the pages it can still serve, the store's log of durable
writes, reads and receipts, and the sink's log of effects and handler decisions. It never asks the
consumer anything. An ``applied`` receipt counts as a terminal outcome only once its effect is in the sink.

Seed 001 adds ``settlement_violations``, from the history of the store's operation records and the external
service's log of every request (a reply's true identity is read there, not from the reply): a committed success
downgraded, and a result attached to the wrong reservation. The duplicated effects they cause are ``duplicated``.
"""
from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field
from operator import attrgetter

from .claims import halt_justified, unjustified_writes
from simkit.truth.collector import paused
from simkit.truth.log import write_states
from simkit.model import COMMITTED, NON_TERMINAL, TERMINAL

#: Kinds of ``settlement_violations`` (seed 001, "Failure prevented").
SETTLEMENT_KINDS = ("committed_downgraded", "wrong_reservation")


@dataclass
class Verdict:
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    regressions: int = 0
    invariant_violations: list[dict] = field(default_factory=list)
    halted: str | None = None
    #: ``None`` when nothing halted; else whether every halt had a cause in ground truth (:mod:`simkit.judge.claims`)
    halt_justified: bool | None = None
    pending: list[str] = field(default_factory=list)
    completed: bool = True
    #: seed 001: ``{kind, time, worker, detail}`` with ``kind`` one of :data:`SETTLEMENT_KINDS`
    settlement_violations: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.lost and not self.duplicated and not self.invariant_violations
                and self.regressions == 0 and self.completed and not self.settlement_violations)

    @property
    def invariants_broken(self) -> list[int]:
        return sorted({v["invariant"] for v in self.invariant_violations})

    def as_dict(self) -> dict:
        return {"ok": self.ok, "lost": self.lost, "duplicated": self.duplicated, "regressions": self.regressions,
                "invariant_violations": self.invariant_violations, "halted": self.halted,
                "halt_justified": self.halt_justified, "pending": self.pending, "completed": self.completed,
                "settlement_violations": self.settlement_violations}


def terminal_since(store, sink, again: list | None = None, void=()) -> dict[str, int]:
    """For each event id, the log sequence number from which it holds a terminal outcome in ground truth.

    ``again``, if given, receives the id of every terminal receipt written for an event that already held one.
    ``void``: ids whose ``ignored`` or ``quarantined`` receipts the handler never ordered
    (:func:`simkit.judge.claims.unjustified_writes`): such a receipt is a claim, not an outcome.
    """
    first_effect: dict[str, int] = {}
    for seq, _t, _w, eid in sink.effects:
        if eid not in first_effect:
            first_effect[eid] = seq
    since: dict[str, int | None] = {}   # None: the first terminal receipt is ``applied`` but no effect ran
    for seq, _t, _w, eid, outcome in store.receipt_log:
        if outcome in TERMINAL and outcome != "applied" and eid in void:
            continue
        if outcome in TERMINAL and eid not in since:
            if outcome != "applied":
                since[eid] = seq
            else:
                effect = first_effect.pop(eid, None)    # taken, not copied: its seq is held once, in `since`
                since[eid] = None if effect is None else max(seq, effect)
        elif again is not None and outcome in TERMINAL:
            again.append(eid)
    if None in since.values():
        since = {eid: seq for eid, seq in since.items() if seq is not None}
    return since


def _void(unordered: dict) -> set[str]:
    """The events whose ``ignored``/``quarantined`` claim the handler never ordered (an unordered effect did
    happen: its ``applied`` receipt still counts, and is reported)."""
    return {eid for eid, u in unordered.items() if u[3] != "applied"}


def outcome_since(world) -> dict[str, int]:
    """:func:`terminal_since` as the checker counts it: receipts the handler never ordered are no outcome."""
    unordered = unjustified_writes(world.store, world.sink, world.provider.events)
    return terminal_since(world.store, world.sink, void=_void(unordered))


_position = attrgetter("position")


class _Stream:
    """The stream in position order, for invariant 2: which events a write of ``applied_position`` covers.

    ``applied_position`` P claims every event of the stream at or below P has a durable outcome, not only the
    events of the page its worker fetched (seed 000: "never the maximum position merely observed"). The claim is
    about the stream as it stood, so an event that joins it late is not part of it: one whose first page on the
    provider's chain comes after a page holding its position or a greater one (a backfill; or a conflicting
    identity at a position already served, which step 3 halts on), or that no page on the chain carries. Seed
    000 says where a watermark stops proving anything ("If the source permits late backfills, use per-event
    receipts instead"): a late event is judged by receipts alone, at the barrier (invariants 1 and 5) and as
    ``lost``. Counting it from the moment some response served it would make the verdict depend on when a worker
    fetched, not on what became durable: a consumer that reads the next page ahead would break invariant 2 with
    exactly ``safe``'s checkpoint writes.
    """

    def __init__(self, provider):
        self._provider = provider
        # Ids by position (ties in the stream's order; a report sorts its few by id) and their positions: two
        # lists of references to the events' own objects, not a tuple per event, to keep the check's peak low.
        by_position = sorted(provider.events.values(), key=_position)
        self.ids = [e.id for e in by_position]
        self.positions = [e.position for e in by_position]
        self._late: set[str] | None = None      # built on first need: a run that keeps its prefix never asks

    def known(self, eid: str) -> bool:
        """Is this event part of the stream an ``applied_position`` makes a claim about?"""
        if self._late is None:
            self._late = self._provider.late_arrivals()
        return eid not in self._late


def _applied_receipts_twice(receipt_log, candidates, events) -> dict[str, list[tuple[float, int]]]:
    """CONTRACT §4 ``duplicated``, its receipt form: of ``candidates`` (events with more than one terminal
    receipt), those of ``events`` with more than one ``applied`` receipt, each with the (time, worker) of every
    one. (The store refuses a second terminal receipt: only a store that does not, or a hand-built history,
    has candidates at all.)"""
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


def check(world) -> Verdict:
    """Judge a finished run. ``world`` needs ``provider``, ``store``, ``sink``, ``halts`` and ``completed``."""
    with paused():
        return _check(world)


def _check(world) -> Verdict:
    provider, store, sink = world.provider, world.store, world.sink
    events = provider.events
    unordered = unjustified_writes(store, sink, events)
    again: list[str] = []
    since = terminal_since(store, sink, again, _void(unordered))
    receipts_twice = _applied_receipts_twice(store.receipt_log, set(again), events)
    final_cursor = store.checkpoint.resume_cursor
    v = Verdict(halted=world.halts[0][2] if world.halts else None)
    if world.halts:
        backfills = _backfills(world)
        v.halt_justified = all(halt_justified(h, provider, store, backfills) for h in world.halts)
    v.completed = bool(world.completed) and v.halt_justified is not False
    def in_order(ids):                  # stream order: by position, then id (sorting only the few reported)
        return sorted(ids, key=lambda eid: (events[eid].position, eid))

    for eid in in_order(eid for eid in events if eid not in since):
        (v.pending if provider.deliverable(eid, final_cursor) else v.lost).append(eid)
    if not world.halts and not (provider.at_end(final_cursor) and not v.pending):
        # caught up in memory only: the durable checkpoint must say so too (seed 000: "the cursor says where to
        # fetch"), with nothing left pending, unless a justified halt stopped the stream
        v.completed = False
    effects_twice = [eid for eid, n in sink.effect_count.items() if n > 1 and eid in events]
    v.duplicated = in_order(set(effects_twice).union(receipts_twice))

    def violate(invariant, time, worker, detail):
        v.invariant_violations.append({"invariant": invariant, "time": time, "worker": worker, "detail": detail})

    v.regressions = _judge_writes(world, since, violate)
    for _seq, time, worker, _outcome, detail in unordered.values():
        violate(5, time, worker, detail)
    runs: dict[str, list] = {eid: [] for eid in effects_twice}
    for _s, t, w, e in sink.effects:
        if e in runs:
            runs[e].append((t, w))
    for eid, times in runs.items():
        violate(4, times[1][0], times[1][1], f"effect of {eid} ran {len(times)} times")
    for eid, rows in receipts_twice.items():
        violate(4, rows[1][0], rows[1][1], f"{eid} holds {len(rows)} applied receipts")
    v.invariant_violations.sort(key=lambda d: (d["time"], d["invariant"]))
    v.settlement_violations = settlement_violations(getattr(store, "operations", None), getattr(world, "service", None))
    return v


def _backfills(world) -> bool:
    """The provider contract the consumer was given: may events appear behind served positions?"""
    contract = getattr(world, "contract", None)
    if contract is not None:
        return contract.backfills
    return bool(getattr(getattr(world, "scenario", None), "backfills", False))


class _Pages:
    """What each worker had read and been served, replayed in sequence order beside the store's writes."""

    def __init__(self, world):
        store, provider, sink = world.store, world.provider, world.sink
        # at one sequence number reads, responses and decisions come before the write
        self._context = heapq.merge(((r[0], 0, r) for r in store.reads), ((r[0], 1, r) for r in provider.log),
                                    ((r[0], 2, r) for r in sink.decisions))
        self._upcoming = next(self._context, None)
        self.decisions: dict[str, str] = {}
        self._read: dict[int, object] = {}
        #: (worker, request cursor, next cursor) -> (the latest such response, the checkpoint read before it)
        self.fetched: dict[tuple, tuple] = {}
        #: (worker, next cursor) -> the latest response that returned it, and the read before it
        self.returned: dict[tuple, tuple] = {}

    def until(self, seq: int) -> None:
        """Take in everything that happened before the write at ``seq``."""
        while self._upcoming is not None and self._upcoming[0] <= seq:
            _s, kind, r = self._upcoming
            if kind == 0:
                self._read[r[2]] = r[3]
            elif kind == 1:
                seen = (r, self._read.get(r[2]))
                self.fetched[(r[2], r[3], r[4])] = seen
                self.returned[(r[2], r[4])] = seen
            else:
                self.decisions[r[3]] = r[4]
            self._upcoming = next(self._context, None)


def _judge_writes(world, since: dict[str, int], violate) -> int:
    """Every durable checkpoint write: regressions, invariant 2 over the whole stream, and for a write that
    publishes a cursor, invariants 3, 1 and 5 against the page that returned it."""
    provider, store = world.provider, world.store
    stream = _Stream(provider)
    ids, positions, since_get, bisect_right = stream.ids, stream.positions, since.get, bisect.bisect_right
    end = len(positions)
    covered = (None, 0)                 # the last write's applied_position and the end of the range it covered
    pages = _Pages(world)
    holds = _Holds(store.receipt_log)
    regressions = 0

    def done_by(eid, seq):
        s = since_get(eid)
        return s is not None and s <= seq

    for seq, time, worker, wkind, before, after in write_states(store.writes):
        (b_cursor, b_applied, b_version), (a_cursor, a_applied, a_version) = before, after
        pages.until(seq)
        moved_back = a_cursor != b_cursor and provider.place(a_cursor) < provider.place(b_cursor)
        if a_version < b_version or a_applied < b_applied or moved_back:
            regressions += 1
        if a_applied > b_applied:        # invariant 2: every event of the newly covered range is done
            # the range starts where the last one ended when this write continues it (the usual case)
            if covered[0] == b_applied:     # walk on from there: a commit covers an event or two, no search
                lo = hi = covered[1]
                while hi < end and positions[hi] <= a_applied:
                    hi += 1
            else:
                lo = bisect_right(positions, b_applied)
                hi = bisect_right(positions, a_applied, lo)
            covered = (a_applied, hi)
            undone = None
            for i in range(lo, hi):
                s = since_get(ids[i])
                if (s is None or s > seq) and stream.known(ids[i]):
                    undone = undone or []
                    undone.append((positions[i], ids[i]))
            if undone:
                for pos, eid in sorted(undone):
                    violate(2, time, worker, f"applied_position {a_applied} written while {eid} "
                                             f"(position {pos}) has no durable outcome")
        if wkind == "commit":
            continue
        response = _page_published(pages, worker, wkind, before, after, time, violate)
        if response is None:
            continue
        for eid in response[5]:
            if not done_by(eid, seq):
                # invariant 5: the handler's last decision, or failing that the event's durable receipt, is
                # a failure, dead letter, review or reversible hold; invariant 1: no outcome at all
                held = pages.decisions.get(eid)
                if held not in NON_TERMINAL:
                    held = holds.at(eid, seq)
                violate(5 if held else 1, time, worker,
                        f"token {a_cursor!r} published while {eid} "
                        + (f"is {held}" if held else "has no durable outcome"))
    return regressions


def _page_published(pages: _Pages, worker, wkind, before, after, time, violate):
    """Invariant 3 for one cursor-publishing write; returns the response whose page it closes, if any.

    Seed 000 step 5: the barrier swaps "from the attempt cursor and version to the returned next cursor and a
    greater version". It must publish the ``next_cursor`` of a page its worker fetched with the durable cursor
    it replaces, at any time before (read-ahead and a remembered attempt identity are fine); a compare-and-swap
    (``barrier``) matched the durable (cursor, version) by construction, an unconditional write must have read
    it before that fetch.
    """
    (b_cursor, _a, b_version), (a_cursor, _b, a_version) = before, after
    found = pages.fetched.get((worker, b_cursor, a_cursor))
    if found is None:
        other = pages.returned.get((worker, a_cursor))
        if other is None:
            violate(3, time, worker, f"cursor {a_cursor!r} published but the provider never returned "
                                     f"it for this worker's fetch")
            return None
        violate(3, time, worker, f"barrier from {other[0][3]!r} overwrote checkpoint ({b_cursor!r}, v{b_version}) "
                                 f"it did not read before fetching")
        return other[0]
    response, read = found
    if a_version <= b_version:
        violate(3, time, worker, f"barrier from {b_cursor!r} over checkpoint ({b_cursor!r}, v{b_version}) "
                                 f"does not raise checkpoint_version (v{a_version})")
    elif wkind != "barrier" and (read is None or read.resume_cursor != b_cursor
                                 or read.checkpoint_version != b_version):
        violate(3, time, worker, f"barrier from {b_cursor!r} overwrote checkpoint ({b_cursor!r}, v{b_version}) "
                                 f"it did not read before fetching")
    return response


def settlement_violations(ledger, service=None) -> list[dict]:
    """Seed 001 from ground truth: every transition of every operation record, against the service's log.

    ``committed_downgraded``: a transition took a record from ``committed`` to a weaker state (step 4: committed
    success is absorbing; step 5: a weaker observation must never downgrade it). ``wrong_reservation``: a
    transition committed a record with the reply to a request whose tuple, as the service logged it, is not the
    record's reservation at that moment (step 6: another request's, principal's or generation's result).
    """
    out: list[dict] = []
    if ledger is None:
        return out
    identity = {r.seq: r.identity for r in service.requests} if service is not None else {}
    for t in ledger.history:
        where = {"time": t.time, "worker": t.worker}
        if t.before == COMMITTED and t.after != COMMITTED:
            out.append({"kind": "committed_downgraded", **where,
                        "detail": f"operation {t.operation_id}: committed success of {t.reservation} "
                                  f"overwritten with {t.after} ({t.action}{': ' + t.detail if t.detail else ''})"})
        if t.action in ("settle", "write") and t.after == COMMITTED and t.reply is not None:
            true = identity.get(t.reply.request, t.reply.identity)
            if true != t.reservation:
                out.append({"kind": "wrong_reservation", **where,
                            "detail": f"operation {t.operation_id}: result of request {true} attached to "
                                      f"reservation {t.reservation} (differs in "
                                      f"{', '.join(t.reservation.differs(true))})"})
    return out


#: An event's fate in one run, for plots (:func:`event_fates`), in the order a legend lists them.
FATES = ("done before the run", "applied once", "replayed harmlessly", "ignored", "quarantined", "duplicated", "lost",
         "pending")


def event_fates(world, verdict: Verdict) -> dict[str, str]:
    """Each event's fate in ground truth, for plots: one of :data:`FATES`.

    ``duplicated``, ``lost`` and ``pending`` are the verdict's. Otherwise the event holds a terminal outcome:
    ``quarantined`` or ``ignored`` by its durable receipt; ``replayed harmlessly`` if it was delivered again after
    that outcome was durable and a worker recognised it and skipped it (a ``replay`` row of the trace at or after
    the outcome's moment); ``done before the run`` if its outcome is the scenario's initial state and no worker
    replayed it; else ``applied once``. A redelivery that came before the outcome was durable (the page retried
    after a crash, say) is no replay: the event was applied once, on the retry.
    """
    outcome_at = {seq: t for seq, t, *_ in world.store.receipt_log}
    outcome_at.update((seq, t) for seq, t, *_ in world.sink.effects)
    done_at = {eid: outcome_at[seq] for eid, seq in outcome_since(world).items()}
    initial = {eid for seq, _t, worker, eid, _o in world.store.receipt_log if seq == 0 and worker == 0}
    trace = world.trace
    replayed = {eid for step, eid, t in zip(trace.step, trace.event_id, trace.time)
                if step == "replay" and eid in done_at and t >= done_at[eid]}
    lost, pending, dup = set(verdict.lost), set(verdict.pending), set(verdict.duplicated)
    fates = {}
    for eid in world.provider.events:
        receipt = world.store.receipts.get(eid, ("",))[0]
        if eid in dup:
            fates[eid] = "duplicated"
        elif eid in lost:
            fates[eid] = "lost"
        elif eid in pending:
            fates[eid] = "pending"
        elif receipt in ("quarantined", "ignored"):
            fates[eid] = receipt
        elif eid in replayed:
            fates[eid] = "replayed harmlessly"
        elif eid in initial:
            fates[eid] = "done before the run"
        else:
            fates[eid] = "applied once"
    return fates


def lost_at(world, verdict: Verdict) -> dict[str, float]:
    """For each lost event, the moment the durable cursor moved past every page that carries it."""
    when = {}
    for eid in verdict.lost:
        when[eid] = 0.0
        for _seq, time, _w, _k, before, after in world.store.writes:
            if not world.provider.deliverable(eid, after.resume_cursor):
                when[eid] = time
                break
    return when
