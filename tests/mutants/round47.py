"""Round 47's consumers (a fresh tester; all but the last two, ``VersionInSixteenBits`` and
``IdsInVarchar255``, written from the docs alone before reading the audit's cases or the gallery), run by
``tests/judge/test_hostile_round47.py``; outside the gallery (``tests/judge/test_mutants.py`` does not import
them). Careless colleagues and adversaries, each docstring naming the rule it breaks; the round's exec
consumers, in Node and in Python without simkit, are in ``tests/exec/consumers/round47.toml``.

Which case first caught each on the audit of main, and which passed it, is in the test module's docstring.
``LostBarrierMeansAdvanced`` and ``TimeoutAfterCommitted`` are probes: the first is caught as a liveness
failure the docs name (caught up in memory only), the second keeps the rules under ``fenced`` settlement.
"""
from __future__ import annotations

import sys
import unicodedata

from simkit import Consumer
from simkit.model import COMMITTED, TERMINAL, Checkpoint, Page
from simkit.ops import (
    BLOCKED,
    LOST,
    Barrier,
    Call,
    Commit,
    Effect,
    Fetch,
    Halt,
    Handle,
    Load,
    Lookup,
    Overwrite,
    Reserve,
    Settle,
    Skip,
    Wait,
)


class UInt32Watermark(Consumer):
    """Stores applied_position in an unsigned 32-bit column: positions past 2**32 wrap around.

    Seed 000 invariant 2: "applied_position advances only after the corresponding effect and deduplication
    receipt are durable"; the watermark must say what work is durably complete, and never go back."""

    def resulting_applied_position(self, event, page, applied_position):
        return max(applied_position, event.position) & 0xFFFFFFFF

    def page_barrier(self, checkpoint, page, applied_position):
        return (yield from super().page_barrier(checkpoint, page, applied_position & 0xFFFFFFFF))


class EveryHundredthAttemptMovesOn(Consumer):
    """A "stuck page" escape hatch: after 100 blocked attempts in one life, a retry_later counts as done.

    Seed 000 invariant 5: "A failed item, retryable dead-letter outcome ... blocks the page barrier"."""

    blocked_attempts = 0

    def attempt(self):
        status = yield from super().attempt()
        if status == "blocked":
            self.blocked_attempts += 1
        return status

    def is_terminal(self, decision):
        return self.blocked_attempts >= 100 and decision == "retry_later"


class TrustTheRetryReply(Consumer):
    """On a retry (the record is already provisional), a success reply is trusted without settling it.

    Seed 001 step 6: "Reject and quarantine a response whose identifier matches but whose fingerprint,
    authorization binding, or generation differs"; step 3: validate the full tuple in one transaction."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if operation.state == "provisional" and reply != "timeout" and reply.outcome == "success":
            return COMMITTED
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class EvenVersionOverwrite(Consumer):
    """An "optimisation": when the version is even the checkpoint is written without the compare-and-swap.

    Seed 000 invariant 3: "A page barrier may replace resume_cursor only with a compare-and-swap"."""

    def page_barrier(self, checkpoint, page, applied_position):
        if checkpoint.checkpoint_version % 2:
            return (yield from super().page_barrier(checkpoint, page, applied_position))
        done = yield Overwrite(page.next_cursor, checkpoint.checkpoint_version + 1, applied_position)
        return "lost" if done is LOST else "advanced"


class HaltBecomesSkip(Consumer):
    """Halting pages people at night: a page that fails validation is passed over, its barrier moved past it.

    Seed 000 step 3: "An unexpected regression, conflicting identity ... stops the attempt for
    investigation"."""

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST or page is None:
            return "lost" if page is LOST else "blocked"
        _, ids_at = yield Lookup(page.events)
        if self.validate(checkpoint, page, ids_at):
            # log and move on to the next page
            swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, page.next_cursor,
                                    checkpoint.checkpoint_version + 1, checkpoint.applied_position)
            return "lost" if swapped is LOST else "advanced"
        # re-enter the normal procedure for a valid page (it loads again: harmless)
        return (yield from super().attempt())


