"""Round 46's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them), run by
``tests/judge/test_hostile_round46.py`` to kill mutants of the checker that the existing tests let live.
Written against the public API only."""
from __future__ import annotations

from .correct import ReadAhead, RememberedIdentity

__all__ = ["GapBlindReadAhead", "GapBlindRemembered", "TrustingReadAhead"]


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
