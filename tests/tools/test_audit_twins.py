"""Issue 31: the audit runs no case twice. A case whose runs are an earlier case's (its scenario the same but
for name, description and source) is judged as that one is (:func:`simkit.tools.audit_cases.twins`), and an
exploration's subtree starts from the extensions its one-fault run found, not from that run again."""
import dataclasses

import pytest

import simkit
from simkit.tools import audit as auditor
from simkit.tools import schedules
from simkit.tools.audit_cases import _inputs, cases, twins
from simkit.tools.explore import explore


def _label(c) -> str:
    return f"{c.kind}: {c.label}"


def test_twins_are_the_cases_whose_runs_are_the_same():
    todo = cases()
    same = twins(todo)
    pairs = {(todo[i].name, todo[j].name) for i, js in same.items() for j in js}
    # late_retry and shortcut_no_version_check differ only in a scripted pause, which exploration drops
    assert ("late_retry", "shortcut_no_version_check") in pairs
    assert all(todo[i].kind == "explore" for i, js in same.items() if todo[i].name == "late_retry")
    for i, js in same.items():
        for j in js:
            a, b = todo[i], todo[j]
            assert i < j
            assert (a.seed, a.bounds, a.ops, a.keep_faults) == (b.seed, b.bounds, b.ops, b.keep_faults)
            assert _inputs(a) == _inputs(b) and a.scenario.name != b.scenario.name
    # the bundled late_retry keeps its pause: it is no twin of shortcut_no_version_check
    bundled = {todo[i].name for i, _js in same.items() if todo[i].kind == "bundled"}
    assert "late_retry" not in bundled
    later = [j for js in same.values() for j in js]
    assert len(later) == len(set(later))


def test_a_scenario_differing_in_anything_a_run_reads_is_no_twin():
    todo = [c for c in cases(1, 0) if c.kind == "bundled" and c.name == "retry_walkthrough"]
    other = dataclasses.replace(todo[0], scenario=dataclasses.replace(todo[0].scenario, name="other"),
                                name="other")
    assert twins([todo[0], other]) == {0: [1]}
    timing = dataclasses.replace(other.scenario.timing, timeout=other.scenario.timing.timeout + 1)
    slower = dataclasses.replace(other, scenario=dataclasses.replace(other.scenario, timing=timing))
    assert twins([todo[0], slower]) == {}
    assert twins([todo[0], dataclasses.replace(other, seed=other.seed + 1)]) == {}


#: Cheap twins: the retry walkthrough's three names, bundled and explored, and late_retry's lost fetches.
def _cheap():
    return [c for c in cases(1, 0) if c.name in ("retry_walkthrough", "shortcut_max_position_watermark",
                                                  "shortcut_persist_token_on_fetch")
            or (c.name in ("late_retry", "shortcut_no_version_check") and c.ops == ("fetch",))]


@pytest.mark.parametrize("strategy", ["safe", "persist_token_on_fetch", "max_position_watermark",
                                      "no_version_check", "watermark_only_dedup", "in_memory_quarantine"])
def test_a_twin_judged_on_its_own_is_judged_as_its_first(strategy):
    cls = simkit.resolve(strategy)
    todo = _cheap()
    same = twins(todo)
    assert sum(map(len, same.values())) >= 10
    for i, js in same.items():
        _done, failure, stalled = auditor._try(todo[i], cls)
        for j in js:
            _done, own, own_stalled = auditor._try(todo[j], cls)
            assert auditor._twin((failure, stalled), todo[j]) == (own, own_stalled), _label(todo[j])


@pytest.mark.parametrize("strategy", ["persist_token_on_fetch", "watermark_only_dedup", "safe"])
def test_an_audit_of_twins_is_the_audit_that_runs_each(monkeypatch, strategy):
    todo = _cheap()
    monkeypatch.setattr(auditor, "cases", lambda *a: todo)
    shared = simkit.audit(strategy, shrink_first=False).as_dict()
    monkeypatch.setattr(auditor, "twins", lambda todo: {})
    assert simkit.audit(strategy, shrink_first=False).as_dict() == shared
    assert simkit.audit(strategy, shrink_first=False, jobs=2).as_dict() == shared
    if strategy == "persist_token_on_fetch":             # it fails them: every name is reported
        names = {f["case"].split(" seed")[0] for f in shared["failures"]}
        assert {"retry_walkthrough", "shortcut_persist_token_on_fetch"} <= names


def test_first_only_stops_at_the_first_twin_that_fails(monkeypatch):
    todo = [c for c in _cheap() if c.kind == "bundled"]
    monkeypatch.setattr(auditor, "cases", lambda *a: todo)
    a = simkit.audit("persist_token_on_fetch", first_only=True, shrink_first=False)
    assert [f.case.name for f in a.failures] == ["retry_walkthrough"] and len(a.left_out) == len(todo) - 1


def _counting(monkeypatch) -> list:
    """The fault schedules run from now on, one entry per run (``run_schedule`` counted wherever it is
    called from)."""
    runs = []
    run = schedules.run_schedule

    def counted(*args, **kwargs):
        runs.append(args[3])
        return run(*args, **kwargs)
    monkeypatch.setattr(schedules, "run_schedule", counted)
    monkeypatch.setattr(simkit.tools.explore, "run_schedule", counted)
    return runs


@pytest.mark.parametrize("name, kw", [("transient_storm", {"max_crashes": 2}),
                                      ("retry_walkthrough", {"max_crashes": 1, "lost_responses": 1}),
                                      ("late_retry", {"max_crashes": 0, "lost_requests": 2})])
def test_no_schedule_is_run_twice(monkeypatch, name, kw, shared):
    """Each one-fault schedule is run once: its subtree starts from the extensions that run found. Every run
    is a schedule counted, or one skipped as equivalent (run up to its last crash)."""
    sc = simkit.load(name)
    whole = shared.explore(name, "safe", share_prefixes=False, **kw)
    runs = _counting(monkeypatch)
    again = explore(sc, "safe", share_prefixes=False, **kw)
    assert again.as_dict() == whole.as_dict() and again.digest == whole.digest
    assert len(runs) == len(set(runs)) == whole.schedules + whole.deduplicated


def test_an_audited_exploration_runs_each_schedule_once(monkeypatch, shared):
    """The fault-free run that decides whether to explore at all is the exploration's own."""
    case = next(c for c in cases(1, 0) if c.name == "transient_storm" and c.bounds == (2, 0, 0))
    whole = shared.explore(case.name, "safe", max_crashes=2, share_prefixes=False)
    runs = _counting(monkeypatch)
    monkeypatch.setattr(auditor, "simulate", lambda *a, **k: pytest.fail("a run outside the exploration"))
    monkeypatch.setattr(auditor, "_SPLIT_FROM", 10**6)
    monkeypatch.setattr(simkit.tools.forked, "pays", lambda seconds: False)     # from scratch, as whole was
    assert auditor._try(case, simkit.Consumer) == ("done", None, False)
    assert len(runs) == len(set(runs)) == whole.schedules + whole.deduplicated
