"""The predict-then-see questions of the notebooks: :func:`check_prediction` answers each from a run made
when it is called (:mod:`.answers`), never from a stored answer; unanswered, it names the notebook's variable,
says how to answer and gives nothing away. :func:`predict` asks a question as a widget instead of a
variable."""
from __future__ import annotations

import functools
import numbers

import simkit
from simkit.viz import widgets

from .answers import COMPUTE, QUARANTINE_BEHAVIOURS
from .folds import answered
from .reply import Check, Refused, as_whole, is_number

__all__ = ["CHOICES", "PREDICTIONS", "VARIABLES", "check_prediction", "predict", "prediction_answer"]

# -- predictions ---------------------------------------------------------------------------------------------
def _event_id(value) -> str:
    value = as_whole(value)
    if is_number(value):
        return f"e{value}"
    if isinstance(value, str) and value.strip().lower() in ("none", "nothing", "-"):
        return "none"
    if isinstance(value, str) and value.strip().lower().removeprefix("e").isdecimal():
        return "e" + value.strip().lower().removeprefix("e")
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
    if isinstance(value, str) and value.strip().lower() in ("yes", "no", "y", "n", "true", "false"):
        return "yes" if value.strip().lower()[0] in "yt" else "no"
    raise Refused(f"answer 'yes' or 'no' (or True or False), not {value!r}")


def _spelled(text: str) -> str:
    """A choice as compared: case, spaces, ``_`` and ``-`` aside (``"Operator review"``, ``"90 %"``)."""
    return "".join(c for c in text.lower() if c not in " _-\t")


def _one_of(*choices):
    def normalize(value):
        text = _spelled(value) if isinstance(value, str) else value
        for choice in choices:
            if text == (_spelled(choice) if isinstance(choice, str) else choice):
                return choice
        raise Refused(f"choose one of {', '.join(map(repr, choices))}, not {value!r}")
    return normalize


#: a list of names written as a learner writes "not one of them" or "every one" (``'none'`` was refused with
#: "choose one of ...", which never said that ``[]`` answers it)
_NO_NAME, _EVERY_NAME = ("none", "nothing", "", "[]"), ("all", "every", "allofthem", "everyone")


def _names(*choices):
    def normalize(value):
        if isinstance(value, str) and _spelled(value) in _NO_NAME + _EVERY_NAME:
            return frozenset(choices if _spelled(value) in _EVERY_NAME else ())
        try:                                            # 5 was "TypeError: not iterable"
            items = value.split(",") if isinstance(value, str) else list(value)
        except TypeError:
            raise Refused(f"name them as a list such as ['retry_later'] ([] for none), "
                          f"not {value!r}") from None
        return frozenset(_one_of(*choices)(item) for item in items
                         if not (isinstance(item, str) and _spelled(item) in _NO_NAME))
    return normalize


def _percent(value):
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 <= value <= 100:
        return float(value)
    raise Refused(f"a percentage is a number from 0 to 100 such as 5 or 0.5, not {value!r}")


def _count(value):
    value = int(value) if isinstance(value, str) and value.strip().isdecimal() else as_whole(value)
    if is_number(value) and value >= 0:
        return int(value)
    raise Refused(f"a count is a whole number such as 0 or 3, not {value!r}")


