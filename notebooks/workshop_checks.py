"""Checks for the notebooks: predictions asked before a figure, and the exercises of 09_workshop.

**Predictions.** A notebook asks a question before it shows the answer: the reader sets a variable
(``my_prediction = None  # 'C7' or 'C8'``) and runs :func:`check_prediction`, which says whether the prediction
was right and why, from a run simkit makes at that moment (never from a stored answer). Unanswered, it says how to
answer and gives nothing away, so a notebook committed with its questions open still runs top to bottom in CI.

**Exercises.** Each ``exercise_N`` takes the learner's answer (a class, a scenario, a function, ...), runs it
through simkit and says what it sees. A wrong answer gets a ``✗ not yet:`` message with a hint that points at
the evidence, not at the solution.

Nothing here raises: a wrong, unfinished or ill-typed answer, or learner code that raises, gives a message, so a
notebook of unanswered questions and unfinished exercises runs top to bottom. A check returns an object that shows
as its message and is true exactly when the answer is right (the solutions notebook and the tests assert it).
"""
from __future__ import annotations

import copy
import csv
import functools
import numbers
import tomllib
from pathlib import Path

import simkit
from simkit import widgets
from simkit.explore import fault_free, replay
from simkit.ops import LOST

#: seed 000, procedure step 4, word for word
WATERMARK_RULE = ("A high-water mark alone may prove replay only when positions are immutable and the stored "
                  "prefix is known complete.")

#: The hooks of simkit.Consumer a learner may name or override (the procedure itself is not a hook).
HOOKS = ("after_fetch", "is_replay", "resulting_applied_position", "is_terminal", "apply", "ignore", "quarantine",
         "settle_effect", "is_caught_up", "barrier_target", "page_barrier")

#: The checked-in sweeps of notebook 08.
SWEEPS = Path(__file__).resolve().parent.parent / "data" / "sweeps"


# -- the reply every check gives -------------------------------------------------------------------------------
class Check:
    """The outcome of one check: ``bool(check)`` says solved (or predicted right), ``repr`` is the message."""

    def __init__(self, solved: bool, text: str, mark: str | None = None):
        self.solved, self.text = solved, text
        self.mark = mark if mark is not None else ("✓ " if solved else "✗ not yet: ")

    def __bool__(self) -> bool:
        return self.solved

    def __repr__(self) -> str:
        return self.mark + self.text


def _say(solved: bool, text: str) -> Check:
    return Check(solved, text)


class _Refused(Exception):
    """Raised inside a check to end it with a ✗ and this text."""


def _never_raises(check):
    """Turn every exception inside a check, the learner's own included, into a ✗ message naming it."""
    @functools.wraps(check)
    def checked(*answer) -> Check:
        try:
            return check(*answer)
        except _Refused as refused:
            return _say(False, str(refused))
        except Exception as error:      # a check reports, it does not stop the notebook
            return _say(False, f"the check could not use your answer: {type(error).__name__}: {error}")
    return checked


def _consumer(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, simkit.Consumer)


