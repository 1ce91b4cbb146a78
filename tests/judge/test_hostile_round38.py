"""Hostile consumers, thirty-eighth round (a fresh tester): "``simkit audit MYCONSUMER`` passes means my
consumer keeps the rules", measured by mutation: every one-token change of ``safe``'s source (comparisons
flipped, ``+``/``-`` and integer off-by-ones, a statement dropped, two adjacent statements swapped, a
condition made ``True``/``False``, an early return, ``and``/``or`` swapped, a field replaced by its record's
neighbour, ``applied``/``target`` swapped, ``max`` for ``min``, a yield's result assumed), each a subclass in a
scratch module, filtered by the audit's bundled, corner and wide cases and then audited
(``tests/mutants/round38.py``).

Found:

- a ``safe`` whose step 4 starts its applied prefix at the loaded ``checkpoint_version`` instead of its
  ``applied_position`` (``PrefixFromTheVersion``) passed every case: in every stream served, positions kept
  ahead of or level with the version. Three empty pages before events at 1, 2, 3 make it write
  ``applied_position`` 1 and 2 with nothing processed (invariant 2) and halt on e1 as a gap the provider
  never made. The corner ``versions_outrun_positions`` serves that stream.

Held (caught, or equivalent): of 435 mutants, the audit's cases killed every non-equivalent one but that; the
equivalent ones keep the rules by construction: the checks of a hook's kind and answer (``safe``'s hooks
answer rightly), ``lost``/``rejected``/``advanced`` told apart (``run`` starts the next attempt for each), a
barrier to version + 2 (seed 000 asks for a greater one), a lower ``applied_position`` in a commit or barrier
(the store keeps the greater: the barrier's raises it), receipts only, never the watermark (``ReceiptsOnly``),
checks reordered where they exclude each other, and a caught-up test dropped (the non-advancing-token test
after step 4 backs off the same way).

Left alone: a refused cursor (``Fetch`` gives ``None``) with its ``Halt`` dropped is a consumer error, no
harm, and no world refuses a cursor ``safe`` published.

Each: the verdict the same run earns, on the smallest scenario that shows it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round38  # noqa: E402

_CORNER = "versions_outrun_positions"


def test_the_new_corner_is_audited_and_correct_consumers_pass_it():
    """The corner is a case of the audit, and ``safe`` and every correct consumer are ok on it: the empty
    pages pass their barriers, e1 to e3 are applied."""
    assert _CORNER in CORNERS and any(c.kind == "corner" and c.name == _CORNER for c in cases(1, 0))
    for cls in roster.CORRECT:
        v = simkit.simulate(wide(_CORNER), cls).verdict
        assert v.ok and v.completed, (cls.__name__, v)


def test_a_prefix_taken_from_the_version_is_caught():
    """Seed 000, "Keep two kinds of progress ... Never substitute one for the other": ``PrefixFromTheVersion``
    writes applied_position 1 and 2 at the empty pages' barriers, before e1 and e2 have an outcome
    (invariant 2), then halts on e1 as a gap behind that prefix, though the provider kept its contract. Where
    positions run ahead of the version (every bundled stream), it is ok."""
    v = simkit.simulate(wide(_CORNER), round38.PrefixFromTheVersion).verdict
    assert not v.ok and v.halt_justified is False
    assert {d["invariant"] for d in v.invariant_violations} == {2}
    assert simkit.simulate(simkit.load("default"), round38.PrefixFromTheVersion).verdict.ok


@pytest.mark.parametrize("backfills", [False, True])
def test_the_corner_catches_it_with_backfills_too(backfills):
    """With backfills the watermark is never trusted, and the empty pages' barriers still claim positions 1
    and 2 (invariant 2): the corner does not depend on step 3's gap check."""
    sc = simkit.parse({"name": _CORNER, **CORNERS[_CORNER], "backfills": backfills}, "<r38>", _CORNER)
    v = simkit.simulate(sc, round38.PrefixFromTheVersion).verdict
    assert 2 in {d["invariant"] for d in v.invariant_violations}
