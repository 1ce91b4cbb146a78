"""The ``lost_request`` fault (docs/scenarios.md, "Faults"):
a request that never reaches the provider, sink or store.

It takes no effect, and its caller times out exactly as when a ``lost_response`` loses the reply of a request
that did take effect: the consumer cannot tell the two apart. A consumer that assumes a timed-out write
succeeded is right under a lost reply and wrong under a lost request; these tests show both, and that ``safe``
is right under either.
"""
import dataclasses
import json
import tomllib

import pytest

import simkit
from simkit import Consumer
from simkit.cli import main
from simkit.model import CRASH_POINTS, LOST_OPS, REPLY_LOST, REQUEST_LOST, Fault, RandomFaults
from simkit.ops import LOST
from simkit.tools.explore import _budget, _extensions, _run, _Space, explore, fault_free, fault_text, replay
from simkit.tools.shrink import scenario_data, shrink, toml_text
from simkit.world.faults import FaultPlan, PassRow, ReplyRow, RequestRow


class TrustsTimedOutCommits(Consumer):
    """Takes an event commit that timed out for one that landed, and goes on to the next event."""

    name = "trusts_timed_out_commits"

    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        return True if result is LOST else result


CONSUMER_FILE = '''
from simkit import Consumer
from simkit.ops import LOST


class TrustsTimedOutCommits(Consumer):
    def apply(self, event, applied_position):
        result = yield from super().apply(event, applied_position)
        return True if result is LOST else result
'''


def _bare(name: str) -> simkit.Scenario:
    """A bundled scenario without its own faults."""
    return dataclasses.replace(simkit.load(name), faults=())


def _with_faults(name: str, *faults: dict) -> simkit.Scenario:
    """A bundled scenario whose only faults are these ``[[faults]]`` tables, through the file format."""
    return simkit.parse(scenario_data(simkit.load(name), faults=()) | {"faults": list(faults)}, source=name)


def _ground_truth_at(run: simkit.Run, time: float, worker: int) -> dict[str, list]:
    """Every ground-truth row this worker's request could have written at ``time``."""
    w = run.world
    at = lambda rows: [r for r in rows if r[1] == time and r[2] == worker]
    return {"provider log": at(w.provider.log), "checkpoint writes": at(list(w.store.writes)[1:]),
            "receipts": at(w.store.receipt_log), "effects": at(w.sink.effects),
            "service requests": [r for r in w.service.requests if r.time == time and r.worker == worker]}


def _lost_row(run: simkit.Run, outcome: str):
    rows = run.trace.to_frame().query("outcome == @outcome")
    assert len(rows) == 1, rows
    return rows.iloc[0]


