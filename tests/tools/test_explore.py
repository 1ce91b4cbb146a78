"""simkit explore: every schedule of up to K faults, built incrementally, deduplicated soundly, replayable.

Done-when of issue 4: ``--max-crashes 2`` on each bundled scenario finds no violation for ``safe`` (the two
generated scenarios, ``default`` and ``gauntlet``, are explored to K = 1 here: K = 2 there is tens of
thousands of runs, see the README), and finds one for each of the seven shortcuts on its own scenario.
"""
import json

import pytest

import simkit
from simkit.cli import main
from simkit.errors import ConsumerError
from simkit.model import CRASH_POINTS, LOST_OPS
from simkit.procedure.shortcuts import scenario_of
from simkit.tools.explore import (
    _extensions,
    _run,
    _Space,
    describe_kind,
    explore,
    failure_kind,
    fault_free,
    replay,
)

SCRIPTED = [n for n in simkit.bundled() if simkit.load(n).pages is not None]


def _without_unsafe_sink(name):
    return simkit.load(name).sink != "unsafe"


@pytest.mark.parametrize("name", [n for n in SCRIPTED if _without_unsafe_sink(n)])
def test_safe_survives_every_schedule_of_two_faults_on_each_bundled_scenario(name, shared):
    """Two crashes anywhere (and pauses, with two workers): nothing lost, duplicated, regressed or broken."""
    sc = simkit.load(name)
    x = shared.explore(name, "safe", max_crashes=2, jobs=2 if sc.workers > 1 else 1)
    assert x.violations == 0, (x.kinds, x.first_violation)
    assert x.by_faults[2] > 0


def test_safe_on_an_unsafe_sink_duplicates_only_as_the_seed_says(shared):
    """Seed 000, "Limits and validation": the procedure "does not create exactly-once behavior for an external
    sink that lacks transactions or idempotency". A crash between the effect and its receipt replays the
    effect: the only violation is invariant 4's duplicate, and the same world with an idempotent sink has
    none."""
    sc = simkit.load("shortcut_success_before_effect")
    assert sc.sink == "unsafe"
    x = shared.explore("shortcut_success_before_effect", "safe", max_crashes=2)
    assert set(x.kinds) == {"duplicated, invariant 4"}
    assert x.first_violation[0][0].point in ("after_effect", "before_event_commit")
    sc.sink = "idempotent"
    assert explore(sc, "safe", max_crashes=2).violations == 0


def test_safe_survives_one_lost_reply_with_a_crash(shared):
    for name in ("retry_walkthrough", "quarantine_boundary", "lost_barrier_reply",
                 "shortcut_watermark_only_dedup"):
        x = shared.explore(name, "safe", max_crashes=1, lost_responses=1)
        assert x.violations == 0, (name, x.first_violation)
        assert sum(x.replies.values()) > 0


def test_safe_survives_every_single_fault_on_default():
    x = explore(simkit.load("default"), "safe", max_crashes=1, jobs=2)
    assert x.violations == 0, x.first_violation
    assert x.schedules + x.deduplicated == 1 + sum(x.passes.values()) > 300


def test_safe_survives_every_single_crash_at_the_cursor_points_of_the_gauntlet():
    """A bounded subset: the gauntlet's every pass is ~1,400 one-fault schedules with pauses (about 20 s);
    here every crash at the points that move or hold the cursor. The README has the full runs."""
    points = ("after_fetch", "before_quarantine_receipt", "after_quarantine_receipt", "before_page_barrier",
              "after_page_barrier")
    x = explore(simkit.load("gauntlet"), "safe", max_crashes=1, pauses=False, points=points, jobs=2)
    assert x.violations == 0, x.first_violation
    assert x.schedules == 1 + sum(x.passes[p] for p in points) > 150


@pytest.mark.parametrize("shortcut", simkit.SHORTCUTS)
def test_each_shortcut_is_caught_on_its_own_scenario(shortcut, shared):
    sc = simkit.load(scenario_of(shortcut))
    x = shared.explore(scenario_of(shortcut), shortcut, max_crashes=2, jobs=2 if sc.workers > 1 else 1)
    assert x.violations > 0
    faults, run = x.first_violation
    again = replay(sc, shortcut, faults)
    assert again.as_dict() == run, "the first violation is a replayable fault list"