#: key -> (how to answer, normalize, the answer computed now, why)
PREDICTIONS = {
    # 00 · index
    "shortcut_notices": (
        "'stalls', 'halts' or 'completes'",
        _one_of("stalls", "halts", "completes"),
        COMPUTE["shortcut_notices"],
        "completes: after the restart persist_token_on_fetch fetches C8, gets an empty page with its own "
        "token back, and is caught up. Nothing halts, because the provider kept its contract (C8 simply "
        "never mentions 107 again), and nothing stalls. The consumer cannot see its own loss; only the "
        "checker, reading ground truth, does: e107 lost, completed true. A run that ends quietly proves "
        "nothing.",
    ),
    "crash_after_commit": (
        "104, 106, 107 or 'none'",
        lambda v: _event_id(v),
        COMPUTE["crash_after_commit"],
        "none: a crash just after 107's commit finds every event of the page durable, so the C8 published "
        "at the fetch skips nothing that is not done. The shortcut loses only when something ends the "
        "attempt inside its window, between the early publish and the page's last commit; a test with one "
        "crash at one point easily misses it. The checker still reports invariant 1 for this run: the "
        "durable cursor ran ahead of durable work, whether or not a loss followed.",
    ),
    # 01 · two kinds of progress
    "deliveries_of_30": (
        "a count such as 1 or 2",
        _count,
        COMPUTE["deliveries_of_30"],
        "3: page C1 delivers 30 and the safe consumer commits it; page C2 starts again at 30 (an overlap), "
        "and its receipt makes it a replay; then the crash before 50's commit wipes the worker's memory "
        "while the durable cursor is still C2, so the restarted worker fetches the whole of C2 again, and "
        "30 is a replay a second time. Every page that is not finished is fetched again from its start, "
        "and each event on it is judged by its receipt, not by where it sits.",
    ),
    "loses_without_crash": (
        "'yes' or 'no'",
        _yes_no,
        COMPUTE["loses_without_crash"],
        "yes: a crash is only one way to end an attempt early. A lost fetch reply, or an event that "
        "answers retry_later, operator_review or reversible_hold, ends it too; the next attempt starts "
        "from a cursor that was published on fetch and will never deliver the rest of the page.",
    ),
    # 02 · the retry walkthrough
    "final_version": (
        "a version such as 2, 3 or 4",
        _count,
        COMPUTE["final_version"],
        "2: the run writes the checkpoint three times (106's commit, 107's commit, the barrier), but only "
        "the page barrier is a compare-and-swap to a greater version. An event commit raises "
        "applied_position in the receipt's own transaction and leaves resume_cursor and checkpoint_version "
        "alone: applied_position only ever rises, so it needs no fence. Were a commit to bump the version, "
        "the page's own barrier, which compares against the (C7, v1) loaded at the start of the attempt, "
        "would be rejected by its own work.",
    ),
    "stuck_107": (
        "'lost', 'pending' or 'applied'",
        _one_of("lost", "pending", "applied"),
        COMPUTE["stuck_107"],
        "pending: the durable cursor stays C7, so the provider can still deliver 107. An event is lost "
        "only once the durable cursor has moved past every page that carries it.",
    ),
    "stuck_ok": (
        "'yes' or 'no'",
        _yes_no,
        COMPUTE["stuck_ok"],
        "no, and only because of liveness: completed is false (the run did not catch up before its time "
        "limit). Every safety field is clean: nothing lost or duplicated, no regression, no broken "
        "invariant. Staying on a page that cannot finish is what seed 000 asks for; the verdict says the "
        "stream is stuck, not that the consumer is wrong.",
    ),
    # 03 · the quarantine boundary
    "in_memory_crashes": (
        "a count such as 0 or 1",
        _count,
        COMPUTE["in_memory_crashes"],
        "0: in_memory_quarantine takes its in-memory decision for 211 as final and never writes a "
        "quarantine receipt, so the crash point before that receipt is never reached. It passes the "
        "barrier with 211 decided only in memory, and 211 is lost without any crash. A fault schedule "
        "tests a consumer only where the consumer goes.",
    ),
    "in_memory_loses": (
        "a list of outcomes, e.g. ['retry_later']",
        _names(*QUARANTINE_BEHAVIOURS),
        COMPUTE["in_memory_loses"],
        "operator_review and reversible_hold: in_memory_quarantine counts both as final and passes the "
        "barrier with 211 unresolved. It does wait for retry_later, so that variant survives.",
    ),
    # 04 · the unsafe shortcuts
    "watermark_crashes": (
        "a count such as 0 or 1",
        _count,
        COMPUTE["watermark_crashes"],
        "0: right after 106's commit the watermark says 107, so the procedure (which trusts the watermark "
        "on a stream without backfills) takes 107 for a replay and never reaches the crash before 107's "
        "commit. It loses 107 without crashing.",
    ),
    "no_version_check_harm": (
        "'lost', 'duplicated', 'regression' or 'nothing'",
        _one_of("lost", "duplicated", "regression", "nothing"),
        COMPUTE["no_version_check_harm"],
        "a regression: the stale write sends the checkpoint back from C4 to C2. Nothing is lost or repeated, "
        "because receipts turn the re-fetched events into replays; the checkpoint going backwards is the "
        "harm.",
    ),
    # 05 · the crash matrix
    "safe_failing_schedules": (
        "a count such as 0 or 5",
        _count,
        COMPUTE["safe_failing_schedules"],
        "0: a crash at any pass of any crash point leaves safe with nothing lost, repeated, regressed or "
        "broken.",
    ),
    "most_hurt": (
        "a shortcut's name",
        _one_of(*simkit.SHORTCUTS),
        COMPUTE["most_hurt"],
        "persist_token_on_fetch: from its early publish on, a crash anywhere in the rest of the page leaves "
        "events behind the durable cursor.",
    ),
    # 06 · late retries and fencing
    "final_cursor_without_check": (
        "'C2', 'C3' or 'C4'",
        _one_of("C2", "C3", "C4"),
        COMPUTE["final_cursor_without_check"],
        "C4: the stale write does send the checkpoint from (C4, v3) back to (C2, v1), but worker 1 then "
        "fetches C2 and C3 again, finds every event receipted (replays), and writes their barriers again. "
        "The run ends at (C4, 9, v3), exactly where safe ends, with nothing lost or repeated. A test that "
        "checks only the final checkpoint passes this bug; the checker sees it in the history of writes (a "
        "regression, invariant 3).",
    ),
    "stale_worker_barriers": (
        "a count such as 1 or 2",
        _count,
        COMPUTE["stale_worker_barriers"],
        "3: the stale write of C2 over C4, then one barrier for each page the regression handed back: C2 "
        "-> C3 and C3 -> C4. Without the version check, every write of the stale worker lands, and each "
        "one repeats work the checkpoint had already recorded.",
    ),
    "refetch_after_lost_reply": (
        "'yes' or 'no'",
        _yes_no,
        COMPUTE["refetch_after_lost_reply"],
        "no: after the timeout the worker does not guess. It reloads the checkpoint, finds C2 (its "
        "compare-and-swap did commit), and goes on from there.",
    ),
    # 07 · the checkpoint service
    "lost_reply_retry": (
        "'receipt', 'conflict' or 'twice'",
        _one_of("receipt", "conflict", "twice"),
        COMPUTE["lost_reply_retry"],
        "receipt: the service answers the identical command (same key, same cursor, same expected revision) "
        "from the receipt it stored when the first command committed: 200, the original revision and "
        "receipt_digest, "
        'nothing committed a second time. Seed 004, step 4: "On a lost response, retry the identical '
        "command with "
        'that same key."',
    ),
    "double_ack_client": (
        "'correct', 'new_key_retry' or 'reset_on_409'",
        _one_of("correct", "new_key_retry", "reset_on_409"),
        COMPUTE["double_ack_client"],
        "new_key_retry: after a lost reply it rereads, finds its own command committed (a new revision) "
        "and sends the same cursor again under a new key, which the service must accept. Each such page is "
        "acknowledged twice, and the extra revision makes the other worker's honest command conflict.",
    ),
    "scan_done": (
        "True or False",
        _yes_no,
        COMPUTE["scan_done"],
        "not done: the page examined its scan_limit of 2 candidates, none of which the subject may see (one "
        "deleted, one private), and its next_after is 'archive-2': the scan goes on after that record. Seed "
        "004: "
        '"An empty query page with next_after still requires continuation." It is seed 000\'s step 7 in '
        "another API: do not take emptiness for the end. The scan is complete only when next_after is null.",
    ),
    # 08 · sweeps
    "zero_of_200": (
        "a percentage such as 0.5 or 5",
        _percent,
        COMPUTE["zero_of_200"],
        "about 1.9 %: 0 of 200 runs bounds the loss probability per run below about 1.9 % (95 % Wilson "
        "upper bound; the rule of three says 3/200 = 1.5 %). It does not make it 0.",
    ),
    "unsafe_sink_repeats": (
        "'0%', '10%', '50%' or '90%'",
        _one_of("0%", "10%", "50%", "90%"),
        COMPUTE["unsafe_sink_repeats"],
        "about 90 %: that is the share of safe's runs that repeat an effect at crash rate 0.05 on a sink "
        "without idempotency, seed 000's own limit. Its guarantee is at-least-once; exactly-once needs the "
        "sink's help.",
    ),
}

