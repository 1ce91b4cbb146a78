"""The lead's consumers of stop 46 (outside the gallery: ``tests/judge/test_mutants.py`` does not import
them), run by ``tests/judge/test_hostile_round42.py``: an adversary's bug keyed on the last digit of an
event's position, which every generated stream puts at a multiple of 10. Written against the public API
only."""
from __future__ import annotations

from simkit import Consumer
from simkit.ops import Commit


class InMemoryQuarantineAtSeven(Consumer):
    """"Quarantines of e…7 are re-derived on replay anyway: keep them in memory."

    Leaves the quarantine of an event whose position ends in 7 as an in-memory decision and lets the page
    barrier pass over it.

    Breaks invariant 1: "A worker's in-memory quarantine decision is not a durable terminal classification".
    """

    def quarantine(self, event, applied_position):
        if event.position % 10 == 7:
            return applied_position
            yield  # pragma: no cover - makes this a generator
        return (yield Commit(event, "quarantined", applied_position))


class HoldDoneAtNine(Consumer):
    """"Holds at …9 are the nightly batch's: released by morning, so count them done."

    Takes ``reversible_hold`` for terminal at positions ending in 9.

    Breaks invariant 5: "A failed item, retryable dead-letter outcome, operator-review hold, or reversible
    quarantine blocks the page barrier even when later items were visible in the response".
    """

    def is_replay(self, event, receipts, applied_position):
        self._current = event                   # step 4 asks this first, for every event in turn
        return super().is_replay(event, receipts, applied_position)

    def is_terminal(self, decision):
        return decision == "reversible_hold" and self._current.position % 10 == 9
