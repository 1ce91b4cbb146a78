"""The world's quick request path in C (``simkit._native.quick``, docs/performance.md, "the native core, stage
2"): the usual requests, a page's ``Lookup``, a ``Handle`` of an ``ok`` event and a journaled ``Commit``,
executed without a Python frame where the C stands for the world's own ``Driver.lookup``,
:meth:`World.handle` and :meth:`World._commit_at_once`, which stay its reference (``SIMKIT_NATIVE=0``;
tests/world/test_quick.py)."""
from __future__ import annotations

from collections.abc import Callable

import simpy

from simkit import model, ops
from simkit.model import BEHAVIORS, OUTCOMES, TERMINAL, Checkpoint, Event
from simkit.ops import MAX_FIELD, WELL_FORMED, Commit, Handle, Lookup
from simkit.procedure.driver import Driver
from simkit.procedure.strategies import MALFORMED_SIGNS, refuse_malformed
from simkit.truth.clock import Clock
from simkit.truth.columns import Codes, IdMap
from simkit.truth.passes import NATIVE

from .sink import Sink

__all__ = ["quick_path", "failed", "setup"]

#: each test of a request's rules the C knows (``simkit.ops``' own words for it) -> its number there and
#: argument (simkit/_native_world.c, ``keeps``); a request with a test not here is the Python test's
_TESTS = {ops._EXACT["str"]: (1, None), ops._EXACT["int"]: (2, None), ops._ADMITS["int"]: (3, MAX_FIELD),
          ops._ADMITS["bool"]: (4, None), ops._ADMITS["Event"]: (5, Event),
          ops._ALSO[Commit][1]: (6, OUTCOMES), ops._ALSO[Handle][1]: (7, BEHAVIORS)}


def _rules(cls: type) -> tuple | None:
    """Request ``cls``'s well-formedness rules as the C tests them: (field's path, test, argument) each, or
    ``None`` if one is a test the C does not know."""
    rules = [(tuple(name.split(".")), test) for name, test, _ in ops._rules(cls)]
    if not all(test in _TESTS for _, test in rules):
        return None
    return tuple((path, *_TESTS[test]) for path, test in rules)


def setup() -> None:
    """Give the C its constants: the request types and their tests, and simkit's records and other slotted
    types it reads by offset as they are now (a class changed later is read by getattr again)."""
    if NATIVE is not None:
        well = WELL_FORMED
        records = tuple((cls, *model._RECORDS[cls]) for cls in (Commit, Handle, Lookup, Event, Checkpoint))
        NATIVE.world_setup(Handle, Commit, Lookup, well[Handle], well[Commit], well[Lookup], TERMINAL,
                           Checkpoint, IdMap, records, (IdMap, Codes, Clock), _rules(Handle), _rules(Commit))


setup()


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
