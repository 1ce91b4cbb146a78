"""Seed 000, "Quarantine boundary example": 210, 211, 212 with 212 already durable."""
import pytest
from conftest import run, scenario_dict

import simkit


def test_in_memory_quarantine_keeps_prefix_at_210_and_cursor_pending():
    df = run("quarantine_boundary").trace.to_frame()
    crash = df.index[df.step == "crash"][0]
    assert df.loc[crash, "outcome"] == "before_quarantine_receipt" and df.loc[crash, "event_id"] == "e211"
    decided = df[(df.step == "handle") & (df.event_id == "e211")].index[0]
    assert df.loc[decided, "outcome"] == "quarantine"          # decided, in memory only
    assert df.loc[crash, "applied_position"] == 210
    assert df.loc[crash, "resume_cursor"] == "C21"


def test_durable_final_receipt_extends_prefix_through_212_and_barrier_proceeds():
    r = run("quarantine_boundary")
    df = r.trace.to_frame()
    receipt = df.index[df.step == "quarantine"][0]
    assert df.loc[receipt, "event_id"] == "e211" and df.loc[receipt, "outcome"] == "quarantined"
    assert df.loc[receipt, "applied_position"] == 211
    assert df.loc[receipt + 1, "step"] == "replay" and df.loc[receipt + 1, "event_id"] == "e212"
    barrier = df.index[df.step == "barrier"][0]
    assert barrier > receipt
    assert (df.loc[barrier, "resume_cursor"], df.loc[barrier, "applied_position"]) == ("C22", 212)
    assert r.verdict.ok
    assert r.world.store.receipts["e211"][0] == "quarantined"


@pytest.mark.parametrize("behavior, outcome", [
    ("transient", "retry_later"), ("review", "operator_review"), ("hold", "reversible_hold"),
])
def test_non_terminal_outcomes_keep_the_barrier_closed(behavior, outcome):
    data = scenario_dict("quarantine_boundary")
    data["faults"] = []
    never = {"transient": {"failures": 10**9}, "review": {"resolve_after": 1e9},
             "hold": {"release_after": 1e9}}
    data["events"] = [{"position": 211, "behavior": behavior, **never[behavior]}]
    data["timing"] = {"time_limit": 300.0}
    r = simkit.simulate(simkit.parse(data))
    df = r.trace.to_frame()
    assert outcome in set(df[df.event_id == "e211"].outcome)
    assert set(df.resume_cursor) == {"C21"}
    assert df.applied_position.max() == 210
    assert r.verdict.pending == ["e211"] and not r.verdict.completed


@pytest.mark.parametrize("behavior, resolution",
                         [("review", "quarantine"), ("review", "apply"), ("hold", "apply")])
def test_once_resolved_the_prefix_closes(behavior, resolution):
    data = scenario_dict("quarantine_boundary")
    data["faults"] = []
    # (each behaviour is given only the keys it reads: any other is refused)
    data["events"] = [{"position": 211, "behavior": behavior, "release_after": 20.0} if behavior == "hold"
                      else {"position": 211, "behavior": behavior, "resolve_after": 20.0,
                            "resolution": resolution}]
    r = simkit.simulate(simkit.parse(data))
    assert r.verdict.ok
    expected = "quarantined" if resolution == "quarantine" else "applied"
    assert r.world.store.receipts["e211"][0] == expected
    assert r.world.store.checkpoint.resume_cursor == "C22"
