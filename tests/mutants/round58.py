"""Round 58 (``tests/judge/test_hostile_round58.py``): buggy consumers written fresh, the first 23 before
reading the audit's cases, on the returning hooks of docs/hooks.md (``is_replay``,
``resulting_applied_position``, ``is_terminal``, ``is_caught_up``, ``barrier_target``, ``validate``) and on
bugs that show only at scale or with unusual value shapes. Each docstring names the seed rule it breaks. The
audit of main missed ``PaddedWatermark``, ``TruncatedTokenCaughtUp``, ``CaseFoldCaughtUp``,
``TrimmedCaughtUp``, ``BackfillsSkipValidation``, ``BackfillsAtOddPositions``, ``ResyncEveryFiftiethVersion``
and ``RetryCapOfTwentyFive``; the test module says which case catches each, and which of the others are no bug
the world can show."""
from __future__ import annotations

import zlib

from simkit import Consumer
from simkit.model import COMMITTED, TERMINAL
from simkit.ops import BLOCKED, LOST, Call, Commit, Overwrite, Reserve, Settle

__all__ = ["AnyReceiptIsReplay", "StringWatermark", "PaddedWatermark", "FloatWatermark",
           "RememberIssuedCommits", "BloomReplay", "LastEventPlusOne", "BigPageBatchWatermark",
           "EventPositionOnly", "GiveUpAfterThreeRetries", "HoldIsQuarantine", "SameTokenIsCaughtUp",
           "TruncatedTokenCaughtUp", "StrippedTarget", "EmptyPageStays", "EqualPositionsPass",
           "GapCheckFirstOnly", "SampledValidation", "WarmWatermark", "CachedReservation",
           "ProvisionalAfterRetries", "LostCommitIsDone", "DurableRetryMarker", "CaseFoldCaughtUp",
           "TrimmedCaughtUp", "CountsEvents", "SeenIsDone", "AllReplaysIsCaughtUp", "RecoveryTrustsThePage",
           "ResyncEveryFiftiethVersion", "BackfillsSkipValidation", "BackfillsAtOddPositions",
           "RetryCapOfTwentyFive"]


class AnyReceiptIsReplay(Consumer):
    """is_replay: any receipt at all counts as a replay, a non-terminal one too (seed 000 step 4: only a
    receipt proving the intended outcome; invariant 5)."""

    def is_replay(self, event, receipts, applied_position):
        if event.id in receipts:
            return True
        return not self.contract.backfills and event.position <= applied_position


class StringWatermark(Consumer):
    """is_replay: the watermark compared as text (positions read back from a string column): "100" <= "90"
    (seed 000 step 4, invariant 1)."""

    def is_replay(self, event, receipts, applied_position):
        if receipts.get(event.id) in TERMINAL:
            return True
        return not self.contract.backfills and str(event.position) <= str(applied_position)


class PaddedWatermark(Consumer):
    """is_replay: positions kept as zero-padded keys of width 6 ("pos:000120"), compared as text: right until
    a position reaches 1,000,000 (seed 000 step 4, invariant 1)."""

    def is_replay(self, event, receipts, applied_position):
        if receipts.get(event.id) in TERMINAL:
            return True
        return not self.contract.backfills and f"{event.position:06d}" <= f"{applied_position:06d}"


class FloatWatermark(Consumer):
    """is_replay: positions went through a JSON layer as doubles: beyond 2**53 two positions compare equal
    (seed 000 step 4, invariant 1)."""

    def is_replay(self, event, receipts, applied_position):
        if receipts.get(event.id) in TERMINAL:
            return True
        return not self.contract.backfills and float(event.position) <= float(applied_position)


