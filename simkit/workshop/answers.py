"""What simkit does, computed when asked: the run behind each prediction's answer (:data:`COMPUTE`), and the
small scenarios the questions and exercises share. Nothing here is a stored answer."""
from __future__ import annotations

import copy
import csv
import functools

import simkit
from simkit.procedure.shortcuts import scenario_of
from simkit.tools.explore import fault_free
from simkit.viz import widgets

from .reply import SWEEPS

__all__ = ["BOUNDARY", "COMPUTE", "EIGHT_EVENTS", "QUARANTINE_BEHAVIOURS", "crash_after_commit_runs",
           "eight_events"]


@functools.cache
def _walkthrough_trace():
    return simkit.simulate(simkit.load("retry_walkthrough"), simkit.Consumer).trace.to_frame()


def _shortcut_notices() -> str:
    """Does persist_token_on_fetch, after losing e107, stall, halt, or complete?"""
    v = widgets.comparison_runs("persist_token_on_fetch")[1].verdict
    return "halts" if v.halted else "completes" if v.completed else "stalls"


def crash_after_commit_runs() -> tuple[simkit.Run, simkit.Run]:
    """persist_token_on_fetch on its own input with the crash just before 107's commit (the scenario's) and
    just after it: notebook 00 shows both."""
    sc = fault_free(simkit.load(scenario_of("persist_token_on_fetch")))
    before, after = (simkit.simulate(sc, simkit.resolve("persist_token_on_fetch"),
                                     faults=widgets.crash_fault(point, 107))
                     for point in ("before_event_commit", "after_event_commit"))
    return before, after


def _crash_after_commit() -> str:
    lost = crash_after_commit_runs()[1].verdict.lost
    return lost[0] if len(lost) == 1 else "none" if not lost else "/".join(lost)


#: notebook 01's small stream, the one whose timeline teaches: eight events at 10 to 70, an overlap (page C2
#: starts again at 30), a backfill (25, served behind 50 on page C3), a transient failure (60 answers
#: retry_later once) and one crash, before 50's commit
EIGHT_EVENTS = {
    "name": "eight_events",
    "description": "Notebook 01's small stream: an overlap, a backfill, a transient failure and one crash.",
    "sink": "transactional", "backfills": True,
    "initial": {"resume_cursor": "C1"},
    "pages": [
        {"cursor": "C1", "positions": [10, 20, 30], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [30, 40, 50], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [25, 60, 70], "next_cursor": "C4"},
        {"cursor": "C4", "positions": [], "next_cursor": "C4"}],
    "events": [{"position": 60, "behavior": "transient", "failures": 1}],
    "faults": [{"kind": "crash", "point": "before_event_commit", "position": 50}],
}


def eight_events() -> simkit.Scenario:
    """Notebook 01's small stream (:data:`EIGHT_EVENTS`), parsed."""
    return simkit.parse(copy.deepcopy(EIGHT_EVENTS), source="<eight_events>")


def _deliveries_of_30() -> int:
    df = simkit.simulate(eight_events(), simkit.Consumer).trace.to_frame()
    return int(((df.event_id == "e30") & df.step.isin(["commit", "replay", "handle", "quarantine"])).sum())


def _loses_without_crash() -> str:
    run = simkit.simulate(fault_free(simkit.load("default")), simkit.resolve("persist_token_on_fetch"))
    return "yes" if run.world.crashes == 0 and run.verdict.lost else "no"


def _final_version() -> int:
    df = _walkthrough_trace()
    return int(df.checkpoint_version.iloc[-1])


def _never_durable():
    return simkit.parse({
        "name": "retry_walkthrough_107_never_durable",
        "initial": {"resume_cursor": "C7", "applied_position": 105, "checkpoint_version": 1,
                    "receipts": [104, 105]},
        "pages": [{"cursor": "C7", "positions": [104, 106, 107], "next_cursor": "C8"},
                  {"cursor": "C8", "positions": [], "next_cursor": "C8"}],
        "events": [{"position": 107, "behavior": "transient", "failures": 1000}],
        "timing": {"time_limit": 200.0}})


