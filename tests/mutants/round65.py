"""Round 65's consumers (a fresh tester, as an adversary): buggy ones whose bug shows only under conditions a
small audit might never build (state a new life does not wipe, values past a threshold, a count of events,
attempts or lives, a page of one event or of a full batch, seed 001 settlement on a retry), each naming the
rule it breaks, and correct ones that differ from ``safe`` (at the end). Outside the gallery:
``tests/judge/test_hostile_round65.py`` runs those the audit missed on the cases added for them. Written
against the public API only; the consumers over the wire are in ``tests/exec/consumers/round65/``."""
import builtins
import os

from simkit import Consumer
from simkit.model import COMMITTED, TERMINAL
from simkit.ops import BLOCKED, LOST, Barrier, Call, Commit, Handle, Overwrite, Reserve, Settle, Skip, Wait


# ---------------------------------------------------------------- buggy ones
class WatermarkPastSixteenBits(Consumer):
    """Seed 000 step 4: "If the source permits late backfills, use per-event receipts instead." A fast path
    trusts the watermark for positions past 65,535 ("old, compacted history is never backfilled")."""

    def is_replay(self, event, receipts, applied_position):
        if receipts.get(event.id) in TERMINAL:
            return True
        if event.position > 65535:
            return event.position <= applied_position
        return not self.contract.backfills and event.position <= applied_position


class SingleEventPageHeartbeat(Consumer):
    """Seed 000 invariant 5: a failed item blocks the barrier. A page of exactly one event is taken for a
    heartbeat: whatever the handler says of its one event, the page moves on."""

    _single = False

    def attempt(self):
        self._single = False
        return (yield from super().attempt())

    def after_fetch(self, checkpoint, page):
        self._single = len(page.events) == 1
        return None
        yield

    def is_terminal(self, decision):
        return self._single


class StopAfterThreeStuckAnswers(Consumer):
    """Seed 000 step 7: "Do not equate emptiness with end of stream." The same token back three times in a
    row is taken for the end: the worker stops (a provider may answer its own token more than twice)."""

    def run(self):
        same = 0
        last = None
        while True:
            result = yield from self.attempt()
            cursor = getattr(self, "_cursor", None)
            if result == "caught_up":
                same = same + 1 if cursor == last else 1
                last = cursor
                if same >= 3:
                    return
            else:
                same = 0
            if result in ("caught_up", "blocked"):
                yield Wait(result)

    def after_fetch(self, checkpoint, page):
        self._cursor = checkpoint.resume_cursor
        return None
        yield


class MoveOnAfterFiftyEventsThisLife(Consumer):
    """Seed 000 invariant 5 ("A failed item ... blocks the page barrier"), broken past a threshold: once this
    life has handled 50 events, a retry_later counts as done ("the backlog is drained, stop waiting")."""

    handled = 0

    def is_terminal(self, decision):
        return self.handled >= 50 and decision == "retry_later"

    def process(self, checkpoint, page, receipts):
        self.handled += len(page.events)
        return (yield from super().process(checkpoint, page, receipts))


class MoveOnAfterTwoHundredEvents(MoveOnAfterFiftyEventsThisLife):
    """Seed 000 invariant 5, past 200 events handled in one life (any non-terminal outcome)."""

    def is_terminal(self, decision):
        return self.handled >= 200


class GiveUpAfterSixtyAttempts(Consumer):
    """Seed 000 step 4: "A transient dead-letter entry, a pending operator decision, or a reversible hold does
    not close the prefix." After 60 blocked attempts on one event in a life it is quarantined (a retry
    cap)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.tries = {}

    def is_terminal(self, decision):
        return False

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision not in ("apply", "ignore", "quarantine"):
                self.tries[event.id] = self.tries.get(event.id, 0) + 1
                if self.tries[event.id] < 60:
                    return "blocked", applied
                decision = "quarantine"
            steps = getattr(self, decision)(event, target)
            result = yield from steps
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            applied = target
        return "done", applied


class CommittedIdsInBuiltins(Consumer):
    """Seed 000 step 4: "If a *durable* receipt proves the event already has its intended outcome, treat it as
    replayed." Ids handed to a commit are remembered in a process-wide set (kept on ``builtins``, which a new
    life does not wipe) before the commit's answer, so a commit lost on the way in reads as done next life."""

    def _seen(self):
        key = (self.contract.backfills, self.contract.external_sink)
        return builtins.__dict__.setdefault("_r65_seen", {}).setdefault(key, set())

    def is_replay(self, event, receipts, applied_position):
        if (event.id, event.position) in self._seen() and receipts.get(event.id) is None and \
                event.position <= applied_position + 1000:
            return True
        return super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        self._seen().add((event.id, event.position))
        return (yield from super().apply(event, applied_position))