class RememberIssuedCommits(Consumer):
    """is_replay: an in-memory set of ids this life committed, filled when the commit is issued, so a commit
    whose reply was lost counts as done (a LOST reply may not have taken effect; invariant 1)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.done = set()

    def is_replay(self, event, receipts, applied_position):
        return event.id in self.done or super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        self.done.add(event.id)
        return (yield from super().apply(event, applied_position))


class BloomReplay(Consumer):
    """is_replay: a small Bloom-style bitmap of committed ids (crc32 mod 512) as a fast path; a false
    positive skips an event nobody applied (seed 000 step 4: only a durable receipt proves replay)."""

    BITS = 512

    def __init__(self, contract):
        super().__init__(contract)
        self.bits = set()

    def is_replay(self, event, receipts, applied_position):
        if zlib.crc32(event.id.encode()) % self.BITS in self.bits:
            return True
        return super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        if result is True:
            self.bits.add(zlib.crc32(event.id.encode()) % self.BITS)
        return result


class LastEventPlusOne(Consumer):
    """resulting_applied_position: at the page's last event the prefix is taken to run to just before the next
    page ("position + 1": the page is complete), an off-by-one only at a page's last event (invariant 2)."""

    def resulting_applied_position(self, event, page, applied_position):
        if event is page.events[-1]:
            return max(applied_position, event.position + 1)
        return max(applied_position, event.position)


class BigPageBatchWatermark(Consumer):
    """resulting_applied_position: pages of more than 5 events are "batch committed": each commit writes the
    page's maximum position (seed 000's max_position_watermark, only on big pages; invariant 2)."""

    def resulting_applied_position(self, event, page, applied_position):
        if len(page.events) > 5:
            return max(applied_position, max(e.position for e in page.events))
        return max(applied_position, event.position)


class EventPositionOnly(Consumer):
    """resulting_applied_position: writes the event's own position, not the larger of it and the prefix: a
    backfill behind the prefix moves applied_position back (invariant 2, regressions)."""

    def resulting_applied_position(self, event, page, applied_position):
        return event.position


class GiveUpAfterThreeRetries(Consumer):
    """is_terminal: a poison-pill guard, in memory: after three non-terminal decisions in one life the event
    is taken as done (invariant 5: anything non-terminal blocks the barrier)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.retries = 0

    def is_terminal(self, decision):
        self.retries += 1
        return self.retries > 3


class HoldIsQuarantine(Consumer):
    """is_terminal: a reversible hold counts as a quarantine (invariant 5: a reversible quarantine blocks)."""

    def is_terminal(self, decision):
        return decision == "reversible_hold"


class SameTokenIsCaughtUp(Consumer):
    """is_caught_up: the token coming back is the end, whether the page has events or not: a page that carries
    events with its own token is never processed (seed 000 step 7; liveness)."""

    def is_caught_up(self, checkpoint, page):
        return page.next_cursor == checkpoint.resume_cursor


class TruncatedTokenCaughtUp(Consumer):
    """is_caught_up: tokens compared by their first 8 characters (as logged): a new token sharing that prefix
    reads as the same one (cursors are opaque, step 7)."""

    def is_caught_up(self, checkpoint, page):
        return not page.events and page.next_cursor[:8] == checkpoint.resume_cursor[:8]


class StrippedTarget(Consumer):
    """barrier_target: the token "normalised" (surrounding blanks and base64 padding stripped) before it is
    stored: a token the provider never issued (cursors are opaque, invariant 3)."""

    def barrier_target(self, checkpoint, page):
        return page.next_cursor.strip().rstrip("=")


class EmptyPageStays(Consumer):
    """barrier_target: an empty page publishes nothing (its target is the current cursor): an empty page with
    a new token is never passed (seed 000 step 7; liveness)."""

    def barrier_target(self, checkpoint, page):
        if not page.events:
            return checkpoint.resume_cursor
        return page.next_cursor


class EqualPositionsPass(Consumer):
    """validate: a regression is a position below the one before it; an equal one passes (seed 000 step 3:
    two ids at one position)."""

    def validate(self, checkpoint, page, ids_at):
        previous = None
        for e in page.events:
            if previous is not None and e.position < previous:
                return f"source-order regression: position {e.position} after {previous}"
            previous = e.position
            holder = ids_at.get(e.position)
            if holder is not None and holder != e.id:
                return f"conflicting identity at position {e.position}"
            if holder is None and not self.contract.backfills and e.position <= checkpoint.applied_position:
                return f"gap at {e.position}"
        return None


class GapCheckFirstOnly(Consumer):
    """validate: the gap check looks at the page's first event only ("only an overlap can be behind the
    prefix, and it comes first"): a gap after a replayed event passes (seed 000 step 3)."""

    def validate(self, checkpoint, page, ids_at):
        previous = None
        for i, e in enumerate(page.events):
            if previous is not None and e.position <= previous:
                return f"source-order regression: position {e.position} after {previous}"
            previous = e.position
            holder = ids_at.get(e.position)
            if holder is not None and holder != e.id:
                return f"conflicting identity at position {e.position}"
            if i == 0 and holder is None and not self.contract.backfills \
                    and e.position <= checkpoint.applied_position:
                return f"gap at {e.position}"
        return None