def _number(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _simulate(scenario, cls, faults=()) -> simkit.Run:
    """``cls`` on a scenario (a bundled name or a Scenario); the learner's exception becomes a ✗ naming it."""
    sc = simkit.load(scenario) if isinstance(scenario, str) else scenario
    try:
        return simkit.simulate(sc, cls, faults=tuple(faults))
    except Exception as error:          # the learner's hooks may raise anything
        raise _Refused(f"on {sc.name} your consumer raised {type(error).__name__}: {error}") from error


def verdict_text(verdict) -> str:
    """A verdict in one line: the safety fields (lost, invariants; duplicated, regressions and settlement
    violations when there are any), then liveness (completed) and what explains it (halted, pending)."""
    parts = [f"lost {len(verdict.lost)}", f"invariants {verdict.invariants_broken}"]
    if verdict.duplicated:
        parts.append(f"duplicated {len(verdict.duplicated)}")
    if verdict.regressions:
        parts.append(f"regressions {verdict.regressions}")
    if verdict.settlement_violations:
        parts.append(f"settlement violations {len(verdict.settlement_violations)}")
    parts += [f"completed {verdict.completed}", f"halted {verdict.halted}", f"pending {len(verdict.pending)}"]
    return ", ".join(parts)


# -- predictions -------------------------------------------------------------------------------------------------
def _event_id(value) -> str:
    if _number(value):
        return f"e{value}"
    if isinstance(value, str) and value.strip().lower() in ("none", "nothing", "-"):
        return "none"
    if isinstance(value, str) and value.strip().lstrip("e").isdigit():
        return "e" + value.strip().lstrip("e")
    raise _Refused(f"an event is a position such as 107 or an id such as 'e107', not {value!r}")


def _position_set(value) -> frozenset:
    items = [value] if _number(value) or isinstance(value, str) else value
    try:
        ids = [_event_id(v) for v in items]
    except TypeError:
        raise _Refused(f"name the events as a list such as [104, 106], not {value!r}") from None
    return frozenset(int(i[1:]) for i in ids if i != "none")


def _yes_no(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "y", "n"):
        return "yes" if value.strip().lower().startswith("y") else "no"
    raise _Refused(f"answer 'yes' or 'no' (or True or False), not {value!r}")


def _one_of(*choices):
    def normalize(value):
        text = str(value).strip().lower() if isinstance(value, str) else value
        for choice in choices:
            if text == (choice.lower() if isinstance(choice, str) else choice):
                return choice
        raise _Refused(f"choose one of {', '.join(map(repr, choices))}, not {value!r}")
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
    raise _Refused(f"a percentage is a number from 0 to 100 such as 5 or 0.5, not {value!r}")


def _count(value):
    if _number(value) and value >= 0:
        return int(value)
    raise _Refused(f"a count is a whole number such as 0 or 3, not {value!r}")


@functools.lru_cache(maxsize=None)
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
    from simkit import plot
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
    from simkit.explore import explore
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
    from simkit.sweep import wilson
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
        "C7: the worker held C8 only in memory, and a crash keeps nothing of memory. The durable resume_cursor is still "
        "C7, so it fetches C7 again; the receipts of 104 and 106 make those two harmless replays, 107 is applied, "
        "and only then does the page barrier publish C8."),
    "lost_on_fetch": (
        "104, 106, 107 or 'none'", lambda v: _event_id(v), _lost_on_fetch,
        "e107: persist_token_on_fetch published C8 right after the fetch. 104 was done before the run and 106 was "
        "committed before the crash; 107 was not, and C8 never delivers 107 again. e107 is lost."),
    # 01 · two kinds of progress
    "cursor_moves_at": (
        "'fetch', 'commit' or 'barrier'", _one_of("fetch", "commit", "barrier"), _cursor_moves_at,
        "at the barrier: the durable resume_cursor moves only at page barriers, each after every event of its page has a durable "
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
        "about 1.9 %: 0 of 200 runs bounds the loss probability per run below about 1.9 % (95 % Wilson upper bound; the rule "
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


@functools.lru_cache(maxsize=None)
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
    except _Refused as refused:
        return Check(False, str(refused) + ".", "✎ ")
    except Exception as error:      # a check reports, it does not stop the notebook
        return Check(False, f"the check could not use your prediction: {type(error).__name__}: {error}", "✎ ")
    right = abs(yours - truth) <= _TOLERANCE[key] if key in _TOLERANCE else yours == truth
    if right:
        return Check(True, f"right. {why}", "✓ ")
    return Check(False, f"not {_show(yours)}. The answer is {why}", "✗ ")


# -- exercise 1: which hook? ---------------------------------------------------------------------------------------
class Suspect(simkit.Consumer):
    """A teammate's consumer in review. One hook differs from simkit.Consumer; find which from what it does."""

    def is_caught_up(self, checkpoint, page):
        return not page.events


@_never_raises
def exercise_1(hook) -> Check:
    """``hook``: the name of the one hook :class:`Suspect` overrides, found from its verdict and trace."""
    if not isinstance(hook, str) or hook not in HOOKS:
        return _say(False, f"name one hook as a string: one of {', '.join(map(repr, HOOKS))}")
    changed = [h for h in HOOKS if getattr(Suspect, h) is not getattr(simkit.Consumer, h)]
    if [hook] == changed:
        return _say(True, "is_caught_up. It takes every empty page for the end of the stream, so an empty page "
                          "with a new token (a zero-item page the provider uses to move on) stops it for good: "
                          "nothing lost, no invariant broken, the events after it pending and the run not completed. "
                          'Seed 000, step 7: "Do not equate emptiness with end of stream."')
    hints = {
        "is_replay": "a wrong is_replay skips events (they would be lost) or repeats them; this verdict has neither",
        "resulting_applied_position": "a wrong resulting_applied_position writes an applied_position no receipt "
                                      "proves: invariant 2 would be broken, and it is not",
        "is_terminal": "a wrong is_terminal lets a non-terminal outcome close the page: events would be lost and "
                       "invariant 5 broken",
        "apply": "a wrong apply loses or repeats effects, or breaks invariant 2 or 4; none of those here",
        "quarantine": "a wrong quarantine loses poison events or breaks invariant 1; none of those here",
        "ignore": "no event here is ignored by the handler; look at what the run stopped on",
        "settle_effect": "the default scenario's sink is idempotent and no settlement violation is reported",
        "page_barrier": "a wrong page_barrier would regress the checkpoint or break invariant 3",
        "barrier_target": "a wrong barrier_target publishes a token the provider never returned (invariant 3)",
        "after_fetch": "a wrong after_fetch publishes the token early (invariant 1) or never; this one fetches and "
                       "processes pages as safe does, until it stops",
    }
    return _say(False, hints.get(hook, "look again") + ". Nothing is lost and no invariant is broken, yet the run "
                       "never completes: what did the worker fetch just before it stopped for good?")


# -- exercise 2: break it on purpose -------------------------------------------------------------------------------
@_never_raises
def exercise_2(cls) -> Check:
    """Your consumer must lose e105 on shortcut_watermark_only_dedup and pass retry_walkthrough."""
    if not _consumer(cls):
        return _say(False, "define a class that subclasses simkit.Consumer, and pass the class itself")
    backfill = _simulate("shortcut_watermark_only_dedup", cls)
    if backfill.verdict.lost != ["e105"]:
        lost = ", ".join(backfill.verdict.lost) or "nothing"
        return _say(False, f"on shortcut_watermark_only_dedup it lost {lost}; the goal is to lose exactly e105. "
                           "Which hook decides that an event is a replay?")
    walkthrough = _simulate("retry_walkthrough", cls)
    if not walkthrough.verdict.ok:
        return _say(False, f"it loses e105 but also fails retry_walkthrough ({verdict_text(walkthrough.verdict)}); "
                           "change only replay detection")
    return _say(True, "it loses e105 behind the watermark, yet passes the retry walkthrough, where nothing is "
                      f'backfilled. Seed 000, step 4: "{WATERMARK_RULE}"')


# -- exercise 3: quarantine, write the test ------------------------------------------------------------------------
class Impatient(simkit.Consumer):
    """A teammate's consumer: 'an outcome that can be undone later need not block the stream now'."""

    def is_terminal(self, decision):
        return decision == "reversible_hold"


def _scenario(answer) -> simkit.Scenario:
    """A learner's scenario: a dict as simkit.parse takes it, a TOML path, or a Scenario."""
    if isinstance(answer, simkit.Scenario):
        return answer
    if isinstance(answer, (str, Path)) and str(answer).endswith(".toml"):
        return simkit.load(answer)
    if isinstance(answer, dict):
        try:
            return simkit.parse(copy.deepcopy(answer), source="your scenario")
        except simkit.ScenarioError as error:
            raise _Refused(f"simkit.parse refuses it: {error}") from None
    raise _Refused("give a scenario as a dict (as simkit.parse takes it) or the path of a .toml file, "
                   f"not {type(answer).__name__}")


@_never_raises
def exercise_3(scenario) -> Check:
    """``scenario``: a small scenario on which :class:`Impatient` loses an event and ``safe`` is ok."""
    sc = _scenario(scenario)
    safe, impatient = _simulate(sc, simkit.Consumer), _simulate(sc, Impatient)
    if not safe.verdict.ok:
        return _say(False, f"safe fails on your scenario too ({verdict_text(safe.verdict)}), so it tests the "
                           "scenario, not Impatient. A review or hold must resolve within the time limit "
                           "(resolve_after, release_after), a transient event must stop failing.")
    if impatient.verdict.lost:
        return _say(True, f"Impatient loses {', '.join(impatient.verdict.lost)} and safe passes: a reversible "
                          "hold is not a terminal outcome, and Impatient published the page's token past it. "
                          'Seed 000, invariant 5: "a failed item, retryable dead-letter outcome, operator-review '
                          'hold, or reversible quarantine blocks the page barrier".')
    answers = {o for r in (impatient,) for o in r.trace.to_frame().query("step == 'handle'").outcome}
    if not answers - {"quarantine", "apply", "ignore"}:
        hint = ("every event of your scenario got a final answer from the handler (apply or quarantine), and "
                "Impatient treats those right. Give an event a behaviour whose answer is not final: transient, "
                "review or hold (notebook 03, 'Non-terminal outcomes keep the barrier closed').")
    else:
        seen = ", ".join(sorted(answers - {"quarantine", "apply", "ignore"}))
        hint = (f"the handler answered {seen}, and Impatient waited for it as safe does. Which of the non-terminal "
                "outcomes does it take for final? Try the others.")
    return _say(False, f"Impatient passes your scenario ({verdict_text(impatient.verdict)}): {hint}")


# -- exercise 4: fencing a late retry ------------------------------------------------------------------------------
def fencing_stream() -> simkit.Scenario:
    """Two workers on one checkpoint, three pages of three events, no faults: late_retry without its pause."""
    return fault_free(simkit.load("late_retry"))


def _pause(answer) -> simkit.Fault:
    if isinstance(answer, simkit.Fault):
        if answer.kind != "pause":
            raise _Refused(f"a pause is kind 'pause', not {answer.kind!r}")
        return answer
    if not (isinstance(answer, (tuple, list)) and len(answer) == 3):
        raise _Refused('set pause = ("<crash point>", <worker 1 or 2>, <duration>), e.g. ("after_page_barrier", 1, 5.0)')
    point, worker, duration = answer
    if point not in simkit.CRASH_POINTS:
        raise _Refused(f"{point!r} is not a crash point; a pause strikes at one of simkit.CRASH_POINTS")
    if worker not in (1, 2) or isinstance(worker, bool):
        raise _Refused(f"this stream has workers 1 and 2, not {worker!r}")
    if not (isinstance(duration, numbers.Real) and not isinstance(duration, bool) and duration > 0):
        raise _Refused(f"the duration is a positive number of time units such as 10, not {duration!r}")
    return simkit.Fault("pause", point, worker=worker, duration=float(duration))


@_never_raises
def exercise_4(pause) -> Check:
    """``pause = (point, worker, duration)``: on :func:`fencing_stream`, ``no_version_check``'s checkpoint goes
    backwards and ``safe`` is fenced (ok)."""
    fault = _pause(pause)
    sc = fencing_stream()
    shortcut = replay(sc, "no_version_check", (fault,))
    safe = replay(sc, "safe", (fault,))
    df = shortcut.trace.to_frame()
    paused = df[df.step == "pause"] if "pause" in set(df.step) else df.iloc[0:0]
    if not safe.verdict.ok:
        return _say(False, f"safe fails with that pause ({verdict_text(safe.verdict)}); pick another")
    if shortcut.verdict.regressions:
        return _say(True, f"worker {fault.worker} held its attempt identity through the pause while the other worker "
                          "passed a barrier; waking, no_version_check wrote its stale page's token over newer "
                          "progress and the checkpoint went backwards. safe's barrier is a compare-and-swap on the "
                          "attempt's (cursor, version): it was rejected, and the worker reread the checkpoint "
                          "(seed 000, step 5).")
    if paused.empty:
        return _say(False, f"the pause never struck: worker {fault.worker} never reaches {fault.point} on this stream "
                           "(its sink is transactional, so no effect points, and it has no poison event, so no "
                           "quarantine points)")
    if fault.point == "after_page_barrier":
        return _say(False, "a worker paused after its barrier holds nothing stale: its next attempt loads the "
                           "checkpoint afresh. Pause it while it holds a page it fetched, before its barrier.")
    return _say(False, "no regression: while it slept, the other worker did not pass a barrier that the sleeper's "
                       "stale write could undo. Look at the swimlane: how long does a page take? Pause longer, "
                       "between a fetch and its barrier.")


# -- exercise 5: the checkpoint service's 409 ----------------------------------------------------------------------
class _Recording:
    """A transport that records every request the learner's function sends."""

    def __init__(self, api):
        self.api, self.sent = api, []

    def post(self, route, body, *args, **kw):
        reply = self.api.post(route, body, *args, **kw)
        self.sent.append((route, copy.deepcopy(body), reply))
        return reply


def service_409(situation: str = "ahead"):
    """A fresh service (the one ``simkit serve`` starts with) in which worker 1's save has just been refused.

    Worker 1 read the checkpoint at revision 1 (sequence 2), applied the next page and saved sequence 4 with
    ``expected_revision`` 1 and the key ``w1-page-2``: 409 ``revision_conflict``, because worker 2 wrote first.
    What worker 2 wrote depends on ``situation``: ``ahead`` (it saved sequences 4 and 5: revision 3, sequence 5),
    ``behind`` (it saved sequence 2 again under a new key: revision 2, sequence 2) or ``same`` (it saved sequence 4:
    revision 2, sequence 4).

    Returns ``(api, refused, my_cursor, my_key)``: the transport, worker 1's refused reply, and what it tried to save.
    """
    from simkit.service import DEV_SCOPE, ManualClock, dev_service
    from simkit.service.clients import CHANGES, WRITE
    from simkit.service.transport import ModelTransport
    clock = ManualClock()
    api = ModelTransport(dev_service(clock))
    journal = api.post(CHANGES, {"contract_version": 1, "scope": DEV_SCOPE,
                                 "query": {"after": None, "through": None, "limit": 2}})["next_cursor"]["journal_id"]

    def at(seq):
        return {"journal_id": journal, "sequence": seq}

    def save(key, revision, seq):
        clock.advance(1_000)
        return api.post(WRITE, {"scope": DEV_SCOPE, "command": {
            "contract_version": 1, "idempotency_key": key, "consumer_id": "context-cache",
            "expected_revision": revision, "cursor": at(seq)}})

    assert save("w1-page-1", 0, 2).status == 200                   # worker 1 created progress: revision 1
    worker_2 = {"ahead": [("w2-page-2", 1, 4), ("w2-page-3", 2, 5)], "behind": [("w2-resave", 1, 2)],
                "same": [("w2-page-2", 1, 4)]}[situation]
    for key, revision, seq in worker_2:
        assert save(key, revision, seq).status == 200
    refused = save("w1-page-2", 1, 4)
    assert refused.status == 409 and refused["error"]["code"] == "revision_conflict"
    return api, refused, at(4), "w1-page-2"


def _checkpoint(api):
    from simkit.service import DEV_SCOPE
    from simkit.service.clients import READ
    return api.post(READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "context-cache"})["checkpoint"]


