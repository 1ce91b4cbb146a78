"""Round 31's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), each
run by ``tests/judge/test_hostile_round31.py`` on the smallest scenario that shows what it does: seed 000's
procedure with workers sharing one checkpoint, odd initial states, backfills, pages of one event and a
checkpoint written in several commits. Written against the public API only."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import TERMINAL, Checkpoint, Page
from simkit.ops import BLOCKED, LOST, Barrier, Commit, Fetch, Halt, Handle, Load, Lookup, Skip, Wait


class OrderNeedsTwoEvents(Consumer):
    """"A page of one event cannot be out of order: skip the check and save the loop."

    Returns early from step 3 on a page of fewer than two events, and so skips the identity and gap checks
    too: a lone event behind the prefix with no receipt is taken for a replay.

    Breaks seed 000 step 3: "a gap that violates the provider contract stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        if len(page.events) < 2:
            return None
        return super().validate(checkpoint, page, ids_at)


class ChecksTheHead(Consumer):
    """"Step 3 on a page of thousands is slow: check its first 100 events; a provider that breaks its order
    breaks it early."

    Validates the page's head only: a regression deeper in the page is processed as if it were in order.

    Breaks seed 000 step 3: "Validate that new events respect the source order" (all of them).
    """

    def validate(self, checkpoint, page, ids_at):
        return super().validate(checkpoint, Page(page.cursor, page.events[:100], page.next_cursor), ids_at)


class SeededWatermark(Consumer):
    """"Version 0 means the migration seeded ``applied_position`` from the old system's watermark: everything
    at or below it is done, backfills or not."

    Trusts the watermark for replays while the checkpoint it loaded is at version 0, though the provider
    backfills: an event that arrives behind the seeded prefix is skipped and lost.

    Breaks seed 000 step 4: "If the source permits late backfills, use per-event receipts instead."
    """

    def process(self, checkpoint, page, receipts):
        self.seeded = checkpoint.checkpoint_version == 0
        return (yield from super().process(checkpoint, page, receipts))

    def is_replay(self, event, receipts, applied_position):
        if self.seeded and event.position <= applied_position:
            return True
        return super().is_replay(event, receipts, applied_position)


class LateArrivalWindow(Consumer):
    """"Late arrivals land within the last few pages: past 5,000 positions back, the watermark is enough."

    Asks the receipts only for events near the prefix, and takes one far behind it for a replay: a backfill
    deeper than the window is lost.

    Breaks seed 000 step 4: "If the source permits late backfills, use per-event receipts instead" (the
    contract bounds no backfill's depth).
    """

    def is_replay(self, event, receipts, applied_position):
        if event.position <= applied_position - 5000:
            return True
        return super().is_replay(event, receipts, applied_position)


class ClaimsThePage(Consumer):
    """Correct. Claims the page before fetching it: a compare-and-swap from the loaded (cursor, version) to
    the same cursor and the next version (a fencing token), so that a stale worker's barrier loses; then
    fetches, processes, and passes the barrier from the (cursor, version) it wrote itself. Seed 000 invariant
    3 constrains what replaces ``resume_cursor``; the claim replaces nothing, and the barrier still matches
    the cursor and version the page was fetched under. A claim or barrier that loses backs off before the
    next claim: at once, two workers would take the page from each other for ever (``completed`` false)."""

    def run(self):
        while True:
            status = yield from self.attempt()
            if status in ("caught_up", "blocked", "rejected"):
                yield Wait("caught_up" if status == "caught_up" else "blocked")

    def attempt(self):
        loaded = yield Load()
        cursor, version = loaded.resume_cursor, loaded.checkpoint_version
        claimed = yield Barrier(cursor, version, cursor, version + 1, loaded.applied_position)
        if claimed is LOST:
            return "lost"
        if not claimed:
            return "rejected"
        checkpoint = Checkpoint(cursor, loaded.applied_position, version + 1)
        page = yield Fetch(cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {cursor!r}")
        receipts, ids_at = yield Lookup(page.events)
        problem = self.validate(checkpoint, page, ids_at)
        if problem:
            yield Halt(problem)
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status != "done":
            return status
        if page.next_cursor == cursor:
            return "caught_up"
        return (yield from self.page_barrier(checkpoint, page, applied))


class PrefixThenCursor(Consumer):
    """Correct. Writes the page barrier in two compare-and-swap commits: the prefix first (the same cursor, a
    greater version, the page's ``applied_position``), then the cursor, from the (cursor, version) it has just
    written. Each write is fenced; the cursor is replaced only by the page's ``next_cursor``."""

    def page_barrier(self, checkpoint, page, applied_position):
        cursor, version = checkpoint.resume_cursor, checkpoint.checkpoint_version
        first = yield Barrier(cursor, version, cursor, version + 1, applied_position)
        if first is LOST:
            return "lost"
        if not first:
            return "rejected"
        swapped = yield Barrier(cursor, version + 1, page.next_cursor, version + 2, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class HandleThenCommit(Consumer):
    """Correct. Asks the handler about the page's events first, in source order, up to the first outcome that
    is not terminal; then commits those decisions in source order. Nothing is written out of order, and each
    receipt is the handler's latest decision when it is written."""

    def process(self, checkpoint, page, receipts):
        applied, plan = checkpoint.applied_position, []
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                plan.append((event, None))
                continue
            decision = yield Handle(event)
            plan.append((event, decision))
            if decision not in ("apply", "ignore", "quarantine"):
                break
        for event, decision in plan:
            if decision is None:
                yield Skip(event)
            elif decision not in ("apply", "ignore", "quarantine"):
                return "blocked", applied
            else:
                result = yield from getattr(self, decision)(event, max(applied, event.position))
                if result is LOST or result is BLOCKED:
                    return ("lost" if result is LOST else "blocked"), applied
            applied = max(applied, event.position)
        return "done", applied


class RecordsWhatBlocks(Consumer):
    """Correct. Writes the handler's non-terminal outcome as a durable receipt (a dead-letter row an operator
    can see), with the prefix before it, then stops at it as seed 000 step 4 says: a non-terminal receipt
    closes nothing, and the event is asked again on the next attempt."""

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            if decision not in ("apply", "ignore", "quarantine"):
                done = yield Commit(event, decision, applied)
                return ("lost" if done is LOST else "blocked"), applied
            result = yield from getattr(self, decision)(event, max(applied, event.position))
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), applied
            applied = max(applied, event.position)
        return "done", applied


class ChecksLostCommits(Consumer):
    """Correct. After a commit whose reply was lost, looks the receipt up: a terminal one means the commit
    took effect; none, and it commits again (up to three times, then the attempt ends as lost)."""

    def ignore(self, event, applied_position):
        return (yield from self._surely(event, "ignored", applied_position))

    def quarantine(self, event, applied_position):
        return (yield from self._surely(event, "quarantined", applied_position))

    def _surely(self, event, outcome, applied_position):
        for _ in range(3):
            done = yield Commit(event, outcome, applied_position)
            if done is not LOST:
                return done
            receipts, _ids = yield Lookup((event,))
            if receipts.get(event.id) in TERMINAL:
                return True
        return LOST
