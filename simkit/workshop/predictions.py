"""The predict-then-see questions of the notebooks: :func:`check_prediction` answers each from a run made
when it is called, never from a stored answer; unanswered, it says how to answer and gives nothing away."""
from __future__ import annotations

import copy
import csv
import functools
import numbers

import simkit
from simkit.tools.explore import fault_free
from simkit.viz import widgets

from .reply import SWEEPS, Check, Refused, is_number

__all__ = ["BOUNDARY", "PREDICTIONS", "QUARANTINE_BEHAVIOURS", "check_prediction", "prediction_answer"]

# -- predictions -------------------------------------------------------------------------------------------------
def _event_id(value) -> str:
    if is_number(value):
        return f"e{value}"
    if isinstance(value, str) and value.strip().lower() in ("none", "nothing", "-"):
        return "none"
    if isinstance(value, str) and value.strip().lstrip("e").isdigit():
        return "e" + value.strip().lstrip("e")
    raise Refused(f"an event is a position such as 107 or an id such as 'e107', not {value!r}")


def _position_set(value) -> frozenset:
    items = [value] if is_number(value) or isinstance(value, str) else value
    try:
        ids = [_event_id(v) for v in items]
    except TypeError:
        raise Refused(f"name the events as a list such as [104, 106], not {value!r}") from None
    return frozenset(int(i[1:]) for i in ids if i != "none")


def _yes_no(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "y", "n"):
        return "yes" if value.strip().lower().startswith("y") else "no"
    raise Refused(f"answer 'yes' or 'no' (or True or False), not {value!r}")


def _one_of(*choices):
    def normalize(value):
        text = str(value).strip().lower() if isinstance(value, str) else value
        for choice in choices:
            if text == (choice.lower() if isinstance(choice, str) else choice):
                return choice
        raise Refused(f"choose one of {', '.join(map(repr, choices))}, not {value!r}")
    return normalize


def _names(*choices):
    def normalize(value):
        items = [value] if isinstance(value, str) else list(value)
        out = set()
        for item in items:
            out.add(_one_of(*choices)(item))
        return frozenset(out)
    return normalize


def _percent(value):
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 <= value <= 100:
        return float(value)
    raise Refused(f"a percentage is a number from 0 to 100 such as 5 or 0.5, not {value!r}")


def _count(value):
    if is_number(value) and value >= 0:
        return int(value)
    raise Refused(f"a count is a whole number such as 0 or 3, not {value!r}")


@functools.cache
def _walkthrough_trace():
    return simkit.simulate(simkit.load("retry_walkthrough"), simkit.Consumer).trace.to_frame()


def _after_crash_cursor() -> str:
    df = _walkthrough_trace()
    restart = df.index[df.step == "restart"][0]
    return df[(df.index > restart) & (df.step == "fetch")].resume_cursor.iloc[0]


def _lost_on_fetch() -> str:
    lost = widgets.comparison_runs("persist_token_on_fetch")[1].verdict.lost
    return lost[0] if len(lost) == 1 else "none"


def _cursor_moves_at() -> str:
    df = simkit.simulate(simkit.load("default"), simkit.Consumer).trace.to_frame()
    steps = set(df[df.resume_cursor != df.resume_cursor.shift()].iloc[1:].step)
    return "barrier" if steps == {"barrier"} else "/".join(sorted(steps))


def _loses_without_crash() -> str:
    run = simkit.simulate(fault_free(simkit.load("default")), simkit.resolve("persist_token_on_fetch"))
    return "yes" if run.world.crashes == 0 and run.verdict.lost else "no"


def _replays_after_crash() -> frozenset:
    df = _walkthrough_trace()
    restart = df.index[df.step == "restart"][0]
    return frozenset(int(p) for p in df[(df.index > restart) & (df.step == "replay")].position)


def _never_durable():
    return simkit.parse({
        "name": "retry_walkthrough_107_never_durable",
        "initial": {"resume_cursor": "C7", "applied_position": 105, "checkpoint_version": 1, "receipts": [104, 105]},
        "pages": [{"cursor": "C7", "positions": [104, 106, 107], "next_cursor": "C8"},
                  {"cursor": "C8", "positions": [], "next_cursor": "C8"}],
        "events": [{"position": 107, "behavior": "transient", "failures": 1000}],
        "timing": {"time_limit": 200.0}})


def _stuck_107() -> str:
    v = simkit.simulate(_never_durable(), simkit.Consumer).verdict
    return "lost" if "e107" in v.lost else "pending" if "e107" in v.pending else "applied"


def _stuck_ok() -> str:
    return "yes" if simkit.simulate(_never_durable(), simkit.Consumer).verdict.ok else "no"