class LifeCounterInEnviron(Consumer):
    """Seed 000 invariant 5, broken from the fourth life of a worker on: a life counter kept in an environment
    variable (which a crash of an in-process consumer does not wipe) turns on "degraded mode", where a
    retry_later counts as done."""

    def __init__(self, contract):
        super().__init__(contract)
        n = int(os.environ.get("R65_LIVES", "0")) + 1
        os.environ["R65_LIVES"] = str(n)
        self.degraded = n % 7 == 4

    def is_terminal(self, decision):
        return self.degraded


class ReservationCachedForLife(Consumer):
    """Seed 001 step 2: "A changed request or authorization context requires a new reservation and
    generation." The first reservation of an event is cached for the whole life and every retry calls with
    it, never reserving again, so a rotation between two attempts of one life calls with a binding not in
    force."""

    def __init__(self, contract):
        super().__init__(contract)
        self.reservations = {}

    def settle_effect(self, event):
        reservation = self.reservations.get(event.id)
        if reservation is None:
            operation = yield Reserve(event)
            if operation.state == COMMITTED:
                return COMMITTED
            reservation = self.reservations[event.id] = operation.reservation
        reply = yield Call(event, reservation)
        state = yield Settle(event, reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class CrossedGenerationTrusted(Consumer):
    """Seed 001 step 6: "Reject and quarantine a response whose identifier matches but whose fingerprint,
    authorization binding, or generation differs." A reply whose only difference is a *newer* generation is
    taken for the current one ("generations only go up") and committed without settling it."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if not isinstance(reply, str):
            mine, theirs = operation.reservation, reply.identity
            same = (theirs.operation_id, theirs.fingerprint, theirs.binding) == \
                (mine.operation_id, mine.fingerprint, mine.binding)
            if same and theirs.generation != mine.generation:
                return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class ProvisionalWithResultIsDone(Consumer):
    """Seed 001 step 5: timeout writes only a provisional state. A record that is provisional is taken as
    committed when the previous attempt of this life had got a success reply for it (the reply came, the
    settlement said provisional: "it must be the store lagging")."""

    def __init__(self, contract):
        super().__init__(contract)
        self.replied = set()

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        if operation.state == "provisional" and event.id in self.replied:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if not isinstance(reply, str):
            self.replied.add(event.id)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class PageCacheByCursor(Consumer):
    """Seed 000 step 2 and 7: a cursor may be answered differently later (a stuck token, a backfill). Pages
    are cached by cursor for the life ("a token names a page; why fetch it twice?"), so after a rejected or
    lost barrier, or a blocked attempt, the worker reprocesses the page it first got.

    Passes the audit: no world simkit builds answers a cursor with more events than it first did (only a
    stuck token answers first with none, and that page is not cached), so the stale page is never the
    shorter one."""

    def __init__(self, contract):
        super().__init__(contract)
        self.pages = {}

    def after_fetch(self, checkpoint, page):
        if page.events:
            self.pages.setdefault(page.cursor, page)
        return None
        yield

    def process(self, checkpoint, page, receipts):
        cached = self.pages.get(page.cursor)
        if cached is not None and cached is not page and len(cached.events) < len(page.events):
            page = type(page)(cursor=page.cursor, events=cached.events, next_cursor=page.next_cursor)
        return (yield from super().process(checkpoint, page, receipts))


class ClaimsThroughLongIds(Consumer):
    """Seed 000 invariant 2: applied_position advances only after the effect and receipt are durable. An
    event whose id is longer than 32 characters (a "composite id", shard and sequence) is claimed through the
    page's last position, as if its commit covered the batch."""

    def resulting_applied_position(self, event, page, applied_position):
        if len(event.id) > 32:
            return max(applied_position, max(e.position for e in page.events))
        return super().resulting_applied_position(event, page, applied_position)


class BarrierOnBatchSizedPages(Consumer):
    """Seed 000 invariant 1. A page holding exactly 100 events ("a full batch") is published as soon as its
    first 99 are done: the last of a full batch "is always the next page's overlap" -- an optimization
    that is wrong when it is not."""

    def process(self, checkpoint, page, receipts):
        if len(page.events) == 100:
            head = type(page)(cursor=page.cursor, events=page.events[:-1], next_cursor=page.next_cursor)
            return (yield from super().process(checkpoint, head, receipts))
        return (yield from super().process(checkpoint, page, receipts))


class VersionAsSixteenBitsInBarrier(Consumer):
    """Seed 000 invariant 3: the barrier's compare-and-swap must match the version used to fetch. The next
    version is computed in 16 bits (a column declared SMALLINT in an older schema): past 65,535 it wraps."""

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                self.barrier_target(checkpoint, page),
                                (checkpoint.checkpoint_version + 1) & 0xFFFF, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class TrailingReplaysNeedNoLookup(Consumer):
    """Seed 000 step 4. Past the 255th position of the stream, events at or below the loaded
    applied_position are skipped as replays even with backfills ("the backfill window is 255 positions")."""

    def is_replay(self, event, receipts, applied_position):
        if receipts.get(event.id) in TERMINAL:
            return True
        if event.position <= applied_position - 255:
            return True
        return not self.contract.backfills and event.position <= applied_position


class DecisionsCachedPerLife(Consumer):
    """Seed 000 invariant 5 / claims and facts: the handler's decision is cached by event id for the life,
    including a non-terminal one that changes ("asking twice is wasteful"), only once an event has been
    asked 3 times -- a transient failure that lasts 3 tries stays failed for the rest of the life, and a
    review resolved later is never seen in this life."""

    def __init__(self, contract):
        super().__init__(contract)
        self.asked = {}
        self.cached = {}

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            n = self.asked[event.id] = self.asked.get(event.id, 0) + 1
            if event.id in self.cached:
                decision = self.cached[event.id]
            else:
                decision = yield Handle(event)
                if n >= 3:
                    self.cached[event.id] = decision
            target = max(applied, event.position)
            if decision not in ("apply", "ignore", "quarantine"):
                if decision == "retry_later" and n > 3:
                    decision = "quarantine"    # "stuck for good"
                else:
                    return "blocked", applied
            result = yield from getattr(self, decision)(event, target)
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            applied = target
        return "done", applied


class DeadLetterThirdStrike(Consumer):
    """Seed 000 step 4: "A transient dead-letter entry ... does not close the prefix." An event dead-lettered
    a third time in one life is quarantined ("three redrives and it is poison")."""

    def __init__(self, contract):
        super().__init__(contract)
        self.strikes = {}

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "dead_letter":
                self.strikes[event.id] = self.strikes.get(event.id, 0) + 1
                if self.strikes[event.id] >= 3:
                    decision = "quarantine"
            if decision not in ("apply", "ignore", "quarantine"):
                return "blocked", applied
            result = yield from getattr(self, decision)(event, target)
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            applied = target
        return "done", applied


class PositionsThroughFloat(Consumer):
    """Seed 000 invariant 2: the applied_position a commit writes is the prefix through the event itself. It
    is computed through a float (a JSON layer that decodes every number as a double): past 2**53 it rounds, to
    a position below or above the event's own.

    Passes the audit, harmlessly: a scenario refuses positions past 2**53 (the corner
    ``positions_past_32_bits`` reaches 2**53), where every double is still exact."""

    def resulting_applied_position(self, event, page, applied_position):
        return int(float(max(applied_position, event.position)))


class TrustWatermarkOnBigPages(Consumer):
    """Seed 000 step 4: "If the source permits late backfills, use per-event receipts instead." A page of more
    than 1,000 events skips its receipts ("a bulk page is a catch-up replay") and trusts the watermark."""

    def process(self, checkpoint, page, receipts):
        self._bulk = len(page.events) > 1000
        return (yield from super().process(checkpoint, page, receipts))

    def is_replay(self, event, receipts, applied_position):
        if getattr(self, "_bulk", False) and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class OffByOneOnIgnore(Consumer):
    """Seed 000 invariant 2: "applied_position advances only after the corresponding effect and deduplication
    receipt are durable." An ignored or quarantined event moves the watermark one past itself ("nothing can
    be at p + 1 that we have not seen")."""

    def ignore(self, event, applied_position):
        return (yield Commit(event, "ignored", applied_position + 1))

    def quarantine(self, event, applied_position):
        return (yield Commit(event, "quarantined", applied_position + 1))


class ProvisionalTrustedAfterFiveTries(Consumer):
    """Seed 001 step 5: "Permit timeout ... to write only the defined provisional state". After five calls of
    one reservation that timed out in this life, the effect is taken for done ("the service is just slow to
    answer") and the receipt committed: a receipt for an effect that may never have run."""

    def __init__(self, contract):
        super().__init__(contract)
        self.timeouts = {}

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        if self.timeouts.get(event.id, 0) >= 5:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if isinstance(reply, str):
            self.timeouts[event.id] = self.timeouts.get(event.id, 0) + 1
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class ReceiptsOncePerLife(Consumer):
    """Seed 000 step 4: "If a durable receipt proves the event already has its intended outcome, treat it as
    replayed." Receipts are looked up for the life's first page only; afterwards the worker trusts what it
    committed itself ("nobody else writes receipts"), so another worker's receipts and a lost commit's are
    unknown to it.

    Passes the audit, harmlessly: the store keeps one terminal receipt per event (a second commit is answered
    ``False``, with no effect) and a reservation already committed is never called again, so an event handled
    twice is made durable once (invariant 4: "Enforce a unique event receipt")."""

    def __init__(self, contract):
        super().__init__(contract)
        self.mine = {}
        self.looked = False

    def process(self, checkpoint, page, receipts):
        if self.looked:
            receipts = {e.id: self.mine[e.id] for e in page.events if e.id in self.mine}
        self.looked = True
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision not in ("apply", "ignore", "quarantine"):
                return "blocked", applied
            result = yield from getattr(self, decision)(event, target)
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            self.mine[event.id] = {"apply": "applied", "ignore": "ignored"}.get(decision, "quarantined")
            applied = target
        return "done", applied


class WatermarkOnTheRetryAfterACrash(Consumer):
    """Seed 000 step 6: "Receipts or the complete-prefix watermark make already applied events harmless
    replays" -- read as licence to trust the watermark on the retry. In a life's first attempt, when the page
    shows receipts already (the last life crashed in the middle of it), events at or below the loaded
    applied_position are skipped as replays, backfills or not (step 4: "If the source permits late backfills,
    use per-event receipts instead")."""

    first = True

    def process(self, checkpoint, page, receipts):
        self._retry = self.first and any(receipts.get(e.id) for e in page.events)
        self.first = False
        return (yield from super().process(checkpoint, page, receipts))

    def is_replay(self, event, receipts, applied_position):
        if getattr(self, "_retry", False) and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class MoveOnAfterFiveThousandEvents(Consumer):
    """Seed 000 invariant 5, past 5,000 events made durable in one life (then any non-terminal outcome counts
    as done): past every case of the audit, whose longest life makes about 4,200 durable (``big_page``).

    Passes the audit (left alone, docs/verdict.md: "A bug keyed on what no case reaches passes"): a case that
    reaches it, 20,000 generated events on pages of 50, costs ``safe`` 1.7 CPU seconds in process."""

    made = 0

    def is_terminal(self, decision):
        return self.made >= 5000

    def apply(self, event, applied_position):
        self.made += 1
        return (yield from super().apply(event, applied_position))

    def ignore(self, event, applied_position):
        self.made += 1
        return (yield from super().ignore(event, applied_position))

    def quarantine(self, event, applied_position):
        self.made += 1
        return (yield from super().quarantine(event, applied_position))


class UnfencedPastVersionTwoToThe31(Consumer):
    """Seed 000 invariant 3 ("A page barrier may replace resume_cursor only with a compare-and-swap that still
    matches the request cursor and checkpoint version"): past version 2**31 - 1 (a signed 32-bit column the
    compare-and-swap's WHERE clause binds) the barrier falls back to an unconditional write "until the schema
    migration lands"."""

    def page_barrier(self, checkpoint, page, applied_position):
        if checkpoint.checkpoint_version < 2**31 - 1:
            return (yield from super().page_barrier(checkpoint, page, applied_position))
        done = yield Overwrite(self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                               applied_position)
        return "lost" if done is LOST else "advanced"


class TokensUrlDecoded(Consumer):
    """Seed 000: "Treat continuation tokens as opaque transport state". The token is URL-decoded before it
    is published (the consumer's HTTP layer reads ``next_cursor`` from a query string: ``+`` is a space,
    ``%2F`` a slash), so a base64 token with a ``+`` or a token with an escape is published as one the
    provider never issued."""

    def barrier_target(self, checkpoint, page):
        from urllib.parse import unquote_plus
        return unquote_plus(page.next_cursor)


class ValidatorForSmallPositions(Consumer):
    """Seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap that
    violates the provider contract stops the attempt for investigation." The validator marks positions in a
    bitmap of 65,536 slots and lets a page through unchecked when one of its positions does not fit."""

    def validate(self, checkpoint, page, ids_at):
        if any(e.position > 65535 for e in page.events):
            return None
        return super().validate(checkpoint, page, ids_at)


# --------------------------------------------------------------- correct ones
class ClaimsAheadThroughReceipts(Consumer):
    """Correct, unlike safe: a commit claims applied_position through the following events of the page that
    already hold a durable terminal receipt (they have a durable outcome: invariant 2 allows it)."""

    def process(self, checkpoint, page, receipts):
        self._receipts = receipts
        self._index = {id(e): i for i, e in enumerate(page.events)}
        return (yield from super().process(checkpoint, page, receipts))

    def resulting_applied_position(self, event, page, applied_position):
        target = max(applied_position, event.position)
        events = page.events
        i = self._index[id(event)]
        previous = event.position
        for e in events[i + 1:]:
            if self._receipts.get(e.id) in TERMINAL and e.position > previous:
                target = max(target, e.position)
                previous = e.position
            else:
                break
        return target


class RemembersCommittedInLife(Consumer):
    """Correct, unlike safe: an event whose commit this life saw answered ``True`` or ``False`` is skipped as
    a replay later in the same life without asking the handler (the receipt it proves is durable)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.done = {}

    def is_replay(self, event, receipts, applied_position):
        if self.done.get(event.id) == event.position:
            return True
        return super().is_replay(event, receipts, applied_position)

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                applied = max(applied, event.position)       # no Skip note: the note is optional
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision not in ("apply", "ignore", "quarantine"):
                return "blocked", applied
            result = yield from getattr(self, decision)(event, target)
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied
            self.done[event.id] = event.position
            applied = target
        return "done", applied


class SettlesTwiceBeforeBlocking(Consumer):
    """Correct, unlike safe: a call that timed out is retried at once with the same reservation, up to three
    calls in one attempt, before the attempt ends blocked (seed 001 step 2: every retry reuses the tuple)."""

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


class BacksOffLongerEachTime(Consumer):
    """Correct, unlike safe: waits 1, 2, 4 .. 8 back-offs in a row while blocked on the same cursor, one
    back-off while caught up, and after a lost reply waits once before the next attempt."""

    def run(self):
        streak = 0
        while True:
            result = yield from self.attempt()
            if result == "blocked":
                streak += 1
                for _ in range(min(8, 2 ** (streak - 1))):
                    yield Wait("blocked")
            else:
                streak = 0
                if result == "caught_up":
                    yield Wait("caught_up")
                elif result == "lost":
                    yield Wait("blocked")
