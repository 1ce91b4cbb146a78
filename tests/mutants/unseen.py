"""Consumers written by a reviewer who had not seen the others, each aimed at a gap in what the
world lets a consumer do or in what the checker looks at. Each gap they found is closed:
``completed`` needs the durable cursor at the end (``CursorLivesInMemory``, ``ParkBlockedPage``),
invariant 2 no longer depends on fetch timing (``PipelinedReadAhead``), and an external sink's
effect is never inside the store's transaction (``HttpCallInsideDbTransaction``)."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import Checkpoint, Page
from simkit.ops import LOST, Barrier, Commit, Fetch, Halt, Load, Lookup, Wait


class HttpCallInsideDbTransaction(Consumer):
    """"Wrap the HTTP call and the receipt insert in one database transaction, so they commit together."

    Uses the transactional path (``Commit(..., with_effect=True)``) for an external sink too. A database
    transaction cannot roll back an HTTP call: a crash after the call and before the commit leaves the effect
    done and no receipt, and the replay calls again.

    Breaks invariant 4: "Replaying an event cannot repeat an unsafe effect. Enforce a unique event receipt,
    use a sink idempotency key, or couple the effect and receipt in one transaction" (a transaction the
    external sink is not part of couples nothing; seed 001 step 7: "Use idempotency or an outbox for effects
    outside the settlement transaction").
    """

    def apply(self, event, applied_position):
        return (yield Commit(event, "applied", applied_position, with_effect=True))


class CursorLivesInMemory(Consumer):
    """"``applied_position`` already records our progress durably; the cursor only matters while we run."

    Follows ``next_cursor`` in memory from the loaded checkpoint and commits every event with its receipt and
    ``applied_position``, but never passes a page barrier: the durable ``resume_cursor`` stays where it was
    loaded, and every restart fetches the whole stream again from there.

    Breaks seed 000 step 5, the page barrier that moves the cursor, and with it "Keep two kinds of progress":
    "The cursor says where to fetch. The applied position says what work is durably complete. Never substitute
    one for the other."
    """

    def run(self):
        checkpoint = yield Load()
        cursor = checkpoint.resume_cursor
        while True:
            page = yield Fetch(cursor)
            if not isinstance(page, Page):
                yield Wait("blocked")
                continue
            receipts, ids_at = yield Lookup(page.events)
            attempt = Checkpoint(cursor, checkpoint.applied_position, checkpoint.checkpoint_version)
            problem = self.validate(attempt, page, ids_at)
            if problem:
                yield Halt(problem)
            if self.is_caught_up(attempt, page):
                yield Wait("caught_up")
                continue
            status, _applied = yield from self.process(attempt, page, receipts)
            if status == "done":
                cursor = page.next_cursor
            elif status == "blocked":
                yield Wait("blocked")


class ParkBlockedPage(Consumer):
    """"When a page waits on an operator, park it and go idle; ops restart us once they've decided."

    On a blocked page it walks the rest of the stream (following ``next_cursor``, for the lag gauge), then
    idles at the head, polling, and never comes back to the parked page while the process lives. Nothing is
    lost (the durable cursor still points at the parked page) but the events behind it stay pending for as
    long as the worker runs, and it reports itself caught up.

    Breaks invariant 5: "A failed item, retryable dead-letter outcome, operator-review hold, or reversible
    quarantine blocks the page barrier" — blocks it, to be retried (seed 000 step 6), not abandoned; and step
    7, which backs off only on a non-advancing token of the page being attempted.

    Caught as incomplete: the durable cursor is not at the end, and events are pending, though the worker says
    it is caught up.
    """

    def after_fetch(self, checkpoint, page):
        self._page = page
        return None
        yield  # pragma: no cover

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "blocked":
                cursor = self._page.next_cursor
                while True:                     # tail the head for the lag gauge; never come back
                    page = yield Fetch(cursor)
                    if isinstance(page, Page) and (page.events or page.next_cursor != cursor):
                        cursor = page.next_cursor
                        continue
                    yield Wait("caught_up")
            elif result == "caught_up":
                yield Wait(result)


class PipelinedReadAhead(Consumer):
    """Correct. Fetches the next page *before* processing the current one (a pipelined fetch), then processes
    the current page, passes its barrier as a compare-and-swap from the attempt's own (cursor, version), and
    takes the prefetched page as the next attempt, as ``correct.ReadAhead`` does.

    Its durable writes are the ones ``safe`` makes, in the same order. The checker once counted a backfill as
    part of the stream from the first response that served it, so when the prefetched page carried one behind
    the current page, the current page's ordinary commits were flagged for invariant 2; a verdict must not
    depend on when a worker fetched.
    """

    def run(self):
        identity, ahead = None, None
        while True:
            if identity is None:
                identity, ahead = (yield Load()), None
            if ahead is not None and ahead.cursor == identity.resume_cursor:
                page, ahead = ahead, None
            else:
                page = yield Fetch(identity.resume_cursor)
            if page is LOST:
                identity = None
                continue
            if page is None:
                yield Halt(f"provider refused cursor {identity.resume_cursor!r}")
            receipts, ids_at = yield Lookup(page.events)
            problem = self.validate(identity, page, ids_at)
            if problem:
                yield Halt(problem)
            if self.is_caught_up(identity, page):
                yield Wait("caught_up")
                identity = None
                continue
            following = None
            if page.next_cursor != identity.resume_cursor:
                following = yield Fetch(page.next_cursor)          # pipelined: before processing this page
            status, applied = yield from self.process(identity, page, receipts)
            if status != "done" or page.next_cursor == identity.resume_cursor:
                if status in ("done", "blocked"):
                    yield Wait("caught_up" if status == "done" else "blocked")
                identity = None
                continue
            version = identity.checkpoint_version
            swapped = yield Barrier(identity.resume_cursor, version, page.next_cursor, version + 1, applied)
            if swapped is True:
                identity = Checkpoint(page.next_cursor, max(applied, identity.applied_position), version + 1)
                ahead = following if isinstance(following, Page) else None
            else:
                identity, ahead = None, None