def _prefix_at_crash() -> int:
    from simkit.viz import plot
    run = simkit.simulate(simkit.load("quarantine_boundary"), simkit.Consumer)
    df = run.trace.to_frame()
    crash_time = df.time[df.step == "crash"].iloc[0]
    times, prefix = plot.durable_prefix(run)
    return [p for t, p in zip(times, prefix) if t <= crash_time][-1]


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
    harms = [name for name, bad in (("lost", v.lost), ("duplicated", v.duplicated), ("regression", v.regressions))
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
    return max(points, key=points.get)


def _stale_barrier() -> str:
    df = simkit.simulate(simkit.load("late_retry"), simkit.Consumer).trace.to_frame()
    return "rejected" if (df[df.worker == 1].step == "barrier_rejected").any() else "overwrites"


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
    rows = [r for r in _sweep("crash_only_unsafe_sink") if r["strategy"] == "safe" and float(r["crash_rate"]) == 0.05]
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
            "expected_revision": revision, "cursor": {"journal_id": journal, "sequence": seq}}}, faults=faults)

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


#: key -> (how to answer, normalize, the answer computed now, why)
PREDICTIONS = {
    # 00 · index
    "after_crash_cursor": (
        "'C7' or 'C8'", _one_of("C7", "C8"), _after_crash_cursor,
        "C7: the worker held C8 only in memory, and a crash keeps nothing of memory. The durable resume_cursor is "
        "still "
        "C7, so it fetches C7 again; the receipts of 104 and 106 make those two harmless replays, 107 is applied, "
        "and only then does the page barrier publish C8."),
    "lost_on_fetch": (
        "104, 106, 107 or 'none'", lambda v: _event_id(v), _lost_on_fetch,
        "e107: persist_token_on_fetch published C8 right after the fetch. 104 was done before the run and 106 was "
        "committed before the crash; 107 was not, and C8 never delivers 107 again. e107 is lost."),
    # 01 · two kinds of progress
    "cursor_moves_at": (
        "'fetch', 'commit' or 'barrier'", _one_of("fetch", "commit", "barrier"), _cursor_moves_at,
        "at the barrier: the durable resume_cursor moves only at page barriers, each after every event of its page "
        "has a durable "
        "outcome. A fetch only puts the next cursor in memory; a commit moves applied_position, not the cursor."),
    "loses_without_crash": (
        "'yes' or 'no'", _yes_no, _loses_without_crash,
        "yes: a crash is only one way to end an attempt early. A lost fetch reply, or an event that answers "
        "retry_later, operator_review or reversible_hold, ends it too; the next attempt starts from a cursor that "
        "was published on fetch and will never deliver the rest of the page."),
    # 02 · the retry walkthrough
    "replays_after_crash": (
        "a list of positions such as [104]", _position_set, _replays_after_crash,
        "[104, 106]: both hold a durable receipt by then (104 from before the run, 106 committed just before the "
        "crash). 107 has none, so it is applied."),
    "stuck_107": (
        "'lost', 'pending' or 'applied'", _one_of("lost", "pending", "applied"), _stuck_107,
        "pending: the durable cursor stays C7, so the provider can still deliver 107. An event is lost only once "
        "the durable cursor has moved past every page that carries it."),
    "stuck_ok": (
        "'yes' or 'no'", _yes_no, _stuck_ok,
        "no, and only because of liveness: completed is false (the run did not catch up before its time limit). "
        "Every safety field is clean: nothing lost or duplicated, no regression, no broken invariant. Staying on "
        "a page that cannot finish is what seed 000 asks for; the verdict says the stream is stuck, not that the "
        "consumer is wrong."),
    # 03 · the quarantine boundary
    "prefix_at_crash": (
        "209, 210, 211 or 212", _one_of(209, 210, 211, 212), _prefix_at_crash,
        "210: 212's receipt is durable, but 211 has only an in-memory decision, and the complete prefix stops at "
        "the first event without a durable terminal outcome."),
    "in_memory_loses": (
        "a list of outcomes, e.g. ['retry_later']", _names(*QUARANTINE_BEHAVIOURS), _in_memory_loses,
        "operator_review and reversible_hold: in_memory_quarantine counts both as final and passes the barrier "
        "with 211 unresolved. It does wait for retry_later, so that variant survives."),
    # 04 · the unsafe shortcuts
    "watermark_crashes": (
        "a count such as 0 or 1", _count, _watermark_crashes,
        "0: right after 106's commit the watermark says 107, so the procedure (which trusts the watermark on a "
        "stream without backfills) takes 107 for a replay and never reaches the crash before 107's commit. It "
        "loses 107 without crashing."),
    "no_version_check_harm": (
        "'lost', 'duplicated', 'regression' or 'nothing'", _one_of("lost", "duplicated", "regression", "nothing"),
        _no_version_check_harm,
        "a regression: the stale write sends the checkpoint back from C4 to C2. Nothing is lost or repeated, "
        "because receipts turn the re-fetched events into replays; the checkpoint going backwards is the harm."),
    # 05 · the crash matrix
    "safe_failing_schedules": (
        "a count such as 0 or 5", _count, _safe_failing_schedules,
        "0: a crash at any pass of any crash point leaves safe with nothing lost, repeated, regressed or broken."),
    "most_hurt": (
        "a shortcut's name", _one_of(*simkit.SHORTCUTS), _most_hurt,
        "persist_token_on_fetch: from its early publish on, a crash anywhere in the rest of the page leaves "
        "events behind the durable cursor."),
    # 06 · late retries and fencing
    "stale_barrier": (
        "'overwrites' or 'rejected'", _one_of("overwrites", "rejected"), _stale_barrier,
        "rejected: the barrier is a compare-and-swap from the attempt's (C1, v0), and the store holds (C4, v3). "
        "The stale worker rereads the checkpoint instead of overwriting newer progress."),
    "refetch_after_lost_reply": (
        "'yes' or 'no'", _yes_no, _refetch_after_lost_reply,
        "no: after the timeout the worker does not guess. It reloads the checkpoint, finds C2 (its compare-and-swap "
        "did commit), and goes on from there."),
    # 07 · the checkpoint service
    "lost_reply_retry": (
        "'receipt', 'conflict' or 'twice'", _one_of("receipt", "conflict", "twice"), _lost_reply_retry,
        "receipt: the service answers the identical command (same key, same cursor, same expected revision) from "
        "the receipt it stored when the first command committed: 200, the original revision and receipt_digest, "
        "nothing committed a second time. Seed 004, step 4: \"On a lost response, retry the identical command with "
        "that same key.\""),
    "double_ack_client": (
        "'correct', 'new_key_retry' or 'reset_on_409'", _one_of("correct", "new_key_retry", "reset_on_409"),
        _double_ack_client,
        "new_key_retry: after a lost reply it rereads, finds its own command committed (a new revision) and sends "
        "the same cursor again under a new key, which the service must accept. Each such page is acknowledged "
        "twice, and the extra revision makes the other worker's honest command conflict."),
    # 08 · sweeps
    "zero_of_200": (
        "a percentage such as 0.5 or 5", _percent, _zero_of_200,
        "about 1.9 %: 0 of 200 runs bounds the loss probability per run below about 1.9 % (95 % Wilson upper bound; "
        "the rule "
        "of three says 3/200 = 1.5 %). It does not make it 0."),
    "unsafe_sink_repeats": (
        "'0%', '10%', '50%' or '90%'", _one_of("0%", "10%", "50%", "90%"), _unsafe_sink_repeats,
        "about 90 %: that is the share of safe's runs that repeat an effect at crash rate 0.05 on a sink without "
        "idempotency, seed 000's own limit. Its guarantee is at-least-once; exactly-once needs the sink's help."),
}

