"""Round 48's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them): each is
CORRECT by the seeds yet takes a liberty ``safe`` does not, and each docstring argues from the seeds' text why
it is allowed. Written from the seeds, docs/hooks.md and docs/protocol.md, against the public API only.
``tests/judge/test_hostile_round48.py`` runs them; the ``exec:`` ones are under
``tests/exec/consumers/round48/``.

``ReadAheadBacksOffOneWay`` was judged NOT ok on 40 of the audit's cases before round 48 (the run ended while
its last page was blocked); the others passed the audit as found."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import COMMITTED, TERMINAL, TIMEOUT, Checkpoint
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
    Reserve,
    Settle,
    Skip,
    Wait,
)


def _decided(consumer: Consumer, event, decision: str, target: int):
    """Step 4 as ``safe`` takes the handler's ``decision``: its durable outcome through the consumer's own
    hook (``apply``, ``ignore``, ``quarantine``); then ``None`` to go on, or the status that ends the attempt:
    ``"blocked"`` (a decision that is not terminal, or an outcome that is not durable yet) or ``"lost"``."""
    hooks = {"apply": consumer.apply, "ignore": consumer.ignore, "quarantine": consumer.quarantine}
    hook = hooks.get(decision)
    if hook is None:
        return "blocked"
    result = yield from hook(event, target)
    return "lost" if result is LOST else "blocked" if result is BLOCKED else None


class ReadAheadBacksOffOneWay(Consumer):
    """Fetches the page after each page as soon as it arrives (to warm the provider's cache for the next
    attempt) and drops it, and backs off the same way, as ``caught_up``, whatever the attempt said (one
    metric, one log line).

    Round 24's ``PrefetchBeforeValidating`` and the mirror of its ``BackOffAsBlocked``, both correct: seed 000
    lets a worker read ahead (invariant 3 as judged), and step 7 asks only that it "stop or back off instead
    of spinning"; the reason it gives is a label. Its durable writes are ``safe``'s. Blocked on the last page
    before the end of the stream, it had read the end ahead and said ``caught_up``: the run ended there, the
    page's events pending, ``completed`` false.
    """

    def after_fetch(self, checkpoint, page):
        if page.next_cursor != checkpoint.resume_cursor:
            yield Fetch(page.next_cursor)
        return None

    def run(self):
        while True:
            result = yield from self.attempt()
            if result in ("caught_up", "blocked"):
                yield Wait("caught_up")


class ClaimThenProcess(Consumer):
    """Claims the page before working on it: a compare-and-swap that keeps the cursor and raises only the
    version, then the page, then the barrier from the claimed version.

    Seed 004: "Writing the same cursor with a new idempotency key and correct expected revision is allowed and
    advances the checkpoint revision"; seed 000 step 5 asks for a swap "from the attempt cursor and version":
    after the claim the attempt's version is the one it claimed, the cursor is still the one the page was
    fetched with. A rival that moved the checkpoint meanwhile makes the barrier lose, and the next attempt
    rereads state.
    """

    def after_fetch(self, checkpoint, page):
        self._claimed = None
        if self.is_caught_up(checkpoint, page):
            return None
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                checkpoint.resume_cursor, checkpoint.checkpoint_version + 1,
                                checkpoint.applied_position)
        if swapped is LOST:
            return "lost"
        if not swapped:
            return "rejected"
        self._claimed = checkpoint.checkpoint_version + 1
        return None

    def page_barrier(self, checkpoint, page, applied_position):
        version = self._claimed
        swapped = yield Barrier(checkpoint.resume_cursor, version, self.barrier_target(checkpoint, page),
                                version + 1, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class ReloadBeforeBarrier(Consumer):
    """Reads the checkpoint again before its barrier and gives up the page without a swap when another worker
    moved it.

    Seed 000 step 5: "A stale retry that loses this comparison must reread state rather than overwrite newer
    progress": this one rereads before it even compares. A read changes nothing durable; when the checkpoint
    is still the attempt's, the barrier is safe's own compare-and-swap.
    """

    def page_barrier(self, checkpoint, page, applied_position):
        now = yield Load()
        if (now.resume_cursor, now.checkpoint_version) != (checkpoint.resume_cursor,
                                                          checkpoint.checkpoint_version):
            return "rejected"
        return (yield from super().page_barrier(checkpoint, page, applied_position))


class RetryLostCommitInPlace(Consumer):
    """A commit whose reply was lost is looked up, and retried with the identical command when its receipt is
    not there, up to three times, before the attempt ends.

    Seed 004: "On a lost response, retry the identical command with that same key"; seed 000 step 4: "If a
    durable receipt proves the event already has its intended outcome, treat it as replayed". The attempt
    never moves past the event before a durable receipt shows it done.
    """

    def _durable(self, event, outcome, applied_position, with_effect=False):
        for _ in range(3):
            done = yield Commit(event, outcome, applied_position, with_effect=with_effect)
            if done is not LOST:
                return done
            receipts, _ids = yield Lookup((event,))
            if receipts.get(event.id) in TERMINAL:
                return True
        return LOST

    def apply(self, event, applied_position):
        if self.contract.external_sink:
            settled = yield from self.settle_effect(event)
            if settled is not COMMITTED:
                return settled
            return (yield from self._durable(event, "applied", applied_position))
        return (yield from self._durable(event, "applied", applied_position, with_effect=True))

    def ignore(self, event, applied_position):
        return (yield from self._durable(event, "ignored", applied_position))

    def quarantine(self, event, applied_position):
        return (yield from self._durable(event, "quarantined", applied_position))


class HaltBeforeLookup(Consumer):
    """Checks the page's own order as soon as it arrives and halts before reading any receipt.

    Seed 000 step 3: "An unexpected regression ... stops the attempt for investigation". A regression inside
    the page is visible from the page alone, so it needs no receipts to be proven; everything else is safe's
    validation.
    """

    def after_fetch(self, checkpoint, page):
        previous = None
        for e in page.events:
            if previous is not None and e.position <= previous:
                yield Halt(f"page out of order: {e.position} after {previous}")
            previous = e.position
        return None


class FreshReceiptPerEvent(Consumer):
    """Reads the page's receipts once to validate, then each event's receipt again just before it is handled,
    skipping an event another worker finished meanwhile.

    Seed 000 step 4: "If a durable receipt proves the event already has its intended outcome, treat it as
    replayed": the fresher the receipt, the better the proof. Extra reads change nothing durable.
    """

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(checkpoint, page, ids_at)
        if problem:
            yield Halt(problem)
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        applied = checkpoint.applied_position
        for event in page.events:
            fresh, _ = yield Lookup((event,))
            if self.is_replay(event, fresh, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if (status := (yield from _decided(self, event, decision, target))) is not None:
                return status
            applied = target
        if page.next_cursor == checkpoint.resume_cursor:
            return "caught_up"
        return (yield from self.page_barrier(checkpoint, page, applied))


class GrowingBackoff(Consumer):
    """Backs off longer the longer it stays blocked or caught up: 1, 2, 4, then 8 waits, back to 1 after
    progress.

    Seed 000 step 7: "stop or back off instead of spinning"; the seed sets no length for the back-off. The
    number of waits is memory only: a crash starts again at one.
    """

    #: the most waits in a row
    cap = 8

    def run(self):
        streak = 0
        while True:
            result = yield from self.attempt()
            if result in ("caught_up", "blocked"):
                for _ in range(min(2 ** streak, self.cap)):
                    yield Wait(result)
                streak += 1
            else:
                streak = 0


class PatientBackoff(GrowingBackoff):
    """Capped exponential back-off: 1, 2, 4, ... up to 64 back-offs after each attempt that ends blocked or
    caught up, back to one after progress (the count is memory only).

    Seed 000 step 7: "stop or back off instead of spinning", and invariant 5 keeps the barrier closed while an
    event is blocked, however long; no seed bounds how patient a worker may be. Doubling to a cap is the
    usual policy (64 back-offs of 5 is 32 of the world's timeouts). It was judged incomplete on
    ``long_blocks`` (25 and 20 transient failures: dozens of attempts), which ran out its 10,000 units of
    simulated time.
    """

    cap = 64


class HandleReplaysToo(Consumer):
    """Asks the handler about every event, a replay included, before it skips the replay.

    A harmless extra request: the handler's answer decides nothing for an event whose durable terminal receipt
    already proves it done (seed 000 step 4, "treat it as replayed").
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            decision = yield Handle(event)
            if super().is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            target = max(applied, event.position)
            if (status := (yield from _decided(self, event, decision, target))) is not None:
                return status, applied
            applied = target
        return "done", applied


class BlockedRetryInPlace(Consumer):
    """Waits on a non-terminal decision and asks the handler again, up to five times, without leaving the
    page; then ends the attempt blocked as safe does.

    Seed 000 step 4: "Stop at the first outcome that is not durable and terminal": it stops there, and nothing
    after that event is processed until it has a durable terminal outcome. The barrier's compare-and-swap
    still guards against another worker having moved on meanwhile.
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            tries = 0
            while decision not in ("apply", "ignore", "quarantine") and tries < 5:
                yield Wait("blocked")
                decision = yield Handle(event)
                tries += 1
            target = max(applied, event.position)
            if (status := (yield from _decided(self, event, decision, target))) is not None:
                return status, applied
            applied = target
        return "done", applied


class ReserveAhead(Consumer):
    """With an external sink, reserves the operation record of every event of the page that is not a replay
    before handling any, then processes as safe does (which reserves again before each call and gets the
    current tuple back).

    Seed 001 step 1: "Reserve a tuple ..."; a reservation is a durable record of intent, no effect. Step 2's
    "A changed request or authorization context requires a new reservation and generation" is kept because the
    call uses the tuple reserved right before it. One timed request more an event: on round 47's
    ``big_page`` (4,100 events) it ran past the default ``time_limit`` and was judged incomplete.
    """

    def after_fetch(self, checkpoint, page):
        if self.contract.external_sink:
            for event in page.events:
                if event.position > checkpoint.applied_position or self.contract.backfills:
                    yield Reserve(event)
        return None


class CheckRecordBeforeTimeout(Consumer):
    """After a call that timed out, reads the operation record again before settling the timeout: a late reply
    may have committed it meanwhile. Then settles the timeout (provisional) and blocks as safe does.

    Seed 001 step 5: "Permit timeout ... to write only the defined provisional state while the same
    reservation still owns the record. A weaker observation must never downgrade committed success." Reading
    first only avoids a settlement the record does not need.
    """

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if reply == TIMEOUT:
            again = yield Reserve(event)
            if again.state == COMMITTED:
                return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class SettleRetryLoop(Consumer):
    """Tries the external operation up to three times within one attempt, reserving again before each call (so
    a rotated credential gets its new tuple), before it blocks.

    Seed 001 step 2: "Reuse that exact tuple for every retry of the same logical request. A changed request or
    authorization context requires a new reservation and generation": ``Reserve`` returns the tuple in force.
    """

    def settle_effect(self, event):
        for _ in range(3):
            operation = yield Reserve(event)
            if operation.state == COMMITTED:
                return COMMITTED
            reply = yield Call(event, operation.reservation)
            state = yield Settle(event, operation.reservation, reply)
            if state == COMMITTED:
                return COMMITTED
        return BLOCKED


class RefetchAfterLost(Consumer):
    """After a lost commit reply, fetches the same cursor again (the attempt identity kept in memory) instead
    of loading the checkpoint, and processes the page afresh from its receipts.

    Seed 000 step 6: "retry from the unchanged resume cursor. Receipts ... make already applied events
    harmless replays". The barrier still compares the remembered (cursor, version); if another worker moved
    the checkpoint, it loses and the next attempt loads.
    """

    def run(self):
        checkpoint = None
        while True:
            if checkpoint is None:
                checkpoint = yield Load()
            result = yield from self.page_once(checkpoint)
            if result == "refetch":
                continue
            checkpoint = None
            if result in ("caught_up", "blocked"):
                yield Wait(result)

    def page_once(self, checkpoint):
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(checkpoint, page, ids_at)
        if problem:
            yield Halt(problem)
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status == "lost":
            return "refetch"
        if status != "done":
            return status
        if page.next_cursor == checkpoint.resume_cursor:
            return "caught_up"
        return (yield from self.page_barrier(checkpoint, page, applied))


class RejectedYields(Consumer):
    """After losing the barrier's compare-and-swap, backs off once before rereading, to let the worker that
    won go ahead.

    Seed 000 step 5: "A stale retry that loses this comparison must reread state rather than overwrite newer
    progress": it rereads, only later. Seed 004: "On a revision conflict, reread current progress and
    reconcile concurrent work".
    """

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "rejected":
                yield Wait("blocked")
            elif result in ("caught_up", "blocked"):
                yield Wait(result)


class NoLookupForEmptyPage(Consumer):
    """Reads no receipts for a page without events: there is nothing to look up, validate or process.

    Seed 000 step 7: an empty page is "a zero-item page" (barrier if the token moved) or the end for now (back
    off). A read of zero receipts decides nothing.
    """

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
        if not page.events:
            if page.next_cursor == checkpoint.resume_cursor:
                return "caught_up"
            return (yield from self.page_barrier(checkpoint, page, checkpoint.applied_position))
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(checkpoint, page, ids_at)
        if problem:
            yield Halt(problem)
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status != "done":
            return status
        if page.next_cursor == checkpoint.resume_cursor:
            return "caught_up"
        return (yield from self.page_barrier(checkpoint, page, applied))


class HoldPrefixUntilBarrier(Consumer):
    """Commits each receipt without raising ``applied_position`` (it writes the loaded value) and raises it
    only at the page barrier, over the whole page.

    Seed 000 invariant 2: ``applied_position`` "advances only after the corresponding effect and deduplication
    receipt are durable" -- advancing later is allowed; receipts, not the watermark, prove replays after a
    crash mid-page (step 6).
    """

    def resulting_applied_position(self, event, page, applied_position):
        return self._loaded

    def attempt(self):
        self._loaded = 0
        return (yield from super().attempt())

    def after_fetch(self, checkpoint, page):
        self._loaded = checkpoint.applied_position
        return None
        yield

    def page_barrier(self, checkpoint, page, applied_position):
        whole = max([applied_position] + [e.position for e in page.events])
        return (yield from super().page_barrier(checkpoint, page, whole))


class OwnLoop(Consumer):
    """Seed 000's procedure written from the hooks page as one ``run`` of its own, with its own bookkeeping: a
    per-life record of every terminal outcome it has seen durable (a receipt read back, or a commit answered
    ``True`` or ``False``), consulted besides the page's receipts.

    Seed 000 step 4: "If a durable receipt proves the event already has its intended outcome, treat it as
    replayed": an outcome in the record was durable and terminal when seen, and a terminal receipt is never
    taken back, so it proves the same thing later in the life. Nothing the worker merely decided goes in it,
    and a crash empties it.
    """

    def run(self):
        seen = {}
        while True:
            status = yield from self._page(seen)
            if status in ("caught_up", "blocked"):
                yield Wait(status)

    def _page(self, seen):
        cp = yield Load()
        page = yield Fetch(cp.resume_cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt("refused cursor")
        outcomes, ids_at = yield Lookup(page.events)
        for event_id, outcome in outcomes.items():
            if outcome in TERMINAL:
                seen[event_id] = outcome
        last = None
        for e in page.events:
            holder = ids_at.get(e.position)
            if last is not None and e.position <= last:
                yield Halt("order")
            if holder not in (None, e.id):
                yield Halt("identity")
            if holder is None and not self.contract.backfills and e.position <= cp.applied_position:
                yield Halt("gap")
            last = e.position
        if not page.events and page.next_cursor == cp.resume_cursor:
            return "caught_up"
        prefix = cp.applied_position
        for e in page.events:
            if e.id in seen or (not self.contract.backfills and e.position <= cp.applied_position):
                yield Skip(e)
                prefix = max(prefix, e.position)
                continue
            status = yield from self._one(e, max(prefix, e.position), seen)
            if status is not None:
                return status
            prefix = max(prefix, e.position)
        if page.next_cursor == cp.resume_cursor:
            return "caught_up"
        swapped = yield Barrier(cp.resume_cursor, cp.checkpoint_version, page.next_cursor,
                                cp.checkpoint_version + 1, prefix)
        return "lost" if swapped is LOST else "next"

    def _one(self, e, target, seen):
        decision = yield Handle(e)
        outcome = {"apply": "applied", "ignore": "ignored", "quarantine": "quarantined"}.get(decision)
        if outcome is None:
            return "blocked"
        effect = outcome == "applied"
        if effect and self.contract.external_sink:
            op = yield Reserve(e)
            if op.state != COMMITTED:
                reply = yield Call(e, op.reservation)
                if (yield Settle(e, op.reservation, reply)) != COMMITTED:
                    return "blocked"
            effect = False
        done = yield Commit(e, outcome, target, with_effect=effect)
        if done is LOST:
            return "lost"
        seen[e.id] = outcome
        return None


class BackoffAfterLost(Consumer):
    """Backs off once after a request whose reply was lost before it loads the checkpoint again.

    Seed 000 step 6: "retry from the unchanged resume cursor" -- the seed says from where, not how soon; seed
    004: "On a lost response, retry the identical command", with no word of doing so at once. A lost reply
    often means a struggling service: a pause before the retry is ordinary courtesy.
    """

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "lost":
                yield Wait("blocked")
            elif result in ("caught_up", "blocked"):
                yield Wait(result)


class BoundedWorkPerAttempt(Consumer):
    """Makes at most eight outcomes durable per attempt, then ends the attempt without a barrier and starts
    the next one from the durable checkpoint, where receipts make the done events replays.

    Seed 000 step 6: "retry from the unchanged resume cursor. Receipts or the complete-prefix watermark make
    already applied events harmless replays": ending an attempt early is a crash without the crash. The
    barrier is passed only once every event of the page has a durable outcome (invariant 1).
    """

    def process(self, checkpoint, page, receipts):
        applied, made = checkpoint.applied_position, 0
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            if made == 8:
                return "rejected", applied      # enough for this attempt: the next one loads and goes on
            decision = yield Handle(event)
            target = max(applied, event.position)
            if (status := (yield from _decided(self, event, decision, target))) is not None:
                return status, applied
            applied, made = target, made + 1
        return "done", applied


class SilentReplays(Consumer):
    """Passes over a replay without yielding ``Skip``: ``Skip`` "executes nothing" (simkit.ops), so leaving it
    out changes nothing durable.

    Seed 000 step 4: "If a durable receipt proves the event already has its intended outcome, treat it as
    replayed" -- treating it as replayed is doing nothing for it.
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if (status := (yield from _decided(self, event, decision, target))) is not None:
                return status, applied
            applied = target
        return "done", applied


class LookupOneByOne(Consumer):
    """Reads each event's receipt with a lookup of its own, all of them before validating the page, instead of
    one lookup for the whole page.

    Seed 000 step 4 asks for "per-event receipts" and prescribes no batching; the union of the single-event
    answers is the page's answer. Validation still comes before any effect (step 3).
    """

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
        receipts, ids_at = {}, {}
        for event in page.events:
            one, at = yield Lookup((event,))
            receipts.update(one)
            ids_at.update(at)
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


class ConfirmBeforeHalt(Consumer):
    """Before halting for investigation, fetches the same cursor once more and reads its receipts again, and
    halts only if the page still breaks the contract; otherwise the attempt ends and the next one loads.

    Seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap that
    violates the provider contract stops the attempt for investigation": nothing of a page that failed
    validation is processed either way. Confirming a breach before paging an operator is cheap diligence.
    """

    def validate(self, checkpoint, page, ids_at):
        return None

    def after_fetch(self, checkpoint, page):
        receipts, ids_at = yield Lookup(page.events)
        if not super().validate(checkpoint, page, ids_at):
            return None
        again = yield Fetch(checkpoint.resume_cursor)
        if again is LOST or again is None:
            return "lost"
        receipts, ids_at = yield Lookup(again.events)
        problem = super().validate(checkpoint, again, ids_at)
        if problem:
            yield Halt(problem)
        return "rejected"


class SkipsVersions(Consumer):
    """Raises ``checkpoint_version`` by two at each barrier.

    Seed 000 step 5: "compare-and-swap the checkpoint from the attempt cursor and version to the returned next
    cursor and a greater version"; seed 000 calls the version "a compare-and-swap generation": any greater
    number fences the older attempt identity.
    """

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 2,
                                applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class WaitReasonAlwaysCaughtUp(Consumer):
    """Backs off with the same ``Wait`` whatever the reason: the reason is a label; the seed asks only to
    "stop or back off instead of spinning" (step 7) and that a blocked page wait for its event (invariant 5).
    """

    def run(self):
        while True:
            result = yield from self.attempt()
            if result in ("caught_up", "blocked"):
                yield Wait("caught_up")


class JitterOnStart(Consumer):
    """Backs off once at the start of every worker life, before it reads the checkpoint: the restart jitter a
    fleet uses so that crashed workers do not stampede the store together.

    Seed 000 step 6: "On a crash before the page barrier, retry from the unchanged resume cursor" -- from
    where, not how soon. The worker's first request after the pause is step 1's load.
    """

    def run(self):
        yield Wait("blocked")
        return (yield from super().run())


class HeartbeatWhenCaughtUp(Consumer):
    """When caught up, writes a heartbeat: a compare-and-swap that keeps the cursor and raises only the
    version, from the attempt's identity, then backs off.

    Seed 004: "Writing the same cursor with a new idempotency key and correct expected revision is allowed and
    advances the checkpoint revision"; it publishes no token (invariant 1 concerns a returned token) and moves
    no ``applied_position``. A rival attempt holding the older version loses its barrier and rereads (step 5).
    """

    def run(self):
        while True:
            self._last = None
            result = yield from self.attempt()
            if result == "caught_up" and self._last is not None:
                cp = self._last
                yield Barrier(cp.resume_cursor, cp.checkpoint_version, cp.resume_cursor,
                              cp.checkpoint_version + 1, cp.applied_position)
            if result in ("caught_up", "blocked"):
                yield Wait(result)

    def is_caught_up(self, checkpoint, page):
        caught = super().is_caught_up(checkpoint, page)
        self._last = checkpoint if caught else None
        return caught


class RetryLostBarrier(Consumer):
    """A barrier whose reply was lost is retried with the identical compare-and-swap; when that one loses, the
    checkpoint is read: if it holds the page's next cursor at the version the barrier wrote, the first one
    went in and the page is done.

    Seed 004: "On a lost response, retry the identical command"; seed 000 step 5: the loser "must reread
    state rather than overwrite newer progress" -- it rereads, and writes nothing more.
    """

    def page_barrier(self, checkpoint, page, applied_position):
        target = self.barrier_target(checkpoint, page)
        for _ in range(2):
            swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, target,
                                    checkpoint.checkpoint_version + 1, applied_position)
            if swapped is not LOST:
                break
        if swapped is LOST:
            return "lost"
        if swapped:
            return "advanced"
        now = yield Load()
        if (now.resume_cursor, now.checkpoint_version) == (target, checkpoint.checkpoint_version + 1):
            return "advanced"
        return "rejected"


