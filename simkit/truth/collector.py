"""Pausing Python's cyclic garbage collector while a run builds its logs.

A run allocates millions of small acyclic objects (log tuples, trace values); each of them counts towards the
collector's thresholds, and every full collection walks all of them again, so with the collector on, time
grows faster than the run. Reference counting frees them either way; the few cycles a run makes (a world and
its bound handlers) are collected once the collector is back on.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

__all__ = ["paused"]


@contextmanager
def paused():
    """Turn the cyclic collector off inside the block, and back on after it if it was on before."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