class SampledValidation(Consumer):
    """validate: pages of more than 4 events are checked by their ends only (a "fast path" for big pages):
    a regression inside them passes (seed 000 step 3)."""

    def validate(self, checkpoint, page, ids_at):
        if len(page.events) > 4:
            if page.events[0].position >= page.events[-1].position:
                return "source-order regression"
            return None
        return super().validate(checkpoint, page, ids_at)


class WarmWatermark(Consumer):
    """is_replay: after 10 pages in one life the consumer is "warm" and trusts the watermark, backfills or not
    (seed 000 step 4: with backfills only receipts prove replay)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.pages = 0

    def after_fetch(self, checkpoint, page):
        self.pages += 1
        return None
        yield

    def is_replay(self, event, receipts, applied_position):
        if self.pages > 10 and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class CachedReservation(Consumer):
    """settle_effect: the reservation is cached in memory per event and reused without a new Reserve, so after
    a credential rotation the call carries the old binding (seed 001 step 2: a changed authorization context
    needs a new reservation)."""

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


class ProvisionalAfterRetries(Consumer):
    """settle_effect: after two provisional settlements of one event in a life, the third counts as committed
    ("it timed out three times, it must have gone through"; seed 001 step 5: a timeout is provisional)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.provisional = {}

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        if state == COMMITTED:
            return COMMITTED
        self.provisional[event.id] = self.provisional.get(event.id, 0) + 1
        return COMMITTED if self.provisional[event.id] >= 3 else BLOCKED


class LostCommitIsDone(Consumer):
    """apply: a commit whose reply was lost is taken as done ("the store is reliable, the reply just got
    lost"): the page may pass its barrier with an event that has no receipt (invariant 1)."""

    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        return True if result is LOST else result


class DurableRetryMarker(Consumer):
    """A retry_later is written down as a durable receipt (for the operators' dashboard), and is_replay trusts
    any receipt: the next attempt skips the event as done (seed 000 step 4: only a receipt that proves the
    intended outcome is a replay; invariants 1 and 5)."""

    def is_terminal(self, decision):
        self._pending_marker = decision
        return False

    def is_replay(self, event, receipts, applied_position):
        return event.id in receipts or super().is_replay(event, receipts, applied_position)

    def process(self, checkpoint, page, receipts):
        self._pending_marker = None
        status, applied = yield from super().process(checkpoint, page, receipts)
        if status == "blocked" and self._pending_marker is not None:
            blocked = next(e for e in page.events if e.position > applied and e.id not in receipts)
            yield Commit(blocked, self._pending_marker, applied)
        return status, applied


class CaseFoldCaughtUp(Consumer):
    """is_caught_up: tokens compared case-insensitively ("tokens are case-insensitive ids"): an empty page
    whose new token differs only in case reads as the end (cursors are opaque, step 7)."""

    def is_caught_up(self, checkpoint, page):
        return not page.events and page.next_cursor.casefold() == checkpoint.resume_cursor.casefold()


