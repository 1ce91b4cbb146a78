"""Hostile input, sixtieth round (a fresh tester): the notebooks as a workshop learner runs them, with the
inputs the text invites them to change, mistyped.

Found: every input simkit refuses in a notebook cell (``simkit.load("gauntlt")``, a mistyped behaviour in 09's
``my_scenario``, a pause of worker 3 or of ``"5"`` time units in exercise 4's own cell,
``settlement="Fenced"``) showed its one clear line at the end of a 31-to-43-line traceback through simkit's
frames: a ``SimkitError`` now shows in IPython as the command line prints it, one line (a consumer's own error
keeps its traceback). 08's ``sweep(scenario, ("success_before_effect"), ...)``, a tuple without its comma,
said ``strategy s: unknown strategy``, and ``crash_rates=(0.0)`` was ``TypeError: 'float' object is not
iterable``: one strategy or one rate alone is a list of one (``crash_effects`` too). ``plot.sweep_curves(...,
highlight=[a misspelt name])`` drew every shortcut grey without a word, and
``highlight="success_before_effect"`` highlighted nothing (a set of letters): a name the table lacks is
refused, one name alone is a list of one. 02's "a crash at step 2" cell, ``widgets.crash_rerun(on_fetch,
step)``, took step ``-1`` (Python's "last") for a crash at the first pass and said nothing of a step past the
trace, and ``"2"`` was a ``TypeError`` from a comparison: a row the trace lacks is refused, naming its rows.
``fault_free("default")``, ``replay`` and ``crash_effects`` given a scenario's name (01's
``fault_free(default)`` edited, 05's ``scenario`` rebound) were ``TypeError: replace() should be called on
dataclass instances``: one line now, as ``simulate``'s. ``explore(max_crashes=1.5)`` ran as 1 and
``points="after_fetch"`` was a crash point per letter. 08's prose right under the check of "at most what
chance of losing?" said "below about 1.9 %", above the folded reveal: it now follows the reveal. 03's
``loses_211_on = 'none'`` was refused without saying that ``[]`` answers it, and ``5`` was a TypeError's text.
``widgets.trace_table(on_fetch)`` of 02's step-through (a ``Stepped``, not a run) and ``show_comparison`` of
one run were an ``AttributeError`` and a ``TypeError``; ``explorer_run(backfill="0.5")`` a ``TypeError``.
A mistyped ``layers`` of a timeline or ``metric`` of a sweep figure was a plain ``ValueError``, a traceback.
``check.service_409("Behind")`` (exercise 5 invites trying the other situations) was ``KeyError: 'Behind'``.

Held: every prediction and exercise check given a typo, a wrong case, ``None``, ``[]``, a float, a huge or
negative number (each a ``✗``/``✎`` line); ``widgets.comparison_runs``, ``stepped_run``, ``explorer_run``,
``parse_crash_arg``, ``simulate(settlement=...)``, ``explore(max_crashes=-1)``, ``sweep(seeds=0)`` and
``sweep_curves(metric=...)`` given a typo (one line each, now without a traceback where a ``SimkitError``).
"""
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import simkit  # noqa: E402
from simkit.errors import ConsumerError, ScenarioError, SimkitError  # noqa: E402
from simkit.tools.sweep import sweep  # noqa: E402
from simkit.viz import plot, widgets  # noqa: E402

ROOT = Path(simkit.__file__).resolve().parents[1]


def test_a_refused_input_in_a_notebook_cell_is_one_line_not_a_traceback():
    """IPython (what a notebook's kernel runs) shows a SimkitError as the command line prints it: one line
    naming the input. It was the same line under 12 lines of simkit's frames here, 31 to 43 in a kernel."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "IPython", "--colors=NoColor", "--no-banner", "-c",
                          "import simkit; simkit.load('gauntlt')"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ScenarioError: gauntlt: no such scenario"), lines
    assert not hasattr(ConsumerError("strategy Mine raised KeyError"), "_render_traceback_")  # its own code
    assert ScenarioError("x")._render_traceback_() == ["ScenarioError: x"]


def test_sweep_takes_one_strategy_or_one_rate_written_without_its_comma():
    """08's re-run cell edited to another strategy, ``("safe")``: a string, once a strategy per letter."""
    frame = sweep(simkit.load("retry_walkthrough"), ("safe"), seeds=1, crash_rates=(0.0), jobs=1).frame()
    assert list(frame.strategy) == ["safe"] and list(frame.crash_rate) == [0.0]
    effects = widgets.crash_effects(simkit.load("retry_walkthrough"), "safe")
    assert set(effects.index.get_level_values("strategy")) == {"safe"}
    with pytest.raises(SimkitError, match="strategies 5: give one or a list"):
        sweep(simkit.load("retry_walkthrough"), 5, seeds=1, jobs=1)


