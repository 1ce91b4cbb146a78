"""Hostile input, thirtieth round (a fresh tester): the notebooks, the workshop and the figures, as a learner
in a workshop and a facilitator use them.

Found: exercise 5 took for right an answer that acknowledged a page twice whenever the situation was not
``same`` (worker 2 ahead: saving its sequence 5 again under a new key; behind: saving 4 twice), although its
rules and its own ✓ say "acknowledged no page twice". ``widgets.explorer`` and ``widgets.comparison`` given a
misspelt strategy, shortcut or scenario raised ipywidgets' ``TraitError: Invalid selection`` from deep inside;
a number past a slider's end (``crash_position=10**12``, ``seed=2**40``) was moved to the end without a word
(a crash that never fires drawn as one that does), and an unknown keyword (``crash_postion=70``) was ignored;
``widgets.stepper(row=nan)`` was a TraitError, and a row past the trace was moved to its last.
Exercise 1 said ``✗ not yet`` to the right hook written ``"is_caught_up "``, ``"Is_Caught_Up"``,
``"is_caught_up()"``, ``"Suspect.is_caught_up"`` or given as the function; exercise 2 passed any consumer that
lost exactly e105, by skipping its apply or by an ``is_replay`` that names e105, where it asks for the
watermark rule in ``is_replay``. Predictions asked again for the form of right answers (``"3"`` and ``3.0``
for a count, ``"true"``, ``"operator review"``, ``"90 %"``, a comma-separated list) and of ``"E107"`` and
``107.0`` (each an event), and quoted a share typed for a percentage, 0.019, as ``✗ not 0.0 %``. ``simkit
workshop "my workshop"`` said to open it with ``jupyter lab my workshop/00_index.ipynb`` (two files to a
shell), and a folder named with a newline or a byte that is no UTF-8 with an escape no shell undoes. Exercise
7 refused what ``shrink`` returned (``not Shrunk``), where 09 says to set the counterexample to it, and a
``.TOML`` path. ``widgets.verdict_frame(run)`` of one run was ``TypeError: 'Run' object is not iterable``, and
of ``[]`` an AttributeError from inside pandas. Exercises 4 and 6 said ``✗ not yet`` to a worker or a position
written ``1.0`` or ``70.0``. Read in order, the notebooks gave answers before their questions: 05's "You will
learn" that ``safe`` survives every crash, 07's that a retried lost write is answered from its receipt, that a
new key acknowledges a page twice and that an empty query page does not end the scan, and 00's summary that a
lost reply or a non-terminal outcome loses events (01 asks whether the shortcut loses without a crash). 02's
last proof cell closed the SQL section's database: run twice, it raised, and so did the section's cells.

Held: ``simkit workshop`` into a folder holding the edition (twice, or by a link to it), a dangling link, a
file in the path, ``""``, ``--force``; ``run --timeline`` at ``t``, ``.png``, ``t.png/``, ``/dev/stdout``,
``T.PNG``, ``.webp``, ``.svg``; exercise 4's pause of ``inf``, ``nan``, ``1e308`` or worker 3, exercise 3 with
a 200,000-event page, exercise 6 with a crash that never fires; ``explorer_run`` with a misspelt strategy or
point, ``page_size`` 0, ``overlap`` nan (one line each); timelines, swimlanes and the stepper of a run of no
event, and of positions at 2**53; every code cell of 00 to 06, 08 and 09 run twice in a row.

Left alone: 07's service story is one state across cells, so a cell run twice in a row changes what the
next asserts (cells 11, 16, 25; 49 raises ``KeyError: 'receipt'`` itself): its README promises reruns by
section, and a fix is a rework of 07 into a service per section; a learner's scenario of 10**9 transient
failures and ``time_limit`` 1e12 takes 88 s in exercise 3 (bounded by the world's guard); 08's sweep
figure keeps its nine legend entries (every strategy is its point).

Each: a check's ✓ exactly when the answer keeps the exercise's rules (judged from the service's committed
commands, not from the replies), or one line naming the parameter and the problem.
"""
import json
import os
import re
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

import simkit  # noqa: E402
import simkit.cli  # noqa: E402
from simkit import workshop as check  # noqa: E402
from simkit.service import DEV_SCOPE  # noqa: E402
from simkit.service.clients import READ, WRITE  # noqa: E402
from simkit.viz import widgets  # noqa: E402


def _read(api):
    body = {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "context-cache"}
    return api.post(READ, body)["checkpoint"]


def _save(api, key, revision, cursor):
    return api.post(WRITE, {"scope": DEV_SCOPE, "command": {
        "contract_version": 1, "idempotency_key": key, "consumer_id": "context-cache",
        "expected_revision": revision, "cursor": cursor}})


def _refused(result, *words):
    text = repr(result)
    assert not result and text.startswith("✗ not yet: "), text
    assert all(word in text for word in words), text


# -- exercise 5: a page acknowledged twice is refused in every situation -------------------------------------
def test_exercise_5_refuses_saving_worker_2s_newer_cursor_again():
    """Ahead: rewriting the server's own sequence 5 under a new key acknowledges worker 2's page twice."""
    def write_the_newest(api, mine, key):
        current = _read(api)
        if current["cursor"]["sequence"] == mine["sequence"]:
            return mine
        newest = max(current["cursor"], mine, key=lambda c: c["sequence"])
        _save(api, key + "-again", current["revision"], newest)
        return newest

    _refused(check.exercise_5(write_the_newest), "worker 2 already saved sequence 5",
             "acknowledged sequence 5 a second time")


def test_exercise_5_refuses_saving_ones_own_page_twice():
    def save_twice(api, mine, key):
        current = _read(api)
        if current["cursor"]["sequence"] >= mine["sequence"]:
            return current["cursor"]
        first = _save(api, key + "-a", current["revision"], mine)["receipt"]["checkpoint"]
        _save(api, key + "-b", first["revision"], mine)
        return mine

    _refused(check.exercise_5(save_twice), "re-saved sequence 2", "acknowledged sequence 4 a second time")


def test_exercise_5_accepts_an_identical_retry_which_commits_nothing():
    """A right answer that retries its command identically (seed 004, step 4) acknowledges nothing twice."""
    def retry_identically(api, mine, key):
        current = _read(api)
        if current["cursor"]["sequence"] >= mine["sequence"]:
            return current["cursor"]
        for _ in range(2):
            _save(api, key + "-retry", current["revision"], mine)
        return mine

    assert check.exercise_5(retry_identically)


# -- the widgets: a setting a learner types wrong is named, not a TraitError or moved without a word ---------
@pytest.mark.parametrize("values, words", [
    ({"strategy": "persist_token_on_fetc"}, ("strategy 'persist_token_on_fetc': not one of", "safe")),
    ({"crash_position": 10**12}, ("crash_position 1000000000000: must be a whole number from 10 to 400",)),
    ({"crash_position": float("nan")}, ("crash_position nan: must be",)),
    ({"crash_postion": 70}, ("crash_postion: not a setting of the explorer", "crash_position")),
    ({"page_size": 3.5}, ("page_size 3.5: must be a whole number from 1 to 12",)),
    ({"overlap": 2}, ("overlap 2: must be a number from 0.0 to 1.0",)),
    ({"seed": 2**40}, ("seed 1099511627776: must be a whole number from 0 to 1000000",)),
    ({"crash_position": 10**400}, ("crash_position an integer of 1329 bits: must be a whole number",)),
])
def test_explorer_names_a_setting_it_cannot_take(values, words):
    """A misspelt strategy was ipywidgets' ``TraitError: Invalid selection: value not found``; a position past
    the slider's end was moved to its end (a crash that never fires drawn as one at 400); an unknown keyword
    was ignored."""
    with pytest.raises(simkit.SimkitError) as caught:
        widgets.explorer(**values)
    assert all(word in str(caught.value) for word in words), str(caught.value)
    assert caught.value.param == next(iter(values))


def test_comparison_names_a_setting_it_cannot_take():
    for args, words in ((("persist_token",), "shortcut 'persist_token': not one of"),
                        (("no_version_check", "gauntlt"), "scenario 'gauntlt': not one of"),
                        (("no_version_check", "gauntlet", -1), "seed -1: must be a whole number")):
        with pytest.raises(simkit.SimkitError, match=re.escape(words)):
            widgets.comparison(*args)


def test_explorer_takes_the_settings_it_always_took():
    e = widgets.explorer(strategy="success_before_effect", sink="unsafe", crash_position=75.0, overlap=1)
    assert (e.run.strategy, e.controls["crash_position"].value, e.controls["overlap"].value) == (
        "success_before_effect", 75, 1.0)


# -- exercise 1: the right hook, however a learner writes its name -------------------------------------------
@pytest.mark.parametrize("hook", ["is_caught_up ", "Is_Caught_Up", "is_caught_up()", "Suspect.is_caught_up",
                                  check.Suspect.is_caught_up])
def test_exercise_1_accepts_the_right_hook_written_differently(hook):
    """Each was ``✗ not yet: name one hook as a string``: a wrong verdict on the right answer."""
    assert check.exercise_1(hook)


def test_exercise_1_still_refuses_the_wrong_hook_however_written():
    _refused(check.exercise_1(" Is_Replay() "), "skips events")
    _refused(check.exercise_1(check.Suspect), "name one hook as a string")


# -- exercise 2: TrustTheWatermark is the watermark rule in is_replay, not a loss of e105 by any means -------
class _SkipsE105(simkit.Consumer):
    """Loses e105 by taking its apply for done: no replay detection at all."""

    def apply(self, event, applied_position):
        if event.id == "e105":
            return True
        return (yield from super().apply(event, applied_position))


class _KnowsE105(simkit.Consumer):
    """Replay detection that names the one event the check looks at."""

    def is_replay(self, event, receipts, applied_position):
        return event.id == "e105" or super().is_replay(event, receipts, applied_position)


class _WatermarkOrReceipt(simkit.Consumer):
    """The watermark rule, with the receipt check kept: a right answer written differently."""

    def is_replay(self, event, receipts, applied_position):
        return event.position <= applied_position or event.id in receipts


def test_exercise_2_refuses_a_loss_of_e105_by_another_hook():
    _refused(check.exercise_2(_SkipsE105), "by overriding apply", "override only is_replay")


def test_exercise_2_refuses_replay_detection_that_knows_the_answer():
    _refused(check.exercise_2(_KnowsE105), "on default it loses 0 events where trusting the watermark loses")


def test_exercise_2_accepts_the_watermark_rule_written_differently():
    assert check.exercise_2(_WatermarkOrReceipt)


# -- predictions: an answer written as a learner writes it is judged, and quoted as given --------------------
@pytest.mark.parametrize("key, spelled", [
    ("deliveries_of_30", "3"), ("deliveries_of_30", 3.0), ("final_version", " 2 "),
    ("loses_without_crash", "true"), ("scan_done", "False"),
    ("in_memory_loses", "operator_review, reversible_hold"),
    ("in_memory_loses", ["operator review", "Reversible-hold"]),
    ("most_hurt", "persist token on fetch"), ("unsafe_sink_repeats", "90 %")])
def test_a_right_prediction_written_differently_is_right(key, spelled):
    """Each was ``✎`` (asked again for the form) though it says the answer."""
    assert check.check_prediction(key, spelled)


@pytest.mark.parametrize("spelled", ["E107", 107.0])
def test_a_wrong_event_written_differently_is_judged_wrong(spelled):
    text = repr(check.check_prediction("crash_after_commit", spelled))
    assert text.startswith("✗ not 'e107'. The answer is none"), text


def test_a_wrong_percentage_is_quoted_as_given():
    """0.019 (a share typed for a percentage) was answered ``✗ not 0.0 %``."""
    text = repr(check.check_prediction("zero_of_200", 0.019))
    assert text.startswith("✗ not 0.019 %. The answer is about 1.9 %"), text


# -- simkit workshop: the command it says to run opens the notebooks -----------------------------------------
@pytest.mark.parametrize("folder", ["my workshop", "it's", "a\nb", "n\udcff"])
def test_workshop_says_a_command_a_shell_runs(folder, tmp_path, capsys, monkeypatch):
    """``jupyter lab my workshop/00_index.ipynb`` named two files to a shell (``n\\udcff/...``, ``a\\nb/...``:
    escapes no shell undoes); now the path is one shell word that names the notebook."""
    monkeypatch.chdir(tmp_path)
    assert simkit.cli.main(["workshop", folder]) == 0
    out = capsys.readouterr().out
    word = out.rstrip("\n").split("jupyter lab ", 1)[1]
    assert out.count("\n") == 1
    echoed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, cwd=tmp_path).stdout
    assert echoed == os.fsencode(os.path.join(folder, "00_index.ipynb"))


# -- exercise 7: the shrunk result is the counterexample -----------------------------------------------------
def test_exercise_7_accepts_what_shrink_returned_and_a_toml_file_in_capitals(tmp_path):
    """09: "the shrunk result has .data ... Set counterexample to the smallest scenario you get": the result
    itself was refused (``not Shrunk``), and so was ``SMALL.TOML`` (``not str``)."""
    from simkit.tools.explore import explore, failing
    from simkit.tools.shrink import shrink
    explored = explore(simkit.load("blocked_after_barrier"), check.Teammate, max_crashes=1, lost_requests=1)
    small = shrink(failing(simkit.load("blocked_after_barrier"), explored.first_violation[0]), check.Teammate,
                   explored.seed)
    assert check.exercise_7(small)
    (tmp_path / "SMALL.TOML").write_text(small.toml(), encoding="utf-8")
    assert check.exercise_7(str(tmp_path / "SMALL.TOML"))


