"""Mutants that get an event's outcome wrong: what the handler decided, what a receipt may claim, and in what
order a page's events are settled (seed 000 step 4, invariants 1, 4 and 5).

Each one is the kind of change a developer makes on purpose, for a reason that sounds fine in review.
"""
from __future__ import annotations

from simkit import Consumer
from simkit.model import NON_TERMINAL, Page
from simkit.ops import BLOCKED, LOST, Commit, Effect, Handle, Skip


class IgnoreWithoutAsking(Consumer):
    """"We only care about a few event types downstream; mark the rest ``ignored`` and move on."

    Writes a durable ``ignored`` receipt for every new event without ever calling the handler, so pages close
    fast and nothing is applied. The receipt claims a policy decision nobody made.

    Breaks invariant 1: a token stays pending until every event is "durably classified as applied,
    *intentionally* ignored, or permanently quarantined *by policy*" (and docs/verdict.md: a durable
    ``ignored`` receipt that no decision ordered breaks invariant 5).
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if not self.is_replay(event, receipts, applied):
                done = yield Commit(event, "ignored", max(applied, event.position))
                if done is LOST:
                    return "lost", applied
            else:
                yield Skip(event)
            applied = max(applied, event.position)
        return "done", applied


class QuarantineTransientFailures(Consumer):
    """"A failure is a failure: park it in quarantine so one flaky event can't block the stream."

    Writes a durable ``quarantined`` receipt when the handler answers ``retry_later`` (or dead-letters),
    as if the transient failure were a final policy disposition.

    Breaks seed 000 step 4: "A transient dead-letter entry, a pending operator decision, or a reversible hold
    does not close the prefix", and invariant 5: "A failed item, retryable dead-letter outcome ... blocks the
    page barrier".
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "apply":
                result = yield from self.apply(event, target)
            elif decision in ("quarantine", "retry_later", "dead_letter"):
                result = yield from self.quarantine(event, target)
            else:
                return "blocked", applied
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), applied
            applied = target
        return "done", applied


class DeadLetterAndContinue(Consumer):
    """"Write it to the dead-letter table with its position, and keep going; ops will replay the DLQ."

    On ``retry_later`` it commits a ``dead_letter`` receipt (non-terminal, it says so itself) with the event's
    position as ``applied_position``, counts the event as handled, and lets the page barrier pass.

    Breaks invariant 5: "A failed item, retryable dead-letter outcome, operator-review hold, or reversible
    quarantine blocks the page barrier even when later items were visible in the response" (and invariant 2:
    ``applied_position`` moves past an event without a durable outcome).
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "apply":
                result = yield from self.apply(event, target)
            elif decision == "quarantine":
                result = yield from self.quarantine(event, target)
            elif decision == "retry_later":
                result = yield Commit(event, "dead_letter", target)
            else:
                return "blocked", applied
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), applied
            applied = target
        return "done", applied


class GiveUpAfterThreeTries(Consumer):
    """"Three strikes: if the handler still can't settle an event after three attempts, ignore it."

    Counts, in memory, how often each event came back ``retry_later``, ``operator_review`` or
    ``reversible_hold``; on the third time it writes a durable ``ignored`` receipt so the page can close.
    An operator review that takes longer than three back-offs is decided by the retry budget, not the
    operator.

    Breaks seed 000 step 4: "A transient dead-letter entry, a pending operator decision, or a reversible hold
    does not close the prefix", and invariant 5 (an ``ignored`` receipt no handler decision ordered).
    """

    BUDGET = 3

    def __init__(self, contract):
        super().__init__(contract)
        self._tries: dict[str, int] = {}

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "apply":
                result = yield from self.apply(event, target)
            elif decision == "quarantine":
                result = yield from self.quarantine(event, target)
            else:
                tries = self._tries[event.id] = self._tries.get(event.id, 0) + 1
                if tries < self.BUDGET:
                    return "blocked", applied
                result = yield Commit(event, "ignored", target)
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), applied
            applied = target
        return "done", applied


class HoldsAreAdvisory(Consumer):
    """"A reversible hold can be reversed later, and review is just a flag for the dashboard: apply it now."

    Applies an event the handler answered ``reversible_hold`` or ``operator_review``: the effect runs while
    the event is under hold or review (and a review that later resolves to quarantine was applied anyway).

    Breaks invariant 5: "an operator-review hold, or reversible quarantine blocks the page barrier", and
    docs/verdict.md: "an effect or ``applied`` receipt for an event whose latest decision was not ``apply``".
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision in ("apply", "reversible_hold", "operator_review"):
                result = yield from self.apply(event, target)
            elif decision == "quarantine":
                result = yield from self.quarantine(event, target)
            else:
                return "blocked", applied
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), applied
            applied = target
        return "done", applied