# -- the world: a lost request writes nothing, and its caller times out as for a lost reply ------------------
CASES = {     # scenario, strategy, the fault's op and where, the trace step, the ground truth it would write
    "fetch": ("retry_walkthrough", "safe", {"op": "fetch"}, "fetch", "provider log"),
    "event commit": ("retry_walkthrough", "safe", {"op": "checkpoint_write", "position": 106}, "commit",
                     "receipts"),
    "page barrier": ("lost_barrier_reply", "safe", {"op": "checkpoint_write", "occurrence": 4}, "barrier",
                     "checkpoint writes"),
    "overwrite": ("shortcut_no_version_check", "no_version_check",
                  {"op": "checkpoint_write", "occurrence": 4}, "barrier", "checkpoint writes"),
    "quarantine receipt": ("quarantine_boundary", "safe", {"op": "checkpoint_write", "position": 211},
                           "quarantine", "receipts"),
    "plain effect": ("shortcut_success_before_effect", "success_before_effect",
                     {"op": "effect", "position": 106}, "effect", "effects"),
    "seed 001 call": ("late_response", "safe", {"op": "effect", "position": 1}, "effect", "service requests"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_lost_request_changes_no_ground_truth_and_safe_is_still_ok(case):
    """The same fault on the reply instead leaves the durable row a lost request must not write."""
    name, strategy, where, step, truth = CASES[case]
    sc, cls = _bare(name), simkit.resolve(strategy)
    plain = simkit.simulate(sc, cls)
    request = simkit.simulate(sc, cls, faults=(Fault("lost_request", **where),))
    reply = simkit.simulate(sc, cls, faults=(Fault("lost_response", **where),))
    if strategy == "safe":
        assert request.verdict.ok, request.verdict
    never, landed = _lost_row(request, REQUEST_LOST), _lost_row(reply, REPLY_LOST)
    assert never.step == landed.step == step and never.time == landed.time
    assert not any(_ground_truth_at(request, never.time, never.worker).values())
    assert _ground_truth_at(reply, landed.time, landed.worker)[truth]
    if case == "fetch":                             # the provider was never asked: no fetch counted
        assert request.as_dict()["fetches"] == plain.as_dict()["fetches"] == reply.as_dict()["fetches"] - 1
    if case == "seed 001 call":                     # the service never ran it; the caller saw a timeout
        timeout = request.trace.to_frame().query("step == 'timeout'")
        assert list(timeout.time) == [never.time + sc.timing.timeout]
        assert request.world.sink.effect_count == plain.world.sink.effect_count


def test_the_caller_cannot_tell_a_lost_request_from_a_lost_reply():
    """Both come back as LOST after the same time; the trace rows up to the timeout differ only in the outcome
    and in what the store holds."""
    sc = _bare("lost_barrier_reply")
    where = {"op": "checkpoint_write", "occurrence": 4}
    a = simkit.simulate(sc, faults=(Fault("lost_request", **where),)).trace.to_frame()
    b = simkit.simulate(sc, faults=(Fault("lost_response", **where),)).trace.to_frame()
    cols = ["time", "worker", "step", "event_id"]
    assert a[cols].iloc[:7].equals(b[cols].iloc[:7])         # up to and including the load after the timeout
    assert (a.resume_cursor[6], b.resume_cursor[6]) == ("C1", "C2")


def test_a_consumer_that_trusts_a_timed_out_write_is_exposed_by_a_lost_request_not_by_a_lost_reply():
    """The point of the fault: with the reply lost the commit landed, and going on is harmless; with the
    request lost it did not, and going on publishes a barrier past an event with no outcome."""
    fault = {"op": "checkpoint_write", "position": 106}
    request = simkit.simulate(_with_faults("retry_walkthrough", {"kind": "lost_request", **fault}),
                              TrustsTimedOutCommits)
    reply = simkit.simulate(_with_faults("retry_walkthrough", {"kind": "lost_response", **fault}),
                            TrustsTimedOutCommits)
    assert reply.verdict.ok, reply.verdict
    assert not request.verdict.ok and request.verdict.lost == ["e106"]
    assert simkit.simulate(_with_faults("retry_walkthrough", {"kind": "lost_request", **fault})).verdict.ok


def test_occurrence_counts_requests_not_replies():
    """After a lost first fetch request, the first fetch *reply* is the retry's; the second fetch request is
    the retry itself."""
    sc = _bare("retry_walkthrough")
    first = Fault("lost_request", op="fetch")
    both = simkit.simulate(sc, faults=(first, Fault("lost_response", op="fetch")))
    assert list(both.trace.to_frame().query("step == 'fetch'").outcome[:2]) == [REQUEST_LOST, REPLY_LOST]
    two = simkit.simulate(sc, faults=(first, Fault("lost_request", op="fetch", occurrence=2)))
    assert list(two.trace.to_frame().query("step == 'fetch'").outcome[:2]) == [REQUEST_LOST, REQUEST_LOST]
    assert len(two.world.faults.fired) == 2


# -- seeded faults, the fast path, determinism, shrinking ----------------------------------------------------
def test_random_lost_requests_are_seeded_and_shrink_to_a_scripted_lost_request():
    data = scenario_data(simkit.load("gauntlet")) | {"random_faults": {"lost_request": 0.05}}
    sc = simkit.parse(data, source="gauntlet with lost requests")
    a = simkit.simulate(sc, TrustsTimedOutCommits, 3)
    b = simkit.simulate(sc, TrustsTimedOutCommits, 3)
    assert a.trace.digest() == b.trace.digest()
    fired = a.world.faults.fired
    assert fired and {f.kind for f in fired} == {"lost_request"}
    assert sum(o == REQUEST_LOST for o in a.trace.outcome) == len(fired)
    assert not a.verdict.ok
    shrunk = shrink(sc, TrustsTimedOutCommits, 3)
    assert shrunk.data["faults"] and {f["kind"] for f in shrunk.data["faults"]} == {"lost_request"}
    again = simkit.simulate(simkit.parse(tomllib.loads(shrunk.toml())), TrustsTimedOutCommits, 3)
    assert again.verdict.as_dict() == shrunk.run.verdict.as_dict()


def test_a_lost_request_rate_or_fault_keeps_the_world_off_its_fast_path():
    """FaultPlan.idle lets the world commit without crash
    points or fault checks; a lost request must stop it."""
    def idle(faults=(), **rates):
        plan = FaultPlan(faults, RandomFaults(**rates), 0)
        plan.record = False
        return plan.idle()

    assert idle()
    assert not idle(lost_request=0.1)
    assert not idle((Fault("lost_request", op="checkpoint_write"),))
    assert idle(lost_request=0.1, max_faults=0)


def test_without_lost_requests_nothing_is_counted_or_drawn():
    """No lost_request configured: no request is counted and nothing is drawn for it, so the seeded crash and
    lost reply draws of a run land where they did before lost requests existed."""
    rf = RandomFaults(crash=0.05, lost_response=0.05)
    plan = FaultPlan((), rf, 7)
    plan.record = False
    assert plan.request_lost(1, "fetch", None) is False
    assert (
        plan.requests == []
        and plan._counts == {}
        and plan._rng.getstate() == FaultPlan((), rf, 7)._rng.getstate()
    )


def test_the_plans_rows_are_read_by_name():
    """Issue 27: each pass, request and reply a plan records is a named
    tuple (explore reads ``passes_before``, not ``[5]``), and a request's
    or reply's ``occurrence`` is the one a fault striking it names."""
    plan = FaultPlan((), RandomFaults(), 0)
    plan.at_point(1, "after_fetch", None)
    for position in (107, 108):
        assert (
            plan.request_lost(1, "effect", position) is False
            and plan.reply_lost(1, "effect", position) is False
        )
    assert plan.passes == [PassRow(worker=1, point="after_fetch", position=None, occurrence=1)]
    second = plan.requests[1]
    assert second == RequestRow(1, "effect", 108, n_any=2, n_pos=1, passes_before=1, replies_before=1)
    assert second.occurrence == 1 and plan.replies[1] == ReplyRow(1, "effect", 108, 2, 1, passes_before=1)
    assert (
        RequestRow(1, "fetch", None, 3, 1, 0, 0).occurrence
        == 3
        == ReplyRow(1, "fetch", None, 3, 1, 0).occurrence
    )


# -- the file format -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fault, message", [
    ({"kind": "lost_request", "op": "barrier"}, "key 'faults[0].op': 'barrier' is not one of fetch, effect, "
                                                "checkpoint_write"),
    ({"kind": "lost_request", "op": "reserve"}, "key 'faults[0].op': 'reserve' is not one of"),
    ({"kind": "lost_request", "point": "after_fetch"},
     "key 'faults[0].point': a lost_request names a request, "
     "not a point"),
    ({"kind": "lost_request", "delay": 3.0}, "key 'faults[0].delay': only a late_reply has a delay"),
    ({"kind": "crash", "point": "after_fetch", "op": "fetch"},
     "key 'faults[0].op': only a lost_response names an "
     "op (or a lost_request)"),
    ({"kind": "lost_request", "op": "fetch", "position": 99},
     "key 'faults[0].position': no page carries position 99"),
])
def test_a_bad_lost_request_is_one_line(fault, message):
    with pytest.raises(simkit.ScenarioError) as exc:
        _with_faults("retry_walkthrough", fault)
    text = str(exc.value)
    assert message in text and text.startswith("retry_walkthrough: ") and "\n" not in text


