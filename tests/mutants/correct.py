"""Correct consumers that are not ``safe``: each takes a liberty seed 000 allows, and the checker must not
flag any of them (docs/verdict.md: "read-ahead and a remembered attempt identity are allowed")."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import TERMINAL, Checkpoint, Page
from simkit.ops import LOST, Barrier, Fetch, Halt, Load, Lookup, Wait


class ReadAhead(Consumer):
    """Fetches the next page before passing the current page's barrier, to hide the fetch latency.

    The barrier is still a compare-and-swap from the attempt's own (cursor, version), loaded or written by
    this worker, to the ``next_cursor`` of the page fetched with that cursor. Only when it succeeds does the
    prefetched page become the next attempt, whose identity is the checkpoint the barrier just wrote; a
    rejected or lost barrier drops the prefetched page and rereads the checkpoint. Seed 000 step 2 holds the
    next cursor "in memory or as non-authoritative attempt metadata": a page fetched with it is exactly that.
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
            status, applied = yield from self.process(identity, page, receipts)
            if status != "done" or page.next_cursor == identity.resume_cursor:
                if status in ("done", "blocked"):
                    yield Wait("caught_up" if status == "done" else "blocked")
                identity = None
                continue
            ahead = yield Fetch(page.next_cursor)            # read ahead, before the barrier
            if not isinstance(ahead, Page):
                ahead = None
            version = identity.checkpoint_version
            swapped = yield Barrier(identity.resume_cursor, version, page.next_cursor, version + 1, applied)
            if swapped is True:
                identity = Checkpoint(page.next_cursor, max(applied, identity.applied_position), version + 1)
            else:
                identity, ahead = None, None


class RememberedIdentity(Consumer):
    """After a successful barrier, does not load the checkpoint again: the (``next_cursor``,
    ``applied_position``, ``next_version``) it just wrote is its next attempt identity.

    Every write is still a compare-and-swap, so a stale memory can cost a rejected barrier but never lose or
    overwrite progress; a rejected or lost barrier forgets the memory and rereads (seed 000 step 5). Built as
    a wrapper around :meth:`Consumer.attempt` that answers its ``Load`` from memory.
    """

    def __init__(self, contract):
        super().__init__(contract)
        self._identity: Checkpoint | None = None

    def attempt(self):
        steps = super().attempt()
        reply = None
        try:
            while True:
                op = steps.send(reply)
                if type(op) is Load and self._identity is not None:
                    reply = self._identity
                    continue
                reply = yield op
                if type(op) is Load:
                    self._identity = reply
                elif type(op) is Barrier:
                    self.barrier_answered(op, reply)
        except StopIteration as stop:
            return stop.value

    def barrier_answered(self, op: Barrier, reply) -> None:
        if reply is True:
            self._identity = Checkpoint(op.next_cursor,
                                        max(op.applied_position, self._identity.applied_position),
                                        op.next_version)
        else:
            self._identity = None           # rejected, or LOST: reread the checkpoint


class FreshReceiptsPatientBackoff(Consumer):
    """Looks receipts up again just before each event (another worker may have
    settled it since the page was read), and backs off exponentially while the
    page is blocked (1, 2, 4, 8 back-offs) instead of one at a time.

    Both change only when and how often it asks; every decision is still the procedure's.
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            fresh, _ = yield Lookup((event,))
            status, applied = yield from super().process(
                Checkpoint(checkpoint.resume_cursor, applied, checkpoint.checkpoint_version),
                Page(page.cursor, (event,), page.next_cursor), fresh)
            if status != "done":
                return status, applied
        return "done", applied

    def run(self):
        backoffs = 1
        while True:
            result = yield from self.attempt()
            if result == "blocked":
                for _ in range(backoffs):
                    yield Wait("blocked")
                backoffs = min(2 * backoffs, 8)
                continue
            backoffs = 1
            if result == "caught_up":
                yield Wait(result)


class ReceiptsOnly(Consumer):
    """Never lets the watermark prove a replay, even when the provider has no
    backfills: only a durable terminal receipt does. More lookups, the same
    outcomes (seed 000 step 4: per-event receipts are always sufficient)."""

    def is_replay(self, event, receipts, applied_position):
        return receipts.get(event.id) in TERMINAL


class RereadsBeforeHalting(Consumer):
    """Correct. Loads the checkpoint again after a page that breaks the provider contract, then halts: what it
    was served since its last fetch justifies the halt, however many loads follow."""

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is not LOST and page is not None:
            _receipts, ids_at = yield Lookup(page.events)
            problem = self.validate(checkpoint, page, ids_at)
            if problem:
                yield Load()
                yield Halt(problem)
        return (yield from super().attempt())


class ExtraPolls(Consumer):
    """Correct. Polls the end of the stream twice more before it backs off: two workers never wait at the same
    instant, yet each has caught up."""

    def run(self):
        polls = 0
        while True:
            result = yield from self.attempt()
            polls = polls + 1 if result == "caught_up" else 0
            if polls > 2 or result == "blocked":
                yield Wait(result)
                polls = 0