class TrimmedCaughtUp(Consumer):
    """is_caught_up: tokens compared after trimming blanks (they came through a form field): an empty page
    whose new token differs only in a trailing space reads as the end (cursors are opaque, step 7)."""

    def is_caught_up(self, checkpoint, page):
        return not page.events and page.next_cursor.strip() == checkpoint.resume_cursor.strip()


class CountsEvents(Consumer):
    """resulting_applied_position: the prefix kept as a count of events done, not a position (seed 000:
    applied_position is the greatest position of the durable prefix)."""

    def resulting_applied_position(self, event, page, applied_position):
        return applied_position + 1


class SeenIsDone(Consumer):
    """is_replay: an in-memory set of the ids this life has handled; one handled before is a replay, though
    its decision was retry_later (seen is not done: step 4, invariant 5)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.seen = set()

    def is_replay(self, event, receipts, applied_position):
        if event.id in self.seen:
            return True
        self.seen.add(event.id)
        return super().is_replay(event, receipts, applied_position)


class AllReplaysIsCaughtUp(Consumer):
    """is_caught_up: a page whose events are all at or below applied_position is "nothing new", so caught
    up: after a crash between the last commit and the barrier the page's token is never published (step 7:
    only the request's own token back on an empty page is the end; liveness)."""

    def is_caught_up(self, checkpoint, page):
        if page.events and all(e.position <= checkpoint.applied_position for e in page.events):
            return True
        return super().is_caught_up(checkpoint, page)


class RecoveryTrustsThePage(Consumer):
    """validate: a life's first attempt after a restart (checkpoint_version > 0) skips validation, "the page
    was validated before the crash" (seed 000 step 3 validates every fetch: the page may not be the one
    validated)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.recovered = False

    def validate(self, checkpoint, page, ids_at):
        if not self.recovered:
            self.recovered = True
            if checkpoint.checkpoint_version > 0:
                return None
        return super().validate(checkpoint, page, ids_at)


class ResyncEveryFiftiethVersion(Consumer):
    """page_barrier: every 50th version "re-syncs" the checkpoint row with a plain write (a periodic repair
    job's code path reused), without the compare-and-swap: a late worker there overwrites newer progress
    (invariant 3; seed 000's no_version_check, only after the 49th page)."""

    def page_barrier(self, checkpoint, page, applied_position):
        if (checkpoint.checkpoint_version + 1) % 50:
            return (yield from super().page_barrier(checkpoint, page, applied_position))
        done = yield Overwrite(self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                               applied_position)
        return "lost" if done is LOST else "advanced"


class BackfillsSkipValidation(Consumer):
    """validate: with backfills "events may come behind others anyway", so nothing is checked: a page out of
    its own source order, or with two ids at one position, passes (seed 000 step 3: backfills excuse only a
    new event behind positions already served, never a page that breaks its own order or an identity)."""

    def validate(self, checkpoint, page, ids_at):
        if self.contract.backfills:
            return None
        return super().validate(checkpoint, page, ids_at)


class BackfillsAtOddPositions(Consumer):
    """is_replay: with backfills the watermark is still trusted at positions that are multiples of 10 ("the
    provider numbers its events in tens; backfills land in between"): a backfill at such a position is
    skipped (seed 000 step 4: with backfills, only a receipt proves a replay)."""

    def is_replay(self, event, receipts, applied_position):
        if self.contract.backfills and event.position % 10 == 0 and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class RetryCapOfTwentyFive(Consumer):
    """is_terminal: a retry cap per event, as job queues have (Sidekiq's default is 25): after 25 non-terminal
    decisions for one event in a life it is given up on and the page moves on, with no durable outcome
    (invariant 5: a failed item blocks the barrier however often it failed)."""

    def __init__(self, contract):
        super().__init__(contract)
        self.retries = {}

    def is_replay(self, event, receipts, applied_position):
        self._current = event.id                # step 4 asks this first, for every event in turn
        return super().is_replay(event, receipts, applied_position)

    def is_terminal(self, decision):
        self.retries[self._current] = self.retries.get(self._current, 0) + 1
        return self.retries[self._current] > 25
