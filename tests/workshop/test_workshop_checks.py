"""simkit.workshop: the prediction questions of the notebooks and the exercises of 09_workshop.

A prediction left unanswered says how to answer and gives nothing away; a right one is confirmed with the
reason, a wrong one gets the answer and the reason; an ill-typed one is told the expected form. An exercise's
right answer passes, a wrong one gets a ✗ whose hint names what the run shows, and no answer, however
ill-typed or buggy, makes a check raise.
"""
import json
import re
from pathlib import Path

import pytest

import simkit
from simkit import workshop as check
from simkit.tools.explore import explore, failing

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def refused(result, *words):
    """``result`` is a ✗ whose message holds every one of ``words``."""
    text = repr(result)
    assert not result and text.startswith("✗ not yet: "), text
    for word in words:
        assert word in text, (word, text)
    return text


# -- predictions ---------------------------------------------------------------------------------------------
#: What simkit does, as the notebooks show it: each question's answer, and a wrong prediction for it.
ANSWERS = {
    "shortcut_notices": ("completes", "halts"),
    "crash_after_commit": ("none", 107),
    "deliveries_of_30": (3, 2),
    "loses_without_crash": ("yes", False),
    "final_version": (2, 4),
    "stuck_107": ("pending", "lost"),
    "stuck_ok": ("no", "yes"),
    "in_memory_crashes": (0, 1),
    "in_memory_loses": (frozenset({"operator_review", "reversible_hold"}), ["retry_later"]),
    "watermark_crashes": (0, 1),
    "no_version_check_harm": ("regression", "lost"),
    "safe_failing_schedules": (0, 3),
    "most_hurt": ("persist_token_on_fetch", "success_before_effect"),
    "final_cursor_without_check": ("C4", "C2"),
    "stale_worker_barriers": (3, 1),
    "refetch_after_lost_reply": ("no", "yes"),
    "unsafe_sink_repeats": ("90%", "10%"),
    "lost_reply_retry": ("receipt", "twice"),
    "double_ack_client": ("new_key_retry", "reset_on_409"),
    "scan_done": ("no", "yes"),
}


def test_every_question_is_pinned_here():
    assert set(ANSWERS) | {"zero_of_200"} == set(check.PREDICTIONS)


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_prediction_answers_are_what_simkit_does(key):
    assert check.prediction_answer(key) == ANSWERS[key][0]


def test_zero_of_200_is_the_wilson_bound():
    assert 1.85 < check.prediction_answer("zero_of_200") < 1.9


@pytest.mark.parametrize("key", sorted(check.PREDICTIONS))
def test_an_unanswered_prediction_names_its_variable_and_reveals_nothing(key):
    why = check.PREDICTIONS[key][3]
    text = repr(check.check_prediction(key, None))
    assert text.startswith(f"✎ no prediction yet. Set {check.VARIABLES[key]} to ") and why not in text
    assert not check.check_prediction(key, None)


