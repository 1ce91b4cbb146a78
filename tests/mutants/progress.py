"""Mutants that get the checkpoint wrong: when the page barrier runs, what it compares, what cursor and
``applied_position`` it writes, and what a page with no events means (seed 000 steps 2, 5 and 7, invariants 1,
2 and 3)."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import Checkpoint, Page
from simkit.ops import LOST, Barrier, Fetch, Load, Overwrite, Wait


class ProgressMarkerFirst(Consumer):
    """"Record the page's range in the checkpoint when we start it, so the lag dashboard is right and a
    restart knows how far the page goes."

    Right after the fetch it compare-and-swaps the checkpoint to the same cursor with ``applied_position`` set
    to the page's highest position, then processes the page and passes the barrier from that new version. A
    crash mid-page restarts with a watermark that "proves" the rest of the page was done.

    Breaks invariant 2: "``applied_position`` advances only after the corresponding effect and deduplication
    receipt are durable. It is never the maximum position merely observed."
    """

    def after_fetch(self, checkpoint, page):
        self._version = checkpoint.checkpoint_version
        if not page.events:
            return None
        top = max(checkpoint.applied_position, page.events[-1].position)
        marked = yield Barrier(checkpoint.resume_cursor, self._version, checkpoint.resume_cursor,
                               self._version + 1, top)
        if marked is LOST:
            return "lost"
        if not marked:
            return "rejected"
        self._version += 1
        return None

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, self._version,
                                self.barrier_target(checkpoint, page), self._version + 1, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class LastEventAfterBarrier(Consumer):
    """"Loop over ``events[:-1]``, pass the barrier, then flush the last one" (an off-by-one that survived
    because the last event still gets applied, a moment later).

    The page barrier publishes ``next_cursor`` before the last event of the page has its commit; a crash
    between the barrier and that commit loses the event for good.

    Breaks invariant 1: "A returned continuation token remains pending until every event in that response is
    durably classified".
    """

    def process(self, checkpoint, page, receipts):
        self._receipts = receipts
        head = Page(page.cursor, page.events[:-1], page.next_cursor)
        return (yield from super().process(checkpoint, head, receipts))

    def page_barrier(self, checkpoint, page, applied_position):
        status = yield from super().page_barrier(checkpoint, page, applied_position)
        if status == "advanced" and page.events:
            tail = Page(page.cursor, page.events[-1:], page.next_cursor)
            yield from super().process(checkpoint, tail, self._receipts)
        return status


class ForceOnConflict(Consumer):
    """"The compare-and-swap failed? Another worker raced us on the same page; our page is done, so write it."

    After a rejected barrier it writes its own ``next_cursor`` unconditionally. A worker that stalled with a
    stale page sends the checkpoint back over newer progress.

    Breaks seed 000 step 5: "A stale retry that loses this comparison must reread state rather than overwrite
    newer progress."
    """

    def page_barrier(self, checkpoint, page, applied_position):
        status = yield from super().page_barrier(checkpoint, page, applied_position)
        if status != "rejected":
            return status
        done = yield Overwrite(self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                               applied_position)
        return "lost" if done is LOST else "advanced"


class RebaseOnConflict(Consumer):
    """"Optimistic concurrency: on a CAS conflict, reread the row and retry the CAS with the fresh version."

    After a rejected barrier it loads the checkpoint and compare-and-swaps again, from the *new* cursor and
    version to the ``next_cursor`` of the page it fetched with the *old* cursor. Every write is a CAS, yet a
    stale page's token lands on top of someone else's newer checkpoint.

    Breaks invariant 3: "A page barrier may replace ``resume_cursor`` only with a compare-and-swap that still
    matches the request cursor and checkpoint version used to fetch the page."
    """

    def page_barrier(self, checkpoint, page, applied_position):
        status = yield from super().page_barrier(checkpoint, page, applied_position)
        if status != "rejected":
            return status
        fresh = yield Load()
        swapped = yield Barrier(fresh.resume_cursor, fresh.checkpoint_version,
                                self.barrier_target(checkpoint, page),
                                fresh.checkpoint_version + 1, applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class SameVersionBarrier(Consumer):
    """"The version column is bumped by a trigger in the database; just pass the one we read."

    The barrier compare-and-swaps to ``next_version == version``. No trigger exists: the generation never
    moves, so a worker holding an old (cursor, version) cannot be told apart from a current one.

    Breaks seed 000 step 5: "compare-and-swap the checkpoint from the attempt cursor and version to the
    returned next cursor and a *greater* version".
    """

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                self.barrier_target(checkpoint, page), checkpoint.checkpoint_version,
                                applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class PrefetchShadowsPage(Consumer):
    """"Prefetch the next page while the barrier commits" — and the prefetched page is assigned to ``page``.

    Before its barrier it fetches ``page.next_cursor`` to warm the cache, rebinding the name ``page``; the
    barrier then publishes the *prefetched* page's ``next_cursor``. The prefetched page is never processed.

    Breaks seed 000 step 5: the barrier swaps "to the returned next cursor" of the page just processed; and so
    invariant 1 (the prefetched page's token is published before any of its events has an outcome).
    """

    def page_barrier(self, checkpoint, page, applied_position):
        ahead = yield Fetch(page.next_cursor)
        if isinstance(ahead, Page):
            page = ahead
        return (yield from super().page_barrier(checkpoint, page, applied_position))


class EmptyPageIsEndOfStream(Consumer):
    """"No events means we've reached the end of the stream; stop polling until the next deploy."

    Treats any empty page as the end, even one that comes back with a new token (or a not-yet-ready token
    answered with itself), and never fetches again.

    Breaks seed 000 step 7: "Treat a successful empty page with a new continuation token as a zero-item page
    ... Do not equate emptiness with end of stream."
    """

    def is_caught_up(self, checkpoint, page):
        return not page.events

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "caught_up":
                while True:                     # the stream is over: idle for good
                    yield Wait("caught_up")
            if result == "blocked":
                yield Wait(result)


class PollsWithoutBackoff(Consumer):
    """"Back-off is for errors. When we're caught up, poll again immediately so latency stays low."

    When the provider answers the request token with itself (nothing new yet, or a token that is not ready),
    it loads and fetches again at once, forever.

    Breaks seed 000 step 7: "If the returned token equals the request token, stop or back off instead of
    spinning."
    """

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "blocked":
                yield Wait(result)


class CommitOffsetsEveryN(Consumer):
    """"Commit the offset every N messages, like we do with Kafka, so a restart doesn't redo a whole page."

    Every second event it passes the page barrier to the page's ``next_cursor`` (a real compare-and-swap from
    the attempt identity), then keeps processing the rest of the page under that published token.

    Breaks invariant 1: "A returned continuation token remains pending until every event in that response is
    durably classified", and seed 000 step 5 ("After every event in the page has a durable outcome").
    """

    EVERY = 2

    def process(self, checkpoint, page, receipts):
        self._published = False
        applied = checkpoint.applied_position
        for k, event in enumerate(page.events, 1):
            one = Page(page.cursor, (event,), page.next_cursor)
            status, applied = yield from super().process(
                Checkpoint(checkpoint.resume_cursor, applied, checkpoint.checkpoint_version), one, receipts)
            if status != "done":
                return status, applied
            if k % self.EVERY == 0 and k < len(page.events) and not self._published:
                status = yield from super().page_barrier(checkpoint, page, applied)
                if status != "advanced":
                    return status, applied
                self._published = True
        return "done", applied

    def page_barrier(self, checkpoint, page, applied_position):
        if self._published:
            return "advanced"
        return (yield from super().page_barrier(checkpoint, page, applied_position))
