"""Round 52: mutation testing of the world's ground truth (store, sink, provider, faults, truth).

One-token mutants made with the stdlib ``ast`` (/tmp/r52/mut.py: flipped comparisons, +-1 on integer
constants, and/or swaps, max/min swaps, ``if`` conditions forced True/False, a dropped ``not``, +/- swaps,
outcome strings changed, single statements dropped) of simkit/store/{memory,settlement,durable,limits}.py,
simkit/world/{sink,provider,faults,points}.py and simkit/truth/*.py: 1996 in all, a seeded sample run (each on
a patched copy of the tree, in a subprocess) against tests/judge/test_golden.py,
tests/seed/test_walkthrough.py, tests/store, tests/world, tests/truth and tests/seed/test_validation_list.py
with ``-x`` and a 150 s timeout per mutant. Score (73 sampled mutants, 2 shared cores): 55 killed by those
suites, 2 timed out (memory.py:231, limits.py:91: killed here), 16 survived: 7 killed here (derived.py:133,
:157, :161; ground.py:48, :226; trace.py:101; columns.py:400), 7 equivalent (log.py:265 and columns.py:112: a
slower path answering the same; columns.py:308: where a value is kept, not which; faults.py:171: every caller
passes a positive rate; faults.py:233: a shortcut the checks after it repeat; provider.py:90 and :103: a
scripted page's rows and the by-id fallback name the same events), 2 left open (provider.py:170,
derived.py:295). No survivor showed the real world wrong: every bundled scenario x strategy also judges alike
on the memory and SQLite stores.

Each test below kills a named survivor.
"""
from __future__ import annotations

from array import array

import pytest

import simkit
from simkit.model import Checkpoint
from simkit.store.limits import Unstorable
from simkit.store.memory import MemoryStore
from simkit.store.sqlite import SQLiteStore
from simkit.truth.columns import evenly_spaced
from simkit.truth.derived import Stream
from simkit.truth.ground import View, as_truth


def test_an_empty_stream_ranks_every_claim_as_none():
    """Survivor derived.py:133 (``if not n`` forced False): a stream with no events read by rank (no id
    dictionary) must rank every id code of a log as -1, not index an empty table."""
    stream = Stream((), (), rank=lambda eid: None)
    assert stream._ranks([5, 0]) == array("q", [-1, -1])


def test_a_stream_refuses_an_id_it_does_not_hold():
    """Survivors derived.py:161 (``if k is None`` forced False: ``Stream[eid]`` of an id the stream does not
    hold answered ``None`` instead of raising ``KeyError``) and derived.py:157 (``get`` answering nothing)."""
    stream = Stream(("e1", "e2"), (1, 2))
    assert stream["e2"] == 1 and stream.get("e2") == 1 and "e9" not in stream and stream.get("e9", -1) == -1
    with pytest.raises(KeyError):
        stream["e9"]


def test_as_truth_takes_a_ground_truth_as_it_is():
    """Survivor ground.py:226 (its ``isinstance(run, GroundTruth)`` dropped): a GroundTruth is judged as it
    is, not read again as a hand-built history."""
    truth = simkit.simulate(simkit.load("retry_walkthrough"), "safe").ground_truth()
    assert as_truth(truth) is truth


@pytest.mark.parametrize("store", [MemoryStore, SQLiteStore])
@pytest.mark.parametrize(("applied", "version", "field"),
                         [(-1, 2, "applied_position"), (7, 2**63, "next_version")])
def test_a_barrier_out_of_range_is_refused_before_it_compares(store, applied, version, field):
    """Survivor limits.py:91 (``refuse_barrier`` without ``refuse_unwritable``; only the slow hypothesis
    agreement test found it, past the per-mutant timeout): a barrier whose ``applied_position`` or
    ``next_version`` no store keeps is refused by both stores, naming the field, and writes nothing."""
    s = store(Checkpoint("C1", 5, 1))
    with pytest.raises(Unstorable) as refused:
        s.compare_and_swap(1, "C1", 1, "C2", version, applied)
    assert refused.value.field == field and s.checkpoint == Checkpoint("C1", 5, 1)


def test_a_settle_row_of_the_trace_keeps_its_details():
    """Survivor trace.py:101 (``Trace.note`` writing nothing): the typed details of a ``settle`` row (its
    action, the operation's state before and after; docs/vocabulary.md, "Settlement") are in the trace."""
    trace = simkit.simulate(simkit.load("default"), "safe").trace
    settles = [row for row, step in enumerate(trace.step) if step == "settle"]
    assert settles and all(trace.detail(row)["action"] is not None for row in settles)
    assert trace.detail(settles[0])["after"] == "committed"


def test_evenly_spaced_finds_grids_and_only_grids():
    """Survivor columns.py:400 (a ``1`` made ``0``): the positions of a generated stream are a grid, ranked by
    arithmetic; a gap is no grid (ranked by search), else an event past the gap was ranked past the table."""
    assert evenly_spaced([0, 2, 4]) == (0, 2) and evenly_spaced([7]) == (7, 1)
    assert evenly_spaced([0, 1, 3]) is None and evenly_spaced([]) is None


@pytest.mark.parametrize("store", [MemoryStore, SQLiteStore])
def test_compare_and_swap_takes_the_matching_attempt_only(store):
    """Survivor memory.py:231 (the CAS condition forced True: every barrier refused; the suites only timed
    out on it): invariant 3, a barrier replaces the cursor exactly when cursor and version match, keeps the
    higher ``applied_position``, and logs one write."""
    s = store(Checkpoint("C1", 5, 1))
    assert not s.compare_and_swap(1, "C1", 2, "C2", 3, 9)       # the version moved on
    assert not s.compare_and_swap(1, "C0", 1, "C2", 2, 9)       # the cursor did
    assert s.checkpoint == Checkpoint("C1", 5, 1)
    assert s.compare_and_swap(1, "C1", 1, "C2", 2, 3)
    assert s.checkpoint == Checkpoint("C2", 5, 2) and len(s.writes) == 1


def test_a_view_equals_its_rows():
    """Survivor ground.py:48 (``View.__eq__`` inverted): a view of the ground truth equals its rows and
    another view of them, and differs from other rows."""
    rows = [(1, 0.0, 1, "e1")]
    assert View(rows) == rows and View(rows) == View(list(rows))
    assert View(rows) != [] and not View(rows) != rows
