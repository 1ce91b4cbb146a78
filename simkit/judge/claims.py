"""A consumer's claims against ground truth (docs/verdict.md, "Claims and facts"): receipts against the handler's
decisions, halts against what the provider served. The checker (:mod:`simkit.judge.checker`) owns the verdict; this
module owns the two facts "this receipt or effect was ordered by the handler" and "this halt had a cause".

*A receipt is a claim, the handler's decision is the fact.* Seed 000 step 4 treats quarantine as terminal
"only when a durable receipt binds the stable event identity to a final policy disposition", and invariant 5
says a retryable, review-pending or reversible outcome "blocks the page barrier". So a durable ``ignored``
receipt needs the handler's ``ignore``, a ``quarantined`` one its ``quarantine`` (poison, or a review resolved
to quarantine), and an effect or ``applied`` receipt its ``apply``, each as the event's latest decision when
the write became durable. An ``ok`` event's handler always answers ``apply`` and logs nothing: with no
decision logged, only ``apply`` is ordered for it.

*A halt is a claim that the provider broke its contract* (seed 000 step 3: "an unexpected regression,
conflicting identity at the same position, or a gap that violates the provider contract stops the attempt").
It is justified only when the page the worker had just been served shows one of them, or when the provider
refused a cursor it had itself issued.
"""
from __future__ import annotations

from itertools import chain, count

from simkit.model import TERMINAL
from simkit.truth.derived import handled, late_arrivals, stream_index
from simkit.truth.ground import View

__all__ = ["ORDERED_BY", "halt_justified", "unjustified_writes"]

#: The handler decision that orders each terminal outcome.
ORDERED_BY = {"applied": "apply", "ignored": "ignore", "quarantined": "quarantine"}


class _Decisions:
    """The handler's decisions by event, in the order they were made."""

    def __init__(self, decision_log):
        #: event id -> its decisions as (seq, decision), in order
        self.by_event: dict[str, list[tuple[int, str]]] = {}
        for seq, _t, _w, eid, decision in decision_log:
            self.by_event.setdefault(eid, []).append((seq, decision))

    def latest(self, eid: str, seq: int) -> str | None:
        """The event's last decision made before ``seq``, if any."""
        last = None
        for s, decision in self.by_event.get(eid, ()):
            if s > seq:
                break
            last = decision
        return last

    def any(self, eid: str) -> bool:
        return eid in self.by_event


def unjustified_writes(truth) -> dict[str, tuple[int, float, int, str, str]]:
    """Every event with a durable write the handler did not order: id -> (seq, time, worker, outcome, detail)
    of its first such write (``outcome``: the receipt's, ``applied`` for an effect). The writes judged are terminal
    receipts and effects of a :class:`~simkit.truth.ground.GroundTruth`; the initial state (worker 0) is not.
    An event's ``behavior`` says whether its handler logs.
    """
    store, sink, events = truth.store, truth.sink, truth.provider.events
    decisions = _Decisions(sink.decisions)
    out: dict[str, tuple[int, float, int, str, str]] = {}

    def judge(seq, time, worker, eid, outcome, what):
        wanted = ORDERED_BY[outcome]
        latest = decisions.latest(eid, seq)
        if latest is None:
            event = events.get(eid)
            if wanted == "apply" and event is not None and event.behavior == "ok" and not decisions.any(eid):
                return                                          # an ok event: the handler answers apply
            why = "the handler never decided it"
        elif latest == wanted:
            return
        else:
            why = f"the handler's decision was {latest}"
        if eid not in out or seq < out[eid][0]:
            out[eid] = (seq, time, worker, outcome, f"{what} of {eid} while {why}")

    # the usual case, judged without a call and without reading its id: an ok event of the stream (its handler
    # logs nothing), with no decision logged, applied
    stream = stream_index(truth)
    decided = stream.flags(chain(decisions.by_event, handled(truth)))
    receipts, effects = View(store.receipt_log), View(sink.effects)
    for k, (worker, outcome), rank in zip(count(), receipts.fields(2, 4), stream.ranks(receipts)):
        if worker and outcome in TERMINAL:
            if outcome == "applied" and rank >= 0 and not decided[rank]:
                continue
            seq, time, worker, eid, outcome = receipts[k]
            judge(seq, time, worker, eid, outcome, f"durable {outcome} receipt")
    for k, (_seq, worker), rank in zip(count(), effects.fields(0, 2), stream.ranks(effects)):
        if worker and (rank < 0 or decided[rank]):
            seq, time, worker, eid = effects[k]
            if eid not in out:
                judge(seq, time, worker, eid, "applied", "effect")
    return out


def halt_justified(halt: tuple[float, int, str], truth) -> bool:
    """Did ground truth give the worker cause to stop where it did?

    The worker's last response before the halt must show a source-order regression, two ids at one position
    (within the page, or an id already served or holding a receipt at that position), an event the provider
    slipped in behind served positions although its contract has no backfills, or a refusal of a cursor the
    provider itself issued (``truth``: a :class:`~simkit.truth.ground.GroundTruth`).
    """
    provider, store = truth.provider, truth.store
    time, worker, _reason = halt
    loaded = max((r[0] for r in store.reads if r[2] == worker and r[1] <= time), default=-1)
    response = None
    for row in provider.log:
        if row[1] > time:
            break
        if row[2] == worker and row[0] > loaded:
            response = row
    if response is None:                                  # it stopped before this attempt saw any page
        return False
    seq, _t, _w, cursor, next_cursor, ids = response
    if not ids and not next_cursor:                       # the provider refused the cursor
        return cursor == provider.start or any(r[4] == cursor for r in provider.log if r[0] < seq)
    events = provider.events
    positions = [events[eid].position for eid in ids]
    if any(b <= a for a, b in zip(positions, positions[1:])):
        return True
    return _conflicting_identity(ids, time, provider, store) or (not truth.backfills
                                                                  and not late_arrivals(truth).isdisjoint(ids))


def _conflicting_identity(ids, time: float, provider, store) -> bool:
    """Does an event of the page share its position with another id served or holding a receipt by ``time``?"""
    events = provider.events
    wanted = {events[eid].position: eid for eid in ids}
    if len(wanted) < len(ids):
        return True
    others = {eid for eid, e in events.items() if e.position in wanted and eid != wanted[e.position]}
    if not others:
        return False
    if any(r[3] in others for r in store.receipt_log if r[1] <= time):
        return True
    return any(eid in others for row in provider.log if row[1] <= time for eid in row[5])

