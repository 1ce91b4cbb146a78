"""Round 62's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), written
from seed 000's walkthroughs, steps, invariants and shortcuts and seed 001's steps, on the public API only,
most before their author read the audit's cases: each buggy one is right in the common case and wrong in one
branch; the correct ones (after ``# -- correct``) differ from ``safe`` in a way the seeds allow.
``tests/judge/test_hostile_round62.py`` runs the three the audit missed (``OverlapPageByPositions``,
``ValidatedCursorsCache``, ``DeadLetterIsFinal``) on the corners that now catch them.
"""
from simkit import Consumer
from simkit.model import COMMITTED, PROVISIONAL
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
)

__all__ = [
    "ReplaysFirst", "PositionOfTheEvent", "ReservationPerLife", "ProvisionalAwaitsLateReply",
    "SettleWithReplyIdentity", "ValidatedReplyNeedsNoSettle", "HeldResultIsSuccess", "BarrierAtLastEvent",
    "EmptyPageResetsWatermark", "OverlapPageFastPath", "HaltOnCommitConflict", "FirstAttemptTrustsWatermark",
    "ProvisionalReceiptFirst", "AppliedCountsOnlyEffects", "PoisonAfterRetryIsRetried", "DecisionsOfThisLife",
    "RetryLostBarrierOnce", "RetryLostCommitOnce", "LazyAppliedPosition", "ClaimThenProcess",
    "RetryCallWithinAttempt", "RefetchBeforeHalt", "ReceiptOnlyAfterLostCommit", "UniqueReceiptIsTheCheck",
    "VersionPlusTwo", "TimeoutLeavesPending", "ValidatedCursorsCache",
    "OverlapPageByPositions", "QuarantineEventOnCrossedReply", "ReplayPageFastPath", "ValidateNewEventsOnly",
    "DeadLetterIsFinal", "GapCheckStrict", "SameTokenMeansIdle",
]


# -- seed 000: walkthroughs, steps, invariants -------------------------------------------------------------
class ReplaysFirst(Consumer):
    """Quarantine boundary walkthrough: "Because 212 is already durable, the complete prefix may then extend
    through 212". The author clears the page's replays first (cheap) and raises the prefix over them, then
    handles the rest: an event behind a durable one is committed with ``applied_position`` over the gap.
    Breaks invariant 2."""

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        rest = []
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
            else:
                rest.append(event)
        for event in rest:
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision in ("apply", "ignore", "quarantine"):
                steps = {"apply": self.apply, "ignore": self.ignore, "quarantine": self.quarantine}[decision]
                result = yield from steps(event, target)
                if result is LOST:
                    return "lost", applied
                if result is BLOCKED:
                    return "blocked", applied
                applied = target
            else:
                return "blocked", applied
        return "done", applied


class PositionOfTheEvent(Consumer):
    """Step 4: "Commit each effect together with its receipt and the resulting applied_position". The author
    writes the event's own position: right while positions only grow, but a backfilled event behind the
    prefix moves ``applied_position`` backwards."""

    def resulting_applied_position(self, event, page, applied_position):
        return event.position


