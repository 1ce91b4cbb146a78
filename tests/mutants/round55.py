"""Round 55's consumers (tests/judge/test_hostile_round55.py): seed 001's settlement on an external sink,
workers sharing one checkpoint, and bugs that show only with history (a second timeout, a third blocked
attempt, two crashes on one event, a lost reply, a re-served page), written from the docs alone; then
``CursorInVarchar255`` and ``CursorStripped``, written after reading the audit's cases. Each docstring names
the rule it breaks. All of them fail the audit of main but those two (caught now by the corner
``tokens_compared_exactly``) and ``RepeatedTokenIsCaughtUp``, ``ReusePageAfterBlocked``,
``ValidateOncePerCursor``, ``AppliedIsEventPosition`` and ``BarrierPrefixFromPage``, whose bug simkit's world
cannot show or its store absorbs (the test module says why). Written against the public API only."""
from __future__ import annotations

from dataclasses import replace

from simkit import Consumer
from simkit.model import COMMITTED, PROVISIONAL, TIMEOUT
from simkit.ops import (
    BLOCKED,
    LOST,
    Barrier,
    Call,
    Commit,
    Fetch,
    Halt,
    Handle,
    Load,
    Lookup,
    Overwrite,
    Reserve,
    Settle,
    Skip,
)


class RegenerateKeyOnRetry(Consumer):
    """Seed 001 step 2 broken: a retry after a timeout (record provisional) calls with a fresh generation, a
    new idempotency key, instead of reusing the reserved tuple."""

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        res = op.reservation
        if op.state == PROVISIONAL:
            res = replace(res, generation=res.generation + 1)
        reply = yield Call(event, res)
        state = yield Settle(event, res, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class SecondTimeoutMeansDone(Consumer):
    """Seed 001 step 5 broken: a timeout on a record that is already provisional (the second ambiguous reply
    in a row) is taken as success: 'the service must have done it by now'."""

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, op.reservation)
        state = yield Settle(event, op.reservation, reply)
        if state == COMMITTED or (op.state == PROVISIONAL and reply == TIMEOUT):
            return COMMITTED
        return BLOCKED


