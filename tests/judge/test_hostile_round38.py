"""Hostile consumers, thirty-eighth round (a fresh tester): "``simkit audit MYCONSUMER`` passes means my
consumer keeps the rules", measured by mutation (``tests/mutants/round38.py``). A script made every one-token
change of ``safe``'s methods (``simkit/procedure/consumer.py``): a comparison flipped, ``+``/``-`` and
integer off-by-ones, a statement dropped, two adjacent statements (requests too) swapped, a condition made
``True``/``False``, an early return, ``and``/``or`` swapped, a field replaced by its record's neighbour,
``applied``/``target`` swapped, ``max``/``min`` and either argument, a commit's, barrier's or settlement's
result assumed ``True``, an outcome or status string swapped: 435 mutants, each a subclass in a scratch
module. The audit's bundled, corner and wide cases killed 294 (124 of them with the consumer's own one-line
error); of the 141 left, 18 were audited in full, one of each group that computes the same thing: 4 failed.
The 137 that pass, each read: 131 equivalent, 6 missed bugs of two kinds (1 caught now, 5 left alone). The
score was 298 of 304 non-equivalent mutants killed; it is 299.

Found:

- a ``safe`` whose step 4 starts its applied prefix at the loaded ``checkpoint_version`` instead of its
  ``applied_position`` (``PrefixFromTheVersion``; the Python reference ``exec:`` consumer changed the same
  way too) passed every case: in every stream served, positions kept ahead of the version. Three empty pages
  before events at 1, 2, 3 make it write ``applied_position`` 1 and 2 with nothing processed (invariant 2)
  and halt on e1 as a gap the provider never made. The corner ``versions_outrun_positions`` serves that
  stream.

Held (caught, or equivalent): an effect committed in one transaction on an external sink (explored lost
checkpoint writes: duplicated). Equivalent, each keeping the rules by construction: the checks of a hook's
kind and answer (``safe``'s hooks answer rightly) and the ``is_terminal`` branch (never taken); ``lost``,
``rejected`` and ``advanced`` told apart or not (``run`` starts the next attempt on each) and every commit
taken as ``lost`` (the next attempt replays it); a barrier to version + 2 (seed 000 asks for a greater one); a
lower ``applied_position`` in a commit or barrier, or an in-memory prefix not raised by a replay or a commit
(the store keeps the greater, and a commit's is through its event); receipts never trusted for a replay
(the unique receipt refuses the second commit, a committed reservation is not called again) or the watermark
never trusted (``ReceiptsOnly``); the gap check at ``<`` for ``<=`` (a receipt always covers
``applied_position``: an initial state without one is refused); no ``Skip`` note; the ``Halt`` of a refused
cursor dropped (no world refuses a cursor ``safe`` holds); checks reordered where they exclude each other;
step 7's ``is_caught_up`` test dropped (the token test after step 4 backs off the same way).

Left alone: a page that serves events and answers its own token. Without step 7's test after step 4 (the 5
missed mutants drop or falsify ``if self.barrier_target(...) == checkpoint.resume_cursor``), a worker passes
the barrier to the same cursor and attempts again at once: it spins, against seed 000 step 7 ("stop or back
off instead of spinning"; 6,665 checkpoint versions on a page [3] answering ``C2``, where ``safe`` backs off
at version 1). With ``is_caught_up`` true for any page answering its own token, a worker backs off without
processing the page (equivalent where ``safe`` passes). Both pass every case: no generated stream serves such
a page, and on a scripted one ``safe`` itself is incomplete (round 24: the provider's end of the stream is an
empty page), so the audit skips it. Judging them needs that page counted as the end once its events have
outcomes: a change of ``completed`` for every consumer, not a case.

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


def test_the_reference_exec_consumer_passes_the_corner_and_its_same_mutant_fails_it(tmp_path):
    """The same one-token mutant of the Python reference consumer over the protocol (docs/protocol.md), its
    step 4 starting from ``checkpoint["checkpoint_version"]``, passed every bundled scenario as ``safe``'s
    did; the corner catches it, and the reference itself is ok there."""
    reference = Path(__file__).parents[2] / "examples/consumers/python/consumer.py"
    line = 'applied = checkpoint["applied_position"]\n'
    text = reference.read_text()
    assert text.count(line) == 1
    mutant = tmp_path / "consumer.py"
    mutant.write_text(text.replace(line, 'applied = checkpoint["checkpoint_version"]\n'))
    assert simkit.simulate(wide(_CORNER), f"exec:{sys.executable} {reference}").verdict.ok
    v = simkit.simulate(wide(_CORNER), f"exec:{sys.executable} {mutant}").verdict
    assert not v.ok and 2 in {d["invariant"] for d in v.invariant_violations}
