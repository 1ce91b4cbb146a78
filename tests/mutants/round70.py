"""Round 70: buggy consumers written fresh (before reading earlier rounds' mutants), aimed at seed 001's
fenced settlement, many workers and late retries, and bugs that need a rare fault. Each names the rule it
breaks; tests/judge/test_hostile_round70.py shows each caught.

State kept on ``self`` lives for one worker life (a crash forgets it, docs/verdict.md "Crashes are real").
"""
from __future__ import annotations

from dataclasses import replace

from simkit import Consumer
from simkit.model import COMMITTED, TERMINAL
from simkit.ops import BLOCKED, LOST, Barrier, Call, Commit, Effect, Load, Overwrite, Reserve, Settle

__all__ = ["TimeoutTwiceIsSuccess", "CachedReservationAcrossRotation", "NewKeyAfterLostReply",
           "RecordBeforeFence", "ProvisionalIsDone", "AnyReplyIsSuccess", "OverwriteAfterOneTakeover",
           "RefreshedBarrierAfterRestart", "AnyReceiptIsReplay", "LostLastCommitIsDone",
           "SecondRetryKeepsOldReservation", "TimeoutThenReserveIsCommitted", "CommitBeforeSettleOnRetry",
           "LostBarrierThenOverwrite", "EffectAgainOnCommitRace", "BlockedBehindReceipts",
           "RaceWinnerDidThePage", "RetryBehindReceiptsIsDone", "ClaimsReceiptsAfterRestart",
           "ScratchKeyProbe"]


class TimeoutTwiceIsSuccess(Consumer):
    """Seed 001 step 5: "Permit timeout ... to write only the defined provisional state". A colleague decides
    a second timeout for one event in this life means the service is slow but surely done: it counts as
    committed."""

    def __init__(self, contract):
        super().__init__(contract)
        self.timeouts: dict[str, int] = {}

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        if reply == "timeout":
            self.timeouts[event.id] = self.timeouts.get(event.id, 0) + 1
            if self.timeouts[event.id] >= 2:
                return COMMITTED
        return COMMITTED if state == COMMITTED else BLOCKED