def test_some_shortcuts_lose_or_regress_only_under_a_fault(shared):
    """persist_token_on_fetch and success_before_effect break an invariant in
    every run, but lose an event only when a crash strikes; no_version_check
    regresses the checkpoint only when a worker crashes or stalls."""
    for shortcut, failure in (("persist_token_on_fetch", "lost"), ("success_before_effect", "lost"),
                              ("no_version_check", "regressions")):
        sc = simkit.load(scenario_of(shortcut))
        assert failure not in describe_kind(failure_kind(replay(sc, shortcut, ()).verdict))
        x = shared.explore(scenario_of(shortcut), shortcut, max_crashes=1)
        assert any(k.startswith(failure) for k in x.kinds), x.kinds


def test_every_fault_of_every_schedule_fires_and_no_schedule_repeats():
    """The incremental construction: extensions are the
    passes after the last fault in the schedule's own run."""
    base = fault_free(simkit.load("quarantine_boundary"))
    space = _Space(2, 1, False, 20.0, CRASH_POINTS, LOST_OPS)
    seen = set()

    def walk(faults, plan, crashes, lost):
        for f in _extensions(plan, space, crashes, lost):
            child = faults + (f,)
            assert child not in seen
            seen.add(child)
            _v, _w, child_plan = _run(base, "safe", 0, child, dedup=False)
            assert child_plan.fired == list(child)
            left = (crashes - (f.kind != "lost_response"), lost - (f.kind == "lost_response"))
            if any(left):
                walk(child, child_plan, *left)

    _v, _w, plan = _run(base, "safe", 0, (), dedup=False)
    walk((), plan, 2, 1)
    x = explore(simkit.load("quarantine_boundary"), "safe", max_crashes=2, lost_responses=1, dedup=False)
    assert x.schedules == 1 + len(seen)


GEN = {"name": "small_generated", "sink": "idempotent", "backfills": True,
       "generate": {"events": 5, "page_size": 2, "overlap": 0.3, "stuck": 0.3, "transient": 0.2, "hold": 0.15,
                    "review": 0.15, "poison": 0.1, "empty_pages": 0.2}}


@pytest.mark.parametrize("name,strategy,lost", [
    ("retry_walkthrough", "safe", 1), ("shortcut_success_before_effect", "safe", 0),
    ("shortcut_success_before_effect", "success_before_effect", 1),
    ("shortcut_persist_token_on_fetch", "persist_token_on_fetch", 1), (GEN, "success_before_effect", 0)])
def test_deduplication_is_sound(name, strategy, lost):
    """Skipping schedules whose last crash leaves an explored state loses no kind of failure."""
    sc = simkit.parse(name) if isinstance(name, dict) else simkit.load(name)
    a = explore(sc, strategy, max_crashes=2, lost_responses=lost)
    b = explore(sc, strategy, max_crashes=2, lost_responses=lost, dedup=False)
    assert set(a.kinds) == set(b.kinds)
    assert a.deduplicated > 0 and a.schedules < b.schedules
    assert (a.first_violation is None) == (b.first_violation is None)


def test_two_workers_are_never_deduplicated_and_pauses_are_in_the_space(shared):
    x = shared.explore("late_retry", "safe", max_crashes=1)
    assert x.pauses and x.deduplicated == 0
    kinds = {f.kind for f in _extensions(_run(fault_free(simkit.load("late_retry")), "safe", 0, (), True)[2],
                                         _Space(1, 0, True, 20.0, CRASH_POINTS, LOST_OPS), 1, 0)}
    assert kinds == {"crash", "pause"}
    assert x.schedules == 1 + 2 * sum(x.passes.values())


def test_the_result_does_not_depend_on_jobs():
    sc = simkit.load("shortcut_watermark_only_dedup")
    one = explore(sc, "watermark_only_dedup", max_crashes=2, lost_responses=1, jobs=1)
    two = explore(sc, "watermark_only_dedup", max_crashes=2, lost_responses=1, jobs=2)
    assert one.as_dict() == two.as_dict()


