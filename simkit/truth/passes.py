"""The checker's whole-stream passes over typed columns of ground truth, in C where the build could compile
``simkit/_native.c`` (docs/performance.md, "the native core"); :data:`NATIVE` is that module, which
:mod:`~simkit.truth.journal` uses too.

Each pass walks its columns from row ``k``, does what the usual row needs (no event id read, no object built),
and returns where it stopped: at the end, or at the first row it leaves to its caller, whose own code judges
that row and calls it again from the next. The functions here are the reference the C must equal
(tests/truth/test_passes.py) and what runs without it; ``SIMKIT_NATIVE=0`` in the environment keeps them
in use. Columns are anything with integer items (``array``, ``bytearray``); ``at`` and ``out`` are
``array("q")``.
"""
from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from itertools import compress, count, islice, repeat
from operator import floordiv, ne, sub
from typing import Any

from simkit.model import TERMINAL

__all__ = ["ABI", "NATIVE", "ranks", "ranks_into", "receipts", "effects", "claims", "commits",
           "outcome_kinds", "ints", "code_of"]


def _from(column, start: int, stop: int | None = None):
    """Rows ``start`` to ``stop`` of a column, with no copy and no walk from its first row."""
    if not start and stop is None:
        return column
    if isinstance(column, (array, bytes, bytearray)):
        return memoryview(column)[start:stop]
    return islice(column, start, stop)


def _ranks(out, codes, positions, first: int, step: int) -> None:
    """``out[k]``: the rank of position ``codes[k]`` in the sorted ``positions``, or -1 if none holds it; by
    arithmetic if ``step`` > 0 (``positions`` is ``first``, ``first + step``, ...), else by bisection. With
    no Python call per position."""
    n = len(positions)
    if not n:
        out[:] = array("q", [-1]) * len(codes)
        return
    if step > 0:
        guess = map(floordiv, map(sub, codes, repeat(first)), repeat(step))
    else:
        guess = map(bisect_left, repeat(positions), codes)
    found = array("q", map(max, map(min, guess, repeat(n - 1)), repeat(0)))
    # a rank that lands on another position found no event
    for i in compress(range(len(codes)), map(ne, map(positions.__getitem__, found), codes)):
        found[i] = -1
    out[:] = found


def _receipts(at, seqs, codes, kinds, ranks, k: int, void: bool) -> tuple[int, int]:
    """Outcomes: each event's first terminal receipt, from row ``k`` (``kinds`` by outcome code: 0 not
    terminal, 1 terminal, 2 ``applied``, marked ``-2 - seq`` until its effect is found). Stops at a row whose
    event is off the stream or already holds an outcome, or any terminal row if ``void``. Returns (row, how
    many ``applied`` marked)."""
    waiting, k = 0, max(k, 0)                  # no row before the first (a negative k: row 0)
    for row, kind, i, seq in zip(count(k), map(kinds.__getitem__, _from(codes, k)), _from(ranks, k),
                                 _from(seqs, k)):
        if kind:
            if i < 0 or at[i] != -1 or (void and kind != 2):
                return row, waiting
            if kind == 2:
                at[i] = -2 - seq
                waiting += 1
            else:
                at[i] = seq
    return max(k, min(len(seqs), len(codes), len(ranks))), waiting


def _effects(at, seqs, ranks, k: int, stop_unranked: bool) -> tuple[int, int]:
    """Outcomes: each marked event's first effect; it holds its outcome from the later of receipt and effect.
    Skips effects off the stream unless ``stop_unranked``. Returns (row, how many found)."""
    found, k = 0, max(k, 0)
    for row, i, seq in zip(count(k), _from(ranks, k), _from(seqs, k)):
        if i < 0:
            if stop_unranked:
                return row, found
        elif at[i] < -1:
            at[i] = max(-2 - at[i], seq)
            found += 1
    return max(k, min(len(seqs), len(ranks))), found


def _claims(workers, mark: int, codes, kinds, ranks, decided, k: int) -> int:
    """Claims: the first row from ``k`` a worker wrote that may be unordered (not an ``applied`` write of an
    event of the stream whose handler decides nothing), or whose worker is kept aside (``mark``). ``codes``
    ``None``: the rows are effects (``applied``)."""
    k = max(k, 0)
    codes, kinds = (repeat(0), b"\x02") if codes is None else (_from(codes, k), kinds)
    for row, worker, kind, rank in zip(count(k), _from(workers, k), map(kinds.__getitem__, codes),
                                       _from(ranks, k)):
        if worker == mark or (worker and kind and (kind != 2 or rank < 0 or decided[rank])):
            return row
    return max(k, min(len(workers), len(ranks)))