class TwoPagesThenPublish(Consumer):
    """Processes a page, then reads the next page and processes it too, and only then publishes both barriers,
    one after the other: the first from the loaded (cursor, version), the second from the identity the first
    wrote.

    Seed 000 invariant 1: the first page's token stays pending until every event of the first page is durable,
    which it is before either barrier; the second page's token likewise. Invariant 3 as judged allows
    read-ahead and a remembered attempt identity. ``applied_position`` rises only over durable events
    (invariant 2). A crash anywhere retries from the durable cursor, where receipts make the done events
    replays (step 6).
    """

    def run(self):
        while True:
            status = yield from self._pair()
            if status in ("caught_up", "blocked"):
                yield Wait(status)

    def _page(self, checkpoint, cursor, applied):
        """Fetch, look up, validate and process the page at ``cursor``: (status, page, applied after)."""
        page = yield Fetch(cursor)
        if page is LOST:
            return "lost", None, applied
        if page is None:
            yield Halt(f"provider refused cursor {cursor!r}")
        receipts, ids_at = yield Lookup(page.events)
        as_loaded = Checkpoint(cursor, applied, checkpoint.checkpoint_version)
        problem = self.validate(as_loaded, page, ids_at)
        if problem:
            yield Halt(problem)
        if self.is_caught_up(as_loaded, page):
            return "caught_up", page, applied
        status, applied = yield from self.process(as_loaded, page, receipts)
        return status, page, applied

    def _pair(self):
        cp = yield Load()
        status, first, applied = yield from self._page(cp, cp.resume_cursor, cp.applied_position)
        if status != "done":
            return status
        if first.next_cursor == cp.resume_cursor:
            return "caught_up"
        status2, second, applied2 = yield from self._page(cp, first.next_cursor, applied)
        swapped = yield Barrier(cp.resume_cursor, cp.checkpoint_version, first.next_cursor,
                                cp.checkpoint_version + 1, applied)
        if swapped is LOST or not swapped:
            return "next"
        if status2 != "done":
            return status2 if status2 in ("caught_up", "blocked") else "next"
        if second.next_cursor == first.next_cursor:
            return "caught_up"
        yield Barrier(first.next_cursor, cp.checkpoint_version + 1, second.next_cursor,
                      cp.checkpoint_version + 2, applied2)
        return "next"