@_never_raises
def exercise_5(on_409) -> Check:
    """``on_409(api, my_cursor, my_key)``: worker 1's reaction to the 409, in each :func:`service_409` situation.
    It must reread and reconcile (seed 004, step 5), never overwrite newer progress, acknowledge no page twice,
    get no 409 of its own, and return the cursor worker 1 reads the feed from next."""
    from simkit.service.clients import WRITE
    if not callable(on_409):
        return _say(False, "pass your function itself: check.exercise_5(on_409)")
    for situation, expect in (("ahead", 5), ("behind", 4), ("same", 4)):
        api, _, mine, key = service_409(situation)
        before = _checkpoint(api)
        recording = _Recording(api)
        try:
            result = on_409(recording, copy.deepcopy(mine), key)
        except Exception as error:      # the learner's code may raise anything
            return _say(False, f"when worker 2 is {situation}, your function raised {type(error).__name__}: {error}")
        after = _checkpoint(api)
        refusals = [(r["command"]["idempotency_key"] if route == WRITE else route, reply.status, reply["error"]["code"])
                    for route, r, reply in recording.sent if reply.status >= 400]
        writes = [r for route, r, reply in recording.sent if route == WRITE and reply.status == 200]
        where = {"ahead": "worker 2 already saved sequence 5", "behind": "worker 2 only re-saved sequence 2",
                 "same": "worker 2 already saved sequence 4, yours"}[situation]
        if refusals:
            what, status, code = refusals[0]
            if code == "idempotency_conflict":
                return _say(False, f"{where}, and your save got {status} {code}: that key already names a command "
                                   "the service committed (another cursor, consumer or expected revision). A new "
                                   "command needs a key of its own.")
            if code == "cursor_backward":
                return _say(False, f"{where}: your save tried to move the checkpoint backwards and got {status} "
                                   f"{code}. Compare the cursor you reread with yours before writing.")
            return _say(False, f"{where}, and one of your requests got {status} {code}. Reread first, then decide.")
        if not any(route != WRITE for route, _, _ in recording.sent):
            return _say(False, f"{where}, but your function never reread the checkpoint: step 5, \"On a revision "
                               "conflict, reread current progress and reconcile concurrent work.\"")
        if after["cursor"]["sequence"] != expect:
            return _say(False, f"{where}; afterwards the checkpoint is at sequence {after['cursor']['sequence']}, "
                               f"and it should be at {expect}: the furthest progress either worker made.")
        if situation == "same" and writes:
            return _say(False, f"{where}: your save acknowledged sequence 4 a second time (revision "
                               f"{before['revision']} → {after['revision']}). That is allowed, but it acknowledges "
                               "one page twice and makes worker 2's next command conflict. Write only when the "
                               "server is behind you.")
        if not (isinstance(result, dict) and result.get("sequence") == expect
                and result.get("journal_id") == mine["journal_id"]):
            return _say(False, f"{where}; the server is right, but your function returned {result!r}. Return the "
                               f"cursor worker 1 reads the feed from next (sequence {expect}).")
    return _say(True, "in all three situations you reread, adopted newer progress without writing, wrote yours under "
                      "the current revision only when the server was behind, and acknowledged no page twice. "
                      'Seed 004, step 5: "On a revision conflict, reread current progress and reconcile '
                      "concurrent work. Do not overwrite another worker's newer progress.\" (Comparing sequences is "
                      "allowed here: seed 004's cursors are ordered inside one journal. Seed 000's tokens are "
                      "opaque and are never compared.)")


