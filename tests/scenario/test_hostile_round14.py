"""Hostile input, fourteenth round (a fresh tester): the Python library as a notebook user calls it, plugin
consumers written to fool the checker, and figures of odd runs. A consumer defined in a function or a notebook
cell that keeps its memory in a class attribute through a crash; a Scenario changed after ``simkit.load`` into
what no scenario file says, and ``explore``, ``shrink`` or ``sweep`` given a name; a swimlane up to a moment
before its run. Each: the verdict the same consumer gets from a file, or one line naming the parameter (a
:class:`simkit.SimkitError`, or the module's ``ValueError``), never a traceback from deep inside.
"""
from __future__ import annotations

import copy
import math

import pytest

import simkit
from simkit.model import Initial, RandomFaults
from simkit.ops import LOST, Commit, Effect
from simkit.tools.explore import explore
from simkit.tools.shrink import shrink
from simkit.tools.sweep import sweep


# -- 1. a consumer with no module body to run again keeps a class attribute through a crash -----------------
def _effect_remembered():
    """Made in a function, as in a notebook cell: the class cannot be taken from its module afresh."""

    class EffectRemembered(simkit.Consumer):
        """Runs the effect on its own and keeps the ids whose effect ran in a set on the class, so that the
        receipt's retry after a crash skips the effect (in a real process the set is gone: it runs twice)."""

        done: set[str] = set()

        def apply(self, event, applied_position):
            if self.contract.external_sink:
                return (yield from super().apply(event, applied_position))
            if event.id not in self.done:
                if (yield Effect(event)) is LOST:
                    return LOST
                self.done.add(event.id)
            return (yield Commit(event, "applied", applied_position))

    return EffectRemembered


def test_a_class_attribute_of_a_consumer_made_in_a_function_is_gone_after_a_crash():
    """``retry_walkthrough`` crashes worker 1 after e107's effect, before its receipt: the next life runs the
    effect again, and the run is NOT ok (``duplicated: e107``), for this class from a file. Made in a function
    (or a notebook cell: no module body to run again), its lives shared the class's set and the run was ok:
    docs/verdict.md promises that "a class attribute ... from an earlier life, or an earlier run, is gone" for
    "a class passed to simulate". The set also outlived the run, so a second run of the same class differed.
    Now each life gets a subclass holding its own copy of the class attributes."""
    cls = _effect_remembered()
    scenario = simkit.load("retry_walkthrough")
    first = simkit.simulate(scenario, cls)
    assert not first.verdict.ok and first.verdict.duplicated == ["e107"], first.verdict
    assert first.strategy == "EffectRemembered"
    assert simkit.simulate(scenario, cls).verdict == first.verdict
    assert cls.done == set()                # the class as the caller made it, untouched


# -- 2. a Scenario changed after simkit.load is checked as its file would be ---------------------------------
def _changed(name: str, **fields) -> simkit.Scenario:
    sc = copy.deepcopy(simkit.load(name))
    for key, value in fields.items():
        target, _, attr = key.rpartition("__")
        setattr(getattr(sc, target) if target else sc, attr, value)
    return sc


