"""Seed 001 in the SimPy world: the requests of an external call, with latency, faults and trace rows.

``Reserve`` and ``Settle`` are store transactions (``commit_latency`` each; under
``split_validate_write`` a settlement is two of them, validation then write). ``Call`` reaches the service
after ``effect_latency``; the call can be lost on its way (the service never runs it), its reply lost or late
(the caller gets ``TIMEOUT`` after ``timeout`` in each case) or crossed. A late reply is delivered by a
process of its own and settled by the policy when it arrives, whatever became of the caller. ``Reserve`` and
``Settle`` are out of the reach of ``lost_request`` and ``lost_response`` faults (:func:`~simkit.ops.lost_op`
names no op for them): they always arrive and always answer.

:class:`ExternalCalls` is a part of :class:`~simkit.world.simulation.World` (its base): it uses the world's
``_latency``, ``_sync``, ``_row`` and ``_start``, and its ``_late`` count of late replies on their way;
faults around a request are its base's (:mod:`~simkit.world.points`). Settlement follows docs/vocabulary.md,
"Settlement".
"""
from __future__ import annotations

from simkit.model import REPLY_LOST, REQUEST_LOST, TIMEOUT, Scenario, owned
from simkit.ops import DECLARED, Call
from simkit.truth.clock import Clock
from simkit.truth.trace import Trace, crossed_outcome, transition_outcome, validated_outcome

from .external import principal_at
from .points import FaultPoints

__all__ = ["ExternalCalls"]

#: The ``op`` of the faults that lose a ``Call`` (simkit/requests.py), read once.
_CALL = DECLARED[Call].lost


class ExternalCalls(FaultPoints, part=True):
    """``Reserve``, ``Call`` and ``Settle`` as the world executes them, and late replies settled on arrival (a
    part of the world: :class:`~simkit.procedure.driver.Driver` checks its methods in the world's class)."""

    # the world's (:class:`simkit.world.simulation.World`)
    scenario: Scenario
    clock: Clock
    trace: Trace | None

    def principal(self) -> str:
        return principal_at(self.scenario.rotate_at, self.clock.now)

    def reserve(self, worker, op):
        yield from self._latency(self.timing.commit_latency)
        record = super().reserve(worker, op)
        self._row(worker, "reserve", op.event, f"{record.reservation} {record.state}")
        return record

    def call(self, worker, op):
        self.store.operations.record_of(op.reservation)     # one of a Reserve's, or the consumer's one line
        sent = self.issued.pop(worker, self.clock.now)      # now, unless it paused at its crash point
        yield from self._latency(self.timing.effect_latency)
        # the world's own tuple from here on (a late reply settles it): not the one the consumer holds
        e, mine, name = op.event, owned(op.reservation), _CALL
        if self._unsent(worker, name, e):  # the service never runs it: nothing to settle late either
            self._row(worker, "effect", e, REQUEST_LOST)
            yield from self._latency(self.timing.timeout)
            self._row(worker, "timeout", e, str(mine))
            return TIMEOUT
        lost = self.faults.reply_lost(worker, name, e.position)
        fault = None if lost else self.faults.reply_altered(worker, name, e.position)
        if fault is not None and fault.kind == "crossed_reply":
            reply = self.service.crossed(mine, fault.differs)
            self._row(worker, "effect", e, crossed_outcome(reply.identity))
            self._note(crossed=reply.identity)
            return reply
        reply = self.service.execute(worker, mine, sent)      # (Driver.call's check is done above)
        delay = fault.delay if fault is not None else 0.0
        if lost or delay >= self.timing.timeout:
            self._row(worker, "effect", e, REPLY_LOST)
            if not lost:
                yield from self._sync()
                self._late += 1
                self._start(self._late_reply(worker, e, mine, reply, delay))
            yield from self._latency(self.timing.timeout)
            self._row(worker, "timeout", e, str(mine))
            return TIMEOUT
        yield from self._latency(delay)
        self._row(worker, "effect", e)
        return reply

    def settle(self, worker, op):
        return (yield from self._settlement(worker, op.event, op.reservation, op.observation, "settle"))

    def _late_reply(self, worker, event, reservation, reply, delay):
        """A late reply arrives ``delay`` after its request ran, and is settled by the policy on arrival."""
        yield self.env.timeout(delay)
        self._row(worker, "late_reply", event, str(reply.identity))
        yield from self._settlement(worker, event, reservation, reply, "settle_late")
        self._late -= 1

    def _settlement(self, worker, event, reservation, observation, step):
        yield from self._latency(self.timing.commit_latency)
        state = yield from self.settlement_of(worker, event, reservation, observation)
        last = self.store.operations.history[-1]
        self._row(worker, step, event, transition_outcome(last.action, last.before, last.after))
        self._note(action=last.action, before=last.before, after=last.after)
        return state

    def _note(self, **details) -> None:
        """The last trace row's details, where the world keeps a trace."""
        if self.trace is not None:
            self.trace.note(**details)

    def between_transactions(self, worker, event, decision):
        self._row(worker, "validate", event, validated_outcome(decision.action, decision.state))
        self._note(action=decision.action, after=decision.state)
        yield from self._latency(self.timing.commit_latency)