# -- verdict_frame: one run, as a learner passes it ----------------------------------------------------------
def test_verdict_frame_of_one_run_is_its_row_and_of_nothing_is_one_line():
    """``widgets.verdict_frame(mine)`` raised ``TypeError: 'Run' object is not iterable``; ``[]`` an
    AttributeError from pandas (``'DataFrame' object has no attribute 'scenario'``)."""
    run = simkit.simulate(simkit.load("retry_walkthrough"), simkit.Consumer)
    assert widgets.verdict_frame(run).equals(widgets.verdict_frame([run]))
    assert len(widgets.verdict_frame(r for r in (run, run))) == 2
    for odd in ([], None, [run, "safe"]):
        with pytest.raises(simkit.SimkitError, match="give a run or a list of runs") as caught:
            widgets.verdict_frame(odd)
        assert caught.value.param == "runs"


# -- exercises 4 and 6: a whole number written as a float ----------------------------------------------------
def test_exercises_4_and_6_take_a_whole_number_written_as_a_float():
    """``("before_page_barrier", 1.0, 50)`` was ``SimkitError: faults[0].worker: expected int, got float``,
    and ``("after_event_commit", 70.0)`` was refused as no position: right answers, each ``✗ not yet``."""
    assert check.exercise_4(("before_page_barrier", 1.0, 50))
    assert check.exercise_6(("after_event_commit", 70.0))
    _refused(check.exercise_6(("after_event_commit", 70.5)), "a number such as 70, not 70.5")


# -- the notebooks in reading order: no answer on screen before its question ---------------------------------
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: question -> what gave its answer away above it (in its notebook's "You will learn", or 00's summary)
GIVEN_AWAY = {
    "loses_without_crash": ["a crash, a lost reply or a non-terminal outcome then loses"],
    "safe_failing_schedules": ["that `safe` survives a crash at every pass"],
    "lost_reply_retry": ["the service answers it from its receipt"],
    "double_ack_client": ["while a new key acknowledges the same page twice"],
    "scan_done": ["why an empty query page is not the end"],
}


def _read_in_order():
    """(text shown so far, cell source) for every cell of notebooks 00 to 09 in reading order: prose and
    printed outputs, whitespace folded."""
    shown = ""
    for path in sorted(NOTEBOOKS.glob("0*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            yield shown, source
            texts = [source] if cell["cell_type"] == "markdown" else []
            texts += ["".join(o.get("text", "")) for o in cell.get("outputs", [])]
            shown += " " + " ".join(" ".join(texts).split())


@pytest.mark.parametrize("key", sorted(GIVEN_AWAY))
def test_no_answer_is_on_screen_before_its_question(key):
    """05 and 07 said in their "You will learn" what their questions then asked (``safe`` survives every
    crash; a retried lost write is answered from its receipt; a new key acknowledges a page twice; an empty
    query page does not end the scan), and 00's summary that a lost reply or a non-terminal outcome loses
    events where 01 asks whether the shortcut loses without a crash."""
    asked = f'check_prediction("{key}"'
    shown = next(shown for shown, source in _read_in_order() if asked in source)
    assert [p for p in GIVEN_AWAY[key] if p in shown] == []


def test_stepper_names_a_row_it_does_not_have():
    """``widgets.stepper(row=nan)`` was a TraitError from ipywidgets, and a row past the trace was moved to
    its last row without a word."""
    for row in (float("nan"), 10**9, -1):
        with pytest.raises(simkit.SimkitError, match=r"must be a whole number from 0 to 14") as caught:
            widgets.stepper(row=row)
        assert caught.value.param == "row"
    assert widgets.stepper(row=3.0).controls["row"].value == 3


def test_no_proof_cell_closes_what_the_cells_above_it_use():
    """02's last proof cell of the SQL section closed the database and removed its folder: run twice (a
    double Shift-Enter on the collapsed bar), it raised ``ProgrammingError: Cannot operate on a closed
    database``, and so did every cell of the section above it. The folder goes with the kernel
    (``TemporaryDirectory``), or when the section runs again and makes a new one."""
    for path in sorted(NOTEBOOKS.glob("0*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
                source = "".join(cell["source"])
                assert not re.search(r"\b(db\.close|home\.cleanup)\(\)", source), (path.name, source)