class ReservationPerLife(Consumer):
    """Seed 001 step 2: "A changed request or authorization context requires a new reservation and
    generation." The author keeps each event's reservation for the life of the worker (one Reserve per event),
    so a retry after a credential rotation calls with the old binding."""

    def __init__(self, contract):
        super().__init__(contract)
        self.reserved = {}

    def settle_effect(self, event):
        operation = self.reserved.get(event.id)
        if operation is None:
            operation = yield Reserve(event)
            self.reserved[event.id] = operation
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class ProvisionalAwaitsLateReply(Consumer):
    """Seed 001 step 5: timeout is "only provisional". The author reads provisional as "the call is in flight,
    its late reply will settle it" and never calls again: a request that was really lost never completes."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        if operation.state == PROVISIONAL:
            return BLOCKED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class SettleWithReplyIdentity(Consumer):
    """Seed 001 step 6: "Reject and quarantine a response whose identifier matches but whose fingerprint,
    authorization binding, or generation differs." The author settles a reply under the tuple it carries
    ("the service knows best"), so a crossed reply validates against itself."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        reservation = operation.reservation if isinstance(reply, str) else reply.identity
        state = yield Settle(event, reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class ValidatedReplyNeedsNoSettle(Consumer):
    """Seed 001 step 3: "Do not validate in one transaction and write in another." The author checks the
    reply's tuple in memory and, when it matches, commits the receipt without settling the record."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if not isinstance(reply, str) and reply.identity == operation.reservation:
            return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class HeldResultIsSuccess(Consumer):
    """Seed 001 step 4: only "a matching success" promotes to committed. The author takes a provisional record
    that holds a reply (a late one) as a success, without settling it."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED or operation.result is not None:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class BarrierAtLastEvent(Consumer):
    """Invariant 2 at the barrier: the author publishes ``applied_position`` as the page's last position
    ("the page is done, so we are at its end"): a page whose last event is a backfill behind the prefix moves
    it backwards."""

    def page_barrier(self, checkpoint, page, applied_position):
        if page.events:
            applied_position = page.events[-1].position
        return (yield from super().page_barrier(checkpoint, page, applied_position))


class EmptyPageResetsWatermark(Consumer):
    """Step 7: an empty page "may pass the barrier without changing applied_position". The author computes the
    barrier's position from the page (``max(..., default=0)``)."""

    def page_barrier(self, checkpoint, page, applied_position):
        applied_position = max((e.position for e in page.events), default=0)
        return (yield from super().page_barrier(checkpoint, page, max(applied_position,
                                                                        checkpoint.applied_position
                                                                        if page.events else 0)))


class OverlapPageFastPath(Consumer):
    """Step 3: "Overlap at or below the applied prefix is acceptable." The author publishes a page that lies
    wholly at or below the prefix at once, without looking its events up: a gap or a new identity there is
    never seen."""

    def after_fetch(self, checkpoint, page):
        if page.events and not self.contract.backfills and \
                page.events[-1].position <= checkpoint.applied_position and \
                page.next_cursor != checkpoint.resume_cursor:
            return (yield from self.page_barrier(checkpoint, page, checkpoint.applied_position))
        return None


class HaltOnCommitConflict(Consumer):
    """Step 3 halts only on a provider breach. The author halts when a commit finds a receipt already there
    ("someone else is processing our page: investigate"), which two workers on one checkpoint do routinely."""

    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        if result is False:
            yield Halt(f"{event.id} already has a receipt")
        return result


class FirstAttemptTrustsWatermark(Consumer):
    """Step 4: "If the source permits late backfills, use per-event receipts instead." The author trusts the
    durable watermark in a worker's first attempt after a restart ("everything below it is done"): a backfill
    behind it met by a second life is skipped."""

    def __init__(self, contract):
        super().__init__(contract)
        self.first = True

    def attempt(self):
        try:
            return (yield from super().attempt())
        finally:
            self.first = False

    def is_replay(self, event, receipts, applied_position):
        if self.first and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class ProvisionalReceiptFirst(Consumer):
    """Shortcut "Recording success before a non-idempotent external effect is durably known", in one branch:
    when the record is already provisional (an earlier call timed out, so it "probably went through"), the
    author commits the receipt first and settles after."""

    def apply(self, event, applied_position):
        if self.contract.external_sink:
            operation = yield Reserve(event)
            if operation.state == PROVISIONAL:
                done = yield Commit(event, "applied", applied_position)
                if done is LOST:
                    return LOST
                reply = yield Call(event, operation.reservation)
                yield Settle(event, operation.reservation, reply)
                return done
        return (yield from super().apply(event, applied_position))


class AppliedCountsOnlyEffects(Consumer):
    """Keep two kinds of progress: applied_position is "the greatest position in the source-ordered prefix
    whose events have durable outcomes". The author raises it only for applied events: ignored and quarantined
    ones leave it behind, and a stream that ends with one leaves the applied position behind durable work."""

    def ignore(self, event, applied_position):
        return (yield Commit(event, "ignored", self._before(event, applied_position)))

    def quarantine(self, event, applied_position):
        return (yield Commit(event, "quarantined", self._before(event, applied_position)))

    def _before(self, event, applied_position):
        return applied_position if applied_position != event.position else event.position - 1

    def page_barrier(self, checkpoint, page, applied_position):
        last = [e for e in page.events if e.position == applied_position]
        if last and last[0].behavior in ("ignore", "poison"):
            applied_position -= 1
        return (yield from super().page_barrier(checkpoint, page, applied_position))


class PoisonAfterRetryIsRetried(Consumer):
    """Invariant 5: a retryable failure blocks the barrier. The author remembers, for this life, the events
    that once answered ``retry_later`` and, when a later answer is ``quarantine`` (a retryable failure then a
    non-retryable one), treats the quarantine as one more retry: it never commits it, and the page blocks for
    ever; the author's other branch, a ``retry_later`` after a ``quarantine``, commits nothing either."""

    def __init__(self, contract):
        super().__init__(contract)
        self.retried = set()

    def quarantine(self, event, applied_position):
        if event.id in self.retried:
            return BLOCKED
            yield
        return (yield from super().quarantine(event, applied_position))

    def is_terminal(self, decision):
        return False

    def process(self, checkpoint, page, receipts):
        status, applied = yield from super().process(checkpoint, page, receipts)
        if status == "blocked":
            for event in page.events:
                if event.position > applied:
                    self.retried.add(event.id)
                    break
        return status, applied


class DecisionsOfThisLife(Consumer):
    """Step 4: a decision is the handler's now. The author asks the handler once per event per life and
    reuses its answer in later attempts: an operator review resolved meanwhile is never seen, and the page
    stays blocked."""

    def __init__(self, contract):
        super().__init__(contract)
        self.decided = {}

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = self.decided.get(event.id)
            if decision is None:
                decision = yield Handle(event)
                self.decided[event.id] = decision
            target = max(applied, event.position)
            if decision not in ("apply", "ignore", "quarantine"):
                return "blocked", applied
            result = yield from getattr(self, decision)(event, target)
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            applied = target
        return "done", applied


class ReceiptOnlyAfterLostCommit(Consumer):
    """Invariant 4's "couple the effect and receipt in one transaction", in the branch after a lost reply: the
    author remembers the events whose commit was lost in this life and commits them again without the effect
    ("the effect went through, only the receipt is missing"). A lost *request* ran nothing: the receipt
    claims an effect that never ran."""

    def __init__(self, contract):
        super().__init__(contract)
        self.sent = set()

    def apply(self, event, applied_position):
        if self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        done = yield Commit(event, "applied", applied_position, with_effect=event.id not in self.sent)
        if done is LOST:
            self.sent.add(event.id)
        return done


class UniqueReceiptIsTheCheck(Consumer):
    """Invariant 4: "Enforce a unique event receipt". The author trusts the store's unique receipt and
    validates a page against itself, not against the receipts it looked up: step 3's identity and gap checks
    need those receipts, and a new id at an applied position goes through."""

    def validate(self, checkpoint, page, ids_at):
        return super().validate(checkpoint, page, {e.position: e.id for e in page.events})


class ValidatedCursorsCache(Consumer):
    """Step 3 runs on every page fetched: "Validate that new events respect the source order". The author
    validates a cursor's page once per life and skips the check when the same cursor is fetched again (after
    a blocked or lost attempt): a page the provider serves differently the second time goes through."""

    def __init__(self, contract):
        super().__init__(contract)
        self.validated = set()

    def validate(self, checkpoint, page, ids_at):
        if page.cursor in self.validated:
            return None
        problem = super().validate(checkpoint, page, ids_at)
        if not problem:
            self.validated.add(page.cursor)
        return problem


class OverlapPageByPositions(Consumer):
    """Step 3: "Overlap at or below the applied prefix is acceptable", and step 4's receipts prove a replay.
    The author short-cuts a page that lies wholly at or below the prefix: when a receipt holds every one of
    its positions, it is a replay page and is published at once. Whose receipt holds the position is never
    asked, so a new identity at an applied position ("conflicting identity at the same position") goes
    through."""

    def after_fetch(self, checkpoint, page):
        if page.events and page.events[-1].position <= checkpoint.applied_position \
                and page.next_cursor != checkpoint.resume_cursor:
            _, ids_at = yield Lookup(page.events)
            if all(e.position in ids_at for e in page.events):
                return (yield from self.page_barrier(checkpoint, page, checkpoint.applied_position))
        return None


class RetryCallWithinAttempt(Consumer):
    """Seed 001 step 2: "Reuse that exact tuple for every retry of the same logical request. A changed request
    or authorization context requires a new reservation and generation." The author retries a timed-out call
    twice more in the same attempt with the reservation in hand, without reserving again: a credential
    rotation between two tries sends the stale binding.  (Written as a correct consumer; the audit showed
    the rotation.)"""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        for _ in range(3):
            reply = yield Call(event, operation.reservation)
            state = yield Settle(event, operation.reservation, reply)
            if state == COMMITTED:
                return COMMITTED
        return BLOCKED


class QuarantineEventOnCrossedReply(Consumer):
    """Seed 001 step 6: "Reject and quarantine a *response* whose identifier matches but whose fingerprint,
    authorization binding, or generation differs." The author quarantines the *event*: a crossed reply
    commits a ``quarantined`` receipt that no handler decision ordered, and the effect never runs."""

    def apply(self, event, applied_position):
        if not self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        operation = yield Reserve(event)
        if operation.state != COMMITTED:
            reply = yield Call(event, operation.reservation)
            state = yield Settle(event, operation.reservation, reply)
            if state != COMMITTED:
                if not isinstance(reply, str) and reply.identity != operation.reservation:
                    return (yield Commit(event, "quarantined", applied_position))
                return BLOCKED
        return (yield Commit(event, "applied", applied_position))


class ReplayPageFastPath(Consumer):
    """Step 6: "On retry, 104 and 106 are recognized as complete". The author publishes a page whose every
    event already holds its terminal receipt at once ("a pure replay: we crashed before the barrier"),
    without validating it: a replayed page served out of its own order goes through. (Seed 000 asks to
    "validate that *new* events respect the source order": it passes the audit, and is left alone.)"""

    def after_fetch(self, checkpoint, page):
        if not page.events or page.next_cursor == checkpoint.resume_cursor:
            return None
        receipts, _ = yield Lookup(page.events)
        if all(receipts.get(e.id) in ("applied", "ignored", "quarantined") for e in page.events):
            return (yield from self.page_barrier(checkpoint, page, checkpoint.applied_position))
        return None


class ValidateNewEventsOnly(Consumer):
    """Step 3: "Overlap at or below the applied prefix is acceptable". The author drops the events that hold
    their own receipt before validating (they are replays, "acceptable"): an order regression among them
    is never seen. (The seed's "validate that *new* events" allows it: it passes the audit, left alone.)"""

    def validate(self, checkpoint, page, ids_at):
        fresh = tuple(e for e in page.events if ids_at.get(e.position) != e.id)
        return super().validate(checkpoint, type(page)(page.cursor, fresh, page.next_cursor), ids_at)


class DeadLetterIsFinal(Consumer):
    """Invariant 5: "A failed item, retryable dead-letter outcome, operator-review hold, or reversible
    quarantine blocks the page barrier". The author counts an event the handler dead-letters as done ("it is
    in the DLQ now, ops own it"), and moves on."""

    def is_terminal(self, decision):
        return decision == "dead_letter"


class GapCheckStrict(Consumer):
    """Step 3: a gap "at or below the applied prefix" with no receipt stops the attempt. The author writes
    ``<`` for ``<=``: an event at exactly ``applied_position`` with no receipt passes the check, and the
    watermark then takes it for a replay. (No state simkit models has one: the scenario reader refuses an
    ``applied_position`` no receipt covers, and a served position that holds a receipt is an identity
    conflict. Left alone.)"""

    def validate(self, checkpoint, page, ids_at):
        shifted = type(checkpoint)(checkpoint.resume_cursor, checkpoint.applied_position - 1,
                                   checkpoint.checkpoint_version)
        return super().validate(shifted, page, ids_at)


class SameTokenMeansIdle(Consumer):
    """Step 7: "If the returned token equals the request token, stop or back off instead of spinning." The
    author backs off on any page that returns the request's token, events or not: a page of new events
    under the same token is never processed. (simkit's provider serves events under their own token only
    where ``safe`` is judged incomplete too: no audit case can hold it. Left alone.)"""

    def is_caught_up(self, checkpoint, page):
        return page.next_cursor == checkpoint.resume_cursor


# -- correct consumers that differ from safe ---------------------------------------------------------------
class RetryLostBarrierOnce(Consumer):
    """Correct: a barrier whose reply was lost is sent again once, identical. If the first took effect the
    second loses its compare-and-swap (the version moved) and the attempt ends ``rejected``: no overwrite."""

    def page_barrier(self, checkpoint, page, applied_position):
        request = Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                          self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                          applied_position)
        swapped = yield request
        if swapped is LOST:
            swapped = yield request
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class RetryLostCommitOnce(Consumer):
    """Correct: a commit whose reply was lost is sent again once; ``False`` (a terminal receipt is there,
    ours) means it took effect the first time."""

    def apply(self, event, applied_position):
        if self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        return (yield from self._twice(Commit(event, "applied", applied_position, with_effect=True)))

    def ignore(self, event, applied_position):
        return (yield from self._twice(Commit(event, "ignored", applied_position)))

    def quarantine(self, event, applied_position):
        return (yield from self._twice(Commit(event, "quarantined", applied_position)))

    def _twice(self, request):
        done = yield request
        if done is LOST:
            done = yield request
        return done


