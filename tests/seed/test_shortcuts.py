"""Seed 000, "Common unsafe shortcuts": each one breaks on its own scenario what its declaration says
(``simkit.procedure.shortcuts.DECLARED``, docs/vocabulary.md), with `safe` ok on the same input."""
import textwrap

import pytest
from conftest import run

import simkit
from simkit.procedure.shortcuts import DECLARED


@pytest.mark.parametrize("shortcut", simkit.SHORTCUTS)
def test_each_shortcut_breaks_what_it_declares_on_its_scenario_and_safe_does_not(shortcut):
    declared = DECLARED[shortcut]
    scenario = simkit.load(declared.scenario)
    bad, breaks = run(scenario, shortcut).verdict, declared.breaks
    assert not bad.ok
    assert (bad.lost, bad.duplicated, bad.regressions, bad.invariants_broken) == (
        list(breaks.lost), list(breaks.duplicated), breaks.regressions, list(breaks.invariants_broken))
    assert bad.halt_justified is (False if breaks.unjustified_halt else None)
    assert not bad.settlement_violations and not bad.unhalted          # nothing it does not declare
    good = run(scenario, "safe")
    assert good.verdict.ok, good.verdict


def test_no_version_check_overwrites_newer_progress_and_safe_rereads():
    bad = run("shortcut_no_version_check", "no_version_check").trace.to_frame()
    stale = bad[(bad.worker == 1) & (bad.step == "barrier")].iloc[0]
    assert stale.resume_cursor == "C2"                       # written over C4
    good = run("shortcut_no_version_check", "safe").trace.to_frame()
    rejected = good[good.step == "barrier_rejected"]
    assert list(rejected.worker) == [1]
    after = good.loc[rejected.index[0] + 1:]
    assert after[after.worker == 1].step.iloc[0] == "load"   # the loser rereads state


def test_compare_tokens_publishes_a_token_it_computed():
    r = run("shortcut_compare_tokens", "compare_tokens")
    assert r.verdict.halted == "provider refused cursor 'T4'"
    assert "never returned" in r.verdict.invariant_violations[0]["detail"]


def test_gauntlet_every_shortcut_fails_on_some_seed_and_safe_on_none():
    scenario = simkit.load("gauntlet")
    failed = {name: 0 for name in simkit.STRATEGIES}
    for seed in range(50):
        for name, cls in simkit.STRATEGIES.items():
            failed[name] += not simkit.simulate(scenario, cls, seed).verdict.ok
    assert failed.pop("safe") == 0
    assert all(n >= 1 for n in failed.values()), failed


USER_STRATEGY = '''
    from simkit import Consumer

    class TrustTheWatermark(Consumer):
        """Everything at or below the applied watermark counts as done."""

        def is_replay(self, event, receipts, applied_position):
            return event.position <= applied_position
'''


def test_user_strategy_from_a_file_is_judged(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(textwrap.dedent(USER_STRATEGY))
    cls = simkit.resolve(f"{path}:TrustTheWatermark")
    r = simkit.simulate(simkit.load("shortcut_watermark_only_dedup"), cls)
    assert r.strategy == "TrustTheWatermark"
    assert r.verdict.lost == ["e105"]


def test_user_strategy_from_a_module(tmp_path, monkeypatch):
    (tmp_path / "my_consumers.py").write_text(textwrap.dedent(USER_STRATEGY))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert simkit.resolve("my_consumers:TrustTheWatermark").__name__ == "TrustTheWatermark"


@pytest.mark.parametrize("ref, message", [
    ("nonsense", "unknown strategy"),
    ("missing.py:X", "no such file"),
    ("no_such_module_xyz:X", "cannot import module"),
    ("simkit.model:Event", "is not a subclass of simkit.Consumer"),
    ("simkit.model:Nope", "has no class of that name"),
])
def test_bad_strategy_reference(ref, message):
    with pytest.raises(simkit.StrategyError, match=message):
        simkit.resolve(ref)