class FetchThenLoad(Consumer):
    """After a barrier it swapped, fetches the page at the cursor it just published before reading the
    checkpoint, then loads and goes on with the page only if the checkpoint still holds that cursor (else it
    drops the page and starts again from what it loaded).

    Seed 000 step 1 makes the loaded (cursor, version) the attempt identity, and step 2 fetches "with that
    cursor": the page here was fetched with the very cursor the load returns, and a read changes nothing, so
    the order of the two reads does not matter. The barrier compares the loaded identity (step 5).
    """

    def run(self):
        ahead = None
        while True:
            checkpoint = (yield Load()) if ahead is None else None
            if ahead is not None:
                page = yield Fetch(ahead)
                checkpoint = yield Load()
                if page is LOST or page is None or checkpoint.resume_cursor != ahead:
                    ahead = None
                    continue
            else:
                page = yield Fetch(checkpoint.resume_cursor)
                if page is LOST:
                    continue
                if page is None:
                    yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
            ahead = None
            receipts, ids_at = yield Lookup(page.events)
            problem = self.validate(checkpoint, page, ids_at)
            if problem:
                yield Halt(problem)
            if self.is_caught_up(checkpoint, page):
                yield Wait("caught_up")
                continue
            status, applied = yield from self.process(checkpoint, page, receipts)
            if status == "blocked":
                yield Wait("blocked")
                continue
            if status != "done":
                continue
            if page.next_cursor == checkpoint.resume_cursor:
                yield Wait("caught_up")
                continue
            if (yield from self.page_barrier(checkpoint, page, applied)) == "advanced":
                ahead = page.next_cursor


class HaltOnTheNextPageFirst(Consumer):
    """Reads the next page ahead as soon as a page arrives and validates it too (against the loaded
    ``applied_position``), before any effect of the current page: a breach there halts the worker at once.

    Seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap that
    violates the provider contract stops the attempt for investigation"; invariant 3 as judged allows reading
    ahead. Halting before the current page is done leaves its events pending, which a justified halt allows:
    the investigation comes first.
    """

    def after_fetch(self, checkpoint, page):
        if page.next_cursor == checkpoint.resume_cursor:
            return None
        ahead = yield Fetch(page.next_cursor)
        if ahead is LOST or ahead is None:
            return None
        _receipts, ids_at = yield Lookup(ahead.events)
        as_loaded = Checkpoint(page.next_cursor, checkpoint.applied_position, checkpoint.checkpoint_version)
        problem = super().validate(as_loaded, ahead, ids_at)
        if problem:
            yield Halt(f"next page: {problem}")
        return None
