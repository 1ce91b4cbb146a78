"""The world's quick request path in C (``simkit._native.quick``, docs/performance.md, "the native core, stage
2"): the usual requests, a page's ``Lookup``, a ``Handle`` of an ``ok`` event and a journaled ``Commit``,
executed without a Python frame where the C stands for the world's own ``Driver.lookup``,
:meth:`World.handle` and :meth:`World._commit_at_once`, which stay its reference (``SIMKIT_NATIVE=0``;
tests/world/test_quick.py)."""
from __future__ import annotations

from collections.abc import Callable

import simpy

from simkit.model import TERMINAL, Checkpoint
from simkit.ops import WELL_FORMED, Commit, Handle, Lookup
from simkit.procedure.driver import Driver
from simkit.procedure.strategies import MALFORMED_SIGNS, refuse_malformed
from simkit.truth.columns import IdMap
from simkit.truth.passes import NATIVE

from .sink import Sink

__all__ = ["quick_path", "failed"]

if NATIVE is not None:
    NATIVE.world_setup(Handle, Commit, Lookup, WELL_FORMED[Handle], WELL_FORMED[Commit], WELL_FORMED[Lookup],
                       TERMINAL, Checkpoint, IdMap)


def quick_path(world, handle: Callable, commit: Callable, *methods: Callable) -> Callable | None:
    """``simkit._native.quick`` where ``world`` executes ``Handle`` with ``handle``, ``Commit`` with
    ``commit`` and ``Lookup`` with ``Driver.lookup``, its class keeps ``methods`` (those ``commit`` calls,
    which the C stands for too), on the parts the C reads (a journal, SimPy's own environment, the world's
    sink, the memory store and its receipts), else ``None``."""
    at_once, cls = world._at_once, type(world)
    ok = (NATIVE is not None and world._journal is not None     # (a journal: the memory store, its Receipts)
          and type(world.env) is simpy.Environment and type(world.sink) is Sink
          and at_once.get(Handle) is handle and at_once.get(Commit) is commit
          and at_once.get(Lookup) is Driver.lookup and all(getattr(cls, f.__name__) is f for f in methods))
    return NATIVE.quick if ok else None


def failed(strategy, worker: int, op, exc: BaseException):
    """``op``, which the quick path began and could not finish, or whose well-formedness test raised (a
    signal's exception), raised ``exc``: what the at-once path does with it (the request is blamed if it is
    malformed, else ``exc`` is raised again)."""
    try:
        raise exc
    except MALFORMED_SIGNS:
        refuse_malformed(strategy, op, worker)
        raise
