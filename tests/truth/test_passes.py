"""The checker's whole-stream passes (simkit/truth/passes.py): the compiled ones (simkit/_native.c) equal
their Python reference on generated columns, and every verdict is the same whichever runs.

The second is the differential harness of docs/performance.md ("the native core"): one run, judged twice, by
the checker with the compiled passes and by the checker with the references, over the audit's bundled,
corner and sweep cases, under ``safe``, every shortcut and the buggy consumers of two hostile rounds'
galleries (whose failures are the rows the passes leave to Python). The rest of the suite runs with the
compiled passes against committed verdicts and explorations computed before they existed (tests/golden).
"""
from __future__ import annotations

import inspect
import os
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mutants import round55, round58

import simkit
from simkit.judge.checker import check
from simkit.procedure.strategies import STRATEGIES
from simkit.runner import simulate
from simkit.tools.audit_cases import cases
from simkit.truth import passes

native = pytest.mark.skipif(passes.NATIVE is None, reason="simkit._native was not built (SIMKIT_NATIVE=0)")
REFERENCE = {"ranks_into": passes._ranks, "receipts": passes._receipts, "effects": passes._effects,
             "claims": passes._claims, "commits": passes._commits, "NATIVE": None}


@pytest.fixture
def reference(monkeypatch):
    """The checker as it runs with no compiled module."""
    def use():
        for name, f in REFERENCE.items():
            monkeypatch.setattr(passes, name, f)
    return use


def test_the_passes_are_compiled_where_a_compiler_is():
    """The README's install builds simkit._native (a fresh machine has gcc); only SIMKIT_NATIVE=0 turns it
    off. Without this, the comparisons below would skip unseen."""
    assert passes.NATIVE is not None or os.environ.get("SIMKIT_NATIVE") == "0"


small = st.integers(-3, 40)
column = st.lists(small, max_size=40)


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-2**62, 2**62) | st.integers(-5, 60), max_size=30),
       st.lists(st.integers(0, 50), max_size=20).map(sorted), st.integers(-5, 50), st.integers(0, 7))
def test_ranks_equal_the_reference(codes, positions, first, step):
    """By bisection (``step`` 0), or on the grid ``first``, ``first + step``, ... the positions then are."""
    if step:
        positions = [first + step * k for k in range(len(positions))]
    want, got = (array("q", bytes(8 * len(codes))) for _ in range(2))
    passes._ranks(want, array("q", codes), array("q", positions), first, step)
    passes.NATIVE.ranks(got, array("q", codes), array("q", positions), first, step)
    assert got == want


def _columns(draw, n, values):
    return array("q", draw(st.lists(values, min_size=n, max_size=n)))


@st.composite
def outcome_rows(draw):
    """Receipt or effect columns over a stream of ``m`` events: seqs, outcome codes of a table of kinds,
    ranks (-1: off the stream), an ``at`` already holding some outcomes."""
    n, m = draw(st.integers(0, 30)), draw(st.integers(1, 12))
    kinds = bytes(draw(st.lists(st.integers(0, 2), min_size=1, max_size=4)))
    at = draw(st.lists(st.sampled_from([-1, -1, -1, -5, 3, 40]), min_size=m, max_size=m))
    return dict(at=array("q", at), seqs=_columns(draw, n, st.integers(0, 60)),
                codes=_columns(draw, n, st.integers(0, len(kinds) - 1)),
                kinds=kinds, ranks=_columns(draw, n, st.integers(-1, m - 1)), k=draw(st.integers(0, n)),
                flag=draw(st.booleans()), workers=_columns(draw, n, st.sampled_from([0, 1, 2, -32768])),
                decided=bytearray(draw(st.lists(st.integers(0, 1), min_size=m, max_size=m))))


@native
@settings(max_examples=300, deadline=None)
@given(outcome_rows())
def test_receipts_effects_and_claims_equal_the_reference(c):
    for name, args in (("receipts", ("at", "seqs", "codes", "kinds", "ranks", "k", "flag")),
                       ("effects", ("at", "seqs", "ranks", "k", "flag"))):
        mine, theirs, values = array("q", c["at"]), array("q", c["at"]), [c[a] for a in args[1:]]
        compiled, python = getattr(passes.NATIVE, name), getattr(passes, f"_{name}")
        assert compiled(mine, *values) == python(theirs, *values) and mine == theirs, name
    for codes in (c["codes"], None):
        args = (c["workers"], -32768, codes, c["kinds"], c["ranks"], c["decided"], c["k"])
        assert passes.NATIVE.claims(*args) == passes._claims(*args)


@st.composite
def writes(draw):
    """A write log's columns (kind 0 a commit), a sorted stream's positions and each event's outcome."""
    n, m = draw(st.integers(0, 25)), draw(st.integers(0, 15))
    applied = array("q", sorted(draw(st.lists(st.integers(-1, 20), min_size=n, max_size=n)),
                                key=lambda v: v + draw(st.integers(-2, 2))))
    return (array("q", range(n)), _columns(draw, n, st.sampled_from([0, 0, 0, 1])), 0,
            _columns(draw, n, st.sampled_from([0, 0, 0, 1])), applied,
            array("h", draw(st.lists(st.sampled_from([0, 0, 1, 2, -32768]), min_size=n, max_size=n))), -32768,
            array("q", sorted(draw(st.lists(st.integers(0, 20), min_size=m, max_size=m)))),
            _columns(draw, m, st.integers(-1, 30)), draw(st.integers(0, n)),
            draw(st.one_of(st.none(), st.integers(-1, 20))), draw(st.integers(0, m)))


@native
@settings(max_examples=300, deadline=None)
@given(writes())
def test_commits_equal_the_reference(args):
    assert passes.NATIVE.commits(*args) == passes._commits(*args)


def _consumers():
    """``safe``, every shortcut, and every buggy consumer of the two freshest galleries."""
    buggy = [c for m in (round55, round58) for _n, c in inspect.getmembers(m, inspect.isclass)
             if issubclass(c, simkit.Consumer) and c.__module__ == m.__name__]
    return [simkit.resolve(s) for s in STRATEGIES] + buggy


@native
@pytest.mark.parametrize("kind", ["bundled", "corner", "sweep"])
def test_every_verdict_is_the_same_with_the_reference_passes(kind, reference):
    """The audit's cases but its wide ones (each a long stream: minutes) and its explorations (the same
    scenarios, cut short: tests/golden/explore.json holds their results)."""
    todo = [c for c in cases(1, 1) if c.kind == kind]
    runs = [simulate(case.scenario, consumer, case.seed) for case in todo for consumer in _consumers()]
    verdicts = [check(run.world).as_dict() for run in runs]
    assert any(not v["ok"] for v in verdicts)
    reference()
    assert [check(run.world).as_dict() for run in runs] == verdicts
