"""Facts about one run that need the judge's notion of an outcome (:mod:`simkit.judge.outcomes`), for the
figures: each event's fate, when it held its outcome, the durable prefix, when it was at risk (per event, and
per trace row) and when its loss became final. The figures read these definitions (:mod:`simkit.viz.facts`
only names them).

Each takes a :class:`~simkit.truth.ground.GroundTruth`, or anything :func:`~simkit.truth.ground.as_truth`
reads (a World, a Run).
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from heapq import heappop, heappush

from simkit.model import Initial
from simkit.truth.derived import cursor_history, held_pages, joined_at
from simkit.truth.ground import as_truth

from .outcomes import outcomes

__all__ = ["FATES", "at_risk", "durable_prefix", "event_fates", "loss_final", "lost_at", "outcome_times",
           "unsafe_rows"]

#: An event's fate in one run, for plots (:func:`event_fates`), in the order a legend lists them.
FATES = ("done before the run", "applied once", "replayed harmlessly", "ignored", "quarantined", "duplicated",
         "lost", "pending")


def outcome_times(run) -> dict[str, float]:
    """For each event id, the simulated time from which it holds a terminal outcome in ground truth."""
    truth = as_truth(run)
    memo = truth.memo.get("outcome_times")
    if memo is None:
        time_of = {seq: t for seq, t, *_ in truth.store.receipt_log}
        time_of.update((seq, t) for seq, t, *_ in truth.sink.effects)
        memo = truth.memo["outcome_times"] = {eid: time_of[seq] for eid, seq in outcomes(truth).since.items()}
    return memo


def event_fates(run, verdict) -> dict[str, str]:
    """Each event's fate in ground truth, for plots: one of :data:`FATES`.

    ``duplicated``, ``lost`` and ``pending`` are the verdict's. Otherwise the event holds a terminal outcome:
    ``quarantined`` or ``ignored`` by its durable receipt; ``replayed harmlessly`` if it was delivered again
    after that outcome was durable and a worker recognised it and skipped it (a ``replay`` row of the trace at
    or after the outcome's moment); ``done before the run`` if its outcome is the scenario's initial state and
    no worker replayed it; else ``applied once``. A redelivery that came before the outcome was durable (the
    page retried after a crash, say) is no replay: the event was applied once, on the retry.
    """
    truth = as_truth(run)
    done_at = outcome_times(truth)
    initial = {eid for seq, _t, worker, eid, _o in truth.store.receipt_log if seq == 0 and worker == 0}
    trace = truth.trace
    replayed = {eid for step, eid, t in zip(trace.step, trace.event_id, trace.time)
                if step == "replay" and eid in done_at and t >= done_at[eid]}
    lost, pending, dup = set(verdict.lost), set(verdict.pending), set(verdict.duplicated)
    receipts = truth.store.receipts
    fates = {}
    for eid in truth.provider.events:
        receipt = receipts.get(eid, ("",))[0]
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


def durable_prefix(run) -> tuple[list[float], list[int]]:
    """Ground truth's complete durable prefix as a step function ``(times, positions)``.

    At each moment: the greatest position up to which every event of the stream (a late event only once it has
    been served: :func:`~simkit.truth.derived.joined_at`) holds a terminal outcome in ground truth: a receipt,
    and for an ``applied`` receipt on an external sink the effect itself. This is what ``applied_position``
    ought to say (invariant 2); before anything is done it is the initial ``applied_position``.
    """
    truth = as_truth(run)
    events = sorted(truth.provider.events.values(), key=lambda e: (e.position, e.id))
    done, known = outcome_times(truth), joined_at(truth)
    initial = (truth.scenario.initial if truth.scenario is not None else Initial()).applied_position
    empty = min(initial, events[0].position - 1 if events else initial)
    ends = [done.get(e.id, math.inf) for e in events]
    joins = sorted((known[e.id], i) for i, e in enumerate(events) if known[e.id] != math.inf)
    changes = sorted(t for t in {0.0, *done.values(), *known.values()} if t != math.inf)
    joined: list[int] = []      # the events joined so far, by rank in the stream
    undone: list[int] = []      # a heap of those not yet done (the first one bounds the prefix)
    j = 0
    times: list[float] = []
    values: list[int] = []
    for t in changes:
        while j < len(joins) and joins[j][0] <= t:
            insort(joined, joins[j][1])
            heappush(undone, joins[j][1])
            j += 1
        while undone and ends[undone[0]] <= t:
            heappop(undone)
        k = bisect_left(joined, undone[0] if undone else len(events)) - 1
        value = events[joined[k]].position if k >= 0 else empty
        if not values or values[-1] != value:
            times.append(t)
            values.append(value)
    return times, values


def at_risk(run) -> dict[str, list[tuple[float, float]]]:
    """Per event, the spans during which it was at risk: the durable ``resume_cursor`` could no longer deliver
    it while it was part of the stream (:func:`~simkit.truth.derived.joined_at`) and had no durable outcome.
    Invariant 1 forbids every such span; an event that never had one is absent. A span ends when the event
    gets its outcome, when the cursor can deliver it again, or (a lost event's last one) at the run's end:
    :func:`loss_final` says when that loss became final."""
    truth = as_truth(run)
    provider = truth.provider
    done, known = outcome_times(truth), joined_at(truth)
    history = cursor_history(truth)
    bounds = [t for t, *_ in history[1:]] + [math.inf]
    ranks = [provider.cursor_rank(cursor) for _t, cursor, _kind in history]
    trace = truth.trace
    end = trace.time[-1] if trace is not None and len(trace) else 0.0
    forward = all(a <= b for a, b in zip(ranks, ranks[1:]))     # no cursor write went back on the chain
    out: dict[str, list[tuple[float, float]]] = {}
    for eid in provider.events:
        finish, last = done.get(eid, math.inf), provider.last_rank(eid)
        spans: list[tuple[float, float]] = []
        # only the cursors durable after the event joined (a span ending then is empty) and before it is done;
        # on a chain walked forward, from the first past the event's last page
        start = bisect_right(bounds, known[eid])
        for j in range(max(start, bisect_right(ranks, last)) if forward else start, len(history)):
            t0, t1 = history[j][0], bounds[j]
            a, b = max(t0, known[eid]), min(t1, finish)
            if a >= finish:
                break
            if (a >= b and b != math.inf) or last >= ranks[j]:
                continue
            if spans and spans[-1][1] == a:
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
        if spans:
            out[eid] = [(a, min(b, max(a, end))) for a, b in spans]
    return out


def loss_final(run, lost, risk: dict | None = None) -> dict[str, tuple[float, str]]:
    """For each event of ``lost`` (a verdict's), when its loss became final and what made it so: the moment
    the durable cursor last moved past it (``page barrier``, or the write's kind) or, if later, the end of the
    last attempt that still held it in memory and could have applied it (``crash``, ``halt``, ``worker moved
    on``, ``end of run``). An event never at risk (:func:`at_risk`: it never joined the stream) is absent.

    Seed 000's walkthrough with the token persisted on fetch: the barrier to ``C8`` puts ``e107`` at risk at
    t = 1.5, the worker still holds it, and the crash at t = 2 before it commits makes the loss final."""
    truth = as_truth(run)
    risk = at_risk(truth) if risk is None else risk
    kind_at = {t: kind for t, _c, kind in cursor_history(truth)}
    holds = held_pages(truth) if truth.trace is not None else []
    out = {}
    for eid in lost:
        spans = risk.get(eid)
        if not spans:
            continue
        start = spans[-1][0]
        when, why = start, {"barrier": "page barrier"}.get(kind_at.get(start, ""),
                                                           kind_at.get(start, "write"))
        for h in holds:
            # an attempt that ends with its own barrier's instant leaves the barrier final; a crash then, the
            # crash
            if eid in h.ids and (h.end > when or (h.end == when and h.ended_by in ("crash", "halt"))):
                when, why = (
                    h.end,
                    {"load": "worker moved on", "fetch": "worker moved on"}.get(h.ended_by, h.ended_by),
                )
        out[eid] = (when, why)
    return out


def lost_at(run, verdict) -> dict[str, float]:
    """For each lost event, the moment its loss became final (:func:`loss_final`)."""
    return {eid: when for eid, (when, _why) in loss_final(run, verdict.lost).items()}


def unsafe_rows(run) -> list[bool]:
    """Per row of the run's trace: has the durable ``resume_cursor`` moved past an event (one the stream has
    served or will serve in order: :func:`~simkit.truth.derived.joined_at`) that has no durable outcome yet?
    Invariant 1 forbids it; every lost event starts here."""
    truth = as_truth(run)
    done, known = outcome_times(truth), joined_at(truth)
    provider = truth.provider
    # each event from when it joins until it is done: (from, until, the last chain place that delivers it)
    spans = sorted((known[e], done.get(e, math.inf), provider.last_rank(e)) for e in provider.events
                   if known[e] < done.get(e, math.inf))
    times, cursors = truth.trace.time, truth.trace.resume_cursor
    rank = {c: provider.cursor_rank(c) for c in set(cursors)}
    out = [False] * len(times)
    open_: list[tuple[float, float]] = []   # a heap of the joined spans: (last place, until)
    j = 0
    for row in sorted(range(len(times)), key=times.__getitem__):
        time = times[row]
        while j < len(spans) and spans[j][0] <= time:
            heappush(open_, (spans[j][2], spans[j][1]))
            j += 1
        while open_ and open_[0][1] <= time:
            heappop(open_)
        # the least place still open is what the durable cursor must not be past
        out[row] = bool(open_) and open_[0][0] < rank[cursors[row]]
    return out
