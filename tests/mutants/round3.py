"""Mutants the audit once passed (issue 26): halts laundered or missing, invariant 2 exempting what the writer
held, crashes that kept memory, and bugs that only streams as wide as real ones show (big pages, hundreds of
barriers, long blocks, several lost requests in a row). Written against the public API only."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import Checkpoint
from simkit.ops import LOST, Barrier, Fetch, Halt, Load


class HaltForTheMigration(Consumer):
    """"While the provider migrates, a refused cursor means: stop and page the on-call."

    Starts each life by probing the provider with the empty cursor, twice, and halts "for the migration" when
    both are refused, before ever fetching its own cursor. The provider never issued "", so its refusal breaks
    no contract; the stream is left untouched.

    Breaks seed 000 step 3: only "an unexpected regression, conflicting identity at the same position, or a
    gap that violates the provider contract stops the attempt for investigation."
    """

    def run(self):
        yield Load()
        if (yield Fetch("")) is None and (yield Fetch("")) is None:
            yield Halt("provider refused cursor '' twice: halting for the migration")
        yield from super().run()


class RetryLostFetchFromScratch(Consumer):
    """"If a fetch times out, the session is probably gone: start over from the beginning of the feed."

    Retries a fetch whose response was lost with the empty cursor, "the start of the feed", and halts when the
    provider refuses it.

    Breaks seed 000 step 6: "On a crash before the page barrier, retry from the unchanged resume cursor."
    """

    def attempt(self):
        checkpoint = yield Load()
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST and (yield Fetch("")) is None:
            yield Halt("provider refused cursor ''")
        return (yield from super().attempt())


class SortBeforeProcessing(Consumer):
    """"Pages sometimes come back out of order; just sort them by position and carry on."

    Sorts each page by position before validating it, so a regression inside the page passes validation.

    Breaks seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap
    that violates the provider contract stops the attempt for investigation."
    """

    def validate(self, checkpoint, page, ids_at):
        ordered = type(page)(page.cursor, tuple(sorted(page.events, key=lambda e: e.position)),
                             page.next_cursor)
        return super().validate(checkpoint, ordered, ids_at)


class ValidateAfterEffects(Consumer):
    """"Validation is slow; run the page first and check it afterwards, it almost never fails."

    Processes the page, then validates it and halts only after the effects ran.

    Breaks seed 000 step 3: "Validate that new events respect the source order" before step 4 processes them:
    a breach "stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        return None

    def process(self, checkpoint, page, receipts):
        status, applied = yield from super().process(checkpoint, page, receipts)
        problem = super().validate(checkpoint, page, {})
        if problem:
            yield Halt(problem)
        return status, applied


class BarrierEveryFiveEvents(Consumer):
    """"Big pages take long; checkpoint every five events so a crash redoes less."

    Publishes the page's ``next_cursor`` after every fifth event of a page, as a compare-and-swap, and carries
    on with the rest of the page. On pages of at most five events it is ``safe``.

    Breaks invariant 1: "A returned continuation token remains pending until every event in that response is
    durably classified."
    """

    def process(self, checkpoint, page, receipts):
        if len(page.events) <= 5:
            return (yield from super().process(checkpoint, page, receipts))
        version = checkpoint.checkpoint_version
        applied = checkpoint.applied_position
        for start in range(0, len(page.events), 5):
            chunk = type(page)(page.cursor, page.events[start:start + 5], page.next_cursor)
            status, applied = yield from super().process(
                Checkpoint(checkpoint.resume_cursor, applied, version), chunk, receipts)
            if status != "done":
                return status, applied
            if start == 0:
                swapped = yield Barrier(checkpoint.resume_cursor, version, page.next_cursor, version + 1,
                                        applied)
                if swapped is not True:
                    return "lost", applied
        return "done", applied

    def page_barrier(self, checkpoint, page, applied_position):
        if len(page.events) <= 5:
            return (yield from super().page_barrier(checkpoint, page, applied_position))
        return "advanced"


class OneByteVersion(Consumer):
    """"The version only needs to tell this write from the last one: a byte is plenty."

    Writes ``checkpoint_version`` modulo 256 at every barrier. A stream of more than 255 barriers wraps it
    back to 0, and a late retry holding version 0 can then win the compare-and-swap.

    Breaks invariant 3: "A page barrier may replace resume_cursor only with a compare-and-swap that still
    matches the request cursor and checkpoint version" (a version that wraps is a checkpoint regression).
    """

    def page_barrier(self, checkpoint, page, applied_position):
        version = checkpoint.checkpoint_version
        swapped = yield Barrier(checkpoint.resume_cursor, version, page.next_cursor, (version + 1) % 256,
                                applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


class QuarantineStuckEvents(Consumer):
    """"If an event is still blocked after a dozen tries, quarantine it so the stream moves on."

    Counts the attempts each event has been blocked (failed, in review, on hold) in this process and
    quarantines it on the twelfth.

    Breaks invariant 5: "A failed item, retryable dead-letter outcome, operator-review hold, or reversible
    quarantine blocks the page barrier even when later items were visible in the response."
    """

    def __init__(self, contract):
        super().__init__(contract)
        self.blocked: dict[str, int] = {}

    def process(self, checkpoint, page, receipts):
        status, applied = yield from super().process(checkpoint, page, receipts)
        if status == "blocked":
            stuck = next((e for e in page.events if e.position > applied), None)
            if stuck is not None:
                self.blocked[stuck.id] = self.blocked.get(stuck.id, 0) + 1
                if self.blocked[stuck.id] >= 12:
                    done = yield from self.quarantine(stuck, max(applied, stuck.position))
                    if done is True:
                        return "lost", applied          # reread state and go on past it
        return status, applied


class ThirdLostCommitMeansDone(Consumer):
    """"One lost commit is a blip, but three in a row means the store is up and just slow to answer: take it."

    Retries a commit whose reply was lost; when the third try in a row is lost too, takes the event as done.

    Breaks invariant 1: "A returned continuation token remains pending until every event in that response is
    durably classified", and seed 000 step 4: "Stop at the first outcome that is not durable and terminal."
    """

    def apply(self, event, applied_position):
        for _ in range(3):
            done = yield from super().apply(event, applied_position)
            if done is not LOST:
                return done
        return True


class SentSetOnTheClass(Consumer):
    """"Keep the set of events we already sent in one place, shared by every worker instance."

    Remembers the ids it handled in a class attribute and treats them as replays: a new instance after a crash
    "knows" what its predecessor did although nothing durable says so.

    Breaks seed 000 step 4: "If a *durable* receipt proves the event already has its intended outcome, treat
    it as replayed."
    """

    sent: set[str] = set()

    def is_replay(self, event, receipts, applied_position):
        seen = event.id in SentSetOnTheClass.sent
        SentSetOnTheClass.sent.add(event.id)
        return seen or super().is_replay(event, receipts, applied_position)


class MovesTheLoadedCursor(Consumer):
    """"Saves a round trip: advance the checkpoint object we loaded instead of writing a barrier."

    After a page's events are done, sets the loaded checkpoint's cursor to the page's ``next_cursor`` in place
    and goes on from it, with no barrier. The durable checkpoint never moves.

    Breaks seed 000 step 5: "compare-and-swap the checkpoint from the attempt cursor and version to the
    returned next cursor and a greater version."
    """

    def page_barrier(self, checkpoint, page, applied_position):
        object.__setattr__(checkpoint, "resume_cursor", page.next_cursor)
        return "advanced"
        yield  # pragma: no cover