# -- exercise 6: find the crash ------------------------------------------------------------------------------------
@_never_raises
def exercise_6(crash) -> Check:
    """``crash = (point, position)``: success_before_effect loses an event there on an unsafe sink; safe does not."""
    if not (isinstance(crash, (tuple, list)) and len(crash) == 2):
        return _say(False, 'set crash = ("<crash point>", <position>), e.g. ("after_fetch", 70)')
    point, position = crash
    if point not in simkit.CRASH_POINTS:
        return _say(False, f"{point!r} is not a crash point; pick one of simkit.CRASH_POINTS")
    if not _number(position):
        return _say(False, f"the position is an event's position, a number such as 70, not {position!r}")
    shortcut = widgets.explorer_run(strategy="success_before_effect", sink="unsafe", crash_point=point,
                                    crash_position=position)
    safe = widgets.explorer_run(strategy="safe", sink="unsafe", crash_point=point, crash_position=position)
    note = widgets.crash_note(shortcut)
    if not shortcut.verdict.lost:
        return _say(False, f"success_before_effect lost nothing ({note}). Where is its receipt durable while "
                           "the effect is not?")
    if safe.verdict.lost:
        return _say(False, "safe loses an event there too; pick a crash only the shortcut is exposed to")
    return _say(True, f"success_before_effect loses {', '.join(shortcut.verdict.lost)}; safe loses nothing on "
                      f"the same input ({note}).")


