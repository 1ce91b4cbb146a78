"""Fenced monotonic settlement of external calls (seed 001) and
the unsafe policies beside it (docs/vocabulary.md, "Settlement").

An event's effect on an external service is a retryable operation with a durable operation record, kept by the
store in a :class:`Ledger`: the reservation tuple (operation id, canonical request fingerprint, authorization
binding, fencing generation), a state (``pending``, ``provisional``, ``committed``), the reply whose result it
holds, the history of every transition and a durable quarantine of rejected replies. The ledger's history is
ground truth for the checker, like the store's checkpoint write log.

Seed 001, "Practical steps", and where each lives here:

1. reserve the tuple: :meth:`Ledger.reserve` (generations come from one counter, strictly increasing, never
   reused);
2. reuse it for every retry, a changed request or authorization context gets a new reservation and generation:
   :meth:`Ledger.reserve`;
3. validate the full tuple and transition in one atomic compare-and-set: :meth:`Ledger.settle`
   (``split_validate_write`` instead validates with :meth:`Ledger.validate` and writes later with
   :meth:`Ledger.write`);
4. a matching success promotes ``pending``/``provisional`` to ``committed``; ``committed`` is absorbing:
   :func:`decide`;
5. a timeout (cancellation, expiry) writes only ``provisional``, only while the same reservation owns the
   record, never over ``committed``: :func:`decide`;
6. a reply whose id matches but whose fingerprint, binding or generation differs is rejected and quarantined:
   :func:`decide` and :attr:`Ledger.quarantine`;
7. idempotency for the effect outside this transaction: :mod:`simkit.world.external`. Records are never
   deleted, so they cover any retry and fencing horizon of a run.

Nothing here knows SimPy; a policy is a pure function of the record and the observation.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from simkit.errors import described
from simkit.model import (
    COMMITTED,
    FIELDS,
    PENDING,
    POLICIES,
    PROVISIONAL,
    STATES,
    TIMEOUT,
    WEAK,
    Reply,
    Reservation,
    canonical_request,
    fingerprint,
    owned,
)
from simkit.truth.clock import Clock, TimeSource

from .limits import Unstorable, refuse_settlement, refuse_text

# the settlement vocabulary, the policy names (POLICIES) among it, lives in simkit.model (the consumer's
# requests and the scenario key name it too); it is answered here as well
__all__ = ["POLICIES", "Operation", "Transition", "Decision", "decide", "Ledger", "PENDING", "PROVISIONAL",
           "COMMITTED", "STATES", "WEAK", "TIMEOUT", "FIELDS", "Reservation", "Reply", "canonical_request",
           "fingerprint"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One durable operation record (immutable: every transition stores a new one)."""

    reservation: Reservation
    state: str = PENDING
    result: Reply | None = None


@dataclass(frozen=True, slots=True)
class Transition:
    """One entry of the ledger's history. ``action``: ``reserve``, ``renew``, ``settle``, ``write`` (the
    second transaction of ``split_validate_write``), ``ignore`` or ``quarantine``. ``reservation`` is the
    record's reservation at that moment; ``reply`` the reply observed (``None`` for a weak observation)."""

    seq: int
    time: float
    worker: int
    operation_id: str
    action: str
    before: str | None
    after: str
    reservation: Reservation
    reply: Reply | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """What a policy decided for one observation: write
    ``state`` (and ``result``), or quarantine, or ignore."""

    operation_id: str
    action: str              # "write", "quarantine" or "ignore"
    state: str | None = None
    result: Reply | None = None
    reply: Reply | None = None
    detail: str = ""


def decide(record: Operation, reservation: Reservation, observation, *, fenced: bool = True,
           monotonic: bool = True) -> Decision:
    """The transition rule for one observation (a :class:`Reply` or a weak observation such as ``"timeout"``)
    made by the caller holding ``reservation``.

    ``fenced``: validate the full tuple (steps 5 and 6); otherwise match by operation id only.
    ``monotonic``: ``committed`` is absorbing and weak observations only write ``provisional`` (steps 4 and
    5); otherwise the observation overwrites whatever the record holds (last write wins).
    """
    op, current = reservation.operation_id, record.reservation
    if isinstance(observation, Reply):
        if fenced:
            wrong = current.differs(observation.identity) or reservation.differs(observation.identity)
            if wrong:
                return Decision(op, "quarantine", reply=observation,
                                detail=f"reply {observation.identity} differs in {', '.join(wrong)} from "
                                       f"{current}")
        if monotonic and record.state == COMMITTED:
            return Decision(op, "ignore", reply=observation, detail="committed success is absorbing")
        return Decision(op, "write", COMMITTED, observation, observation)
    if observation not in WEAK:
        raise ValueError(f"unknown observation {observation!r}")
    if fenced and current != reservation:
        return Decision(op, "ignore", detail=f"{observation} of {reservation} no longer owns the record "
                                             f"({current})")
    if monotonic and record.state == COMMITTED:
        return Decision(op, "ignore", detail=f"{observation} never downgrades committed success")
    return Decision(op, "write", PROVISIONAL, detail=observation)


_RULES = {"fenced": (True, True), "unfenced": (False, True), "last_write_wins": (False, False),
          "split_validate_write": (True, True)}