#: key -> the variable a notebook asks the prediction in (``lost_event = None  # 104, 106, 107 or 'none'``);
#: the unanswered reply names it, and tests/workshop checks that the notebooks use these names.
VARIABLES = {
    "shortcut_notices": "shortcut_notices", "crash_after_commit": "lost_if_later",
    "deliveries_of_30": "times_30_delivered",
    "loses_without_crash": "loses_without_crash", "final_version": "final_version",
    "stuck_107": "fate_of_107", "stuck_ok": "verdict_ok", "in_memory_crashes": "crashes_with_shortcut",
    "in_memory_loses": "loses_211_on", "watermark_crashes": "crashes_in_its_run",
    "no_version_check_harm": "harm_done", "safe_failing_schedules": "safe_worse", "most_hurt": "most_hurt",
    "final_cursor_without_check": "final_cursor", "stale_worker_barriers": "stale_barriers",
    "refetch_after_lost_reply": "fetches_c1_again", "lost_reply_retry": "retry_answer",
    "double_ack_client": "acknowledges_twice", "scan_done": "scan_done", "zero_of_200": "loss_bound_percent",
    "unsafe_sink_repeats": "repeat_share",
}

#: key -> the answers a :func:`predict` widget offers, for the questions with one answer out of a few
CHOICES = {
    "shortcut_notices": ("stalls", "halts", "completes"), "crash_after_commit": (104, 106, 107, "none"),
    "deliveries_of_30": (1, 2, 3, 4), "loses_without_crash": ("yes", "no"),
    "stuck_107": ("lost", "pending", "applied"), "stuck_ok": ("yes", "no"), "in_memory_crashes": (0, 1),
    "no_version_check_harm": ("lost", "duplicated", "regression", "nothing"), "most_hurt": simkit.SHORTCUTS,
    "final_version": (2, 3, 4), "final_cursor_without_check": ("C2", "C3", "C4"),
    "stale_worker_barriers": (1, 2, 3),
    "refetch_after_lost_reply": ("yes", "no"), "lost_reply_retry": ("receipt", "conflict", "twice"),
    "double_ack_client": ("correct", "new_key_retry", "reset_on_409"), "scan_done": ("yes", "no"),
    "unsafe_sink_repeats": ("0%", "10%", "50%", "90%"),
}