def test_points_restrict_the_space():
    x = explore(simkit.load("retry_walkthrough"), "safe", max_crashes=2, points=("before_event_commit",),
                dedup=False)
    assert x.passes["before_event_commit"] == 2                 # 106 and 107
    assert x.by_faults == [1, 2, 3]     # then 106 again and 107, or 107 again


def test_cli_json_matches_the_contract_and_the_out_file_replays(tmp_path, capsys):
    """safe on an unsafe sink (seed 000's stated limit): a crash between effect and receipt duplicates it."""
    out = tmp_path / "first.toml"
    assert main(["explore", "shortcut_success_before_effect", "--strategy", "safe", "--max-crashes", "2",
                 "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {"scenario", "strategy", "max_crashes", "schedules", "violations", "first_violation"} <= set(d)
    assert d["max_crashes"] == 2 and d["violations"] > 0
    faults = d["first_violation"]["faults"]
    assert faults == [{"kind": "crash", "point": "after_effect", "position": 106}]
    assert main(["run", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["duplicated"] == ["e106"]
    assert {k: v for k, v in replayed.items() if k != "scenario"} == \
        {k: v for k, v in d["first_violation"]["verdict"].items() if k != "scenario"}


def test_cli_text_prints_a_replay_command_that_replays(tmp_path, capsys):
    from simkit.tools.shrink import scenario_data, toml_text
    path = tmp_path / "no_faults.toml"
    path.write_text(toml_text(scenario_data(simkit.load("shortcut_success_before_effect"), faults=())))
    assert main(["explore", str(path), "--max-crashes", "1"]) == 0
    out = capsys.readouterr().out
    assert "first violation (fewest faults): crash at after_effect@106" in out
    command = next(x for x in out.splitlines()
                   if "replay: simkit run" in x).split("replay: simkit ")[1].split()
    assert command[-2:] == ["--crash", "after_effect@106"]
    assert main([*command, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["duplicated"] == ["e106"]
    assert main(["explore", "retry_walkthrough"]) == 0
    assert "no violations" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--max-crashes", "-1"], ["--lost-responses", "-2"],
                                  ["--lost-requests", "-3"],
                                  ["--lost-requests", "x"], ["--point", "nowhere"], ["--strategy", "nope"]])
def test_bad_input_is_one_line_and_status_2(argv, capsys):
    assert main(["explore", "retry_walkthrough", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: ") and err.count("\n") == 1


def test_scenario_faults_can_stay_in_every_schedule():
    """--with-scenario-faults: the scenario's own faults are part of the world; no schedule adds a fault at a
    pass they already strike, so every added fault fires."""
    sc = simkit.load("late_response")
    x = explore(sc, "safe", max_crashes=2, lost_responses=1, keep_faults=True)
    assert x.violations == 0 and x.by_faults[3] > 0
    base = fault_free(sc, keep_faults=True)
    assert len(base.faults) == len(sc.faults)
    space = _Space(1, 1, False, 20.0, CRASH_POINTS, LOST_OPS)
    _v, _w, plan = _run(base, "safe", 0, (), dedup=False)
    for f in _extensions(plan, space, 1, 1):
        _v, _w, child = _run(base, "safe", 0, (f,), dedup=False)
        assert f in child.fired


def test_a_run_failing_only_on_settlement_is_described_as_such_not_ok():
    """explore and shrink group failures by failure_kind: a settlement violation alone is a failure kind."""
    run = simkit.simulate(simkit.load("late_response"), settlement="split_validate_write")
    kind = failure_kind(run.verdict)
    assert not run.verdict.ok and [k for k in kind if k] == [("committed_downgraded",)]
    assert "committed downgraded" in describe_kind(kind)
    assert describe_kind(failure_kind(simkit.simulate(simkit.load("late_response")).verdict)) == "ok"


def test_a_schedule_with_no_budget_left_is_run_and_counted_not_fingerprinted(shared):
    """At K = 1 a one-crash schedule has no subtree to skip, so it is counted as run; at K = 2 the same level
    is deduplicated because there a skip saves its subtree."""
    one = explore(simkit.load("retry_walkthrough"), "safe", max_crashes=1)
    assert (one.schedules, one.deduplicated, one.by_faults) == (9, 0, [1, 8])
    two = shared.explore("retry_walkthrough", "safe", max_crashes=2)
    assert (two.schedules, two.deduplicated, two.by_faults) == (20, 9, [1, 5, 14])      # as in the README


@pytest.mark.parametrize("name, settlement, crashes", [("misbound_response", "unfenced", "1"),
                                                       ("late_response", "last_write_wins", "0")])
def test_the_out_file_replays_overrides_and_scenario_faults(tmp_path, capsys, name, settlement, crashes):
    """--with-scenario-faults: the written scenario keeps the scenario's own [[faults]] (and the --settlement
    override), so ``simkit run`` of it fails as the explored run did; the printed replay without --out too."""
    out = tmp_path / "first.toml"
    argv = ["explore", name, "--settlement", settlement, "--with-scenario-faults", "--max-crashes", crashes]
    assert main([*argv, "--out", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)["first_violation"]["verdict"]
    assert first["settlement_violations"]
    assert main(["run", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert not replayed["ok"] and replayed["settlement"] == settlement
    assert {k: v for k, v in replayed.items() if k in first and k != "scenario"} == \
        {k: v for k, v in first.items() if k in replayed and k != "scenario"}
    assert main(argv) == 0
    text = capsys.readouterr().out
    kinds = ", ".join(sorted({v["kind"].replace("_", " ") for v in first["settlement_violations"]}))
    assert f"completed: yes   settlement: {kinds}" in text
    if name == "late_response":                                  # no fault needed: a printed replay command
        command = next(x for x in text.splitlines() if "replay: simkit run" in x).split("replay: simkit ")[1]
        assert f"--settlement {settlement}" in command
        assert main([*command.split(), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["settlement_violations"] == first["settlement_violations"]


@pytest.mark.parametrize("name, bounds, jobs",
                         [("retry_walkthrough", (2, 0, 0), 1), ("late_response", (1, 1, 0), 1),
                          ("fence_race", (2, 0, 0), 2), ("transient_storm", (1, 0, 1), 1),
                          ("shortcut_success_before_effect", (2, 0, 0), 2)])
def test_sharing_prefixes_runs_the_same_schedules_as_running_each_from_scratch(name, bounds, jobs):
    """Forked at each fault point (simkit.tools.forked) or run from scratch: the same schedules, verdicts,
    deduplication and first violation (``digest`` sums every schedule's faults and verdict)."""
    crashes, replies, requests = bounds
    sc = simkit.load(name)
    runs = [explore(sc, "safe", max_crashes=crashes, lost_responses=replies, lost_requests=requests,
                    jobs=jobs, share_prefixes=share) for share in (True, False)]
    assert runs[0].as_dict() == runs[1].as_dict()
    assert runs[0].digest == runs[1].digest


def test_a_forked_run_that_raises_raises_in_the_caller():
    class Boom(simkit.Consumer):
        made = 0

        def __init__(self, contract):  # the second consumer is the first restarted after a crash
            super().__init__(contract)
            Boom.made += 1
            if Boom.made > 1:
                raise ValueError("boom")
    with pytest.raises(ConsumerError, match="raised ValueError: boom"):     # the child's error, in the parent
        explore(simkit.load("retry_walkthrough"), Boom, max_crashes=1, share_prefixes=True)


@pytest.mark.parametrize("name, strategy", [("transient_storm", "safe"),
                                            ("shortcut_compare_tokens", "compare_tokens")])
def test_an_exploration_begun_and_its_subtrees_run_in_any_groups_is_the_exploration(name, strategy):
    """The audit deals an exploration's subtrees to its workers in groups (issue 31): whatever the grouping,
    the merged result is explore's, its deduplication, digest and first violation included."""
    from simkit.tools.explore import begin, below
    sc = simkit.load(name)
    whole = explore(sc, strategy, max_crashes=2, lost_responses=1)
    split = begin(sc, strategy, max_crashes=2, lost_responses=1)
    assert len(split.roots) > 3
    for k in (2, 0, 1):                             # three groups, merged out of order
        split.result.merge(below(split, split.roots[k::3]))
    assert split.result.as_dict() == whole.as_dict() and split.result.digest == whole.digest