class OperationRecords(Protocol):
    """What a ledger asks of its records, by operation id: a dict, or in live mode a
    :class:`~simkit.store.durable.DurableDict` (:class:`~simkit.store.sqlite.SQLiteLedger`)."""

    def get(self, key: str, /) -> Operation | None: ...
    def __getitem__(self, key: str, /) -> Operation: ...
    def __setitem__(self, key: str, value: Operation, /) -> None: ...
    def keys(self) -> Iterable[str]: ...


class Transitions(Protocol):
    """What a ledger asks of its history and quarantine: a list, or in live mode a
    :class:`~simkit.store.durable.DurableList`."""

    def append(self, item: Transition, /) -> None: ...
    def __iter__(self) -> Iterator[Transition]: ...


class Ledger:
    """The durable operation records of one store, their full history and the durable quarantine."""

    def __init__(self, clock: TimeSource | None = None):
        self.clock = clock or Clock()
        self.records: OperationRecords = {}
        #: every transition, rejection and no-op, in order (ground truth)
        self.history: Transitions = []
        #: every rejected reply (seed 001 step 6): kept durably, never applied
        self.quarantine: Transitions = []
        self._generation = 0

    def state(self) -> tuple:
        """Everything the ledger holds, as plain values (explore's fingerprints): the records, the history,
        the quarantine and the last generation given out."""
        return dict(self.records), tuple(self.history), tuple(self.quarantine), self._generation

    def _log(self, worker, op_id, action, before, after, reservation, reply=None, detail="") -> Transition:
        t = Transition(self.clock.tick(), self.clock.now, worker, op_id, action, before, after, reservation,
                       reply, detail)
        self.history.append(t)
        return t

    def reserve(self, worker: int, operation_id: str, fingerprint: str, binding: str) -> Operation:
        """Steps 1 and 2, one transaction: the record for this operation, reserved or reused.

        No record: reserve a new tuple with the next generation. A record whose fingerprint and binding match:
        reuse its exact tuple (a retry of the same logical request). A changed request or authorization
        context: a new reservation and a new generation, and the record is ``pending`` again. A ``committed``
        record is returned as it is: the operation is done, and committed success is absorbing.
        """
        refuse_text("event.id", operation_id)      # as SQLite's ledger, which cannot key a lone surrogate
        record = self.records.get(operation_id)
        if record is not None and (record.state == COMMITTED or (
                record.reservation.fingerprint == fingerprint and record.reservation.binding == binding)):
            return record
        self._generation += 1
        new = Reservation(operation_id, fingerprint, binding, self._generation)
        before = None if record is None else record.state
        changed = [] if record is None else [f for f in ("fingerprint", "binding")
                                             if getattr(record.reservation, f) != getattr(new, f)]
        detail = f"{' and '.join(changed)} changed" if changed else ""
        self.records[operation_id] = Operation(new)
        self._log(worker, operation_id, "reserve" if record is None else "renew", before, PENDING, new,
                  detail=detail)
        return self.records[operation_id]

    def settle(self, policy: str, worker: int, reservation: Reservation, observation) -> str:
        """Step 3: validate and transition in one atomic compare-and-set. Returns the record's state after."""
        refuse_settlement(reservation, observation)
        observation = owned(observation)        # the history keeps its own reply, not the consumer's
        if policy == "split_validate_write":
            return self.write(worker, self.validate(worker, reservation, observation))
        fenced, monotonic = _RULES[policy]
        decision = decide(self.record_of(reservation), reservation, observation, fenced=fenced,
                          monotonic=monotonic)
        return self._apply(worker, decision)

    def validate(self, worker: int, reservation: Reservation, observation) -> Decision:
        """``split_validate_write``, first transaction: the fenced rules, evaluated now, written later."""
        refuse_settlement(reservation, observation)
        return decide(self.record_of(reservation), reservation, owned(observation))

    def record_of(self, reservation: Reservation) -> Operation:
        """The record a call or a settlement under ``reservation`` goes to. A reservation of an operation id
        no ``Reserve`` made is the consumer's malformed request (one line), before anything runs: there is no
        record to compare and set, now or when a late reply arrives (it was a ``KeyError`` traceback, exit 1,
        from either store)."""
        record = self.records.get(reservation.operation_id)
        if record is None:
            raise Unstorable("reservation.operation_id", f"is {described(reservation.operation_id)}, which "
                             "no Reserve gave: call and settle with a reservation as Reserve returned it")
        return record

    def write(self, worker: int, decision: Decision) -> str:
        """``split_validate_write``, second transaction: write
        what validation decided, without looking again."""
        return self._apply(worker, decision, action="write")

    def _apply(self, worker: int, d: Decision, action: str = "settle") -> str:
        record = self.records[d.operation_id]
        if d.action == "write":
            assert d.state is not None                  # decide() gives every "write" its state
            new = replace(record, state=d.state, result=d.result if d.state == COMMITTED else record.result)
            self.records[d.operation_id] = new
            self._log(worker, d.operation_id, action, record.state, new.state, record.reservation, d.reply,
                      d.detail)
            return new.state
        t = self._log(worker, d.operation_id, d.action, record.state, record.state, record.reservation,
                      d.reply, d.detail)
        if d.action == "quarantine":
            self.quarantine.append(t)
        return record.state