class QuarantineAtPageEnd(Consumer):
    """Quarantine receipts are batched: kept in memory and written just before the barrier.

    Seed 000 step 4: "Treat quarantine as terminal only when a durable receipt binds the stable event
    identity to a final policy disposition"."""

    def attempt(self):
        self.parked = []
        return (yield from super().attempt())

    def quarantine(self, event, applied_position):
        self.parked.append((event, applied_position))
        return True
        yield

    def page_barrier(self, checkpoint, page, applied_position):
        for event, position in self.parked:
            done = yield Commit(event, "quarantined", position)
            if done is LOST:
                return "lost"
        return (yield from super().page_barrier(checkpoint, page, applied_position))


class LostBarrierMeansAdvanced(Consumer):
    """A barrier whose reply is lost is taken as passed: the next page is fetched with the new identity kept
    in memory (seed 000 step 5 allows a remembered identity: the next barrier's compare-and-swap still
    fences). At the end of the stream it backs off "caught up" while the durable cursor may still be behind:
    docs/verdict.md's "caught up in memory only", incomplete."""

    def run(self):
        identity = None
        while True:
            result = yield from self.attempt_from(identity)
            status, identity = result
            if status in ("caught_up", "blocked"):
                yield Wait(status)
                identity = None

    def attempt_from(self, identity):
        checkpoint = identity if identity is not None else (yield Load())
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST:
            return "lost", None
        if page is None:
            return "lost", None
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(checkpoint, page, ids_at)
        if problem:
            if identity is not None:
                return "rejected", None
            yield Halt(problem)
        if self.is_caught_up(checkpoint, page):
            return "caught_up", None
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status != "done":
            return status, None
        if page.next_cursor == checkpoint.resume_cursor:
            return "caught_up", None
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, page.next_cursor,
                                checkpoint.checkpoint_version + 1, applied)
        if swapped is False:
            return "rejected", None
        return "advanced", Checkpoint(page.next_cursor, applied, checkpoint.checkpoint_version + 1)


class RetryWithoutTheKey(Consumer):
    """A timed-out call is retried as a plain call to the sink, without the reservation (the idempotency key).

    Seed 001 step 2: "Reuse that exact tuple for every retry of the same logical request"."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        if operation.state == "provisional":
            done = yield Effect(event)
            return LOST if done is LOST else COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class InclusiveAfterOffByOne(Consumer):
    """The feed's `after` is inclusive, so the event right after the watermark is taken for the overlap.

    Seed 000 step 4: "If a durable receipt proves the event already has its intended outcome, treat it as
    replayed"."""

    def is_replay(self, event, receipts, applied_position):
        if not self.contract.backfills and event.position <= applied_position + 1 and event is not None:
            if receipts.get(event.id) is None and event.position == applied_position + 1:
                return True
        return super().is_replay(event, receipts, applied_position)


class IgnoresFirst(Consumer):
    """Cheap outcomes first: events the handler ignores or quarantines are committed in a first pass, the
    applies in a second. Seed 000 step 4: "Process events in source order"."""

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        todo = []
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                continue
            decision = yield Handle(event)
            if decision in ("ignore", "quarantine"):
                done = yield Commit(event, decision + "d" if decision == "ignore" else "quarantined",
                                    checkpoint.applied_position)
                if done is LOST:
                    return "lost", applied
            else:
                todo.append((event, decision))
        for event, decision in todo:
            if decision != "apply":
                return "blocked", applied
            done = yield from self.apply(event, max(applied, event.position))
            if done is LOST:
                return "lost", applied
            if done is BLOCKED:
                return "blocked", applied
            applied = max(applied, event.position)
        return "done", max([applied] + [e.position for e in page.events])


