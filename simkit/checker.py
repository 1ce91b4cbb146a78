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

from .collector import paused
from .log import write_states
from .model import NON_TERMINAL, TERMINAL
from .settlement import COMMITTED

#: Kinds of ``settlement_violations`` (seed 001, "Failure prevented").
SETTLEMENT_KINDS = ("committed_downgraded", "wrong_reservation")


@dataclass
class Verdict:
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    regressions: int = 0
    invariant_violations: list[dict] = field(default_factory=list)
    halted: str | None = None
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
                "pending": self.pending, "completed": self.completed,
                "settlement_violations": self.settlement_violations}


def terminal_since(store, sink) -> dict[str, int]:
    """For each event id, the log sequence number from which it holds a terminal outcome in ground truth."""
    first_effect: dict[str, int] = {}
    for seq, _t, _w, eid in sink.effects:
        if eid not in first_effect:
            first_effect[eid] = seq
    since: dict[str, int | None] = {}   # None: the first terminal receipt is ``applied`` but no effect ran
    for seq, _t, _w, eid, outcome in store.receipt_log:
        if outcome in TERMINAL and eid not in since:
            if outcome != "applied":
                since[eid] = seq
            else:
                effect = first_effect.pop(eid, None)    # taken, not copied: its seq is held once, in `since`
                since[eid] = None if effect is None else max(seq, effect)
    if None in since.values():
        since = {eid: seq for eid, seq in since.items() if seq is not None}
    return since


def check(world) -> Verdict:
    """Judge a finished run. ``world`` needs ``provider``, ``store``, ``sink``, ``halts`` and ``completed``."""
    with paused():
        return _check(world)


def _check(world) -> Verdict:
    provider, store, sink = world.provider, world.store, world.sink
    events = provider.events
    since = terminal_since(store, sink)
    final_cursor = store.checkpoint.resume_cursor
    v = Verdict(halted=world.halts[0][2] if world.halts else None, completed=bool(world.completed))
    def in_order(ids):                  # stream order: by position, then id (sorting only the few reported)
        return sorted(ids, key=lambda eid: (events[eid].position, eid))

    for eid in in_order(eid for eid in events if eid not in since):
        (v.pending if provider.deliverable(eid, final_cursor) else v.lost).append(eid)
    v.duplicated = in_order(eid for eid, n in sink.effect_count.items() if n > 1 and eid in events)

    def violate(invariant, time, worker, detail):
        v.invariant_violations.append({"invariant": invariant, "time": time, "worker": worker, "detail": detail})

    def done_by(eid, seq):
        s = since.get(eid)
        return s is not None and s <= seq

    decisions: dict[str, str] = {}
    sorted_page: dict[int, tuple] = {}   # worker -> (its last response's seq, that page's (position, id) sorted)
    last_read: dict[int, object] = {}
    last_page: dict[int, tuple] = {}     # worker -> (response, the checkpoint it had read before fetching)
    # Every durable write, judged against what its worker had read and fetched before it (same clock; at one
    # sequence number reads, responses and decisions come first).
    context = heapq.merge(((r[0], 0, r) for r in store.reads), ((r[0], 1, r) for r in provider.log),
                          ((r[0], 2, r) for r in sink.decisions))
    upcoming = next(context, None)
    for seq, time, worker, wkind, before, after in write_states(store.writes):
        (b_cursor, b_applied, b_version), (a_cursor, a_applied, a_version) = before, after
        while upcoming is not None and upcoming[0] <= seq:
            _s, kind, r = upcoming
            if kind == 0:
                last_read[r[2]] = r[3]
            elif kind == 1:
                last_page[r[2]] = (r, last_read.get(r[2]))
            else:
                decisions[r[3]] = r[4]
            upcoming = next(context, None)
        moved_back = a_cursor != b_cursor and provider.place(a_cursor) < provider.place(b_cursor)
        if a_version < b_version or a_applied < b_applied or moved_back:
            v.regressions += 1
        response, read = last_page.get(worker, (None, None))
        if a_applied > b_applied and response is not None:
            seen, page = sorted_page.get(worker, (None, None))
            if seen != response[0]:         # sorted once per response, kept only while it is the worker's last
                page = sorted((events[e].position, e) for e in response[5])
                sorted_page[worker] = (response[0], page)
            lo = bisect.bisect_right(page, (b_applied, "\uffff"))
            hi = bisect.bisect_right(page, (a_applied, "\uffff"))
            for pos, eid in page[lo:hi]:
                if not done_by(eid, seq):
                    violate(2, time, worker, f"applied_position {a_applied} written while {eid} "
                                             f"(position {pos}) has no durable outcome")
        if wkind == "commit":
            continue
        # A cursor-publishing write: invariants 3, 1 and 5.
        if response is None or response[4] != a_cursor:
            violate(3, time, worker, f"cursor {a_cursor!r} published but the provider never returned "
                                     f"it for this worker's fetch")
            continue
        if (response[3] != b_cursor or read is None or read.resume_cursor != b_cursor
                or read.checkpoint_version != b_version or a_version <= b_version):
            violate(3, time, worker, f"barrier from {response[3]!r} overwrote checkpoint "
                                     f"({b_cursor!r}, v{b_version}) "
                                     f"it did not read before fetching")
        for eid in response[5]:
            if not done_by(eid, seq):
                blocked = decisions.get(eid) in NON_TERMINAL
                violate(5 if blocked else 1, time, worker,
                        f"token {a_cursor!r} published while {eid} "
                        + (f"is {decisions[eid]}" if blocked else "has no durable outcome"))
    runs: dict[str, list] = {eid: [] for eid in v.duplicated}
    for _s, t, w, e in sink.effects:
        if e in runs:
            runs[e].append((t, w))
    for eid, times in runs.items():
        violate(4, times[1][0], times[1][1], f"effect of {eid} ran {len(times)} times")
    v.invariant_violations.sort(key=lambda d: (d["time"], d["invariant"]))
    v.settlement_violations = settlement_violations(getattr(store, "operations", None), getattr(world, "service", None))
    return v


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


FATES = ("applied once", "replayed harmlessly", "duplicated", "quarantined", "lost", "pending")


def event_fates(world, verdict: Verdict) -> dict[str, str]:
    """Each event's fate in ground truth, for plots: one of :data:`FATES`."""
    delivered: dict[str, int] = {}
    for rec in world.provider.log:
        for eid in rec[5]:
            delivered[eid] = delivered.get(eid, 0) + 1
    lost, pending, dup = set(verdict.lost), set(verdict.pending), set(verdict.duplicated)
    fates = {}
    for eid in world.provider.events:
        if eid in dup:
            fates[eid] = "duplicated"
        elif eid in lost:
            fates[eid] = "lost"
        elif eid in pending:
            fates[eid] = "pending"
        elif world.store.receipts.get(eid, ("",))[0] == "quarantined":
            fates[eid] = "quarantined"
        else:
            fates[eid] = "replayed harmlessly" if delivered.get(eid, 0) > 1 else "applied once"
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
