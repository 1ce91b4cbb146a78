"""When each event holds a terminal outcome in ground truth (docs/verdict.md, ``lost`` and invariant 2): a
terminal receipt the handler ordered, and for an ``applied`` one its effect in the sink as well."""
from __future__ import annotations

from array import array
from itertools import chain, compress

from simkit.model import TERMINAL
from simkit.truth import passes
from simkit.truth.derived import Stream, stream_index
from simkit.truth.ground import View, as_truth
from simkit.truth.log import EffectLog, ReceiptLog

from .claims import unjustified_writes

__all__ = ["NONE", "Outcomes", "outcome_since", "outcomes", "terminal_since", "void_claims"]


#: In :attr:`Outcomes.at`: no terminal outcome (an ``applied`` receipt still waiting for its effect is -2 -
#: seq).
NONE = -1


class Outcomes:
    """The outcome facts of one run, from one pass over the receipt log and one over the effect log.

    An event holds a terminal outcome from its first terminal receipt on, and for an ``applied`` one from the
    later of that receipt and the event's first effect (docs/verdict.md: "``applied`` means the effect is in
    the sink's log"). ``void``: ids whose ``ignored`` or ``quarantined`` receipts the handler never ordered
    (:func:`void_claims`): such a receipt is a claim, not an outcome.

    Kept as a column by rank in ``stream`` (:class:`~simkit.truth.derived.Stream`: the stream in position
    order), then ``extra`` (any other id the receipts name, in ``more`` by id): ``at[i]`` is the log sequence
    number from which the ``i``-th of them holds its outcome, or :data:`NONE`. A typed array, not a table by
    id: an event of the stream is found by its rank, the checker walks ``at`` in stream order, and a run's
    biggest tables are the check's cost. ``again``: the id of every terminal receipt written for an event that
    already held one.
    """

    __slots__ = ("stream", "extra", "more", "at", "again")

    def __init__(self, receipt_log, effects, stream: Stream | None = None, void=()):
        self.stream = stream = _NO_STREAM if stream is None else stream
        self.extra: list[str] = []
        self.more: dict[str, int] = {}
        self.again: list[str] = []
        self.at = array("q", [NONE]) * len(stream)
        waiting = self._receipts(receipt_log, void) - self._effects(effects)
        if waiting:                             # applied receipts without an effect: no outcome
            at = self.at
            for i, s in enumerate(at):
                if s < NONE:
                    at[i] = NONE

    def _place(self, eid: str) -> int:
        """The index of ``eid`` in ``at``: its rank in the stream, else after the stream's (added if new)."""
        i = self.more.get(eid)
        if i is None:
            i = self.more[eid] = len(self.at)
            self.extra.append(eid)
            self.at.append(NONE)
        return i

    def _receipts(self, receipt_log, void) -> int:
        """Each event's first terminal receipt; an ``applied`` one is marked -2 - seq until its effect is
        found. Returns how many are so marked. The usual row is a pass's (:func:`~.passes.receipts`); a row's
        id is read only where it is needed (an id off the stream, a second terminal receipt, a receipt that
        may be void)."""
        log = View(receipt_log).as_log(ReceiptLog)
        seqs, outcomes = log.columns[0], log.columns[4]
        kinds = passes.outcome_kinds(outcomes)
        at, again, ranks, waiting, k = self.at, self.again, self.stream.ranks(View(log)), 0, 0
        while True:
            k, marked = passes.receipts(at, seqs, outcomes.codes, kinds, ranks, k, bool(void))
            waiting += marked
            if k >= len(seqs):
                return waiting
            seq, eid, outcome, i, k = seqs[k], log[k].event_id, outcomes[k], ranks[k], k + 1
            if outcome not in TERMINAL or (outcome != "applied" and eid in void):
                continue
            if i < 0:                           # an id the stream does not hold: after the stream's
                i = self._place(eid)
            if at[i] != NONE:
                again.append(eid)
            elif outcome != "applied":
                at[i] = seq
            else:
                at[i] = -2 - seq
                waiting += 1

    def _effects(self, effects) -> int:
        """Each marked event's first effect: it holds its outcome from the later of receipt and effect.
        Returns how many were found. The usual row is a pass's (:func:`~.passes.effects`)."""
        log = View(effects).as_log(EffectLog)
        seqs, ranks, more, found, k = log.columns[0], self.stream.ranks(View(log)), self.more, 0, 0
        while True:
            k, n = passes.effects(self.at, seqs, ranks, k, bool(more))
            found += n
            if k >= len(seqs):
                return found
            i, k = more.get(log[k].event_id, -1), k + 1
            if i >= 0 and self.at[i] < NONE:  # its first effect, and its first terminal receipt applied
                receipt = -2 - self.at[i]
                self.at[i] = max(receipt, seqs[k - 1])
                found += 1

    def of(self, eid: str) -> int:
        """The log sequence number from which ``eid`` holds a terminal outcome, or :data:`NONE`."""
        i = self.stream.rank(eid)
        if i is None:
            i = self.more.get(eid)
        return NONE if i is None else self.at[i]

    def undone(self) -> list[str]:
        """The stream's events with no terminal outcome, in position order."""
        at, ids = self.at, self.stream.ids
        if not at.count(NONE):
            return []
        return [ids[i] for i in compress(range(len(ids)), map(NONE.__eq__, at))]

    @property
    def since(self) -> dict[str, int]:
        """Event id -> the log sequence number from which it
        holds a terminal outcome (the events with one)."""
        return {eid: s for eid, s in zip(chain(self.stream.ids, self.extra), self.at) if s != NONE}


#: no stream: every id a receipt names is in ``extra``
_NO_STREAM = Stream((), ())


def terminal_since(store, sink, again: list | None = None, void=()) -> dict[str, int]:
    """For each event id, the log sequence number from which it holds a terminal outcome in ground truth.

    ``again``, if given, receives the id of every terminal receipt written for an event that already held one.
    ``void``: ids whose ``ignored`` or ``quarantined`` receipts the handler never ordered
    (:func:`simkit.judge.claims.unjustified_writes`): such a receipt is a claim, not an outcome.
    """
    found = Outcomes(store.receipt_log, sink.effects, void=void)
    if again is not None:
        again.extend(found.again)
    return found.since


def void_claims(unordered: dict) -> set[str]:
    """The events whose ``ignored``/``quarantined`` claim the handler never ordered (an unordered effect did
    happen: its ``applied`` receipt still counts, and is reported)."""
    return {eid for eid, (_s, _t, _w, outcome, _d) in unordered.items() if outcome != "applied"}


def outcomes(truth) -> Outcomes:
    """:class:`Outcomes` as the checker counts them: receipts the handler never ordered are no outcome."""
    return Outcomes(truth.store.receipt_log, truth.sink.effects, stream_index(truth),
                    void_claims(unjustified_writes(truth)))


def outcome_since(run) -> dict[str, int]:
    """:func:`terminal_since` as the checker counts it, for a run or its ground truth (:func:`as_truth`)."""
    return outcomes(as_truth(run)).since
