"""Round 29's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), each
run by ``tests/judge/test_hostile_round29.py`` on the smallest scenario that shows what it does: seed 001's
fenced settlement and workers sharing one checkpoint. Written against the public API only."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import COMMITTED, TIMEOUT
from simkit.ops import BLOCKED, LOST, Call, Load, Reserve, Settle


class RetryWhatTimedOut(Consumer):
    """"We know that call timed out: on the retry, call again; the record can only say what we wrote."

    Remembers (in memory) each event whose call timed out, and on the next attempt calls the service again
    with the reservation ``Reserve`` gives, whatever the record's state. When the late reply came between the
    timeout and the retry, the record is already ``committed``: the retry runs the effect a second time on a
    sink that is not idempotent, and after a credential rotation it goes out bound to the old principal (a
    committed record keeps its reservation).

    Breaks seed 001 step 4: "Make committed success absorbing for that tuple"; and seed 000 invariant 4,
    "Replaying an event cannot repeat an unsafe effect".
    """

    def __init__(self, contract):
        super().__init__(contract)
        self.timed_out: set[str] = set()

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED and event.id not in self.timed_out:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if reply == TIMEOUT:
            self.timed_out.add(event.id)
        else:
            self.timed_out.discard(event.id)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class RetryCallInAttempt(Consumer):
    """Correct. Retries an unsettled call at once, up to three times in one attempt, each time reading the
    record again (``Reserve``) and calling with the tuple it gives: seed 001 step 2 reuses the tuple for every
    retry, and committed success stays absorbing."""

    def settle_effect(self, event):
        for _ in range(3):
            operation = yield Reserve(event)
            if operation.state == COMMITTED:
                return COMMITTED
            reply = yield Call(event, operation.reservation)
            if (yield Settle(event, operation.reservation, reply)) == COMMITTED:
                return COMMITTED
        return BLOCKED


class NoProvisionalWrite(Consumer):
    """Correct. Never settles a timeout: the record stays ``pending`` and the next attempt retries with the
    same tuple. Seed 001 step 5 *permits* a timeout to write the provisional state; it does not require it."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if reply == TIMEOUT:
            return BLOCKED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class YieldsToTheOther(Consumer):
    """Correct. Reads the checkpoint before each effect; when another worker has moved it since the attempt
    began, it leaves the page to that worker and starts again from durable state (as after a lost reply). A
    receipt another worker wrote first (its commit refused) ends the attempt the same way."""

    def process(self, checkpoint, page, receipts):
        self._attempt = (checkpoint.resume_cursor, checkpoint.checkpoint_version)
        return (yield from super().process(checkpoint, page, receipts))

    def apply(self, event, applied_position):
        now = yield Load()
        if (now.resume_cursor, now.checkpoint_version) != self._attempt:
            return LOST
        done = yield from super().apply(event, applied_position)
        return LOST if done is False else done


class OutageIsOver(Consumer):
    """"Five timeouts in a row on the same request: the service is slow, not down, and the call went in."

    Counts (in memory) the timeouts of each event's call, and after the fifth takes the effect as done and
    commits the receipt, settling nothing. When the service dropped every one of those requests, the receipt
    claims an effect that never ran, and the barrier passes the event: it is lost. The audit lost at most
    three requests of one operation in a row.

    Breaks seed 001 step 5: "Permit timeout, cancellation, or expiry to write only the defined provisional
    state"; and seed 000 invariant 1 (the event has no durable outcome when its page's token is published).
    """

    def __init__(self, contract):
        super().__init__(contract)
        self.timeouts: dict[str, int] = {}

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if reply == TIMEOUT:
            self.timeouts[event.id] = self.timeouts.get(event.id, 0) + 1
            if self.timeouts[event.id] >= 5:
                return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class FifthLostCommitMeansDone(Consumer):
    """"Three lost commits can happen in a failover; five in a row means the store is up and just slow."

    Retries a commit whose reply was lost, as ``ThirdLostCommitMeansDone`` of the gallery but five times;
    when the fifth is lost too, takes the event as done. The audit lost at most three requests of one
    operation in a row.

    Breaks seed 000 invariant 1: "A returned continuation token remains pending until every event in that
    response is durably classified", and step 4: "Stop at the first outcome that is not durable and terminal".
    """

    def apply(self, event, applied_position):
        for _ in range(5):
            done = yield from super().apply(event, applied_position)
            if done is not LOST:
                return done
        return True