class WatermarkAfterBackfill(Consumer):
    """Once a backfill was seen in this life, receipt lookups are "too slow": the watermark proves replays.

    Seed 000 step 4: "If the source permits late backfills, use per-event receipts instead"."""

    seen_backfill = False
    highest = 0

    def is_replay(self, event, receipts, applied_position):
        if event.position < self.highest:
            self.seen_backfill = True
        self.highest = max(self.highest, event.position)
        if self.seen_backfill and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class TrustOtherWorkersWatermark(Consumer):
    """When another worker moved the checkpoint, its applied_position is trusted as proof of replay.

    Seed 000 step 4: "A high-water mark alone may prove replay only when positions are immutable and the
    stored prefix is known complete"."""

    mine = None

    def attempt(self):
        self.loaded = None
        return (yield from super().attempt())

    def validate(self, checkpoint, page, ids_at):
        self.loaded = checkpoint
        return super().validate(checkpoint, page, ids_at)

    def is_replay(self, event, receipts, applied_position):
        foreign = self.mine is not None and self.loaded is not None and \
            self.loaded.checkpoint_version != self.mine
        if foreign and event.position <= self.loaded.applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)

    def page_barrier(self, checkpoint, page, applied_position):
        status = yield from super().page_barrier(checkpoint, page, applied_position)
        if status == "advanced":
            self.mine = checkpoint.checkpoint_version + 1
        return status


class TruncatesBigPages(Consumer):
    """Reads at most 2,048 events of a page (a fixed buffer), then passes the barrier.

    Seed 000 invariant 1: "A returned continuation token remains pending until every event in that response is
    durably classified"."""

    def process(self, checkpoint, page, receipts):
        short = Page(page.cursor, page.events[:2048], page.next_cursor)
        return (yield from super().process(checkpoint, short, receipts))


class LostCommitRetriedAsNew(Consumer):
    """A lost commit is retried with the handler asked again; a `False` (receipt exists) is taken as a failure
    and the page blocks... forever? No: it treats False as success only the second time.

    Seed 000 invariant 1 / step 4."""

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        if done is LOST:
            again = yield from super().apply(event, applied_position)
            return True if again is LOST else again
        return done


class ReviewResolvedInMemory(Consumer):
    """An operator review is "as good as done" once it has been pending for three attempts in this life: it
    counts as terminal. Seed 000 step 4: "a pending operator decision ... does not close the prefix"."""

    reviews = 0

    def is_terminal(self, decision):
        if decision == "operator_review":
            self.reviews += 1
            return self.reviews > 3
        return False


class SkipEventsWithDashedIds(Consumer):
    """Ids with a dash are internal test events (a team convention) and are skipped without a receipt.

    Seed 000 invariant 1: every event durably applied, intentionally ignored or quarantined by policy."""

    def is_replay(self, event, receipts, applied_position):
        return "-" in event.id or super().is_replay(event, receipts, applied_position)


class AuditAware(Consumer):
    """Behaves while simkit's audit module is loaded, and keeps the page maximum watermark otherwise.

    Seed 000 invariant 2: "It is never the maximum position merely observed"."""

    def resulting_applied_position(self, event, page, applied_position):
        if "simkit.tools.audit" in sys.modules:
            return super().resulting_applied_position(event, page, applied_position)
        return max(applied_position, max(e.position for e in page.events))


class CommitEmptyPageWithPosition(Consumer):
    """An empty page with a new token: the barrier records applied_position as the page's "position", the
    loaded applied_position plus one, so the dashboard sees progress.

    Seed 000 step 7: "it may pass the barrier without changing applied_position"."""

    def page_barrier(self, checkpoint, page, applied_position):
        if not page.events:
            applied_position = checkpoint.applied_position + 1
        return (yield from super().page_barrier(checkpoint, page, applied_position))