#: predictions whose answer is a number compared with a tolerance, not exactly
_TOLERANCE = {"zero_of_200": 0.4}


def _show(value) -> str:
    if isinstance(value, frozenset):
        return "[" + ", ".join(map(repr, sorted(value))) + "]"
    if isinstance(value, float):
        return f"{value:g} %"           # as given: 0.019 is not "0.0 %"
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
        return Check(False, f"no prediction yet. Set {VARIABLES.get(key, 'the variable')} to {how} in the "
                             "cell above and run both cells again: the answer below stays folded until you "
                             "do.",
                     "✎ ")
    try:
        yours = normalize(prediction)
        truth = prediction_answer(key)
    except Refused as refused:
        return Check(False, str(refused) + ".", "✎ ")
    except Exception as error:      # a check reports, it does not stop the notebook
        return Check(False, f"the check could not use your prediction: {type(error).__name__}: {error}", "✎ ")
    answered(key)                   # right or wrong: the reveals of this question open
    right = abs(yours - truth) <= _TOLERANCE[key] if key in _TOLERANCE else yours == truth
    if right:
        return Check(True, f"right. {why}", "✓ ")
    return Check(False, f"not {_show(yours)}. The answer is {why}", "✗ ")


def predict(key: str) -> widgets.Prediction:
    """Ask question ``key`` as a widget: its answers (:data:`CHOICES`) as buttons, a "check" button, and
    :func:`check_prediction`'s reply under them. The variable form (``check_prediction(key, variable)``) asks
    the same question where no widget frontend runs."""
    if key not in CHOICES:
        raise ValueError(f"question {key!r} has no fixed answers to offer as buttons; ask it with a "
                         f"variable and check_prediction. Widgets: {', '.join(CHOICES)}")
    return widgets.prediction(key, CHOICES[key], check_prediction)
