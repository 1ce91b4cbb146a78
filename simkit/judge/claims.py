"""A consumer's claims against ground truth (docs/verdict.md, "Claims and facts"): receipts against the
handler's decisions. The checker (:mod:`simkit.judge.checker`) owns the verdict; this module owns the fact
"this receipt or effect was ordered by the handler". Halts, the other claim a consumer makes, are
:mod:`simkit.judge.halts`'.

*A receipt is a claim, the handler's decision is the fact.* Seed 000 step 4 treats quarantine as terminal
"only when a durable receipt binds the stable event identity to a final policy disposition", and invariant 5
says a retryable, review-pending or reversible outcome "blocks the page barrier". So a durable ``ignored``
receipt needs the handler's ``ignore``, a ``quarantined`` one its ``quarantine`` (poison, or a review resolved
to quarantine), and an effect or ``applied`` receipt its ``apply``, each as the event's latest decision when
the write became durable. An ``ok`` event's handler always answers ``apply`` and logs nothing: with no
decision logged, only ``apply`` is ordered for it.
"""
from __future__ import annotations

from itertools import chain

from simkit.model import TERMINAL
from simkit.truth import passes
from simkit.truth.derived import handled, stream_index
from simkit.truth.ground import View
from simkit.truth.log import EffectLog, ReceiptLog

__all__ = ["ORDERED_BY", "unjustified_writes"]

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
    of its first such write (``outcome``: the receipt's, ``applied`` for an effect). The writes judged are
    terminal receipts and effects of a :class:`~simkit.truth.ground.GroundTruth`; the initial state (worker 0)
    is not. An event's ``behavior`` says whether its handler logs.
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

    # the usual case, judged by a pass (:func:`~.passes.claims`), with no call and no id read: an ok event of
    # the stream (its handler logs nothing), with no decision logged, applied
    stream = stream_index(truth)
    decided = stream.flags(chain(decisions.by_event, handled(truth)))
    receipts, effects = View(store.receipt_log).as_log(ReceiptLog), View(sink.effects).as_log(EffectLog)
    for log, outcomes in ((receipts, receipts.columns[4]), (effects, None)):
        workers, mark = passes.ints(log.columns[2])
        codes, kinds = (None, b"") if outcomes is None else (outcomes.codes, passes.outcome_kinds(outcomes))
        ranks, k = stream.ranks(View(log)), 0
        while (k := passes.claims(workers, mark, codes, kinds, ranks, decided, k)) < len(log):
            seq, time, worker, eid, *outcome = log[k]
            outcome, rank, k = outcome[0] if outcome else "applied", ranks[k], k + 1
            if not worker or outcome not in TERMINAL or (outcome == "applied" and rank >= 0
                                                         and not decided[rank]):
                continue
            if log is receipts:
                judge(seq, time, worker, eid, outcome, f"durable {outcome} receipt")
            elif eid not in out:
                judge(seq, time, worker, eid, "applied", "effect")
    return out

