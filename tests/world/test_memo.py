"""A scripted provider's fixed parts are built once per scenario (simkit.world.memo), and a run sees exactly
what it would with them built afresh: a scenario is a mutable dataclass, and one edited in place is built
again."""
import copy
import dataclasses

import pytest

import simkit
from simkit.model import EventSpec
from simkit.world import memo
from simkit.world.provider import _scripted_parts, scripted


def _same_run(a, b) -> bool:
    return a.trace.digest() == b.trace.digest() and a.verdict.as_dict() == b.verdict.as_dict()


def test_runs_of_one_scenario_share_its_parts_and_stay_independent():
    sc = simkit.load("quarantine_boundary")
    first, second = scripted(sc), scripted(sc)
    assert first.events is second.events and first is not second        # shared table, a provider each
    runs = [simkit.simulate(sc, "safe") for _ in range(3)]
    assert all(_same_run(runs[0], r) for r in runs[1:])
    assert _same_run(runs[0], simkit.simulate(copy.deepcopy(sc), "safe"))


def test_a_scenario_edited_in_place_is_built_again():
    """The review's case: an edited start cursor or event behaviour was served from the old parts, the
    provider disagreeing with the store and the sink that read the scenario again."""
    sc = simkit.load("retry_walkthrough")
    simkit.simulate(sc, "safe")
    # past page C7, whose events are then receipted (an edit into a state no file may hold is refused:
    # runner.checked)
    sc.initial.resume_cursor, sc.initial.receipts, sc.initial.applied_position = "C8", (104, 106, 107), 107
    assert scripted(sc).start == "C8"
    assert _same_run(simkit.simulate(sc, "safe"), simkit.simulate(copy.deepcopy(sc), "safe"))

    sc = simkit.load("quarantine_boundary")
    simkit.simulate(sc, "safe")
    position = next(p for page in sc.pages for p in page["positions"])
    sc.events[position] = EventSpec(behavior="poison")
    table = scripted(sc).events
    assert table.behaviors[table.row(simkit.model.default_id(position))] == "poison"
    assert _same_run(simkit.simulate(sc, "safe"), simkit.simulate(copy.deepcopy(sc), "safe"))


def test_a_replaced_scenario_and_the_oldest_ones_are_dropped():
    kept = _scripted_parts.kept
    kept.clear()
    scenarios = [dataclasses.replace(simkit.load("retry_walkthrough")) for _ in range(memo.KEPT + 3)]
    for sc in scenarios:
        scripted(sc)
    assert len(kept) == memo.KEPT and [v[0] for v in kept.values()] == scenarios[3:]


def test_a_checked_scenario_is_read_again_after_an_edit_in_place():
    """``simulate`` reads a scenario again once while it stays the same (runner.checked, by this memo): an
    edit in place after a passing check is still refused, and the edit undone passes again."""
    sc = simkit.load("retry_walkthrough")
    simkit.simulate(sc, "safe")
    sc.initial.resume_cursor = "C8"
    with pytest.raises(simkit.ScenarioError, match="initial.resume_cursor 'C8' is past pages"):
        simkit.simulate(sc, "safe")
    sc.initial.resume_cursor = "C7"
    assert simkit.simulate(sc, "safe").verdict.ok
