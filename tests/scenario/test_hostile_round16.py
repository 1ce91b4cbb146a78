"""Hostile input, sixteenth round (a fresh tester): a Scenario edited in place between two ``simulate`` calls
into a value equal to the one checked but of another type (``True == 1 == 1.0``), and the counts of
``simkit.audit`` and ``sweep`` given as strings, floats, ``None`` or booleans. Buggy consumers (a commit
without ``with_effect``, an ``ignore`` committed as ``quarantined``, an ``apply`` as ``ignored``, forged event
positions over ``exec:``), NaN, Infinity, ``-0`` and 87-bit integers in request lines, odd scenario TOML and
service bodies were tried and held. Each: one line naming the parameter, file, key or flag and the problem (a
:class:`simkit.SimkitError`, or exit status 2 and no traceback), or the verdict the same run earns.
"""
from __future__ import annotations

import pytest

import simkit


# -- 1. a Scenario edited, after a run, into an equal value of another type -------------------------------
def _edit(sc, path: str, value) -> None:
    *parents, last = path.split(".")
    target = sc
    for name in parents:
        target = getattr(target, name) if not isinstance(target, (dict, tuple)) else target[
            int(name) if isinstance(target, tuple) else name]
    if isinstance(target, dict):
        target[last] = value
    else:
        setattr(target, last, value)


@pytest.mark.parametrize("path, value, problem", [
    ("workers", True, "workers expected int, got bool True"),
    ("backfills", 0, "backfills expected bool, got int 0"),
    ("initial.applied_position", 105.0, "initial.applied_position expected int, got float 105.0"),
    ("pages.0.positions", (104, 106.0, 107), "pages[0].positions expected integers, got 106.0"),
])
def test_an_edit_into_an_equal_value_of_another_type_is_refused_after_a_run_too(path, value, problem):
    """``simulate`` checks a Scenario as its file would be read (round 14), once per scenario while its
    fields stay the same (the review before this round). "The same" was ``==``: after one run, ``workers =
    True``, ``backfills = 0``, ``applied_position = 105.0`` or a position ``106.0`` equal the ``1``,
    ``False``, ``105`` and ``106`` checked before, so the edited scenario ran, where the same edit of a fresh
    ``simkit.load`` is refused. Now the check is kept only while every field is equal type for type: the
    same one line either way."""
    answers = []
    for first_run in (False, True):
        sc = simkit.load("retry_walkthrough")
        if first_run:
            assert simkit.simulate(sc, "safe").verdict.ok
        _edit(sc, path, value)
        with pytest.raises(simkit.SimkitError) as refused:
            simkit.simulate(sc, "safe")
        answers.append(str(refused.value))
    assert answers[0] == answers[1] == f"scenario 'retry_walkthrough': {problem}"


def test_an_edit_undone_with_the_same_types_is_read_once_again():
    """The memo still holds: values equal and of the same types (a deep copy) are the scenario checked."""
    import copy

    from simkit.world.memo import same
    sc = simkit.load("gauntlet")
    twin = copy.deepcopy(sc)
    assert same(sc, twin) and not same(1, True) and not same((1,), (1.0,)) and not same({1: 0}, {True: 0})
    assert same({"a": [1, (2.5, None)]}, {"a": [1, (2.5, None)]}) and not same({"a": 1}, {"b": 1})


# -- 2. audit's and sweep's counts of another type ---------------------------------------------------------
@pytest.mark.parametrize("kwargs, problem", [
    ({"seeds": "3"}, "seeds '3': must be a whole number (an int), not a str"),
    ({"seeds": 2.5}, "seeds 2.5: must be a whole number (an int), not a float"),
    ({"seeds": None}, "seeds None: must be a whole number (an int), not a NoneType"),
    ({"seeds": True}, "seeds True: must be a whole number (an int), not a bool"),
    ({"sweep_seeds": 1.5}, "sweep_seeds 1.5: must be a whole number (an int), not a float"),
    ({"sweep_seeds": 10**7}, "sweep_seeds 10000000: must be at most 1000000"),
    ({"seeds": 0}, "seeds 0: must be at least 1"),
])
def test_audit_counts_of_another_type_name_their_parameter(kwargs, problem):
    """``simkit.audit(C, seeds="3")`` (or ``seeds=None``) was a bare ``TypeError: '<' not supported between
    instances of 'str' and 'int'``, ``seeds=2.5`` one from deep in the cases (``'float' object cannot be
    interpreted as an integer``), and ``seeds=True`` audited as ``seeds=1``, where ``jobs`` and ``budget`` of
    the same call are a :class:`simkit.SimkitError` naming the parameter (round 9); a bound said ``audit:
    seeds and sweep_seeds at most ...`` with no parameter. Now each is its parameter's one line, before any
    case runs (``simkit.testing.assert_passes_audit`` passes them on)."""
    with pytest.raises(simkit.SimkitError) as refused:
        simkit.audit("safe", budget=1, jobs=1, **kwargs)
    assert str(refused.value) == problem and refused.value.param == next(iter(kwargs))


@pytest.mark.parametrize("kwargs, param", [
    ({"seeds": "3"}, "seeds"), ({"seeds": 2.5}, "seeds"), ({"seeds": True}, "seeds"),
    ({"first_seed": "0"}, "first_seed"), ({"first_seed": 0.5}, "first_seed"),
    ({"jobs": "2"}, "jobs"), ({"jobs": 1.5}, "jobs"), ({"crash_rates": ("0.1",)}, "crash_rates"),
])
def test_sweep_arguments_of_another_type_name_their_parameter(kwargs, param):
    """``simkit.tools.sweep.sweep(sc, seeds="3")`` (``first_seed="0"``, ``jobs="2"``,
    ``crash_rates=("0.1",)``) was a bare TypeError from its own bounds check; ``seeds=True`` swept one seed
    and ``jobs=1.5`` ran. Now one line naming the parameter, as its bounds are."""
    from simkit.tools.sweep import sweep
    with pytest.raises(simkit.SimkitError) as refused:
        sweep(simkit.load("retry_walkthrough"), ("safe",), **{"seeds": 1, **kwargs})
    assert refused.value.param == param and str(refused.value).startswith(param + " ")
