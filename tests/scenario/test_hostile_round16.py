"""Hostile input, sixteenth round (a fresh tester): a Scenario edited in place between two ``simulate`` calls
into a value equal to the one checked but of another type (``True == 1 == 1.0``), ...
Each: one line naming the parameter, file, key or flag and the problem (a :class:`simkit.SimkitError`, or
exit status 2 and no traceback), or the verdict the same run earns.
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
