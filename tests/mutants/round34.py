"""Round 34's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), each run
by ``tests/procedure/test_hostile_round34.py``: adversaries that tamper with what the world hands them, or
with what they handed it, through the documented API only (``object.__setattr__`` past ``frozen``, subclasses
of the records a request carries)."""
from __future__ import annotations

from simkit import Consumer, Event
from simkit.model import COMMITTED, TIMEOUT, Reply
from simkit.ops import BLOCKED, Call, Handle, Reserve, Settle


class HidesItsStaleCall(Consumer):
    """Round 29's ``RetryWhatTimedOut`` (it calls again after a timeout whatever the record says: after a
    rotation the retry goes out bound to the old principal), which then rewrites the tuple it called with to
    the principal in force (``P2``), so that the service's log would show a call it never made."""

    def __init__(self, contract):
        super().__init__(contract)
        self.timed_out: set[str] = set()

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED and event.id not in self.timed_out:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if operation.state == COMMITTED:
            object.__setattr__(operation.reservation, "binding", "P2")
            self.timed_out.discard(event.id)
            return COMMITTED
        (self.timed_out.add if reply == TIMEOUT else self.timed_out.discard)(event.id)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class RewritesItsReplies(Consumer):
    """``safe``'s settlement, which afterwards rewrites each reply it settled, and the reply a record
    ``Reserve`` gives back holds, to a request the service never saw: mischief to the consumer's own objects,
    which must change nothing the judge reads."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if isinstance(operation.result, Reply):
            object.__setattr__(operation.result, "request", 10**6)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        if isinstance(reply, Reply):
            object.__setattr__(reply, "request", 10**6)
        return COMMITTED if state == COMMITTED else BLOCKED


class Shifty(Event):
    """An event whose id reads as ``decoy`` for its first five reads: as many as the request's check and the
    handler make before the handler logs its decision."""

    __slots__ = ("reads", "decoy")

    @property
    def id(self):
        object.__setattr__(self, "reads", self.reads + 1)
        return self.decoy if self.reads <= 5 else Event.id.__get__(self)


class AppliesThePoison(Consumer):
    """Asks the handler about a poison event as a :class:`Shifty` that reads as ``e1`` (transient, done
    failing) until the decision is logged: the handler's ``apply`` for ``e1`` was logged for the poison event,
    whose effect then ran, and the run was ok."""

    def run(self):
        steps, result = super().run(), None
        while True:
            op = steps.send(result)
            if type(op) is Handle and op.event.behavior == "poison":
                op = Handle(Shifty(op.event.id, op.event.position, "ok"))
                object.__setattr__(op.event, "reads", 0)
                object.__setattr__(op.event, "decoy", "e1")
            result = yield op


class MoveOnAndPatch(Consumer):
    """docs/hooks.md's ``MoveOn`` (a ``retry_later`` counts as done: the event is lost), which also makes
    simkit's own ``Consumer`` move on, from its ``__init__``: ``safe`` then failed every case it failed, and
    the audit, counting a case only where ``safe`` passes it, said "passes"."""

    def __init__(self, contract):
        super().__init__(contract)
        Consumer.is_terminal = MoveOnAndPatch.is_terminal       # type: ignore[method-assign]

    def is_terminal(self, decision):
        return decision == "retry_later"


class PatchesInAHook(Consumer):
    """``safe``, which replaces ``simkit.Consumer.is_caught_up`` (with a function of the same answers) as it
    validates a page."""

    def validate(self, checkpoint, page, ids_at):
        same = Consumer.is_caught_up
        Consumer.is_caught_up = lambda self, checkpoint, page: same(self, checkpoint, page)  # type: ignore
        return super().validate(checkpoint, page, ids_at)
