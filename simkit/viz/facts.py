"""The facts a timeline draws, read from ground truth and the trace: ground truth's durable prefix, the trace rows
where the durable cursor was unsafe, the pages each worker held in memory (seed 000, step 2), the spans during which
an event was at risk (invariant 1, docs/verdict.md) and when a lost event's loss became final.

Two facts come straight from ground truth and are defined here in one small function each: when each event joined
the stream a consumer can know (:func:`known_from`, a backfill only once served) and the durable cursor's history
(:func:`cursor_history`); :func:`terminal_times` is when each event got its terminal outcome.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from simkit.judge.checker import outcome_since
from simkit.model import REQUEST_LOST

__all__ = ["Hold", "at_risk", "cursor_history", "durable_prefix", "held_pages", "known_from", "loss_final",
           "terminal_times", "unsafe_rows"]


def terminal_times(world) -> dict[str, float]:
    """For each event id, the simulated time from which it holds a terminal outcome in ground truth."""
    time_of = {seq: t for seq, t, *_ in world.store.receipt_log}
    time_of.update((seq, t) for seq, t, *_ in world.sink.effects)
    return {eid: time_of[seq] for eid, seq in outcome_since(world).items()}


def known_from(world) -> dict[str, float]:
    """When each event joins the stream the consumer can know: from the start, except a backfill, which joins
    when it is first served behind a position already served."""
    known = {eid: 0.0 for eid in world.provider.events}
    highest = None
    seen: set[str] = set()
    for _seq, time, _w, _cursor, _next, ids in world.provider.log:
        top = highest
        for eid in ids:
            pos = world.provider.events[eid].position
            if eid not in seen and highest is not None and pos < highest:
                known[eid] = time
            seen.add(eid)
            top = pos if top is None else max(top, pos)
        highest = top
    return known


def durable_prefix(run) -> tuple[list[float], list[int]]:
    """Ground truth's complete durable prefix as a step function ``(times, positions)``.

    At each moment: the greatest position up to which every event of the stream (a backfill only once it has
    been served) holds a terminal outcome in ground truth: a receipt, and for an ``applied`` receipt on an
    external sink the effect itself. This is what ``applied_position`` ought to say (invariant 2); a consumer's
    own claim is drawn separately. Before anything is done it is the initial ``applied_position``.
    """
    world = run.world
    events = sorted(world.provider.events.values(), key=lambda e: (e.position, e.id))
    done, known = terminal_times(world), known_from(world)
    initial = world.scenario.initial.applied_position
    changes = sorted({0.0, *done.values(), *known.values()})
    times, values = [], []
    for t in changes:
        prefix = None
        for e in events:
            if known[e.id] > t:
                continue
            if done.get(e.id, float("inf")) > t:
                break
            prefix = e.position
        value = prefix if prefix is not None else min(initial, events[0].position - 1 if events else initial)
        if not values or values[-1] != value:
            times.append(t)
            values.append(value)
    return times, values


def unsafe_rows(run) -> list[bool]:
    """Per trace row: has the durable ``resume_cursor`` moved past an event (one the stream has served or will
    serve in order) that has no durable outcome yet? Invariant 1 forbids it; every lost event starts here."""
    world = run.world
    done, known = terminal_times(world), known_from(world)
    provider = world.provider
    windows: dict[str, tuple[list[float], list[float]]] = {}
    out = []
    for time, cursor in zip(run.trace.time, run.trace.resume_cursor):
        if cursor not in windows:
            # the moments during which some event this cursor can no longer deliver is known and not yet done
            spans = sorted((known[e], done.get(e, float("inf"))) for e in provider.events
                           if not provider.deliverable(e, cursor) and known[e] < done.get(e, float("inf")))
            starts, ends = [], []
            for a, b in spans:
                if ends and a <= ends[-1]:
                    ends[-1] = max(ends[-1], b)
                else:
                    starts.append(a)
                    ends.append(b)
            windows[cursor] = (starts, ends)
        starts, ends = windows[cursor]
        i = bisect_right(starts, time) - 1
        out.append(i >= 0 and time < ends[i])
    return out


@dataclass(frozen=True)
class Hold:
    """A page one worker held in memory (seed 000, step 2): from the fetch that returned it to the step that ended
    the attempt (``ended_by``: the worker's next ``fetch``, ``load``, ``crash``, ``halt`` or ``restart``, or
    ``end of run``). ``row``/``end_row`` index the trace (``end_row`` is ``None`` at the run's end)."""

    worker: int
    start: float
    end: float
    cursor: str
    next_cursor: str
    ids: tuple[str, ...]
    row: int
    end_row: int | None
    ended_by: str


#: The steps after which a worker no longer holds the page it fetched.
_ENDS = frozenset({"fetch", "load", "crash", "halt", "restart"})


def held_pages(run) -> list[Hold]:
    """Every page a worker received, with the ``next_cursor`` it then held, in the order they were fetched.

    The provider's log (ground truth) says what each response carried; the trace says which responses reached
    their worker (a lost reply or a refused cursor leaves nothing in memory) and when the attempt ended.
    """
    trace = run.trace
    served: dict[int, list] = {}
    for _seq, _t, worker, cursor, next_cursor, ids in run.world.provider.log:
        served.setdefault(worker, []).append((cursor, next_cursor, ids))
    taken: dict[int, int] = {}
    holding: dict[int, tuple] = {}         # worker -> (start, cursor, next_cursor, ids, row) of the page it holds
    holds = []
    for i, (t, w, step, outcome) in enumerate(zip(trace.time, trace.worker, trace.step, trace.outcome)):
        if step in _ENDS and w in holding:
            start, cursor, next_cursor, ids, row = holding.pop(w)
            holds.append(Hold(w, start, t, cursor, next_cursor, ids, row, i, step))
        if step == "fetch" and outcome != REQUEST_LOST:     # a request lost on its way left no log entry
            k = taken.get(w, 0)
            if k < len(served.get(w, ())):
                taken[w] = k + 1
                cursor, next_cursor, ids = served[w][k]
                if outcome.endswith(" events"):             # not a lost reply, not a refused cursor
                    holding[w] = (t, cursor, next_cursor, tuple(ids), i)
    end = trace.time[-1] if len(trace) else 0.0
    holds += [Hold(w, start, end, cursor, next_cursor, ids, row, None, "end of run")
              for w, (start, cursor, next_cursor, ids, row) in holding.items()]
    return sorted(holds, key=lambda h: h.row)


def cursor_history(world) -> list[tuple[float, str, str]]:
    """The durable ``resume_cursor`` as ``(from time, cursor, the write's kind)``, from the store's log of writes."""
    writes = world.store.writes
    first = writes[0][4].resume_cursor if len(writes) else world.store.checkpoint.resume_cursor
    history = [(0.0, first, "initial")]
    for _seq, time, _w, kind, _before, after in writes:
        if after.resume_cursor != history[-1][1]:
            history.append((time, after.resume_cursor, kind))
    return history


def at_risk(run) -> dict[str, list[tuple[float, float]]]:
    """Per event, the spans during which it was at risk: the durable ``resume_cursor`` could no longer deliver it
    while it was part of the stream (a backfill from when it was served) and had no durable outcome. Invariant 1
    forbids every such span; an event that never had one is absent. A span ends when the event gets its outcome,
    when the cursor can deliver it again, or (a lost event's last one) at the run's end: :func:`loss_final` says
    when that loss became final."""
    world = run.world
    provider = world.provider
    done, known = terminal_times(world), known_from(world)
    history = cursor_history(world)
    bounds = [t for t, *_ in history[1:]] + [float("inf")]
    end = run.trace.time[-1] if len(run.trace) else 0.0
    out: dict[str, list[tuple[float, float]]] = {}
    for eid in provider.events:
        finish = done.get(eid, float("inf"))
        spans: list[tuple[float, float]] = []
        for (t0, cursor, _kind), t1 in zip(history, bounds):
            a, b = max(t0, known[eid]), min(t1, finish)
            if a >= finish or (a >= b and b != float("inf")) or provider.deliverable(eid, cursor):
                continue
            if spans and spans[-1][1] == a:
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
        if spans:
            out[eid] = [(a, min(b, max(a, end))) for a, b in spans]
    return out


def loss_final(run, risk: dict | None = None) -> dict[str, tuple[float, str]]:
    """For each lost event, when its loss became final and what made it so: the moment the durable cursor last
    moved past it (``page barrier``, or the write's kind) or, if later, the end of the last attempt that still
    held it in memory and could have applied it (``crash``, ``halt``, ``worker moved on``, ``end of run``).

    Seed 000's walkthrough with the token persisted on fetch: the barrier to ``C8`` puts ``e107`` at risk at
    t = 1.5, the worker still holds it, and the crash at t = 2 before it commits makes the loss final."""
    world = run.world
    risk = at_risk(run) if risk is None else risk
    history = cursor_history(world)
    kind_at = {t: kind for t, _c, kind in history}
    holds = held_pages(run)
    out = {}
    for eid in run.verdict.lost:
        spans = risk.get(eid)
        if not spans:
            continue
        start = spans[-1][0]
        when, why = start, {"barrier": "page barrier"}.get(kind_at.get(start, ""), kind_at.get(start, "write"))
        for h in holds:
            # an attempt that ends with its own barrier's instant leaves the barrier final; a crash then, the crash
            if eid in h.ids and (h.end > when or (h.end == when and h.ended_by in ("crash", "halt"))):
                when, why = h.end, {"load": "worker moved on", "fetch": "worker moved on"}.get(h.ended_by, h.ended_by)
        out[eid] = (when, why)
    return out