class CachedReservationAcrossRotation(Consumer):
    """Seed 001 step 2: "A changed request or authorization context requires a new reservation and
    generation." Reserves once per event per life and reuses the tuple for every later retry, so a retry after
    a credential rotation calls with the old binding."""

    def __init__(self, contract):
        super().__init__(contract)
        self.held: dict[str, object] = {}

    def settle_effect(self, event):
        if event.id in self.held:
            reservation = self.held[event.id]
        else:
            operation = yield Reserve(event)
            if operation.state == COMMITTED:
                return COMMITTED
            reservation = self.held[event.id] = operation.reservation
        reply = yield Call(event, reservation)
        state = yield Settle(event, reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class SecondRetryKeepsOldReservation(Consumer):
    """Seed 001 step 2, narrower: reserves afresh on the first retry, but from the second retry of an event in
    one life on, reuses the tuple of the first try (a "cache warm-up" optimisation), across a rotation too."""

    def __init__(self, contract):
        super().__init__(contract)
        self.first: dict[str, object] = {}
        self.tries: dict[str, int] = {}

    def settle_effect(self, event):
        n = self.tries[event.id] = self.tries.get(event.id, 0) + 1
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reservation = operation.reservation if n < 3 else self.first.get(event.id, operation.reservation)
        self.first.setdefault(event.id, operation.reservation)
        reply = yield Call(event, reservation)
        state = yield Settle(event, reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class NewKeyAfterLostReply(Consumer):
    """Seed 001 step 2: "Reuse that exact tuple for every retry of the same logical request." After a timeout
    it retries under a fresh idempotency key (another fingerprint), so the service runs the effect again."""

    def __init__(self, contract):
        super().__init__(contract)
        self.timed_out: set[str] = set()

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reservation = operation.reservation
        if event.id in self.timed_out:
            reservation = replace(reservation, fingerprint=reservation.fingerprint[::-1])
        reply = yield Call(event, reservation)
        if reply == "timeout":
            self.timed_out.add(event.id)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class RecordBeforeFence(Consumer):
    """Seed 001 step 3 / seed 000 invariant 4: the outcome is recorded before the call is settled. It commits
    the ``applied`` receipt as soon as the service answered anything but a timeout, then settles."""

    def apply(self, event, applied_position):
        if not self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        operation = yield Reserve(event)
        if operation.state != COMMITTED:
            reply = yield Call(event, operation.reservation)
            if reply == "timeout":
                yield Settle(event, operation.reservation, reply)
                return BLOCKED
            done = yield Commit(event, "applied", applied_position)
            yield Settle(event, operation.reservation, reply)
            return done
        return (yield Commit(event, "applied", applied_position))


class ProvisionalIsDone(Consumer):
    """Seed 001 step 5: provisional is uncertainty, not an outcome. Treats a settlement that answered
    ``provisional`` as terminal when the record had been provisional already (a second timeout)."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        before = operation.state
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        if state == COMMITTED or (before == "provisional" and state == "provisional"):
            return COMMITTED
        return BLOCKED


class AnyReplyIsSuccess(Consumer):
    """Seed 001 step 6: "Reject and quarantine a response whose identifier matches but whose fingerprint,
    authorization binding, or generation differs. Do not expose its result." Settles the reply but then trusts
    that a reply came: any non-timeout reply counts as success, even one the settlement quarantined."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if (state == COMMITTED or reply != "timeout") else BLOCKED


class TimeoutThenReserveIsCommitted(Consumer):
    """Seed 001 "Limits": "If timeout is terminal, a late success must be rejected rather than upgraded" and
    step 5. After a timeout it reserves again at once and takes a record still ``provisional`` whose
    ``result`` holds an earlier reply as committed (a stale reply of an older generation counts)."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        if state == COMMITTED:
            return COMMITTED
        again = yield Reserve(event)
        if again.state == COMMITTED or again.result is not None or again.reservation != operation.reservation:
            return COMMITTED
        return BLOCKED


class CommitBeforeSettleOnRetry(Consumer):
    """Seed 000 invariant 4 / seed 001 step 3: on a retry (the record was already provisional when reserved)
    it commits the receipt before settling the new call's reply, so a reply that is crossed leaves an applied
    receipt without the effect."""

    def apply(self, event, applied_position):
        if not self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return (yield Commit(event, "applied", applied_position))
        reply = yield Call(event, operation.reservation)
        if operation.state == "provisional" and reply != "timeout":
            done = yield Commit(event, "applied", applied_position)
            yield Settle(event, operation.reservation, reply)
            return done
        state = yield Settle(event, operation.reservation, reply)
        if state != COMMITTED:
            return BLOCKED
        return (yield Commit(event, "applied", applied_position))


class OverwriteAfterOneTakeover(Consumer):
    """Seed 000 invariant 3 (no regression; compare-and-swap): when its barrier loses, it reloads and, if
    another worker moved the checkpoint by exactly one version (it "only" took the page over), it overwrites
    with its own target, assuming both published the same page."""

    def page_barrier(self, checkpoint, page, applied_position):
        result = yield from super().page_barrier(checkpoint, page, applied_position)
        if result != "rejected":
            return result
        now = yield Load()
        if now.checkpoint_version == checkpoint.checkpoint_version + 1:
            done = yield Overwrite(self.barrier_target(checkpoint, page), now.checkpoint_version + 1,
                                   applied_position)
            return "lost" if done is LOST else "advanced"
        return "rejected"


class RefreshedBarrierAfterRestart(Consumer):
    """Seed 000 step 5: the barrier compares the attempt's own cursor and version. On the first attempt of a
    worker life (after a restart) it reloads just before the barrier and swaps from what it reads then, so the
    version matches but the cursor is another worker's."""

    restarted = True

    def page_barrier(self, checkpoint, page, applied_position):
        if not self.restarted:
            return (yield from super().page_barrier(checkpoint, page, applied_position))
        self.restarted = False
        now = yield Load()
        target = self.barrier_target(checkpoint, page)
        swapped = yield Barrier(now.resume_cursor, now.checkpoint_version, target,
                                now.checkpoint_version + 1, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class AnyReceiptIsReplay(Consumer):
    """Seed 000 step 4: only a durable *terminal* receipt proves replay. It notes a non-terminal outcome
    (``retry_later``, a review, a hold) durably as a receipt, for the operators, and then takes any receipt, a
    non-terminal one too, for a replay: the next attempt skips the event it noted."""

    current = None
    decision = None

    def is_replay(self, event, receipts, applied_position):
        self.current, self.decision = event, None
        if event.id in receipts:
            return True
        return super().is_replay(event, receipts, applied_position)

    def is_terminal(self, decision):
        self.decision = decision
        return False

    def process(self, checkpoint, page, receipts):
        status, applied = yield from super().process(checkpoint, page, receipts)
        if status == "blocked" and self.decision is not None and self.current is not None:
            yield Commit(self.current, self.decision, applied)
        return status, applied


class LostLastCommitIsDone(Consumer):
    """Seed 000 step 4 / docs/hooks.md: "A hook that gets LOST returns it". A lost commit reply of the last
    event of a page is taken as success ("it almost always lands"), and the barrier publishes the page."""

    def _last(self, event):
        return getattr(self, "last_position", None) == event.position

    def after_fetch(self, checkpoint, page):
        self.last_position = page.events[-1].position if page.events else None
        return None
        yield

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        return True if done is LOST and self._last(event) else done

    def ignore(self, event, applied_position):
        done = yield from super().ignore(event, applied_position)
        return True if done is LOST and self._last(event) else done

    def quarantine(self, event, applied_position):
        done = yield from super().quarantine(event, applied_position)
        return True if done is LOST and self._last(event) else done


class LostBarrierThenOverwrite(Consumer):
    """Seed 000 invariant 3: a lost barrier reply "may or may not have taken effect". This one writes the same
    checkpoint again without comparing, to be sure, and so overwrites a faster worker's progress."""

    def page_barrier(self, checkpoint, page, applied_position):
        result = yield from super().page_barrier(checkpoint, page, applied_position)
        if result != "lost":
            return result
        done = yield Overwrite(self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                               applied_position)
        return "lost" if done is LOST else "advanced"


class EffectAgainOnCommitRace(Consumer):
    """Seed 000 step 4 / invariant 4 (exactly one effect): when its transactional commit answers ``False``
    (another worker's terminal receipt landed in the same instant) it distrusts that receipt and makes the
    effect itself, unsettled, "so the effect is surely there"."""

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        if done is False and not self.contract.external_sink:
            yield Effect(event)
        return done


class BlockedBehindReceipts(Consumer):
    """Seed 000 invariant 5: a non-terminal outcome blocks the barrier. This one lets an event whose operation
    is not committed pass when a later event of the page already holds a terminal receipt: "another worker got
    past it, so it must be done"."""

    def process(self, checkpoint, page, receipts):
        self.later_done = {e.id for e in page.events if receipts.get(e.id) in TERMINAL}
        self.order = [e.id for e in page.events]
        return (yield from super().process(checkpoint, page, receipts))

    def _passed(self, event):
        after = self.order[self.order.index(event.id) + 1:] if event.id in self.order else []
        return any(i in self.later_done for i in after)

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        return True if done is BLOCKED and self._passed(event) else done


class RaceWinnerDidThePage(Consumer):
    """Seed 000 invariant 1 ("a token is published only after every event of its page has a durable terminal
    outcome") and step 4: when a commit answers ``False`` (another worker's receipt for that event landed
    first, after a pause of ours) it trusts that the other worker did the rest of the page too: every later
    event of the page is skipped as a replay, and the barrier publishes the page."""

    raced = False

    def after_fetch(self, checkpoint, page):
        self.raced = False
        return None
        yield

    def is_replay(self, event, receipts, applied_position):
        return self.raced or super().is_replay(event, receipts, applied_position)

    def _note(self, done):
        self.raced = self.raced or done is False
        return done

    def apply(self, event, applied_position):
        return self._note((yield from super().apply(event, applied_position)))

    def ignore(self, event, applied_position):
        return self._note((yield from super().ignore(event, applied_position)))

    def quarantine(self, event, applied_position):
        return self._note((yield from super().quarantine(event, applied_position)))


class RetryBehindReceiptsIsDone(BlockedBehindReceipts):
    """Seed 000 step 4 ("A transient failure ... does not close the prefix") and invariant 5: the twin of
    :class:`BlockedBehindReceipts` for the handler: a ``retry_later`` (or a review, a hold) counts as done
    when a later event of the page already holds a terminal receipt."""

    def is_replay(self, event, receipts, applied_position):
        self.current = event
        return super().is_replay(event, receipts, applied_position)

    def is_terminal(self, decision):
        return self._passed(self.current)


class ClaimsReceiptsAfterRestart(Consumer):
    """Seed 000 invariant 2 ("applied_position ... only through a contiguous prefix"): on the first attempt
    of a life it claims the prefix through the highest position holding a terminal receipt, "the last life
    got that far", though an event behind it may have none (a backfill)."""

    first = True
    claim = 0

    def validate(self, checkpoint, page, ids_at):
        if self.first:
            self.claim = max(ids_at, default=0)
        self.first = False
        return super().validate(checkpoint, page, ids_at)

    def resulting_applied_position(self, event, page, applied_position):
        return max(super().resulting_applied_position(event, page, applied_position), self.claim)


class ScratchKeyProbe(Consumer):
    """Seed 001 step 2 / step 7: before each call it sends a 'probe' of the same operation under a scratch
    idempotency key (the fingerprint reversed) and drops its reply, then calls with the real tuple."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        r = operation.reservation
        yield Call(event, replace(r, fingerprint=r.fingerprint[::-1]))
        reply = yield Call(event, r)
        state = yield Settle(event, r, reply)
        return COMMITTED if state == COMMITTED else BLOCKED
