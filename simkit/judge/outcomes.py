"""When each event holds a terminal outcome in ground truth (docs/verdict.md, ``lost`` and invariant 2): a terminal
receipt the handler ordered, and for an ``applied`` one its effect in the sink as well."""
from __future__ import annotations

from simkit.model import TERMINAL
from simkit.truth.ground import as_truth

from .claims import unjustified_writes

__all__ = ["Outcomes", "outcome_since", "outcomes", "terminal_since", "void_claims"]


class Outcomes:
    """The outcome facts of one run, from one pass over the receipt log and one over the effect log.

    ``since``: event id -> the log sequence number from which it holds a terminal outcome. ``again``: the id of
    every terminal receipt written for an event that already held one. ``repeated``: is some event's effect in
    the sink more than once?
    """

    __slots__ = ("since", "again", "repeated")

    def __init__(self, receipt_log, effects, void=()):
        first_effect: dict[str, int] = {}
        repeated = False
        for seq, _t, _w, eid in effects:
            if eid not in first_effect:
                first_effect[eid] = seq
            else:
                repeated = True
        since: dict[str, int | None] = {}   # None: the first terminal receipt is ``applied`` but no effect ran
        again: list[str] = []
        pop = first_effect.pop
        for seq, _t, _w, eid, outcome in receipt_log:
            if outcome not in TERMINAL:
                continue
            if outcome != "applied" and eid in void:
                continue
            if eid in since:
                again.append(eid)
            elif outcome != "applied":
                since[eid] = seq
            else:
                effect = pop(eid, None)      # taken, not copied: its seq is held once, in `since`
                since[eid] = None if effect is None else (seq if seq > effect else effect)
        if None in since.values():
            since = {eid: seq for eid, seq in since.items() if seq is not None}
        self.since, self.again, self.repeated = since, again, repeated


def terminal_since(store, sink, again: list | None = None, void=()) -> dict[str, int]:
    """For each event id, the log sequence number from which it holds a terminal outcome in ground truth.

    ``again``, if given, receives the id of every terminal receipt written for an event that already held one.
    ``void``: ids whose ``ignored`` or ``quarantined`` receipts the handler never ordered
    (:func:`simkit.judge.claims.unjustified_writes`): such a receipt is a claim, not an outcome.
    """
    found = Outcomes(store.receipt_log, sink.effects, void)
    if again is not None:
        again.extend(found.again)
    return found.since


def void_claims(unordered: dict) -> set[str]:
    """The events whose ``ignored``/``quarantined`` claim the handler never ordered (an unordered effect did
    happen: its ``applied`` receipt still counts, and is reported)."""
    return {eid for eid, u in unordered.items() if u[3] != "applied"}


def outcomes(truth) -> Outcomes:
    """:class:`Outcomes` as the checker counts them: receipts the handler never ordered are no outcome."""
    return Outcomes(truth.store.receipt_log, truth.sink.effects, void_claims(unjustified_writes(truth)))


def outcome_since(run) -> dict[str, int]:
    """:func:`terminal_since` as the checker counts it, for a run or its ground truth (:func:`as_truth`)."""
    return outcomes(as_truth(run)).since