class ThirdTimeoutQuarantines(Consumer):
    """Seed 000 step 4 / invariant 5 broken: an effect still unsettled on its third try in this life is
    quarantined, a disposition the handler never ordered (a retry budget as policy)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.tries = {}

    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        if result is BLOCKED:
            self.tries[event.id] = self.tries.get(event.id, 0) + 1
            if self.tries[event.id] >= 3:
                return (yield Commit(event, "quarantined", applied_position))
        return result


class StaleReservationAcrossRotation(Consumer):
    """Seed 001 step 2 broken: the reservation is cached in memory by event id and reused for every retry in
    this life, even after a credential rotation gave the record a new reservation and binding."""

    def __init__(self, contract):
        super().__init__(contract)
        self.keys = {}

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        res = self.keys.setdefault(event.id, op.reservation)
        reply = yield Call(event, res)
        state = yield Settle(event, res, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class NormalizeReplyIdentity(Consumer):
    """Seed 001 step 6 broken: a reply carrying another tuple is 'normalized' to this reservation before it is
    settled (the id matched, so the rest is assumed to be noise)."""

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, op.reservation)
        if reply != TIMEOUT and reply.identity != op.reservation \
                and reply.identity.operation_id == op.reservation.operation_id:
            reply = replace(reply, identity=op.reservation)
        state = yield Settle(event, op.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class SkipCallIfProvisional(Consumer):
    """Seed 001 step 5 broken: a provisional record (an earlier call timed out) is taken as 'the call went
    through', so the retry commits the receipt without calling or settling."""

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state in (COMMITTED, PROVISIONAL):
            return COMMITTED
        reply = yield Call(event, op.reservation)
        state = yield Settle(event, op.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class ReceiptThenSettle(Consumer):
    """Seed 000 invariant 2/4 and seed 001 step 7 broken: the applied receipt is committed first, the external
    effect settled after it ('the outbox will catch up')."""

    def apply(self, event, applied_position):
        if not self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        done = yield Commit(event, "applied", applied_position)
        if done is LOST:
            return LOST
        yield from self.settle_effect(event)
        return done


class AdoptOthersProgressOnReject(Consumer):
    """Invariant 3 broken: a barrier that lost its compare-and-swap rereads the checkpoint and swaps from the
    new one to its own page's next_cursor (adopting the other worker's version as if it were its own)."""

    def page_barrier(self, checkpoint, page, applied_position):
        status = yield from super().page_barrier(checkpoint, page, applied_position)
        if status != "rejected":
            return status
        fresh = yield Load()
        target = self.barrier_target(checkpoint, page)
        ok = yield Barrier(fresh.resume_cursor, fresh.checkpoint_version, target,
                           fresh.checkpoint_version + 1, max(applied_position, fresh.applied_position))
        if ok is LOST:
            return "lost"
        return "advanced" if ok else "rejected"


class ForceBarrierAfterLost(Consumer):
    """Invariant 3 broken, only after a lost reply: a barrier whose reply never came is 'made sure of' by an
    unconditional overwrite, which clobbers whatever another worker published meanwhile."""

    def page_barrier(self, checkpoint, page, applied_position):
        status = yield from super().page_barrier(checkpoint, page, applied_position)
        if status != "lost":
            return status
        done = yield Overwrite(self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                               applied_position)
        return "lost" if done is LOST else "advanced"


class ReusePageAfterBlocked(Consumer):
    """Step 2 broken with backfills: a page that ended blocked is kept in memory and processed again on the
    next attempt at the same cursor instead of fetching it anew, so events the provider backfilled into it
    are never seen before its barrier."""

    def __init__(self, contract):
        super().__init__(contract)
        self.pages = {}

    def attempt(self):
        checkpoint = yield Load()
        page = self.pages.pop((checkpoint.resume_cursor, checkpoint.checkpoint_version), None)
        if page is None:
            page = yield Fetch(checkpoint.resume_cursor)
            if page is LOST:
                return "lost"
            if page is None:
                return "lost"
        status = yield from self._rest(checkpoint, page)
        if status == "blocked":
            self.pages[(checkpoint.resume_cursor, checkpoint.checkpoint_version)] = page
        return status

    def _rest(self, checkpoint, page):
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(checkpoint, page, ids_at)
        if problem:
            yield Halt(problem)
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status != "done":
            return status
        if page.next_cursor == checkpoint.resume_cursor:
            return "caught_up"
        return (yield from self.page_barrier(checkpoint, page, applied))


class RepeatedTokenIsCaughtUp(Consumer):
    """Step 7 broken, only when a token repeats: a next_cursor this life already published is taken for 'no
    progress' (caught up), though an empty page with a token the provider reissues is not the end."""

    def __init__(self, contract):
        super().__init__(contract)
        self.seen = set()

    def is_caught_up(self, checkpoint, page):
        if page.next_cursor in self.seen and not page.events:
            return True
        self.seen.add(checkpoint.resume_cursor)
        return super().is_caught_up(checkpoint, page)


class PoisonAfterTwoCrashes(Consumer):
    """Invariant 5 (claims) broken, history-dependent: a durable marker receipt is written before handling an
    event; an event found with the marker twice (two crashes on it) is quarantined as poison, a disposition
    the handler never ordered."""

    def process(self, checkpoint, page, receipts):
        for event in page.events:
            mark = receipts.get(event.id)
            if mark == "dead_letter":
                yield Commit(event, "quarantined", max(checkpoint.applied_position, event.position))
                receipts = dict(receipts, **{event.id: "quarantined"})
            elif mark is None:
                yield Commit(event, "retry_later", checkpoint.applied_position)
            elif mark == "retry_later":
                yield Commit(event, "dead_letter", checkpoint.applied_position)
        return (yield from super().process(checkpoint, page, receipts))


class ProvisionalAfterRotationIsDone(Consumer):
    """Seed 001 steps 2 and 5 broken: when a rotation gave the record a new reservation, the old reservation's
    provisional outcome is carried over as success (the effect 'already happened under the old key')."""

    def __init__(self, contract):
        super().__init__(contract)
        self.res = {}

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        old = self.res.get(event.id)
        self.res[event.id] = op.reservation
        if old is not None and old != op.reservation:
            return COMMITTED
        reply = yield Call(event, op.reservation)
        state = yield Settle(event, op.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class SettleLateReplyAsTimeout(Consumer):
    """Seed 001 step 4 mis-read: a reply is only trusted when it arrives before a local deadline; otherwise
    the call is settled as a timeout and the effect retried under a new generation at once."""

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, op.reservation)
        if reply == TIMEOUT:
            yield Settle(event, op.reservation, TIMEOUT)
            res = replace(op.reservation, generation=op.reservation.generation + 1)
            reply = yield Call(event, res)
            state = yield Settle(event, res, reply)
        else:
            state = yield Settle(event, op.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class RetryAttemptLimitMovesOn(Consumer):
    """Invariants 1 and 5 broken, only in a long life: after three blocked attempts at the same checkpoint in
    this life, the blocked event's non-terminal outcome is taken as terminal ('stop retrying, move on')."""

    def __init__(self, contract):
        super().__init__(contract)
        self.blocked = {}
        self.give_up = False

    def attempt(self):
        status = yield from super().attempt()
        return status

    def process(self, checkpoint, page, receipts):
        key = (checkpoint.resume_cursor, checkpoint.checkpoint_version)
        self.give_up = self.blocked.get(key, 0) >= 3
        status, applied = yield from super().process(checkpoint, page, receipts)
        if status == "blocked":
            self.blocked[key] = self.blocked.get(key, 0) + 1
        return status, applied

    def is_terminal(self, decision):
        return self.give_up


class WatermarkAfterWarmup(Consumer):
    """Step 4 broken with backfills, history-dependent: once the checkpoint has passed a few barriers the
    stream is assumed 'settled' and the watermark alone proves replay (backfills 'only happen at startup')."""

    version = 0

    def after_fetch(self, checkpoint, page):
        self.version = checkpoint.checkpoint_version
        return None
        yield

    def is_replay(self, event, receipts, applied_position):
        if self.version >= 3 and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class MisboundReplyIgnored(Consumer):
    """Invariant 5 (claims) broken: when the settlement rejects the service's reply (it carried another
    request's tuple), the event is committed as ignored, 'the service answered for someone else, drop it'."""

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, op.reservation)
        state = yield Settle(event, op.reservation, reply)
        if state == COMMITTED:
            return COMMITTED
        if reply != TIMEOUT and reply.identity != op.reservation:
            return "misbound"
        return BLOCKED

    def apply(self, event, applied_position):
        if not self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        settled = yield from self.settle_effect(event)
        if settled == "misbound":
            return (yield Commit(event, "ignored", applied_position))
        if settled is not COMMITTED:
            return settled
        return (yield Commit(event, "applied", applied_position))


class LostCommitRemembered(Consumer):
    """Invariants 1 and 2 broken, only after a lost reply: an event whose commit got no reply is remembered in
    memory as done, and the next attempt of this life skips it as a replay without any receipt."""

    def __init__(self, contract):
        super().__init__(contract)
        self.sent = set()

    def is_replay(self, event, receipts, applied_position):
        return event.id in self.sent or super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        if result is LOST:
            self.sent.add(event.id)
        return result


class ReuseFirstReservationForPage(Consumer):
    """Seed 001 step 1 broken: one reservation is made per page (for its first external effect) and every
    other event of the page is called and settled with it, as a batch key."""

    def __init__(self, contract):
        super().__init__(contract)
        self.batch = {}

    def after_fetch(self, checkpoint, page):
        self.key = checkpoint.resume_cursor
        return None
        yield

    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        res = self.batch.setdefault(self.key, op.reservation)
        reply = yield Call(event, res)
        state = yield Settle(event, res, reply)
        if state != COMMITTED:
            state = yield Settle(event, op.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class PublishTwoPagesAtOnce(Consumer):
    """Invariant 3 broken: a page whose next page is already in memory (fetched ahead and processed) is not
    published on its own; one barrier publishes the second page's token over the first's cursor."""

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST or page is None:
            return "lost"
        receipts, ids_at = yield Lookup(page.events)
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status != "done":
            return status
        if page.next_cursor == checkpoint.resume_cursor:
            return "caught_up"
        second = yield Fetch(page.next_cursor)
        target = page.next_cursor
        if second is not LOST and second is not None and second.events:
            receipts2, _ = yield Lookup(second.events)
            mid = replace(checkpoint, resume_cursor=page.next_cursor, applied_position=applied)
            status2, applied2 = yield from self.process(mid, second, receipts2)
            if status2 == "done":
                target, applied = second.next_cursor, applied2
        ok = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, target,
                           checkpoint.checkpoint_version + 1, applied)
        if ok is LOST:
            return "lost"
        return "advanced" if ok else "rejected"



class AppliedIsEventPosition(Consumer):
    """Invariant 2 / regressions: a commit writes the event's own position as applied_position, so a
    backfilled event behind the prefix moves applied_position backwards."""

    def resulting_applied_position(self, event, page, applied_position):
        return event.position


class RefreshVersionBeforeBarrier(Consumer):
    """Invariant 3 broken: just before the barrier the checkpoint is read again and the swap is made from the
    fresh (cursor, version), 'so the compare-and-swap cannot fail', publishing this page's token over
    whatever another worker published meanwhile."""

    def page_barrier(self, checkpoint, page, applied_position):
        fresh = yield Load()
        target = self.barrier_target(checkpoint, page)
        ok = yield Barrier(fresh.resume_cursor, fresh.checkpoint_version, target,
                           fresh.checkpoint_version + 1, applied_position)
        if ok is LOST:
            return "lost"
        return "advanced" if ok else "rejected"


class ValidateOncePerCursor(Consumer):
    """Step 3 broken, only when a page is re-served: a cursor whose page passed validation once in this life
    is not validated again, so an overlap that brings a new id to a served position, or an event slipped in
    behind the prefix, on a later serve of that cursor goes through."""

    def __init__(self, contract):
        super().__init__(contract)
        self.valid = set()

    def validate(self, checkpoint, page, ids_at):
        if checkpoint.resume_cursor in self.valid:
            return None
        problem = super().validate(checkpoint, page, ids_at)
        if not problem:
            self.valid.add(checkpoint.resume_cursor)
        return problem


class YieldPageToOtherWorker(Consumer):
    """Invariants 1 and 5 broken with two workers: a commit answered False (another worker already holds a
    terminal receipt for the event) is taken to mean 'the other worker owns this page', so the rest of the
    page is skipped as replays and the barrier published, though the other worker may never finish it."""

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        yielded = False
        for event in page.events:
            if yielded or self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "apply":
                result = yield from self.apply(event, target)
            elif decision == "ignore":
                result = yield from self.ignore(event, target)
            elif decision == "quarantine":
                result = yield from self.quarantine(event, target)
            else:
                return "blocked", applied
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            if result is False:
                yielded = True
            applied = target
        return "done", applied


class BarrierPrefixFromPage(Consumer):
    """Invariant 2 / regressions: the barrier's applied_position is computed from the page alone (its last
    event, or 0 for a page of zero events), not from the prefix the checkpoint already holds."""

    def page_barrier(self, checkpoint, page, applied_position):
        prefix = page.events[-1].position if page.events else 0
        return (yield from super().page_barrier(checkpoint, page, prefix))


class CursorInVarchar255(Consumer):
    """"The checkpoint's cursor column is VARCHAR(255)": the barrier publishes the token cut to 255
    characters.

    Breaks seed 000 step 5 (the barrier publishes "the returned next cursor") and invariant 3, on the first
    token longer than 255 characters (many providers' base64 tokens are)."""

    def barrier_target(self, checkpoint, page):
        return page.next_cursor[:255]


class CursorStripped(Consumer):
    """"Tokens come back from the config layer with stray whitespace: strip them."

    Breaks seed 000's vocabulary (a cursor is stored and sent back; it is never parsed) and step 5: a token
    with a trailing space is published as another token, another page's."""

    def barrier_target(self, checkpoint, page):
        return page.next_cursor.strip()