def _commits(seqs, kinds, commit: int, cursors, applied, versions, mark: int, positions, at, i: int,
             last: int | None, hi: int) -> tuple[int, int, int | None, int]:
    """Invariant 2 and regressions over the ``commit`` writes from row ``i`` (at least 1) that keep the cursor
    and leave every newly covered event with an outcome by then; stops at any other write, or a version kept
    aside (``mark``). ``last``, ``hi``: the ``applied_position`` the last raising write left and the end of
    the range of ``positions`` it covered. Returns (row, regressions, last, hi)."""
    regressions, end, i = 0, len(positions), max(i, 1)
    hi = min(max(hi, 0), end)                  # within positions (the checker's always is)
    rows = zip(count(i), _from(kinds, i), _from(cursors, i - 1), _from(cursors, i), _from(applied, i - 1),
               _from(applied, i), _from(versions, i - 1), _from(versions, i), _from(seqs, i))
    for i, kind, b_cursor, a_cursor, b_applied, a_applied, b_version, a_version, seq in rows:
        if kind != commit or a_cursor != b_cursor or mark in (b_version, a_version):
            return i, regressions, last, hi
        if a_applied > b_applied:
            if last == b_applied:
                lo = h = hi
                while h < end and positions[h] <= a_applied:
                    h += 1
            else:
                lo = bisect_right(positions, b_applied)
                h = bisect_right(positions, a_applied, lo)
            for j in range(lo, h):
                if at[j] == -1 or at[j] > seq:
                    return i, regressions, last, hi
            last, hi = a_applied, h
        regressions += a_version < b_version or a_applied < b_applied
    return max(i, min(map(len, (seqs, kinds, cursors, applied, versions)))), regressions, last, hi


ranks_into, receipts, effects, claims, commits = _ranks, _receipts, _effects, _claims, _commits
#: the interface of simkit/_native.c these functions call (its ``ABI``): a module built from other sources, a
#: stale build left beside newer code, lacks it or holds another, and is not used (the reference runs)
ABI = 5
#: the compiled module in use, or ``None``
NATIVE: Any = None
if os.environ.get("SIMKIT_NATIVE", "1") != "0":
    try:
        from simkit import _native as NATIVE
    except ImportError:                          # no compiler when installed: the reference runs
        pass
    if NATIVE is not None and getattr(NATIVE, "ABI", None) != ABI:
        NATIVE = None
    if NATIVE is not None:
        ranks_into, receipts, effects, claims, commits = (NATIVE.ranks, NATIVE.receipts, NATIVE.effects,
                                                          NATIVE.claims, NATIVE.commits)


def ranks(codes, positions, grid: tuple[int, int] | None) -> array:
    """Per position of ``codes``, its rank in the sorted ``positions`` (an ``array("q")``), or -1; ``grid``:
    ``(first, step)`` if ``positions`` are evenly spaced (:func:`~simkit.truth.columns.evenly_spaced`)."""
    out = array("q", [-1]) * len(codes)
    first, step = grid or (0, 0)
    (ranks_into if isinstance(positions, array) else _ranks)(out, codes, positions, first, step)
    return out


def outcome_kinds(outcomes) -> bytes:
    """By code of a :class:`~simkit.truth.columns.Codes` column of outcomes, the ``kinds`` of
    :func:`receipts` and :func:`claims`: 0 not terminal, 1 terminal, 2 ``applied``."""
    return bytes(2 if v == "applied" else v in TERMINAL for v in outcomes.table)


def ints(column) -> tuple:
    """A column of integers as a pass takes it: ``(values, mark)``, ``mark`` the value of a row an
    :class:`~simkit.truth.columns.Ints` keeps aside (any other column: a value none holds)."""
    mark = getattr(column, "mark", None)
    return (column.values, mark) if mark is not None else (column, -1 << 63)


def code_of(column, value) -> int:
    """The code of ``value`` in a :class:`~simkit.truth.columns.Codes` column, or -1 if no row holds it."""
    return next((c for c, v in enumerate(column.table) if v == value and type(v) is type(value)), -1)
