"""Pausing Python's cyclic garbage collector while a run builds its logs and is judged (docs/performance.md,
"No cyclic GC during a run").

A run allocates millions of small acyclic objects (log tuples, trace values); each of them counts towards the
collector's thresholds, and every full collection walks all of them again, so with the collector on, time
grows faster than the run. Reference counting frees them either way; the few cycles a run makes (a world and
its bound handlers) are collected once the collector is back on.

One pause per run, at its outermost place: :func:`~simkit.runner.simulate`,
:func:`~simkit.tools.schedules.run_schedule`, explore's forking run (:mod:`simkit.tools.forked`, whose
children keep it), the benchmark's steps and ``simkit live``'s judging. The world's ``run()`` and the checker
do not pause it themselves; a pause entered inside another is refused, so the nesting cannot come back unseen.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["REENTERED", "paused", "is_paused"]

#: Why a pause inside another of the same thread is refused: a run started inside a running one (a consumer's
#: hook calling ``simulate``), whatever started it; the consumer's error line adds the hook it came from
REENTERED = ("simulate() was called from inside a running simulation (one run at a time in a thread, one "
             "pause per run: a consumer's hook cannot start another; run it before or after this one)")

_lock = threading.Lock()
_holders = 0  # paused() blocks running now, one per thread at most (a dask or thread pool's runs)
_was_on = False                 # was the collector on when the first of them began?
_mine = threading.local()       # is this thread inside a paused() block?


def is_paused() -> bool:
    """Is a :func:`paused` block running (in this process, or in the process it was forked from)?"""
    return _holders > 0


@contextmanager
def paused():
    """Turn the cyclic collector off inside the block, and back on after it if it was on before. Runs in other
    threads each hold their own block (the collector is process-wide: it stays off until the last one ends).

    Raises:
        RuntimeError: inside another :func:`paused` block of the same thread (one pause per run).
    """
    global _holders, _was_on
    if getattr(_mine, "held", False):
        raise RuntimeError(REENTERED)
    with _lock:
        if _holders == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _holders += 1
    _mine.held = True
    try:
        yield
    finally:
        _mine.held = False
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_on:
                gc.enable()
