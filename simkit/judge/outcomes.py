"""When each event holds a terminal outcome in ground truth (docs/verdict.md, ``lost`` and invariant 2): a terminal
receipt the handler ordered, and for an ``applied`` one its effect in the sink as well."""
from __future__ import annotations

from array import array
from itertools import chain

from simkit.model import TERMINAL
from simkit.truth.derived import stream_index, stream_order
from simkit.truth.ground import as_truth

from .claims import unjustified_writes

__all__ = ["NONE", "Outcomes", "outcome_since", "outcomes", "terminal_since", "void_claims"]


#: In :attr:`Outcomes.at`: no terminal outcome (an ``applied`` receipt still waiting for its effect is -2 - seq).
NONE = -1


class Outcomes:
    """The outcome facts of one run, from one pass over the receipt log and one over the effect log.

    An event holds a terminal outcome from its first terminal receipt on, and for an ``applied`` one from the
    later of that receipt and the event's first effect (docs/verdict.md: "``applied`` means the effect is in the
    sink's log"). ``void``: ids whose ``ignored`` or ``quarantined`` receipts the handler never ordered
    (:func:`void_claims`): such a receipt is a claim, not an outcome.

    Kept as a column beside ``ids`` (the stream's ids in position order) and ``extra`` (any other id the receipts
    name): ``at[i]`` is the log sequence number from which the ``i``-th of them holds its outcome, or :data:`NONE`;
    ``index`` maps an id to its ``i``. A typed array, not a table of ints by id: the checker walks it in stream
    order, and a run's biggest tables are the check's cost. ``again``: the id of every terminal receipt written
    for an event that already held one.
    """

    __slots__ = ("ids", "extra", "index", "more", "at", "again")

    def __init__(self, receipt_log, effects, ids=(), void=(), index: dict | None = None):
        self.ids, self.extra, self.more = ids, [], {}
        #: the stream's id -> its place in ``ids`` (not written to: the ids of ``extra`` are in ``more``)
        self.index = index = dict(zip(ids, range(len(ids)))) if index is None else index
        self.at = at = array("q", [NONE]) * len(ids)
        self.again = again = []
        get, more, waiting = index.get, self.more, 0
        for seq, _t, _w, eid, outcome in receipt_log:
            if outcome not in TERMINAL or (outcome != "applied" and eid in void):
                continue
            i = get(eid)
            if i is None:                       # an id the stream does not hold: after the stream's
                i = more.get(eid)
                if i is None:
                    i = more[eid] = len(at)
                    self.extra.append(eid)
                    at.append(NONE)
            if at[i] != NONE:
                again.append(eid)
            elif outcome != "applied":
                at[i] = seq
            else:
                at[i] = -2 - seq
                waiting += 1
        for seq, _t, _w, eid in effects:
            i = get(eid)
            if i is None and more:
                i = more.get(eid)
            if i is not None and at[i] < NONE:  # the event's first effect, and its first terminal receipt applied
                receipt = -2 - at[i]
                at[i] = receipt if receipt > seq else seq
                waiting -= 1
        if waiting:                             # applied receipts without an effect: no outcome
            for i, s in enumerate(at):
                if s < NONE:
                    at[i] = NONE

    def of(self, eid: str) -> int:
        """The log sequence number from which ``eid`` holds a terminal outcome, or :data:`NONE`."""
        i = self.index.get(eid)
        if i is None:
            i = self.more.get(eid)
        return NONE if i is None else self.at[i]

    @property
    def since(self) -> dict[str, int]:
        """Event id -> the log sequence number from which it holds a terminal outcome (the events with one)."""
        return {eid: s for eid, s in zip(chain(self.ids, self.extra), self.at) if s != NONE}


def terminal_since(store, sink, again: list | None = None, void=()) -> dict[str, int]:
    """For each event id, the log sequence number from which it holds a terminal outcome in ground truth.

    ``again``, if given, receives the id of every terminal receipt written for an event that already held one.
    ``void``: ids whose ``ignored`` or ``quarantined`` receipts the handler never ordered
    (:func:`simkit.judge.claims.unjustified_writes`): such a receipt is a claim, not an outcome.
    """
    found = Outcomes(store.receipt_log, sink.effects, (), void)
    if again is not None:
        again.extend(found.again)
    return found.since


def void_claims(unordered: dict) -> set[str]:
    """The events whose ``ignored``/``quarantined`` claim the handler never ordered (an unordered effect did
    happen: its ``applied`` receipt still counts, and is reported)."""
    return {eid for eid, u in unordered.items() if u[3] != "applied"}


def outcomes(truth) -> Outcomes:
    """:class:`Outcomes` as the checker counts them: receipts the handler never ordered are no outcome."""
    return Outcomes(truth.store.receipt_log, truth.sink.effects, stream_order(truth)[0],
                    void_claims(unjustified_writes(truth)), stream_index(truth))


def outcome_since(run) -> dict[str, int]:
    """:func:`terminal_since` as the checker counts it, for a run or its ground truth (:func:`as_truth`)."""
    return outcomes(as_truth(run)).since
