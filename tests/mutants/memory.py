"""Mutants that trust memory or a reply they did not get: lost replies, in-process caches, external calls and
their settlement (seed 000 steps 1, 5 and 6; seed 001)."""
from __future__ import annotations

from simkit import Consumer
from simkit.ops import BLOCKED, LOST, Call, Effect, Reserve, Settle
from simkit.store.settlement import COMMITTED, TIMEOUT, Reply

from .correct import RememberedIdentity


class LostCommitMeansDone(Consumer):
    """"A timeout on the commit almost always means it went through; don't redo the whole page for it."

    Treats a commit whose reply never came (``LOST``) as durable and goes on with the next event and, at the
    end, the page barrier. When the request itself never reached the store, the event has no receipt and the
    token is published anyway.

    Breaks invariant 1: "A returned continuation token remains pending until every event in that response is
    durably classified", and seed 000 step 4: "Stop at the first outcome that is not durable and terminal."
    """

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        return True if done is LOST else done

    def quarantine(self, event, applied_position):
        done = yield from super().quarantine(event, applied_position)
        return True if done is LOST else done


class InMemoryDedupFilter(Consumer):
    """"Put a seen-ids filter in front of the handler so a retried page doesn't hit the handler twice."

    The first time an id passes the filter it is remembered, whatever its outcome; a later attempt in the same
    process skips it as a replay. An event that came back ``retry_later`` or ``operator_review`` the first
    time is skipped the second, and the barrier passes it.

    Breaks seed 000 step 4: "If a *durable* receipt proves the event already has its intended outcome, treat
    it as replayed" (memory proves nothing; invariant 1: "A worker's in-memory ... decision is not a durable
    terminal classification").
    """

    def __init__(self, contract):
        super().__init__(contract)
        self._seen: set[str] = set()

    def is_replay(self, event, receipts, applied_position):
        seen = event.id in self._seen
        self._seen.add(event.id)
        return seen or super().is_replay(event, receipts, applied_position)


class CachedCheckpoint(RememberedIdentity):
    """"The checkpoint only changes when we write it, so keep it in memory; on a conflict just try again."

    Remembers the checkpoint it loaded or last wrote (like the correct ``RememberedIdentity``) but never
    forgets it: after a rejected or lost barrier it retries from the same stale (cursor, version), which can
    never match again. A worker that lost a race, or whose successful barrier reply was lost, spins on an old
    page forever.

    Breaks seed 000 step 5: "A stale retry that loses this comparison must reread state", and step 6: on a
    crash or doubt, retry "from the unchanged resume cursor" as it is durably.
    """

    def barrier_answered(self, op, reply):
        if reply is True:
            super().barrier_answered(op, reply)


class TimeoutMeansSuccess(Consumer):
    """"That service times out under load but the call nearly always lands: count a timeout as success."

    After a ``Call`` with no reply in time it commits the ``applied`` receipt without settling anything. When
    the request never arrived, the receipt claims an effect that never ran.

    Breaks seed 001 step 5: "Permit timeout, cancellation, or expiry to write only the defined provisional
    state", and seed 000's shortcut "Recording success before a non-idempotent external effect is durably
    known".
    """

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if reply == TIMEOUT:
            return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class AnySuccessReplyCounts(Consumer):
    """"A 200 is a 200: skip the settlement write when the call succeeds; only timeouts need bookkeeping."

    Takes any success reply as its own and commits the receipt, without settling it against the reservation.
    A reply bound to another principal or to another request with the same operation id is accepted; the
    effect it reports never ran here.

    Breaks seed 001 step 6: "Reject and quarantine a response whose identifier matches but whose fingerprint,
    authorization binding, or generation differs", and step 3 (validate the full tuple in the transition).
    """

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if isinstance(reply, Reply):
            return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class AlwaysCallTheService(Consumer):
    """"The service is idempotent anyway; no need to read the operation record before calling."

    Calls the external service on every attempt, even when the durable operation record already says the
    effect is committed. After a crash between settlement and receipt, a non-idempotent service runs the
    effect a second time.

    Breaks seed 001 step 4: "Make committed success absorbing for that tuple"; and so seed 000 invariant 4,
    "Replaying an event cannot repeat an unsafe effect".
    """

    def settle_effect(self, event):
        operation = yield Reserve(event)
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class RetryTimeoutWithNewRequest(Consumer):
    """"On a timeout, retry right away with a fresh request" (a new idempotency key per attempt, the HTTP
    client's default).

    After a ``Call`` times out it sends the effect again as a new request outside the reservation and counts
    that as done. When the first request did run and only its reply was slow or lost, a non-idempotent service
    runs the effect twice.

    Breaks seed 001 step 2: "Reuse that exact tuple for every retry of the same logical request", and step 5
    (a timeout is provisional only).
    """

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if reply == TIMEOUT:
            again = yield Effect(event)
            return LOST if again is LOST else COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED
