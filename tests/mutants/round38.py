"""Round 38's consumers (outside the gallery: ``tests/judge/test_mutants.py`` does not import them): the
mutants of ``safe`` (:class:`simkit.Consumer`) that passed ``simkit audit`` and break a rule, each written out
as the one-token change the mutation script made, run by ``tests/judge/test_hostile_round38.py``. Written
against the public API only."""
from __future__ import annotations

from simkit import Consumer
from simkit.model import Checkpoint

__all__ = ["PrefixFromTheVersion"]


class PrefixFromTheVersion(Consumer):
    """``safe`` with one field swapped in step 4: the attempt's applied prefix starts at the loaded
    ``checkpoint_version`` instead of its ``applied_position`` (mutant ``process L222
    .applied_position->.checkpoint_version``).

    The two counters agree closely enough in every stream the audit served (positions 1, 2, 3 behind one
    barrier each, or e10, e20, … far ahead of the version), so it passed every case. Where empty pages have
    advanced the token (and the version) past the first events' positions, an empty page's barrier writes
    ``applied_position`` 1, 2 with nothing processed, and events at or below the version are taken for
    replays (without backfills, step 3 halts on them as a gap the provider never made).

    Breaks seed 000, "Keep two kinds of progress": "The applied position says what work is durably complete.
    Never substitute one for the other"; and invariant 2.
    """

    def process(self, checkpoint, page, receipts):
        counted = Checkpoint(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                             checkpoint.checkpoint_version)
        return (yield from super().process(counted, page, receipts))