class PoisonLoggedNotReceipted(Consumer):
    """"Poison goes to the error tracker with a stack trace; that's our quarantine."

    Decides quarantine for a poison event, logs it (in memory, in this process) and moves on: no durable
    receipt binds the event to its final disposition. Review and holds still block, unlike the
    ``in_memory_quarantine`` shortcut: only the poison path is wrong.

    Breaks invariant 1: "A worker's in-memory quarantine decision is not a durable terminal classification."
    """

    def __init__(self, contract):
        super().__init__(contract)
        self.error_tracker: list[str] = []

    def quarantine(self, event, applied_position):
        self.error_tracker.append(event.id)
        return True
        yield  # pragma: no cover


class AnyReceiptMeansHandled(Consumer):
    """"If there's a receipt row for the id, we've seen it; skip it."

    Records review, hold and retry decisions as durable (non-terminal) receipts so operators can see them,
    which is fine, then treats *any* receipt as proof of replay: on the next attempt the held event is skipped
    and the page barrier passes it.

    Breaks seed 000 step 4: replay only "if a durable receipt proves the event already has its intended
    outcome"; "a receipt that means retry later, await operator review, or hold reversibly is not terminal and
    continues to block the prefix".
    """

    def is_replay(self, event, receipts, applied_position):
        return event.id in receipts or super().is_replay(event, receipts, applied_position)

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "apply":
                result = yield from self.apply(event, target)
            elif decision == "quarantine":
                result = yield from self.quarantine(event, target)
            else:
                if decision in NON_TERMINAL:    # visible to operators: keeps applied_position where it is
                    yield Commit(event, decision, applied)
                return "blocked", applied
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), applied
            applied = target
        return "done", applied


class SkipFailuresKeepGoing(Consumer):
    """"Don't let one bad event hold up the rest of the page: apply what you can, retry the failures later."

    On a non-terminal outcome it notes the page as blocked but goes on committing the later events of the
    page, each with its own position as ``applied_position``. The barrier waits, but the watermark has
    already jumped over the failed event, and the next attempt takes it for a replay.

    Breaks seed 000 step 4: "Stop at the first outcome that is not durable and terminal", and invariant 2:
    "``applied_position`` advances only after the corresponding effect and deduplication receipt are durable".
    """

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        blocked = False
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = max(applied, event.position)
            if decision == "apply":
                result = yield from self.apply(event, target)
            elif decision == "quarantine":
                result = yield from self.quarantine(event, target)
            else:
                blocked = True
                continue
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                blocked = True
                continue
            applied = target
        return ("blocked" if blocked else "done"), applied


class NewestFirst(Consumer):
    """"Process the page newest-first: the freshest events matter most to our users."

    Walks each page in reverse. Every commit writes its event's position as ``applied_position``, so the
    first commit of a page already claims the whole page.

    Breaks seed 000 step 4: "Process events in source order", and so invariant 2 ("``applied_position``: the
    greatest position in the source-ordered prefix whose events have durable outcomes").
    """

    def process(self, checkpoint, page, receipts):
        newest_first = Page(page.cursor, tuple(reversed(page.events)), page.next_cursor)
        return (yield from super().process(checkpoint, newest_first, receipts))


class EffectThenReceipt(Consumer):
    """"Call the sink, then write the receipt: two small transactions are easier to reason about than one."

    On a transactional sink it runs the effect on its own and commits the ``applied`` receipt afterwards,
    instead of both in one transaction. A crash between the two replays the event and repeats its effect.

    Breaks invariant 4: "Replaying an event cannot repeat an unsafe effect. Enforce a unique event receipt,
    use a sink idempotency key, or couple the effect and receipt in one transaction."
    """

    def apply(self, event, applied_position):
        if self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        done = yield Effect(event)
        if done is LOST:
            return LOST
        return (yield Commit(event, "applied", applied_position))


class IgnoreInMemory(Consumer):
    """"An ignored event has no effect, so there is nothing to write: skip the round trip to the store."

    The ``ignore`` hook returns at once, with no receipt, so the page barrier passes an event that has no
    durable outcome (the bundled ``ignored_event`` shows it without a single fault).

    Breaks invariant 1: a token stays pending until every event is "durably classified as applied,
    intentionally ignored, or permanently quarantined by policy".
    """

    def ignore(self, event, applied_position):
        return True
        yield


class IgnoreMeansApply(Consumer):
    """"The handler is only being cautious when it says
    ignore: run the effect anyway, nobody downstream minds."

    The ``ignore`` hook applies the event: an effect and an ``applied`` receipt the handler never decided.

    Breaks invariant 1: the event is to be "durably classified as ... intentionally ignored", and the judge
    takes the handler's decision as the fact (docs/verdict.md, "Claims and facts").
    """

    def ignore(self, event, applied_position):
        return (yield from self.apply(event, applied_position))
