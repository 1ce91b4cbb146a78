"""Seed 000, "Reasoned retry walkthrough", executed step by step.

Durable checkpoint C7 / 105. Fetching C7 returns 104, 106, 107 and C8. 104 is an overlap; 106 is applied;
the worker crashes before 107. The resume cursor stays C7; on retry 104 and 106 are replays, 107 is applied,
and only then does the barrier replace C7 with C8. If 107 never obtains a durable outcome, C8 is never
promoted.
"""
from conftest import run, scenario_dict

import simkit


def test_walkthrough_is_ok():
    r = run("retry_walkthrough")
    assert r.verdict.ok
    assert r.as_dict()["final_checkpoint"] == {"resume_cursor": "C8", "applied_position": 107,
                                               "checkpoint_version": 2}
    assert r.as_dict()["crashes"] == 1


def test_first_attempt_confirms_104_applies_106_and_crashes_before_107(frame):
    df = frame(run("retry_walkthrough"))
    crash = df.index[df.step == "crash"][0]
    before = df.loc[:crash]
    assert list(before.loc[before.step == "replay", "event_id"]) == ["e104"]
    assert list(before.loc[before.step == "commit", "event_id"]) == ["e106"]
    assert df.loc[crash, "event_id"] == "e107" and df.loc[crash, "outcome"] == "before_event_commit"
    # "The resume cursor remains C7": everything up to and including the crash.
    assert set(before.resume_cursor) == {"C7"}
    assert df.loc[crash, "applied_position"] == 106


def test_retry_replays_104_and_106_applies_107_then_barrier(frame):
    df = frame(run("retry_walkthrough"))
    after = df.loc[df.index[df.step == "restart"][0]:]
    steps = [(s, e) for s, e in zip(after.step, after.event_id) if s in ("replay", "commit", "barrier")]
    assert steps == [("replay", "e104"), ("replay", "e106"), ("commit", "e107"), ("barrier", "")]
    barrier = after.index[after.step == "barrier"][0]
    assert set(after.loc[:barrier - 1, "resume_cursor"]) == {"C7"}
    assert df.loc[barrier, "resume_cursor"] == "C8"
    assert df.loc[barrier, "applied_position"] == 107


def test_c8_is_never_promoted_if_107_never_gets_a_durable_outcome():
    data = scenario_dict("retry_walkthrough")
    data["faults"] = []
    data["events"] = [{"position": 107, "behavior": "transient", "failures": 10**9}]
    data["timing"] = {"time_limit": 500.0}
    r = simkit.simulate(simkit.parse(data))
    df = r.trace.to_frame()
    assert set(df.resume_cursor) == {"C7"}
    assert "barrier" not in set(df.step)
    assert r.world.store.checkpoint.applied_position == 106
    assert r.verdict.pending == ["e107"] and r.verdict.lost == []
    assert not r.verdict.completed and not r.verdict.ok