def test_a_bad_lost_request_rate_is_one_line():
    data = scenario_data(simkit.load("retry_walkthrough")) | {"random_faults": {"lost_request": 1.5}}
    with pytest.raises(simkit.ScenarioError,
                       match=r"key 'random_faults\.lost_request': must be between 0 and 1"):
        simkit.parse(data, source="bad.toml")


@pytest.mark.parametrize("fault", [{"kind": "lost_request"},
                                   {"kind": "lost_request", "op": "checkpoint_write", "position": 7,
                                    "occurrence": 2},
                                   {"kind": "lost_request", "op": "effect", "worker": 2}])
def test_a_lost_request_round_trips_through_the_file_format(fault):
    data = scenario_data(simkit.load("late_retry"), faults=()) | {"faults": [fault],
                                                                    "random_faults": {"lost_request": 0.25}}
    sc = simkit.parse(data)
    assert sc.faults[0].kind == "lost_request" and sc.faults[0].op == fault.get("op", "fetch")
    again = simkit.parse(tomllib.loads(toml_text(scenario_data(sc))))
    assert again.faults == sc.faults and again.random_faults == sc.random_faults
    assert sc.faults[0].as_dict() == {"op": "fetch", **fault}


# -- exploration ---------------------------------------------------------------------------------------------
def test_explore_finds_what_only_a_lost_request_exposes_and_nothing_for_safe(shared):
    sc = simkit.load("retry_walkthrough")
    x = explore(sc, TrustsTimedOutCommits, max_crashes=0, lost_requests=1)
    assert x.violations > 0 and x.lost_requests == 1
    faults, run = x.first_violation
    assert [fault_text(f) for f in faults] == ["lost checkpoint_write request@106"]
    assert run["lost"] == ["e106"] and replay(sc, TrustsTimedOutCommits, faults).as_dict() == run
    assert explore(sc, TrustsTimedOutCommits, max_crashes=1, lost_responses=1).violations == 0
    for name in ("retry_walkthrough", "lost_barrier_reply", "quarantine_boundary", "late_response"):
        y = shared.explore(name, "safe", max_crashes=1, lost_requests=1)
        assert y.violations == 0, (name, y.first_violation)
        assert sum(y.requests.values()) > 0 and y.by_faults[2] > 0