def asked():
    """(notebook, key, variable) of every ``check.check_prediction("key", variable)`` in the notebooks."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            found += [(path.name, key, name) for key, name in
                      re.findall(r'check_prediction\("(\w+)", (\w+)\)', source)]
    return found


def test_every_question_names_the_variable_its_notebook_asks_it_in():
    assert set(check.VARIABLES) == set(check.PREDICTIONS)
    found = asked()
    assert len(found) >= 19
    assert [(nb, key, name) for nb, key, name in found if check.VARIABLES.get(key) != name] == []


def test_the_notebooks_ask_every_question():
    widgets = {key for path in NOTEBOOKS.glob("*.ipynb") for key in re.findall(r'check\.predict\(\\?"(\w+)',
                                                                                path.read_text(encoding="utf-8"))}
    assert {key for _nb, key, _name in asked()} | widgets == set(check.PREDICTIONS)
    assert widgets and widgets <= set(check.CHOICES)  # a widget question offers its answers as buttons


def test_the_local_scan_check_of_07_is_gone():
    source = (NOTEBOOKS / "07_checkpoint_service.ipynb").read_text(encoding="utf-8")
    assert "def check_prediction" not in source and 'check_prediction(\\"scan_done\\", scan_done)' in source


@pytest.mark.parametrize("key", sorted(check.CHOICES))
def test_a_widget_offers_the_answer_and_only_well_formed_answers(key):
    choices = check.CHOICES[key]
    assert len(set(choices)) == len(choices) >= 2
    replies = [check.check_prediction(key, c) for c in choices]
    assert sum(map(bool, replies)) == 1                        # exactly one of them is right
    assert all(repr(r)[0] in "✓✗" for r in replies)            # and each is judged, none refused as ill-typed


def test_the_prediction_widget_checks_the_answer_picked():
    w = check.predict("shortcut_notices")
    assert [o for o, _ in w.choice.options] == ["stalls", "halts", "completes"] and w.choice.value is None
    w.button.click()                                           # nothing picked: nothing judged
    assert w.reply is None
    w.choice.value = "halts"
    w.button.click()
    assert not w.reply and repr(w.reply).startswith("✗ not 'halts'. The answer is completes")
    w.choice.value = "completes"
    w.button.click()
    assert w.reply and repr(w.reply) == "✓ right. " + check.PREDICTIONS["shortcut_notices"][3]


def test_a_question_without_fixed_answers_is_no_widget():
    with pytest.raises(ValueError, match="ask it with a variable"):
        check.predict("in_memory_loses")


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_a_right_prediction_is_confirmed_with_the_reason(key):
    right = ANSWERS[key][0]
    result = check.check_prediction(key, sorted(right) if isinstance(right, frozenset) else right)
    assert result and repr(result) == "✓ right. " + check.PREDICTIONS[key][3]


@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_a_wrong_prediction_gets_the_answer_and_the_reason(key):
    result = check.check_prediction(key, ANSWERS[key][1])
    text = repr(result)
    assert not result and text.startswith("✗ not ") and text.endswith(check.PREDICTIONS[key][3])


@pytest.mark.parametrize("key, spelled", [("crash_after_commit", "None"),
                                          ("crash_after_commit", "none"), ("shortcut_notices", " Completes"),
                                          ("loses_without_crash", True),
                                          ("final_cursor_without_check", " c4"), ("stuck_ok", "No"),
                                          ("scan_done", False), ("final_cursor_without_check", "C4 "),
                                          ("zero_of_200", 1.5), ("zero_of_200", 2)])
def test_predictions_accept_the_usual_spellings(key, spelled):
    assert check.check_prediction(key, spelled)


@pytest.mark.parametrize("key, odd", [("shortcut_notices", 7), ("crash_after_commit", "the last one"),
                                      ("final_version", "two"), ("stuck_ok", "maybe"), ("zero_of_200", "2%"),
                                      ("zero_of_200", 250), ("watermark_crashes", -1), ("most_hurt", "safe"),
                                      ("in_memory_loses", [None])])
def test_ill_typed_predictions_are_told_the_form(key, odd):
    result = check.check_prediction(key, odd)
    assert not result and repr(result).startswith("✎ ")


def test_an_unknown_question_is_a_message():
    assert repr(check.check_prediction("nope", "C7")).startswith("✎ there is no question 'nope'")


# -- exercise 1: which hook? ---------------------------------------------------------------------------------
def test_exercise_1_the_suspect_changes_exactly_one_hook():
    assert [h for h in check.HOOKS if getattr(check.Suspect, h) is not getattr(simkit.Consumer, h)] == [
        "is_caught_up"
    ]
    v = simkit.simulate(simkit.load("default"), check.Suspect).verdict
    assert not v.lost and not v.invariant_violations and not v.completed and v.pending    # liveness only


def test_exercise_1_right_and_wrong_hooks():
    assert check.exercise_1("is_caught_up")
    refused(check.exercise_1("is_replay"), "neither", "never completes")
    refused(check.exercise_1("page_barrier"), "invariant 3")
    for odd in (None, 3, "is_caught_up(self)", check.Suspect):
        refused(check.exercise_1(odd), "name one hook")


# -- exercise 2: break it on purpose -------------------------------------------------------------------------
class TrustTheWatermark(simkit.Consumer):
    def is_replay(self, event, receipts, applied_position):
        return event.position <= applied_position


class Boom(simkit.Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise RuntimeError("bug in learner code")


def test_exercise_2():
    said = repr(check.exercise_2(TrustTheWatermark))
    assert "positions are immutable and the stored prefix is known complete" in said
    refused(check.exercise_2(simkit.Consumer), "it lost nothing", "lose exactly e105")
    refused(check.exercise_2("watermark_only_dedup"), "subclasses simkit.Consumer")
    refused(check.exercise_2(Boom), "shortcut_watermark_only_dedup", "RuntimeError: bug in learner code")


# -- exercise 3: write the test for a quarantine bug ---------------------------------------------------------
def boundary(**event):
    return {**check.BOUNDARY, "events": [{"position": 211, **event}]} if event else dict(check.BOUNDARY)


def test_exercise_3_a_reversible_hold_catches_impatient(tmp_path):
    assert check.exercise_3(boundary(behavior="hold", release_after=30.0))
    path = tmp_path / "hold.toml"
    path.write_text('[[pages]]\ncursor = "C1"\npositions = [1, 2]\nnext_cursor = "C2"\n'
                    '[[pages]]\ncursor = "C2"\npositions = []\nnext_cursor = "C2"\n'
                    '[[events]]\nposition = 1\nbehavior = "hold"\nrelease_after = 20.0\n')
    assert check.exercise_3(str(path))


def test_exercise_3_hints():
    refused(check.exercise_3(boundary(behavior="poison")), "Impatient passes", "not final")
    refused(check.exercise_3(boundary(behavior="review", resolve_after=30.0, resolution="apply")),
            "answered operator_review", "Try the others")
    refused(check.exercise_3(boundary(behavior="hold", release_after=30000.0)),
            "safe fails on your scenario too")
    refused(check.exercise_3({"pages": []}), "simkit.parse refuses it")
    refused(check.exercise_3(None), "give a scenario as a dict")


# -- exercise 4: fencing a late retry ------------------------------------------------------------------------
def test_exercise_4_a_pause_between_fetch_and_barrier_regresses_no_version_check():
    assert not simkit.simulate(check.fencing_stream(), simkit.resolve("no_version_check")).verdict.regressions
    assert check.exercise_4(("before_page_barrier", 1, 10.0))
    assert check.exercise_4(simkit.Fault("pause", "after_fetch", worker=2, duration=20.0))


@pytest.mark.parametrize("pause, shown", [
    (("before_effect", 1, 10.0), "never struck"),
    (("after_page_barrier", 1, 10.0), "holds nothing stale"),
    (("after_fetch", 2, 2.0), "Pause longer"),
    (("after_fetch", 3, 10.0), "workers 1 and 2"),
    (("after_fetch", 1, -1), "positive number"),
    (("somewhere", 1, 10.0), "not a crash point"),
    (None, 'set pause = ("<crash point>"'),
    (simkit.Fault("crash", "after_fetch"), "kind 'pause'"),
])
def test_exercise_4_hints(pause, shown):
    refused(check.exercise_4(pause), shown)


# -- exercise 5: the service's 409 ---------------------------------------------------------------------------
def read(api):
    from simkit.service import DEV_SCOPE
    from simkit.service.clients import READ
    return api.post(READ, {"contract_version": 1, "scope": DEV_SCOPE,
                           "consumer_id": "context-cache"})["checkpoint"]


def save(api, key, revision, cursor):
    from simkit.service import DEV_SCOPE
    from simkit.service.clients import WRITE
    return api.post(
        WRITE,
        {
            "scope": DEV_SCOPE,
            "command": {
                "contract_version": 1,
                "idempotency_key": key,
                "consumer_id": "context-cache",
                "expected_revision": revision,
                "cursor": cursor,
            },
        },
    )


def reconcile(api, mine, key):
    current = read(api)
    if current["cursor"]["sequence"] >= mine["sequence"]:
        return current["cursor"]
    return save(api, key + "-retry", current["revision"], mine)["receipt"]["checkpoint"]["cursor"]


def test_exercise_5_situations_are_what_they_say():
    for situation, (revision, sequence) in {"ahead": (3, 5), "behind": (2, 2), "same": (2, 4)}.items():
        api, refused_reply, mine, key = check.service_409(situation)
        assert refused_reply["error"]["code"] == "revision_conflict" and mine["sequence"] == 4
        assert (read(api)["revision"], read(api)["cursor"]["sequence"]) == (revision, sequence)


def test_exercise_5_reread_and_reconcile_passes():
    assert "Do not overwrite another worker's newer progress" in repr(check.exercise_5(reconcile))


def test_exercise_5_hints():
    refused(check.exercise_5(lambda api, mine, key: mine), "never reread")
    refused(check.exercise_5(lambda api, mine, key: save(api, key, read(api)["revision"], mine) and mine),
            "cursor_backward")

    def same_key(api, mine, key):          # the refused command left no receipt: its key is free
        current = read(api)
        if current["cursor"]["sequence"] < mine["sequence"]:
            save(api, key, current["revision"], mine)
        return max(current["cursor"], mine, key=lambda c: c["sequence"])

    assert check.exercise_5(same_key)

    def worker_2s_key(api, mine, key):     # a key the service committed names that command for ever
        current = read(api)
        if current["cursor"]["sequence"] < mine["sequence"]:
            save(api, "w2-resave", current["revision"], mine)
        return max(current["cursor"], mine, key=lambda c: c["sequence"])

    refused(check.exercise_5(worker_2s_key), "idempotency_conflict", "key of its own")

    def always_write(api, mine, key):
        current = read(api)
        if current["cursor"]["sequence"] <= mine["sequence"]:
            save(api, key + "-x", current["revision"], mine)
        return max(read(api)["cursor"], mine, key=lambda c: c["sequence"])

    refused(check.exercise_5(always_write), "acknowledged sequence 4 a second time")
    refused(check.exercise_5(lambda api, mine, key: read(api) and None), "sequence 5",
            "your function returned None")
    refused(check.exercise_5(lambda api, mine, key: 1 / 0), "ZeroDivisionError")
    refused(check.exercise_5("on_409"), "pass your function itself")


# -- exercise 6: find the crash ------------------------------------------------------------------------------
def test_exercise_6():
    assert "success_before_effect loses e70" in repr(check.exercise_6(("after_event_commit", 70)))
    refused(check.exercise_6(("after_effect", 70)), "success_before_effect lost nothing")
    for odd, shown in [(None, 'crash = ("<crash point>"'),
                       (("after_event_comit", 70), "is not a crash point"),
                       (("after_event_commit", "70"), "not '70'"),
                       (("after_event_commit", True), "not True")]:
        refused(check.exercise_6(odd), shown)


# -- exercise 7: from a failing audit to a minimal counterexample --------------------------------------------
@pytest.fixture(scope="module")
def teammate_audit():
    return simkit.audit(check.Teammate, seeds=1, sweep_seeds=0, first_only=True)


def test_exercise_7_teammate_passes_every_bundled_scenario_and_fails_the_audit(teammate_audit):
    assert all(simkit.simulate(simkit.load(name), check.Teammate).verdict.ok for name in simkit.bundled())
    # caught beyond the bundled scenarios: by a wide case (long_outage's lost commits) or an exploration
    assert not teammate_audit.ok and teammate_audit.failures[0].case.kind in ("wide", "explore")


def test_exercise_7_the_shrunk_failure_passes_and_the_unshrunk_one_is_told_to_shrink(
    teammate_audit, tmp_path
):
    assert check.exercise_7(teammate_audit.shrunk.data)
    path = tmp_path / "small.toml"
    path.write_text(teammate_audit.shrunk.toml())
    assert check.exercise_7(str(path))
    explored = explore(simkit.load("blocked_after_barrier"), check.Teammate, max_crashes=1, lost_requests=1)
    refused(check.exercise_7(failing(simkit.load("blocked_after_barrier"), explored.first_violation[0])),
            "not minimal yet", "shrink")
    refused(check.exercise_7("retry_walkthrough.toml"), "could not use your answer")
    refused(check.exercise_7(check.BOUNDARY), "Teammate passes this scenario")


def test_exercise_7_explain():
    assert check.exercise_7_explain("b") and check.exercise_7_explain(" B ")
    refused(check.exercise_7_explain("a"), "[[faults]]")
    refused(check.exercise_7_explain(2), "answer 'a', 'b' or 'c'")