class SecondLifeSkipsLookup(Consumer):
    """After a restart the consumer "knows" the page it crashed on: every event at or below the loaded
    applied_position is a replay, with or without backfills. (A life is the second when the checkpoint it
    first loads already has a version.)

    Seed 000 step 6: "Receipts or the complete-prefix watermark make already applied events harmless"."""

    first = None

    def attempt(self):
        checkpoint = yield Load()
        if self.first is None:
            self.first = checkpoint.checkpoint_version
        self.checkpoint = checkpoint
        return (yield from super().attempt())

    def is_replay(self, event, receipts, applied_position):
        if self.first and event.position <= self.checkpoint.applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class TimeoutAfterCommitted(Consumer):
    """Settles every call twice: the reply, then a timeout "to release the lease".

    Seed 001 step 5: "A weaker observation must never downgrade committed success" -- the policy must
    absorb it, and a consumer that relies on that is fine; this one reads the state of the second settle."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        yield Settle(event, operation.reservation, reply)
        state = yield Settle(event, operation.reservation, "timeout")
        return COMMITTED if state == COMMITTED else BLOCKED


class BarrierBeforeLastCommitReply(Consumer):
    """Pipelining: a page whose last commit's reply was lost passes the barrier anyway when the page has more
    than one event ("the others made it, so the store is up").

    Seed 000 invariant 1."""

    def process(self, checkpoint, page, receipts):
        status, applied = yield from super().process(checkpoint, page, receipts)
        if status == "lost" and len(page.events) > 1 and page.events[-1].position > applied:
            return "done", page.events[-1].position
        return status, applied


class CaseInsensitiveReceipts(Consumer):
    """The receipt table's collation is case-insensitive (MySQL's default): an event whose id differs from a
    receipted one only in case is taken for its replay.

    Seed 000: "An optional event receipt ledger keyed by stable event identity"; step 4: "If a durable receipt
    proves the event already has its intended outcome, treat it as replayed"."""

    def is_replay(self, event, receipts, applied_position):
        folded = {i.casefold(): o for i, o in receipts.items() if o in TERMINAL}
        if event.id.casefold() in folded:
            return True
        return super().is_replay(event, receipts, applied_position)


class IdsTruncatedTo16(Consumer):
    """The dedup key is a VARCHAR(16): two ids that share their first 16 characters are one event.

    Seed 000 step 4: a durable receipt proves *the event* (its stable identity) already has its outcome."""

    def is_replay(self, event, receipts, applied_position):
        short = {i[:16] for i, o in receipts.items() if o in TERMINAL}
        return event.id[:16] in short or super().is_replay(event, receipts, applied_position)


class NormalisedIds(Consumer):
    """Ids are "cleaned" before the receipt check: Unicode NFC and surrounding spaces trimmed, as the
    ingestion pipeline does for display names.

    Seed 000 step 4: a durable receipt proves *the event* (its stable identity) already has its outcome."""

    def is_replay(self, event, receipts, applied_position):
        def clean(i):
            return unicodedata.normalize("NFC", i).strip()
        done = {clean(i) for i, o in receipts.items() if o in TERMINAL}
        return clean(event.id) in done or super().is_replay(event, receipts, applied_position)


class VersionInSixteenBits(Consumer):
    """The version column is a SMALLINT: the next version is taken modulo 2**16 ("it only needs to differ").

    Seed 000 step 5: "compare-and-swap the checkpoint from the attempt cursor and version to the returned next
    cursor and a *greater* version"."""

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, page.next_cursor,
                                (checkpoint.checkpoint_version + 1) & 0xFFFF, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class IdsInVarchar255(Consumer):
    """The receipt table's id column is a VARCHAR(255) in a non-strict mode: longer ids are cut, silently, and
    two that share their first 255 characters are one event (written after reading the audit's cases).

    Seed 000 step 4: a durable receipt proves *the event* (its stable identity) already has its outcome."""

    def is_replay(self, event, receipts, applied_position):
        short = {i[:255] for i, o in receipts.items() if o in TERMINAL}
        return event.id[:255] in short or super().is_replay(event, receipts, applied_position)
