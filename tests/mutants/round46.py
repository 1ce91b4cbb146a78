"""Round 46's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), run by
``tests/judge/test_hostile_round46.py`` to kill mutants of the checker that the existing tests let live.
Written against the public API only."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import COMMITTED, Checkpoint, Page
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

from .correct import ReadAhead, RememberedIdentity

__all__ = ["CallAllThenSettle", "EmptyPageIsRefusal", "GapBlindReadAhead", "GapBlindRemembered",
           "GoesPastFailures", "HaltsWhenUnreachable", "PausedAfterFetch", "ProcessesThePageAheadUnchecked",
           "RemembersServedIds", "SettleEachThenReceiptAll", "TrustingReadAhead"]


class GapBlindReadAhead(ReadAhead):
    """"Gaps are normal on this provider: turn the gap check off" (``GapBlind``), in a consumer that fetches
    the next page before its barrier (``ReadAhead``, correct).

    A page read ahead is served while the worker still holds the ``applied_position`` it loaded; a backfilled
    event exactly at that position, with no receipt, is already a gap it could see.

    Breaks seed 000 step 3: "a gap that violates the provider contract stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        problem = super().validate(checkpoint, page, ids_at)
        return None if problem and problem.startswith("gap") else problem


class TrustingReadAhead(ReadAhead):
    """"The provider is ours and well tested" (``TrustTheProvider``), in a consumer that fetches the next page
    before its barrier (``ReadAhead``, correct): no step 3 at all.

    Breaks seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap
    that violates the provider contract stops the attempt for investigation."
    """

    def validate(self, checkpoint, page, ids_at):
        return None