class LazyAppliedPosition(Consumer):
    """Correct: receipts are committed with the loaded ``applied_position`` unchanged, and the barrier alone
    raises it over the page ("batching" the watermark): it never runs ahead of durable outcomes, and receipts
    prove replays after a crash."""

    def resulting_applied_position(self, event, page, applied_position):
        return applied_position

    def process(self, checkpoint, page, receipts):
        status, _ = yield from super().process(checkpoint, page, receipts)
        if status != "done":
            return status, checkpoint.applied_position
        return status, max([checkpoint.applied_position] + [e.position for e in page.events])


class ClaimThenProcess(Consumer):
    """Correct: the attempt first claims the page with a compare-and-swap that keeps the cursor and raises the
    version (a fencing token), then processes it and publishes from the claimed version. A claim lost to
    another worker ends the attempt ``rejected``."""

    def after_fetch(self, checkpoint, page):
        if self.is_caught_up(checkpoint, page):
            return None
        claimed = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                checkpoint.resume_cursor, checkpoint.checkpoint_version + 1,
                                checkpoint.applied_position)
        if claimed is LOST:
            return "lost"
        if not claimed:
            return "rejected"
        return None

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version + 1,
                                self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 2,
                                applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class RefetchBeforeHalt(Consumer):
    """Correct: a page that breaks the contract is fetched again with a freshly loaded cursor before the
    worker halts; it halts only if that page breaks it too (a glitch that went away starts a new attempt)."""

    def after_fetch(self, checkpoint, page):
        receipts, ids_at = yield Lookup(page.events)
        if not self.validate(checkpoint, page, ids_at):
            return None
        again = yield Load()
        page = yield Fetch(again.resume_cursor)
        if page is LOST or page is None:
            return "lost"
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(again, page, ids_at)
        if problem:
            yield Halt(problem)
        return "lost"


class VersionPlusTwo(Consumer):
    """Correct: the barrier raises ``checkpoint_version`` by two ("a greater version", step 5; the version is
    a fencing generation, not a page count)."""

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 2,
                                applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class TimeoutLeavesPending(Consumer):
    """Correct (seed 001 step 5 *permits* a timeout to write provisional; it does not require it): a call that
    timed out is not settled; the record stays pending and the attempt blocks; the next one calls again with
    the same reservation."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if isinstance(reply, str):
            return BLOCKED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED

