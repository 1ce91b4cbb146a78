"""notebooks/workshop_checks.py, the check cells of 09_workshop: a right answer passes, a wrong one gets a ✗ that
names what the run shows, and no answer, however ill-typed or buggy, makes a check raise."""
import importlib.util
from pathlib import Path

import pytest

import simkit

_spec = importlib.util.spec_from_file_location(
    "workshop_checks", Path(__file__).resolve().parents[1] / "notebooks" / "workshop_checks.py")
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)

PersistTokenOnFetch = simkit.resolve("persist_token_on_fetch")


def refused(result, *words):
    """``result`` is a ✗ whose message holds every one of ``words``."""
    text = repr(result)
    assert not result and text.startswith("✗ not yet: "), text
    for word in words:
        assert word in text, (word, text)
    return text


class TrustTheWatermark(simkit.Consumer):
    def is_replay(self, event, receipts, applied_position):
        return event.position <= applied_position


class Boom(simkit.Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise RuntimeError("bug in learner code")


class Repaired(PersistTokenOnFetch):
    after_fetch = simkit.Consumer.after_fetch
    page_barrier = simkit.Consumer.page_barrier


# -- exercise 1 -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer", [{"lost": 0, "invariants": [2]}, {"lost": 0, "invariants": (2,)}])
def test_exercise_1_right_answer_passes(answer):
    result = check.exercise_1(answer)
    assert result and repr(result).startswith("✓ it loses 0 events and still breaks invariant 2")


def test_exercise_1_wrong_answers_point_at_the_notebooks_run():
    refused(check.exercise_1({"lost": 3, "invariants": [2]}), "does not lose 3", "watermark.verdict.lost")
    refused(check.exercise_1({"lost": 0, "invariants": [1, 2]}), "watermark.verdict.invariants_broken")
    refused(check.exercise_1(None), 'answer = {"lost"')


@pytest.mark.parametrize("answer, shown", [
    ({"lost": 0, "invariants": 2}, "not 2"),
    ({"lost": 0, "invariants": None}, "not None"),
    ({"lost": 0, "invariants": ["2"]}, "not ['2']"),
    ({"lost": [], "invariants": [2]}, "not []"),
    ({"lost": False, "invariants": [2]}, "not False"),
    ({"lost": "0", "invariants": [2]}, "not '0'"),
])
def test_exercise_1_ill_typed_answers_do_not_raise(answer, shown):
    refused(check.exercise_1(answer), shown)


# -- exercise 2 -----------------------------------------------------------------------------------------------
def test_exercise_2_right_answer_passes_and_quotes_both_conditions_of_step_4():
    result = check.exercise_2(TrustTheWatermark)
    assert result
    assert "positions are immutable and the stored prefix is known complete" in repr(result)


def test_exercise_2_wrong_answers():
    refused(check.exercise_2(simkit.Consumer), "it lost nothing", "lose exactly e105")
    refused(check.exercise_2("watermark_only_dedup"), "subclasses simkit.Consumer")
    refused(check.exercise_2(42), "subclasses simkit.Consumer")


def test_exercise_2_learners_exception_becomes_a_message():
    refused(check.exercise_2(Boom), "shortcut_watermark_only_dedup", "RuntimeError: bug in learner code")


# -- exercise 3 -----------------------------------------------------------------------------------------------
def test_exercise_3_right_answer_passes():
    assert check.exercise_3(Repaired)


def test_exercise_3_the_unrepaired_shortcut_is_told_it_loses():
    refused(check.exercise_3(PersistTokenOnFetch), "lost 1, invariants [1]", "completed True",
            "When does it publish the returned token?")


def test_exercise_3_restoring_after_fetch_alone_names_completed_and_page_barrier():
    class OnlyFetch(PersistTokenOnFetch):
        after_fetch = simkit.Consumer.after_fetch

    text = refused(check.exercise_3(OnlyFetch), "lost 0, invariants []", "completed False", "halted None",
                   "pending 0", "PersistTokenOnFetch.page_barrier")
    assert "When does it publish" not in text


def test_exercise_3_refuses_a_plain_consumer_and_a_copied_procedure():
    class Safe(simkit.Consumer):
        pass

    refused(check.exercise_3(Safe), "subclass of PersistTokenOnFetch")
    refused(check.exercise_3(simkit.Consumer), "subclass of PersistTokenOnFetch")

    class Copied(Repaired):
        def attempt(self):
            return (yield from simkit.Consumer.attempt(self))

    refused(check.exercise_3(Copied), "overrides attempt")


def test_exercise_3_learners_exception_becomes_a_message():
    class Broken(PersistTokenOnFetch):
        def page_barrier(self, checkpoint, page, applied_position):
            raise ValueError("half-written hook")

    refused(check.exercise_3(Broken), "ValueError: half-written hook")


# -- exercise 4 -----------------------------------------------------------------------------------------------
def test_exercise_4_right_answer_passes():
    result = check.exercise_4(("after_event_commit", 70))
    assert result and "success_before_effect loses e70" in repr(result)


@pytest.mark.parametrize("crash, shown", [
    (None, 'crash = ("<crash point>", <position>)'),
    (("after_event_commit",), 'crash = ("<crash point>", <position>)'),
    (("after_event_comit", 70), "'after_event_comit' is not a crash point"),
    (("after_event_commit", None), "not None"),
    (("after_event_commit", "70"), "not '70'"),
    (("after_event_commit", True), "not True"),
    ((["after_event_commit"], 70), "is not a crash point"),
])
def test_exercise_4_ill_formed_answers_do_not_raise(crash, shown):
    refused(check.exercise_4(crash), shown)


def test_exercise_4_a_crash_the_shortcut_survives():
    refused(check.exercise_4(("after_effect", 70)), "success_before_effect lost nothing")