class GapBlindRemembered(RememberedIdentity):
    """"Gaps are normal on this provider: turn the gap check off" (``GapBlind``), in a consumer that takes the
    checkpoint its barrier just wrote as its next attempt identity (``RememberedIdentity``, correct).

    The ``applied_position`` it holds is the one its own barrier wrote, not the one it last loaded: an event
    served behind it with no receipt is a gap it could see.

    Breaks seed 000 step 3: "a gap that violates the provider contract stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        problem = super().validate(checkpoint, page, ids_at)
        return None if problem and problem.startswith("gap") else problem


class CallAllThenSettle(Consumer):
    """"The service is slow: send every call of the page first, then settle and receipt them in order."

    On an external sink, calls the service for every event of the page before settling the first: each later
    event's effect is made while the events before it have no durable outcome. (Events the handler does not
    apply end the page as blocked, and the page is retried.)

    Breaks seed 000 step 4: "Process events in source order ... Stop at the first outcome that is not durable
    and terminal".
    """

    #: settle each call as soon as its reply comes (its outcome is then durable), not after every call
    settle_at_once = False

    def process(self, checkpoint, page, receipts):
        if not self.contract.external_sink:
            return (yield from super().process(checkpoint, page, receipts))
        applied, called, replays = checkpoint.applied_position, [], 0
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                replays += 1
                continue
            if (yield Handle(event)) != "apply":
                break
            operation = yield Reserve(event)
            reply = None if operation.state == COMMITTED else (yield Call(event, operation.reservation))
            if reply is not None and self.settle_at_once:
                if (yield Settle(event, operation.reservation, reply)) != COMMITTED:
                    break
                reply = None
            called.append((event, operation.reservation, reply))
        for event, reservation, reply in called:
            if reply is not None and (yield Settle(event, reservation, reply)) != COMMITTED:
                return "blocked", applied
            if (yield Commit(event, "applied", max(applied, event.position))) is LOST:
                return "lost", applied
            applied = max(applied, event.position)
        return ("done" if replays + len(called) == len(page.events) else "blocked"), applied


class ProcessesThePageAheadUnchecked(Consumer):
    """"Two pages per round trip: fetch the next page too, process both, then pass both barriers."

    Validates the page it loaded the checkpoint for, but processes the page it read ahead (before the first
    page's barrier) without validating it: a page out of order is processed as it comes.

    Breaks seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap
    that violates the provider contract stops the attempt for investigation."
    """

    def run(self):
        while True:
            cp = yield Load()
            page = yield Fetch(cp.resume_cursor)
            if not isinstance(page, Page):
                yield Halt(f"provider refused cursor {cp.resume_cursor!r}")
            receipts, ids_at = yield Lookup(page.events)
            problem = self.validate(cp, page, ids_at)
            if problem:
                yield Halt(problem)
            if self.is_caught_up(cp, page):
                yield Wait("caught_up")
                continue
            status, applied = yield from self.process(cp, page, receipts)
            if status != "done":
                yield Wait("blocked")
                continue
            ahead, version = (yield Fetch(page.next_cursor)), cp.checkpoint_version
            done_ahead = None
            if isinstance(ahead, Page) and ahead.next_cursor != page.next_cursor:
                receipts, _ids = yield Lookup(ahead.events)
                identity = Checkpoint(page.next_cursor, applied, version + 1)
                done_ahead = yield from self.process(identity, ahead, receipts)
            if (yield Barrier(cp.resume_cursor, version, page.next_cursor, version + 1, applied)) is not True:
                continue
            if done_ahead is not None and done_ahead[0] == "done":
                yield Barrier(page.next_cursor, version + 1, ahead.next_cursor, version + 2, done_ahead[1])


class SettleEachThenReceiptAll(CallAllThenSettle):
    """Safe, but no roster consumer: settles each call as its reply comes, in source order, and writes the
    page's receipts after the last one. A call settled ``committed`` is the event's durable outcome (seed 001
    step 4: "Make committed success absorbing for that tuple"), so no event is processed past an earlier one
    without a durable outcome. It takes every decision but ``apply`` for a block, so a page with an ignored or
    quarantined event never finishes: the audit judges it incomplete there."""

    settle_at_once = True


class RemembersServedIds(Consumer):
    """Correct (not in the gallery's roster): fetches the next page along with the first one and compares
    the two before anything else: a position that the next page serves under another id than the first page
    did is a conflicting identity (seed 000 step 3), whether or not a receipt holds it yet, and it halts.
    Otherwise it goes on as ``safe``."""

    def run(self):
        cp = yield Load()
        page = yield Fetch(cp.resume_cursor)
        if isinstance(page, Page) and page.next_cursor != cp.resume_cursor:
            ahead = yield Fetch(page.next_cursor)
            served = {e.position: e.id for e in page.events}
            for e in ahead.events if isinstance(ahead, Page) else ():
                if served.get(e.position, e.id) != e.id:
                    yield Halt(f"conflicting identity at position {e.position}: {e.id} after "
                               f"{served[e.position]}")
        yield from super().run()


class EmptyPageIsRefusal(Consumer):
    """"An empty page means the provider lost our cursor: stop and page the on-call."

    Halts on an empty page with a new token, as if the provider had refused the cursor. It served a page.

    Breaks seed 000 step 7: "Treat a successful empty page with a new continuation token as a zero-item page"
    (and step 3: a halt needs a breach of the provider contract).
    """

    def validate(self, checkpoint, page, ids_at):
        if not page.events and page.next_cursor != checkpoint.resume_cursor:
            return f"provider refused cursor {checkpoint.resume_cursor!r}"
        return super().validate(checkpoint, page, ids_at)


class PausedAfterFetch(Consumer):
    """"Consumption is paused for the migration": the flag is checked where the page is validated.

    Halts on every page it is served, whatever the page holds.

    Breaks seed 000 step 3, the only place the procedure stops: "An unexpected regression, conflicting
    identity at the same position, or a gap that violates the provider contract stops the attempt for
    investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        return "consumption paused for the migration"


class HaltsWhenUnreachable(Consumer):
    """"If the provider does not answer, something is badly wrong: stop and investigate."

    Halts when a fetch gets no reply (a timeout), as if the provider had broken its contract; it was served
    nothing. Otherwise ``safe``.

    Breaks seed 000 step 6: "On a crash before the page barrier, retry from the unchanged resume cursor" (a
    lost request is retried; step 3 halts only on a breach the worker was served).
    """

    def run(self):
        steps = super().run()
        reply = None
        while True:
            op = steps.send(reply)
            reply = yield op
            if type(op) is Fetch and reply is LOST:
                yield Halt("provider unreachable")


class GoesPastFailures(Consumer):
    """"Don't let one event under review hold up the rest of the page: do the others, come back for it."

    On a non-terminal outcome it goes on with the rest of the page, holding ``applied_position`` at the prefix
    before the blocked event and the barrier closed; a later attempt retries it (the later events are replays
    by their receipts). Nothing is lost and no invariant breaks: only the order does. Written in round 20
    (``tests/scenario/test_hostile_round20.py``), which judges it, as does round 46.

    Breaks seed 000 step 4: "Stop at the first outcome that is not durable and terminal".
    """

    def process(self, checkpoint, page, receipts):
        applied, blocked = checkpoint.applied_position, False
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = applied if blocked else max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = applied if blocked else max(applied, event.position)
            if decision not in ("apply", "ignore", "quarantine"):
                blocked = True
                continue
            result = yield from getattr(self, decision)(event, target)
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                blocked = True
                continue
            applied = target
        return ("blocked" if blocked else "done"), applied
