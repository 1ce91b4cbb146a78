"""Pausing Python's cyclic garbage collector while a run builds its logs and is judged (docs/performance.md, "No
cyclic GC during a run").

A run allocates millions of small acyclic objects (log tuples, trace values); each of them counts towards the
collector's thresholds, and every full collection walks all of them again, so with the collector on, time
grows faster than the run. Reference counting frees them either way; the few cycles a run makes (a world and
its bound handlers) are collected once the collector is back on.

One pause per run, at its outermost place: :func:`~simkit.runner.simulate`,
:func:`~simkit.tools.schedules.run_schedule`, explore's forking run (:mod:`simkit.tools.forked`, whose children
keep it), the benchmark's steps and ``simkit live``'s judging. The world's ``run()`` and the checker do not pause
it themselves; a pause entered inside another is refused, so the nesting cannot come back unseen.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

__all__ = ["paused", "is_paused"]

_held = False


def is_paused() -> bool:
    """Is a :func:`paused` block running (in this process, or in the process it was forked from)?"""
    return _held


@contextmanager
def paused():
    """Turn the cyclic collector off inside the block, and back on after it if it was on before.

    Raises:
        RuntimeError: inside another :func:`paused` block (one pause per run).
    """
    global _held
    if _held:
        raise RuntimeError("the garbage collector is already paused: one pause per run, at its outermost place "
                           "(simkit.truth.collector)")
    was_on = gc.isenabled()
    gc.disable()
    _held = True
    try:
        yield
    finally:
        _held = False
        if was_on:
            gc.enable()