def test_every_lost_request_of_every_schedule_fires_and_no_schedule_repeats():
    """Requests join passes and replies in one timeline:
    every extension fires in the child's run, in order."""
    base = fault_free(simkit.load("quarantine_boundary"))
    space = _Space(1, 1, False, 20.0, CRASH_POINTS, LOST_OPS, 1)
    seen = set()

    def walk(faults, plan):
        for f in _extensions(plan, space, *_budget(faults, space)):
            child = faults + (f,)
            assert child not in seen
            seen.add(child)
            _v, _w, child_plan = _run(base, "safe", 0, child, dedup=False)
            assert child_plan.fired == list(child)
            if any(_budget(child, space)):
                walk(child, child_plan)

    _v, _w, plan = _run(base, "safe", 0, (), dedup=False)
    walk((), plan)
    kinds = {tuple(f.kind for f in s) for s in seen}
    assert {("lost_request", "lost_response"), ("lost_response", "lost_request"), ("crash", "lost_request"),
            ("lost_request", "crash")} <= kinds
    x = explore(simkit.load("quarantine_boundary"), "safe", max_crashes=1, lost_responses=1, lost_requests=1,
                dedup=False)
    assert x.schedules == 1 + len(seen)


def test_deduplication_stays_sound_with_lost_requests():
    sc = simkit.load("retry_walkthrough")
    a = explore(sc, TrustsTimedOutCommits, max_crashes=2, lost_requests=1)
    b = explore(sc, TrustsTimedOutCommits, max_crashes=2, lost_requests=1, dedup=False)
    assert set(a.kinds) == set(b.kinds) and a.kinds
    assert 0 < a.deduplicated and a.schedules < b.schedules


def test_explore_cli_flag_json_and_replayable_out_file(tmp_path, capsys):
    consumer = tmp_path / "trusting.py"
    consumer.write_text(CONSUMER_FILE)
    ref = f"{consumer}:TrustsTimedOutCommits"
    out = tmp_path / "first.toml"
    argv = ["explore", "retry_walkthrough", "--strategy", ref, "--max-crashes", "0", "--lost-requests", "1"]
    assert main([*argv, "--json", "--out", str(out)]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["lost_requests"] == 1 and d["lost_responses"] == 0 and d["violations"] > 0
    assert d["first_violation"]["faults"] == [{"kind": "lost_request", "position": 106,
                                               "op": "checkpoint_write"}]
    assert main(["run", str(out), "--strategy", ref, "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in replayed.items() if k != "scenario"} == \
        {k: v for k, v in d["first_violation"]["verdict"].items() if k != "scenario"}
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "and 1 lost request, over" in text and "lost checkpoint_write request@106" in text
    assert "add --out FILE" in text                 # no --crash argument says "lose this request"
    assert main(["explore", "retry_walkthrough", "--max-crashes", "1", "--lost-requests", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["violations"] == 0 and d["lost_requests"] == 1


def test_explore_cli_refuses_a_negative_bound(capsys):
    assert main(["explore", "retry_walkthrough", "--lost-requests", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: --lost-requests -1: must be at least 0") and err.count("\n") == 1
    with pytest.raises(simkit.SimkitError, match="^lost_requests -1: must be at least 0$"):
        explore(simkit.load("retry_walkthrough"), lost_requests=-1)


# -- the swimlane --------------------------------------------------------------------------------------------
def test_the_swimlane_draws_a_lost_request_as_one_that_never_arrives(ax):
    from simkit.viz.swimlane import swimlane
    sc = _bare("lost_barrier_reply")
    run = simkit.simulate(sc, faults=(Fault("lost_request", op="checkpoint_write", occurrence=4),))
    swimlane(ax, run)
    texts = [t.get_text() for t in ax.texts]
    assert "request lost: store still holds C1 v0" in texts
    assert not any("(durable), reply lost" in t for t in texts)
    marks = {c.get_gid(): c.get_offsets().tolist() for c in ax.collections if c.get_gid()}
    assert "reply lost" not in marks and len(marks["request lost"]) == 1
    (x, y), = marks["request lost"]
    assert 2.5 < x < 3.0 and -2 < y < 0  # short of the store lane (-2), after the request left
    assert [line.get_xdata()[0] for line in ax.lines if line.get_gid() == "wait"] == [3.0]
    assert "request lost on its way (never arrived: nothing written)" in [t.get_text() for t in
                                                                          ax.get_legend().get_texts()]
