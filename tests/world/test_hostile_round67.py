"""Round 67: the native world (simkit/_native_world.c, simkit/world/quick.py) tried as a hostile consumer
and a memory-safety reviewer would. What was found:

1. A ``Lookup`` whose events are a list (well-formed: ``ops._ADMITS`` admits a tuple or a list) raised
   ``TypeError: lookup: a tuple of events, and dicts aside, expected`` from the quick path, a traceback out of
   ``simkit audit`` for a correct consumer, where ``SIMKIT_NATIVE=0`` passed it.
2. A consumer whose own ``run`` raised ``StopIteration`` (a ``RuntimeError`` raised at the frame that sent to
   it) was told ``... in _worker (simulation.py:205)``, simkit's frame for the consumer's, and another line
   of it with the quick path (``:208``): the error differed with ``SIMKIT_NATIVE=0`` and without.
3. A signal's exception (Ctrl-C's ``Interrupted``, SIGTERM's ``Terminated``, the wall-clock guard's
   ``TimedOut``) raised while the quick path asked a request's well-formedness test was cleared, and the run
   went on: the Python raises it from the same test.
4. A request refused by a rule of its own (``ops._ALSO``) for a value of a ``str`` subclass was told
   ``Handle.event.behavior is 'ok', not one of ok, ignore, ...``: the value's class is said now.
5. A ``World`` subclass of its own ``_journaled`` or ``_place`` (the methods ``World._commit_at_once`` calls)
   still had the quick path, which never called the one and called the other only when its cursor changed.
"""
from __future__ import annotations

import sys

import pytest

from simkit import Consumer
from simkit.errors import ConsumerError, Interrupted
from simkit.judge.checker import check
from simkit.model import Event
from simkit.ops import WELL_FORMED, Commit, Handle, Lookup, Wait, malformed
from simkit.procedure.strategies import STRATEGIES
from simkit.scenario.read import parse
from simkit.tools.bench import generated
from simkit.truth import passes
from simkit.truth.collector import paused
from simkit.world.quick import setup as quick_setup
from simkit.world.simulation import World

native = pytest.mark.skipif(passes.NATIVE is None, reason="simkit._native was not built (SIMKIT_NATIVE=0)")


def _run(consumer: type[Consumer], quick: bool, n: int = 30) -> tuple:
    """The run's receipts, checkpoint, clock, trace and verdict, with the quick path or without it."""
    w = World(parse(generated(n)), consumer, 0)
    if not quick:
        w._quick = None
    with paused():
        w.run()
    return (dict(w.store.receipts.items()), w.store.checkpoint, w.clock.seq, w.clock.now, w.trace.digest(),
            check(w).as_dict())


def _rewritten(name: str, rewrite) -> type[Consumer]:
    """``safe``, each request it yields passed through ``rewrite`` first."""
    def run(self):
        inner, result = Consumer.run(self), None
        while True:
            try:
                request = inner.send(result)
            except StopIteration:
                return
            result = yield rewrite(request)
    return type(name, (Consumer,), {"run": run, "__module__": __name__})


ListLookup = _rewritten("ListLookup", lambda r: Lookup(list(r.events)) if type(r) is Lookup else r)


@pytest.mark.parametrize("quick", [pytest.param(True, marks=native), False])
def test_a_lookup_of_a_list_of_events_is_answered_as_a_tuple_is(quick):
    got = _run(ListLookup, quick)
    assert got[-1]["ok"] is True
    assert got == _run(Consumer, quick)


class _RunStops(Consumer):
    """Its own run asks ``next()`` of an empty iterator after a page."""

    def run(self):
        yield from self.attempt()
        return next(iter(()))


@pytest.mark.parametrize("quick", [pytest.param(True, marks=native), False])
def test_a_stop_iteration_of_the_consumers_own_run_is_placed_in_its_code(quick):
    with pytest.raises(ConsumerError) as raised:
        _run(_RunStops, quick)
    line = _RunStops.run.__code__.co_firstlineno + 2
    assert str(raised.value).endswith(f"raised RuntimeError: generator raised StopIteration in run "
                                      f"(test_hostile_round67.py:{line})")


@pytest.mark.parametrize("request_type", [Lookup, Handle, Commit])
@pytest.mark.parametrize("quick", [pytest.param(True, marks=native), False])
def test_a_signal_raised_in_a_well_formedness_test_ends_the_run(quick, request_type, monkeypatch):
    """The signal is made to arrive in the test by a profile function that raises where the test is called.
    (A signal arrives only where Python code runs: where the C answers a request's rules itself, no Python
    test is called. Here the request's class is changed, so the C leaves its rules to the Python test.)"""
    test, fired = WELL_FORMED[request_type].__code__, []
    monkeypatch.setattr(request_type, "changed", True, raising=False)

    def arrives(frame, event, arg):
        if event == "call" and frame.f_code is test and not fired:
            fired.append(True)
            raise Interrupted()

    w = World(parse(generated(30)), STRATEGIES["safe"], 0)
    assert (w._quick is not None) == (passes.NATIVE is not None)
    if not quick:
        w._quick = None
    sys.setprofile(arrives)
    try:
        with paused(), pytest.raises(Interrupted):
            w.run()
    finally:
        sys.setprofile(None)
        monkeypatch.undo()
        quick_setup()
    assert fired and not w.completed


class _Str(str):
    """A ``str`` subclass: its repr is its str's."""


def test_a_value_of_a_str_subclass_is_told_with_its_class():
    assert malformed(Handle(Event("e1", 1, _Str("ok")))) == (
        "Handle.event.behavior is 'ok' (_Str), not one of ok, ignore, poison, transient, review, hold, "
        "dead_letter")
    assert malformed(Wait("zzz")) == "Wait.reason is 'zzz', not one of caught_up, blocked"


@pytest.mark.parametrize("name", ["_journaled", "_place"])
def test_a_world_of_its_own_commit_methods_is_called_as_in_python(name):
    calls = []

    def counted(self, *args):
        calls.append(name)
        return getattr(World, name)(self, *args)

    counting = type("Counting", (World,), {name: counted})
    got = []
    for quick in (True, False):
        calls.clear()
        w = counting(parse(generated(30)), STRATEGIES["safe"], 0)
        if not quick:
            w._quick = None
        with paused():
            w.run()
        got.append(len(calls))
    assert got[0] == got[1] >= 30
