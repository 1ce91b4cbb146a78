"""Mutants that get step 3 wrong: what a page must look like before any effect, and when to stop for
investigation. Too strict is a liveness failure (docs/verdict.md ``halt_justified``); too lax lets a
provider's broken contract through."""
from __future__ import annotations

from simkit import Consumer
from simkit.ops import Halt


class HaltOnOverlap(Consumer):
    """"If the provider sends us something we've already
    applied, it has rewound: stop before we double-apply."

    Stops for investigation whenever a page carries an event at or below ``applied_position``, which every
    retried or overlapping page does.

    Breaks seed 000 step 3: "Overlap at or below the applied prefix is acceptable."
    """

    def validate(self, checkpoint, page, ids_at):
        for e in page.events:
            if e.position <= checkpoint.applied_position:
                return (f"provider rewound: position {e.position} at or below applied "
                        f"{checkpoint.applied_position}")
        return super().validate(checkpoint, page, ids_at)


class HaltOnPositionGap(Consumer):
    """"Positions 104 then 106? We missed 105: halt rather than skip an event."

    Treats any hole in the numbering of a page as a gap, although positions are a total order, not a dense
    sequence.

    Breaks seed 000 step 3, which stops only for "a gap that *violates the provider contract*" (the retry
    walkthrough's own page is 104, 106, 107).
    """

    def validate(self, checkpoint, page, ids_at):
        positions = [e.position for e in page.events]
        for a, b in zip(positions, positions[1:]):
            if b > a + 1:
                return f"gap: positions {a + 1}..{b - 1} missing from the page"
        return super().validate(checkpoint, page, ids_at)


class KillSwitchLeftOn(Consumer):
    """"Consumption is paused for the migration" — and the flag was never turned off.

    Only ever halts, before loading anything.

    Breaks seed 000 step 3, the only place the procedure stops: "An unexpected regression, conflicting
    identity at the same position, or a gap that violates the provider contract stops the attempt for
    investigation" (docs/verdict.md: a halt without cause is a liveness failure).
    """

    def run(self):
        yield Halt("consumption paused for the migration")


class TrustTheProvider(Consumer):
    """"The provider is ours and well tested; validation is just a slow loop over every page."

    Skips step 3 entirely: a page with a source-order regression, two ids at one position, or an event slipped
    in behind ``applied_position`` although the contract rules out backfills is processed as it comes (with no
    backfills, the watermark then takes the slipped-in event for a replay).

    Breaks seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap
    that violates the provider contract stops the attempt for investigation."
    """

    def validate(self, checkpoint, page, ids_at):
        return None


class GapBlind(Consumer):
    """"Gaps are normal on this provider, and the gap check keeps paging the on-call: turn it off."

    Keeps step 3's order and identity checks but drops the gap check, so an event that appears behind
    ``applied_position`` although the provider promised no backfills (the bundled ``gap_behind_applied``) is
    taken for a replay by the watermark, and lost.

    Breaks seed 000 step 3: "a gap that violates the provider contract stops the attempt for investigation".
    """

    def validate(self, checkpoint, page, ids_at):
        problem = super().validate(checkpoint, page, ids_at)
        return None if problem and problem.startswith("gap") else problem