def _stuck_107() -> str:
    v = simkit.simulate(_never_durable(), simkit.Consumer).verdict
    return "lost" if "e107" in v.lost else "pending" if "e107" in v.pending else "applied"


def _stuck_ok() -> str:
    return "yes" if simkit.simulate(_never_durable(), simkit.Consumer).verdict.ok else "no"


def _in_memory_crashes() -> int:
    """Crashes in in_memory_quarantine's run of quarantine_boundary, whose one fault is a crash before 211's
    quarantine receipt."""
    return simkit.simulate(simkit.load("quarantine_boundary"),
                           simkit.resolve("in_memory_quarantine")).world.crashes


QUARANTINE_BEHAVIOURS = {
    "retry_later": {"behavior": "transient", "failures": 3},
    "operator_review": {"behavior": "review", "resolve_after": 30.0, "resolution": "quarantine"},
    "reversible_hold": {"behavior": "hold", "release_after": 30.0},
}
#: Seed 000's quarantine boundary page: 210, 211, 212, with a receipt for 212 already durable.
BOUNDARY = {
    "initial": {"resume_cursor": "C21", "applied_position": 209, "checkpoint_version": 4, "receipts": [212]},
    "pages": [{"cursor": "C21", "positions": [210, 211, 212], "next_cursor": "C22"},
              {"cursor": "C22", "positions": [], "next_cursor": "C22"}],
}


def _in_memory_loses() -> frozenset:
    lost = set()
    for outcome, spec in QUARANTINE_BEHAVIOURS.items():
        sc = simkit.parse({"name": f"boundary_{outcome}", **copy.deepcopy(BOUNDARY),
                           "events": [{"position": 211, **spec}]})
        if simkit.simulate(sc, simkit.resolve("in_memory_quarantine")).verdict.lost:
            lost.add(outcome)
    return frozenset(lost)


def _watermark_crashes() -> int:
    return widgets.comparison_runs("max_position_watermark")[1].world.crashes


def _no_version_check_harm() -> str:
    v = widgets.comparison_runs("no_version_check")[1].verdict
    harms = [name for name, bad in (("lost", v.lost), ("duplicated", v.duplicated),
                                    ("regression", v.regressions))
             if bad]
    return harms[0] if len(harms) == 1 else "nothing" if not harms else "/".join(harms)


def _crash_matrix_scenario():
    return simkit.parse({
        "name": "crash_matrix", "sink": "idempotent", "backfills": False,
        "initial": {"resume_cursor": "C1"},
        "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
                  {"cursor": "C2", "positions": [4, 5], "next_cursor": "C3"},
                  {"cursor": "C3", "positions": [], "next_cursor": "C3"}],
        "events": [{"position": 2, "behavior": "poison"}, {"position": 4, "behavior": "poison"}],
    }, source="notebook 05")


def _safe_failing_schedules() -> int:
    from simkit.tools.explore import explore
    return explore(_crash_matrix_scenario(), "safe", max_crashes=1).violations


def _most_hurt() -> str:
    fx = widgets.crash_effects(_crash_matrix_scenario(), simkit.SHORTCUTS)
    points = {name: int((fx.xs(name, level="strategy").worse > 0).sum()) for name in simkit.SHORTCUTS}
    return max(points, key=points.__getitem__)


@functools.cache
@functools.cache
def _late_retry_without_check() -> simkit.Run:
    return simkit.simulate(simkit.load("late_retry"), simkit.resolve("no_version_check"))


def _final_cursor_without_check() -> str:
    return _late_retry_without_check().world.store.checkpoint.resume_cursor


def _stale_worker_barriers() -> int:
    df = _late_retry_without_check().trace.to_frame()
    return int(((df.worker == 1) & (df.step == "barrier")).sum())