# -- exercise 7: from a failing audit to a minimal counterexample --------------------------------------------------
class Teammate(simkit.Consumer):
    """A teammate's consumer: 'a commit that times out almost always went through; don't redo the page for it'.
    It passes every bundled scenario."""

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        return True if done is LOST else done

    def quarantine(self, event, applied_position):
        done = yield from super().quarantine(event, applied_position)
        return True if done is LOST else done


def _size(sc: simkit.Scenario) -> tuple[int, int]:
    if sc.pages is None:
        raise _Refused("that is a generated scenario; a counterexample to read is a scripted one ([[pages]])")
    events = {p for page in sc.pages for p in page["positions"]}
    return len(events), len(sc.faults)


@_never_raises
def exercise_7(counterexample) -> Check:
    """``counterexample``: a scenario (dict or .toml path) on which :class:`Teammate` fails and ``safe`` passes,
    with at most one event and one fault."""
    sc = _scenario(counterexample)
    teammate, safe = _simulate(sc, Teammate), _simulate(sc, simkit.Consumer)
    if teammate.verdict.ok:
        return _say(False, "Teammate passes this scenario; a counterexample is one it fails. Start from the audit's "
                           "failing case (result.failures[0].scenario).")
    if not safe.verdict.ok:
        return _say(False, f"safe fails here too ({verdict_text(safe.verdict)}): that is the scenario's fault, "
                           "not Teammate's")
    events, faults = _size(sc)
    if events > 1 or faults > 1:
        return _say(False, f"it fails, but with {events} events and {faults} fault{'s' if faults != 1 else ''} it is not minimal yet. Shrink it: "
                           "simkit.shrink.shrink(scenario, Teammate, seed), or use the audit's result.shrunk.")
    return _say(True, f"{events} event and {faults} fault: {verdict_text(teammate.verdict)}. Now read it "
                      "(question below).")


@_never_raises
def exercise_7_explain(answer) -> Check:
    """What went wrong in the counterexample: ``'a'``, ``'b'`` or ``'c'``."""
    choices = {"a": "the fetch was lost and Teammate skipped the page",
               "b": "the commit's request never reached the store; Teammate took the timeout for a commit and "
                    "published the page's token",
               "c": "the commit ran twice"}
    if not isinstance(answer, str) or answer.strip().lower() not in choices:
        return _say(False, "answer 'a', 'b' or 'c'")
    if answer.strip().lower() == "b":
        return _say(True, "a lost request and a lost reply look the same to the caller: a timeout. Only a reread of "
                          "durable state tells them apart. safe treats a commit without a reply as not done and "
                          "retries the page from the durable cursor; Teammate's apply returns True for LOST. "
                          'Seed 000, step 4: "Stop at the first outcome that is not durable and terminal."')
    return _say(False, f"not '{answer.strip().lower()}': {choices[answer.strip().lower()]}? Read the counterexample's "
                       "[[faults]] entry and the trace of Teammate's run on it: which request was lost, and what did "
                       "Teammate do next?")