#: predictions whose answer is a number compared with a tolerance, not exactly
_TOLERANCE = {"zero_of_200": 0.4}


def _show(value) -> str:
    if isinstance(value, frozenset):
        return "[" + ", ".join(map(repr, sorted(value))) + "]"
    if isinstance(value, float):
        return f"{value:.1f} %"
    return repr(value)


@functools.cache
def prediction_answer(key: str):
    """The answer to prediction ``key``, computed from a simkit run now."""
    return PREDICTIONS[key][2]()


def check_prediction(key: str, prediction) -> Check:
    """Your ``prediction`` for question ``key`` of a notebook, against what simkit does.

    Unanswered (``None``), it says how to answer and reveals nothing. Answered, it says whether you were right
    and why. It never raises.
    """
    if key not in PREDICTIONS:
        return Check(False, f"there is no question {key!r}; the questions are {', '.join(PREDICTIONS)}", "✎ ")
    how, normalize, _, why = PREDICTIONS[key]
    if prediction is None:
        return Check(False, f"no prediction yet. Set my_prediction to {how} in the cell above and run both cells "
                            "again, or read on: the answer is below.", "✎ ")
    try:
        yours = normalize(prediction)
        truth = prediction_answer(key)
    except Refused as refused:
        return Check(False, str(refused) + ".", "✎ ")
    except Exception as error:      # a check reports, it does not stop the notebook
        return Check(False, f"the check could not use your prediction: {type(error).__name__}: {error}", "✎ ")
    right = abs(yours - truth) <= _TOLERANCE[key] if key in _TOLERANCE else yours == truth
    if right:
        return Check(True, f"right. {why}", "✓ ")
    return Check(False, f"not {_show(yours)}. The answer is {why}", "✗ ")