def _refetch_after_lost_reply() -> str:
    run = simkit.simulate(simkit.load("lost_barrier_reply"), simkit.Consumer)
    return "yes" if [rec[3] for rec in run.world.provider.log].count("C1") > 1 else "no"


def _sweep(name: str):
    with open(SWEEPS / f"{name}_crash_rates.csv", newline="") as f:
        return list(csv.DictReader(f))


def _zero_of_200() -> float:
    from simkit.tools.sweep import wilson
    rows = [r for r in _sweep("crash_only") if r["strategy"] == "safe" and float(r["crash_rate"]) == 0.05]
    lost = sum(int(r["lost"]) > 0 for r in rows)
    return 100 * wilson(lost, len(rows))[1]


def _unsafe_sink_repeats() -> str:
    rows = [r for r in _sweep("crash_only_unsafe_sink") if r["strategy"] == "safe"
            and float(r["crash_rate"]) == 0.05]
    share = 100 * sum(int(r["duplicated"]) > 0 for r in rows) / len(rows)
    return min(("0%", "10%", "50%", "90%"), key=lambda c: abs(float(c[:-1]) - share))


def _lost_reply_retry() -> str:
    from simkit.service import DEV_SCOPE, DEV_TENANT, ManualClock, dev_service
    from simkit.service.clients import WRITE
    from simkit.service.transport import ModelTransport, ReplyLost
    svc = dev_service(ManualClock())
    api = ModelTransport(svc)
    journal = svc.journal_id(DEV_TENANT, DEV_SCOPE)

    def save(key, revision, seq, faults=()):
        return api.post(WRITE, {"scope": DEV_SCOPE, "command": {
            "contract_version": 1, "idempotency_key": key, "consumer_id": "context-cache",
            "expected_revision": revision, "cursor": {"journal_id": journal, "sequence": seq}}},
                        faults=faults)

    save("page-1", 0, 2)
    try:
        save("page-2", 1, 4, faults=("lose-reply",))
    except ReplyLost:
        pass
    commits = len(svc.writes)
    retry = save("page-2", 1, 4)
    if retry.status == 409:
        return "conflict"
    return "twice" if len(svc.writes) > commits else "receipt"


def _double_ack_client() -> str:
    from simkit.service import run_service_scenario
    doubled = [c for c in ("correct", "new_key_retry", "reset_on_409")
               if run_service_scenario("checkpoint_service", c).verdict.duplicate_acks]
    return doubled[0] if len(doubled) == 1 else "/".join(doubled)


def _scan_done() -> str:
    from simkit.service import DEV_SCOPE, ManualClock, dev_service
    from simkit.service.clients import QUERY
    from simkit.service.transport import ModelTransport
    page = ModelTransport(dev_service(ManualClock())).post(QUERY, {
        "contract_version": 1, "scope": DEV_SCOPE,
        "filter": {"limit": 2, "scan_limit": 2, "next_after": None}})
    return "yes" if page["next_after"] is None else "no"


#: question key -> the function that computes its answer from a run made now
COMPUTE = {
    "shortcut_notices": _shortcut_notices, "crash_after_commit": _crash_after_commit,
    "deliveries_of_30": _deliveries_of_30, "loses_without_crash": _loses_without_crash,
    "final_version": _final_version, "stuck_107": _stuck_107, "stuck_ok": _stuck_ok,
    "in_memory_crashes": _in_memory_crashes, "in_memory_loses": _in_memory_loses,
    "watermark_crashes": _watermark_crashes, "no_version_check_harm": _no_version_check_harm,
    "safe_failing_schedules": _safe_failing_schedules, "most_hurt": _most_hurt,
    "final_cursor_without_check": _final_cursor_without_check,
    "stale_worker_barriers": _stale_worker_barriers,
    "refetch_after_lost_reply": _refetch_after_lost_reply, "lost_reply_retry": _lost_reply_retry,
    "double_ack_client": _double_ack_client, "scan_done": _scan_done,
    "zero_of_200": _zero_of_200, "unsafe_sink_repeats": _unsafe_sink_repeats,
}