@pytest.mark.parametrize("name, fields, said", [
    ("retry_walkthrough", {"workers": 2.0}, "workers expected int, got float 2.0"),
    ("retry_walkthrough", {"workers": 0}, "workers must be at least 1, got 0"),
    ("retry_walkthrough", {"sink": "bogus"}, "sink 'bogus' is not one of"),
    ("retry_walkthrough", {"timing": None}, "timing expected table, got NoneType None"),
    ("retry_walkthrough", {"timing__fetch_latency": math.nan}, "timing.fetch_latency expected a number"),
    ("retry_walkthrough", {"timing__backoff": "5"}, "timing.backoff expected float, got str '5'"),
    ("retry_walkthrough", {"pages": ("C1",)}, "pages[0] expected a table"),
    ("retry_walkthrough", {"pages": None}, "pages give exactly one of"),
    ("retry_walkthrough", {"initial": None}, "initial expected table"),
    ("retry_walkthrough", {"initial": Initial(applied_position=-5)},
     "initial.applied_position must be at least 0"),
    ("retry_walkthrough", {"faults": ({"kind": "crash"},)}, "faults[0].point missing"),
    ("default", {"random_faults": RandomFaults(crash=2.0)}, "random_faults.crash must be between 0 and 1"),
    ("default", {"generate": {"bogus": 1}}, "generate.bogus unknown key"),
    ("default", {"generate": {"events": 10**12}}, "generate.events must be at most 1000000"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_a_scenario_changed_after_loading_is_one_line_naming_its_field(name, fields, said):
    """``simkit.simulate`` read a Scenario's fields as ``simkit.load`` left them: a notebook that changed one
    got a TypeError, KeyError, AttributeError or AssertionError from deep in the world (``workers = 2.0``,
    ``timing = None``, a page that is a string, ``random_faults = None``), a run of nonsense judged as if it
    were a scenario (``workers = 0`` NOT ok, ``sink = "bogus"`` ok, ``time_limit = nan``), or a stream of
    10**12 events built until memory ran out. Now the scenario is checked as its file would be: one line,
    ``scenario NAME: KEY PROBLEM``, a ScenarioError whose ``param`` is ``scenario``."""
    with pytest.raises(simkit.ScenarioError) as caught:
        simkit.simulate(_changed(name, **fields))
    assert caught.value.param == "scenario"
    message = str(caught.value)
    assert message.startswith(f"scenario '{name}': ") and said in message and "\n" not in message, message


def test_a_scenario_changed_into_another_valid_one_runs_as_changed():
    """A guard: a change a file could make runs (two workers, no backoff)."""
    sc = _changed("retry_walkthrough", workers=2, timing__backoff=0.0)
    assert simkit.simulate(sc).verdict.ok


CALLS = [lambda sc: explore(sc, max_crashes=1), lambda sc: shrink(sc, "in_memory_quarantine"),
         lambda sc: sweep(sc, seeds=1, jobs=1)]


@pytest.mark.parametrize("call", CALLS, ids=["explore", "shrink", "sweep"])
@pytest.mark.parametrize("scenario", ["retry_walkthrough", None], ids=["a name", "None"])
def test_explore_shrink_and_sweep_of_no_scenario_are_one_line(call, scenario):
    """``explore("retry_walkthrough")`` was a TypeError from ``dataclasses.replace``, ``shrink`` and ``sweep``
    AttributeErrors (``'str' object has no attribute 'seed'``): now ``simulate``'s line."""
    with pytest.raises(simkit.SimkitError, match=r"^scenario .*: is no Scenario \(simkit.load") as caught:
        call(scenario)
    assert caught.value.param == "scenario"


@pytest.mark.parametrize("call", CALLS, ids=["explore", "shrink", "sweep"])
def test_explore_shrink_and_sweep_check_a_changed_scenario(call):
    with pytest.raises(simkit.ScenarioError, match=r"^scenario 'retry_walkthrough': timing expected table"):
        call(_changed("retry_walkthrough", timing=None))


# -- 3. a swimlane up to a moment before the run's first row, or up to NaN ---------------------------------
@pytest.mark.parametrize("until", [-5, -0.5])
def test_a_swimlane_until_before_the_first_row_draws_empty_lanes(ax, until):
    """``swimlane(ax, run, until=-5)`` selected no row, took the span of no times (NaN) and raised
    matplotlib's ``ValueError: Axis limits cannot be NaN or Inf``: now it draws the lanes, empty."""
    from simkit.viz.swimlane import swimlane
    swimlane(ax, simkit.simulate(simkit.load("retry_walkthrough")), until=until)
    assert ax.get_xlim()[1] > 0


@pytest.mark.parametrize("until", [math.nan, "5"])
def test_a_swimlane_until_no_number_is_one_line_naming_until(ax, until):
    from simkit.viz.swimlane import swimlane
    with pytest.raises(ValueError, match=r"^until .*: must be a number of simulated time"):
        swimlane(ax, simkit.simulate(simkit.load("retry_walkthrough")), until=until)