def test_sweep_curves_refuse_a_highlight_the_table_lacks_and_take_one_name():
    """08's duplication figure with the highlighted strategy misspelt drew every shortcut grey, silently."""
    table = pd.DataFrame([{"scenario": "s", "strategy": s, "crash_rate": r, "duplicated": 0,
                           "lost": int(s == "a" or s == "b" and r > 0)}
                          for s in ("safe", "a", "b") for r in (0.0, 0.1) for _ in range(3)])
    fig, ax = plt.subplots()
    with pytest.raises(SimkitError, match="highlight 'A': not a strategy of this table .*safe, a, b"):
        plot.sweep_curves(ax, table, highlight=["A"])
    plot.sweep_curves(ax, table, highlight="a")
    labels = [line.get_label() for line in ax.get_legend().get_lines()]
    assert "a" in labels and "other strategies" in labels
    plt.close(fig)


def test_a_crash_at_a_step_the_trace_lacks_is_refused():
    """02's "a crash at step 2" cell: step -1 crashed at the first pass, "2" was a TypeError."""
    on_fetch = widgets.stepped_run(strategy="persist_token_on_fetch")
    for step in (-1, len(on_fetch.run.trace), "2", 2.5, None):
        with pytest.raises(SimkitError, match=r"row .*: the trace has rows 0 to 9"):
            widgets.crash_rerun(on_fetch, step)
    assert widgets.crash_after(on_fetch, 2.0) == widgets.crash_after(on_fetch, 2)


def test_a_scenario_named_where_a_scenario_is_taken_is_one_line():
    """01's ``fault_free(default)`` edited to ``fault_free("default")``, or 05's ``scenario = "gauntlet"``
    before ``widgets.crash_effects(scenario)``: ``replace() should be called on dataclass instances``."""
    from simkit.tools.explore import fault_free, replay
    for call in (lambda: fault_free("default"), lambda: replay("default", "safe", ()),
                 lambda: widgets.crash_effects("gauntlet", ["safe"])):
        with pytest.raises(SimkitError, match="scenario '(default|gauntlet)': is no Scenario"):
            call()


def test_explore_refuses_a_bound_that_is_no_whole_number_and_takes_one_point_alone():
    """05's ``explore(scenario, name, max_crashes=0)`` edited: ``1.5`` ran as 1 (the command line refuses
    ``--max-crashes 1.5``; docs/cli.md: the functions check the same), ``"1"`` was a TypeError from a
    comparison, and ``points="after_fetch"`` was a crash point per letter (``unknown crash point 'a'``)."""
    from simkit.tools.explore import explore
    sc = simkit.load("retry_walkthrough")
    for bad in (1.5, "1", None, True):
        with pytest.raises(SimkitError, match="^max_crashes .*: must be a whole number"):
            explore(sc, "safe", max_crashes=bad)
    one = explore(sc, "safe", max_crashes=1, points="after_fetch")
    assert set(one.passes) >= {"after_fetch"} and one.violations == 0
    assert one.schedules == explore(sc, "safe", max_crashes=1, points=("after_fetch",)).schedules


def _between_check_and_reveal(path: Path, key: str) -> list[str]:
    """The prose of ``path`` after the cell that checks question ``key`` and before its reveal: what a learner
    reads, unfolded, right under the question while the answer waits folded."""
    import nbformat
    cells = nbformat.read(path, 4).cells
    asked = next(i for i, c in enumerate(cells) if f'check_prediction("{key}"' in c.source)
    shown = next(i for i, c in enumerate(cells)
                 if i > asked and "check.reveal(" in c.source and key in c.source)
    return [c.source for c in cells[asked + 1:shown] if c.cell_type == "markdown"]


def test_no_answer_stands_between_a_question_and_its_folded_reveal():
    """08 asked "at most what chance of losing, as a percentage?", and the prose right under the check cell,
    above the folded reveal, said "below about 1.9 % (Wilson) or 1.5 % (rule of three)"."""
    notebook = ROOT / "simkit" / "workshop" / "notebooks" / "08_sweeps.ipynb"
    prose = " ".join(_between_check_and_reveal(notebook, "zero_of_200"))
    assert "1.9 %" not in prose and "1.5 %" not in prose and "z^2/(n+z^2)" not in prose


def test_which_outcomes_lose_211_takes_none_and_all_as_a_learner_writes_them():
    """03's ``loses_211_on``: ``'none'`` (it loses on none of them) was refused with "choose one of
    'retry_later', ...", which never said that ``[]`` answers it, and ``5`` was "the check could not use your
    prediction: TypeError: 'int' object is not iterable"."""
    from simkit import workshop as check
    for none in ("none", "Nothing", ["none"], []):
        assert repr(check.check_prediction("in_memory_loses", none)).startswith("✗ not []. The answer is")
    assert repr(check.check_prediction("in_memory_loses", "all")).startswith(
        "✗ not ['operator_review', 'retry_later', 'reversible_hold']")
    assert repr(check.check_prediction("in_memory_loses", 5)) == (
        "✎ name them as a list such as ['retry_later'] ([] for none), not 5.")


def test_the_tables_of_a_run_take_a_step_through_and_name_what_is_no_run():
    """02's ``on_fetch = widgets.stepped_run(...)`` looks like a run: ``widgets.trace_table(on_fetch)`` was
    ``AttributeError: 'Stepped' object has no attribute 'trace'``, and ``show_comparison`` of one run (04's
    ``safe, shortcut = runs``, then ``show_comparison(shortcut)``) "cannot unpack non-iterable Run object"."""
    on_fetch = widgets.stepped_run(strategy="persist_token_on_fetch")
    assert widgets.trace_table(on_fetch).equals(widgets.trace_table(on_fetch.run))
    for table in (widgets.trace_table, widgets.pages_served, widgets.receipts, widgets.violations_frame):
        with pytest.raises(SimkitError, match=r"^run None: give a run \(what simkit.simulate returns\)$"):
            table(None)
    with pytest.raises(SimkitError, match=r"^runs Run\(.*: give the pair comparison_runs returns"):
        widgets.show_comparison(on_fetch.run)


def test_the_explorer_run_names_a_backfill_rate_that_is_no_number():
    """01's "Things to try" cell, ``widgets.explorer_run(..., backfill=0)`` edited to ``backfill="0.5"`` or
    ``None``: ``'>' not supported between instances of 'str' and 'int'`` from the explorer's own input."""
    for rate in ("0.5", None):
        with pytest.raises(ScenarioError, match=r"^explorer: key 'generate.backfill': expected float, got"):
            widgets.explorer_run(strategy="max_position_watermark", backfill=rate)


def test_a_plot_given_a_layer_or_metric_it_lacks_says_so_in_one_line():
    """01 builds its timeline a layer at a time (``layers=["cursor", "memory", "crashes"]``) and 08 plots
    ``metric="duplicated"``: a mistyped layer or metric was a ``ValueError`` whose line came under a
    traceback; it is an ``ArgumentError`` now, a ``SimkitError`` (one line in a notebook), still a
    ``ValueError``."""
    from simkit.errors import ArgumentError
    run = simkit.simulate(simkit.load("retry_walkthrough"), simkit.Consumer)
    fig, ax = plt.subplots()
    with pytest.raises(ArgumentError, match=r"^layers \['curser'\]: use some of cursor"):
        plot.timeline(ax, run, layers=["curser", "memory"])
    with pytest.raises(ArgumentError, match="^metric 'duplicate': use one of lost, duplicated$"):
        plot.sweep_shares(pd.DataFrame(columns=["strategy", "crash_rate", "lost"]), "duplicate")
    assert issubclass(ArgumentError, ValueError) and ArgumentError("x")._render_traceback_() == [
        "ArgumentError: x"]
    plt.close(fig)


def test_exercise_5s_service_names_a_situation_it_does_not_have():
    """09's exercise 5 invites trying worker 2 "behind" and at the "same" cursor:
    ``check.service_409("Behind")`` was a bare ``KeyError: 'Behind'``."""
    from simkit import workshop as check
    assert check.service_409(" Behind")[1].status == 409
    for bad in ("ahaed", None, ["ahead"]):
        with pytest.raises(SimkitError, match="^situation .*: one of 'ahead', 'behind', 'same'$"):
            check.service_409(bad)
