"""Round 64: the native core (simkit/_native.c) tried as a hostile user and a memory-safety reviewer would.

What was found on main (98587b1), each a test here:

- a pass called from a negative row (``receipts``, ``effects``, ``claims`` with ``k < 0``) read before its
  columns' first row: ``k = -2**40`` was a segmentation fault; the reference reads from row 0 (now both do);
- a ``Journal`` whose log condition names an argument past the row's 13 (``(100000000, 0)``) was built, and
  its first call read past the row's arguments: a segmentation fault; now a ValueError when it is built;
- a ``Journal`` table whose log, condition or column is not a tuple was a SystemError ("new style getargs
  format but argument is not a tuple"); now a TypeError naming the part;
- a stale build of the module beside newer code (one compiled from an older ``_native.c``, with no
  ``Journal``) was imported and used: every run ended in ``AttributeError: module 'simkit._native' has no
  attribute 'Journal'``; now a module whose ``ABI`` is not the one ``passes.ABI`` names is not used, and the
  reference runs;
- ``claims`` and ``commits`` given a ``mark`` or a ``last`` past 64 bits raised OverflowError where the
  reference answers (no row holds such a value);
- ``commits`` given ``hi`` past the end of ``positions`` answered another ``hi`` than the reference (the C
  clamped it, the reference did not: now both do);
- ``receipts`` at an ``applied`` receipt of sequence number 2**63 - 1 overflowed ``-2 - seq`` (undefined
  behaviour: a positive mark, the event held as done) where the reference raises; now the row is left to
  the caller, whose Python raises as the reference does;
- a pass given an unsigned 64-bit ``at`` or ``out`` (``array("Q")``) wrote to it: ``receipts`` read 2**64 - 1
  as -1 (no outcome) and overwrote it where the reference stops, ``ranks`` wrote -1 as 2**64 - 1; now a
  TypeError (``at`` and ``out`` are ``array("q")``, passes.py);
- ``ranks`` given a ``first`` or ``step`` past 64 bits (two positions 2**64 - 1 apart) raised OverflowError
  where the reference answers; such a grid is ranked by bisection, the same ranks;
- ``help(simkit._native)`` named its reference ``simkit.judge.kernels``, a module that does not exist (the
  draft's name); it names ``simkit.truth.passes`` and ``simkit.truth.journal``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

import simkit
from simkit.truth import passes

native = pytest.mark.skipif(passes.NATIVE is None, reason="simkit._native was not built (SIMKIT_NATIVE=0)")
ROOT = Path(simkit.__file__).resolve().parent.parent


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` run by a fresh interpreter on this tree: a crash there is a failed test, not a dead suite."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def _q(*values: int) -> array:
    return array("q", values)


def _receipts_args(k: int) -> tuple:
    return (_q(-1, -1), _q(5, 6), _q(1, 1), b"\x00\x01", _q(0, 1), k, False)


def test_a_pass_from_a_negative_row_starts_at_row_zero():
    assert passes._receipts(*_receipts_args(-3)) == passes._receipts(*_receipts_args(0)) == (2, 0)
    assert passes._effects(_q(-7, -1), _q(5, 6), _q(0, 1), -3, False) == (2, 1)
    assert passes._claims(_q(1, 1), -1 << 63, _q(1, 1), b"\x00\x02", _q(0, 1), b"\x00\x00", -3) == 2
    if passes.NATIVE is None:
        return
    done = _python("from array import array as a\nfrom simkit import _native as n\nq = lambda *v: a('q', v)\n"
                   "at = q(-1, -1)\n"
                   "print(n.receipts(at, q(5, 6), q(1, 1), b'\\0\\1', q(0, 1), -2**40, False), at)\n"
                   "at = q(-7, -1)\nprint(n.effects(at, q(5, 6), q(0, 1), -2**40, False), at)\n"
                   "print(n.claims(q(1, 1), -1 << 63, q(1, 1), b'\\0\\2', q(0, 1), b'\\0\\0', -2**40))")
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split("\n")[:3] == ["(2, 0) array('q', [5, 6])", "(2, 1) array('q', [5, -1])", "2"]


@native
def test_a_journal_condition_past_the_row_is_refused_when_built():
    done = _python("from array import array\nfrom simkit import _native as n\n"
                   "try:\n    j = n.Journal((((100000000, 0), ((array('q'), 0, 0),)),), 'e')\n"
                   "except ValueError as e:\n    print('refused:', e)\n"
                   "else:\n    j(*range(13))\n    print('ran')")
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.startswith("refused: argument out of range")


@native
@pytest.mark.parametrize("logs", [(1,), ((1, ()),), ((None, (1,)),)], ids=["log", "condition", "column"])
def test_a_journal_table_of_the_wrong_shape_is_a_type_error(logs):
    with pytest.raises(TypeError, match="Journal: .*a tuple expected, not int"):
        passes.NATIVE.Journal(logs, "e")


def test_a_stale_build_beside_newer_code_is_not_used():
    """A module from other sources (here: the passes of the first build, no ``Journal``, no ``ABI``)."""
    done = _python("import sys, types\nfake = types.ModuleType('simkit._native')\n"
                   "def stale(*a):\n    raise AssertionError('the stale build ran')\n"
                   "for name in ('ranks', 'receipts', 'effects', 'claims', 'commits'):\n"
                   "    setattr(fake, name, stale)\nsys.modules['simkit._native'] = fake\n"
                   "import simkit\nfrom simkit.truth import passes\n"
                   "print(passes.NATIVE, simkit.simulate(simkit.load('late_retry')).verdict.ok)")
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.split() == ["None", "True"]


@native
def test_marks_and_lasts_past_64_bits_are_held_by_no_row():
    huge = 1 << 70
    args = (_q(1, 1, 1), huge, _q(1, 1, 1), b"\x00\x02", _q(0, 1, 2), b"\x00\x00\x00", 0)
    assert passes.NATIVE.claims(*args) == passes._claims(*args) == 3
    for mark, last in ((huge, None), (-1 << 63, huge), (-huge, -huge)):
        args = (_q(0, 1, 2), _q(0, 0, 0), 0, _q(0, 0, 0), _q(0, 1, 2), _q(0, 0, 0), mark, _q(1, 2), _q(0, 1),
                1, last, 0)
        assert passes.NATIVE.commits(*args) == passes._commits(*args) == (3, 0, 2, 2)
    args = (_q(0, 1), _q(1, 1), 0, _q(0, 0), _q(0, 0), _q(0, 0), 7, _q(1,), _q(0,), 1, huge, 0)
    assert passes.NATIVE.commits(*args) == passes._commits(*args) == (1, 0, huge, 0)


@pytest.mark.parametrize("hi", [-2, 0, 2, 4, 10**6])
def test_commits_from_a_hi_past_positions_answer_as_the_reference(hi):
    args = (_q(0, 1, 2), _q(0, 0, 1), 0, _q(0, 1, 0), _q(5, 10, 11), _q(1, 0, 2), -1 << 63, _q(0, 1, 5, 8),
            _q(0, 5, 1, 2), 1, None, hi)
    assert passes._commits(*args) == (1, 0, None, min(max(hi, 0), 4))
    if passes.NATIVE is not None:
        assert passes.NATIVE.commits(*args) == passes._commits(*args)


@native
def test_an_applied_receipt_at_the_last_sequence_number_is_left_to_python():
    top = (1 << 63) - 1
    at, ref = _q(-1), _q(-1)
    with pytest.raises(OverflowError):
        passes._receipts(ref, _q(top), _q(1), b"\x00\x02", _q(0), 0, False)
    assert passes.NATIVE.receipts(at, _q(top), _q(1), b"\x00\x02", _q(0), 0, False) == (0, 0)
    assert at == _q(-1)


@native
def test_the_modules_docstring_names_its_reference_modules():
    import importlib
    names = [w.rstrip(".,") for w in passes.NATIVE.__doc__.split() if w.startswith("simkit.")]
    assert names == ["simkit.truth.passes", "simkit.truth.journal", "simkit.world.simulation"]
    for name in names:
        importlib.import_module(name)


@native
def test_a_pass_writes_only_to_a_signed_column():
    """``at`` and ``out`` are ``array("q")``: -1 (no outcome) in an unsigned one is 2**64 - 1, which the C
    read as -1 and overwrote where the reference stops; ``ranks`` wrote -1 there as 2**64 - 1."""
    ref = array("Q", [2**64 - 1])
    assert passes._receipts(ref, _q(5), _q(1), b"\x00\x01", _q(0), 0, False) == (0, 0)
    for call in (lambda at: passes.NATIVE.receipts(at, _q(5), _q(1), b"\x00\x01", _q(0), 0, False),
                 lambda at: passes.NATIVE.effects(at, _q(5), _q(0), 0, False),
                 lambda at: passes.NATIVE.ranks(at, _q(7), _q(8), 0, 0),
                 lambda at: passes.NATIVE.commits(_q(0, 1), _q(0, 0), 0, _q(0, 0), _q(0, 1), _q(0, 0), -1,
                                                  _q(1), at, 1, None, 0)):
        at = array("Q", [2**64 - 1])
        with pytest.raises(TypeError, match="signed 64-bit"):
            call(at)
        assert at == array("Q", [2**64 - 1])


GRIDS = [(-1 << 63, (1 << 64) - 1), (0, 1 << 64), (-1 << 64, 1), (0, -1 << 70)]


@native
@pytest.mark.parametrize("first, step", GRIDS)
def test_a_grid_past_64_bits_ranks_as_the_reference(first, step):
    """``ranks`` with ``first`` or ``step`` past int64 (positions 2**64 - 1 apart) raised OverflowError."""
    positions = _q(-1 << 63, (1 << 63) - 1) if step == (1 << 64) - 1 else _q(0)
    codes = _q((1 << 63) - 1, -1 << 63, 0, 5)
    ref, out = array("q", [0]) * 4, array("q", [0]) * 4
    passes._ranks(ref, codes, positions, first, step)
    passes.NATIVE.ranks(out, codes, positions, first, step)
    assert out == ref
