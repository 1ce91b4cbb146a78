"""Issue 27, item 1: the verdict's fields declared once (simkit/judge/verdict.py), and everything that reads a
verdict derived from that declaration: ``ok``, the ``--json`` object, how a run failed, the report's lines and
the sweep's columns (docs/verdict.md, "Fields")."""
import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

import simkit
from simkit.judge import report
from simkit.judge.verdict import (
    CONTEXT,
    FIELDS,
    JUDGED,
    LIVENESS,
    SAFETY,
    Verdict,
    describe_kind,
    failure_kind,
    harms,
)
from simkit.tools.sweep import COLUMNS, run_row

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "tests" / "golden"))
import verdicts as golden  # noqa: E402

#: A value that fails each field, or for a context field one that is there (it fails nothing by itself)
SAMPLES = {"lost": ["e1"], "duplicated": ["e2"], "regressions": 2, "halted": "gap at e3",
           "halt_justified": False,
           "invariant_violations": [{"invariant": 2, "time": 1.0, "worker": 1, "detail": "d2"}],
           "pending": ["e4"], "completed": False,
           "settlement_violations": [{"kind": "wrong_reservation", "time": 2.0, "worker": 2, "detail": "ds"}],
           "unhalted": [{"time": 3.0, "worker": 1, "detail": "du"}]}
#: Keys of a run's ``--json`` object (and of a golden entry) that are the run's, not the verdict's
RUN_KEYS = {"scenario", "strategy", "seed", "settlement", "stopped", "final_checkpoint", "crashes", "fetches",
            "effects", "trace_digest"}


def sample(f):
    """A failing value for field ``f``; for a field declared after this test, one by its default's type."""
    if f.name in SAMPLES:
        return SAMPLES[f.name]
    empty = f.empty()
    return ["e9"] if isinstance(empty, list) else (not empty) if isinstance(empty, bool) else 1


def test_the_json_object_is_ok_then_every_declared_field_by_its_json_name():
    assert list(Verdict().as_dict()) == ["ok", *(f.json for f in FIELDS)]
    assert [f.name for f in FIELDS] == [f.name for f in dataclasses.fields(Verdict)]
    committed = json.loads(golden.FILE.read_text())
    assert all(set(entry) - RUN_KEYS == {"ok", *(f.json for f in FIELDS)} for entry in committed.values())
    assert {f.property for f in FIELDS} == {SAFETY, LIVENESS, CONTEXT}


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.name)
def test_one_field_failing_fails_the_run_as_declared(f):
    """A safety or liveness field failing alone makes the run not ok, is its one component of the failure kind
    and its harm; a context field alone (a justified halt, an event left pending) fails nothing."""
    v = Verdict(**{f.name: sample(f)})
    kind = failure_kind(v)
    safety, liveness = harms(v)
    if f.property == CONTEXT:
        assert v.ok and not any(kind) and describe_kind(kind) == "ok" and not safety | liveness
        return
    assert not v.ok
    assert [bool(k) for k in kind] == [g is f for g in JUDGED]
    assert describe_kind(kind) != "ok"
    assert {h[0] for h in (safety if f.property == SAFETY else liveness)} == {f.name}
    assert not (liveness if f.property == SAFETY else safety)
    assert Verdict.from_dict(v.as_dict()) == v and failure_kind(v.as_dict()) == kind


def test_the_kind_words_are_explores():
    v = Verdict(**{f.name: sample(f) for f in JUDGED if f.name in SAMPLES})
    assert describe_kind(failure_kind(v)) == ("lost, duplicated, regressions, invariant 2, incomplete, "
                                              "wrong reservation, unhalted")
    v.invariant_violations.append({"invariant": 5, "time": 1.0, "worker": 1, "detail": "d5"})
    assert "invariants 2, 5" in describe_kind(failure_kind(v))


def test_harms_count_item_by_item():
    """Two lost events harm more than one, a second regression more than one (viz/crashes: worse)."""
    one, two = Verdict(lost=["e1"], regressions=1), Verdict(lost=["e1", "e2"], regressions=2)
    assert harms(two)[0] - harms(one)[0] == {("lost", "e2"), ("regressions", 1)}


def test_a_verdict_and_its_json_object_fail_alike():
    for name, strategy in (("shortcut_no_version_check", "no_version_check"), ("retry_walkthrough", "safe"),
                           ("shortcut_in_memory_quarantine", "in_memory_quarantine")):
        run = simkit.simulate(simkit.load(name), simkit.resolve(strategy))
        d = run.as_dict()
        assert failure_kind(d) == failure_kind(run.verdict) and harms(d) == harms(run.verdict)
        assert report.counts_line(d) == report.counts_line(run.verdict)
    assert failure_kind({"ok": True, "lost": []}) == failure_kind(Verdict())      # an older object lacks keys


@pytest.fixture(scope="module")
def run():
    return simkit.simulate(simkit.load("retry_walkthrough"))


def test_the_table_columns_and_the_notebook_cells_are_the_declared_ones(run):
    assert report.HEADERS == ("strategy", "ok", "lost", "duplicated", "regressions", "invariants broken",
                              "halted")
    assert list(report.verdict_cells(run)) == [
        "scenario", "strategy", "ok", "lost", "duplicated", "regressions", "invariants broken", "halted",
        "pending", "completed", "crashes", "final checkpoint"]


def test_a_later_field_reads_only_where_it_failed(run):
    """``settlement_violations`` and ``unhalted`` came after the first verdict: a run that keeps them reads
    as it did before they existed; one that breaks them shows them in every line."""
    later = [f for f in FIELDS if not f.always]
    assert {f.name for f in later} >= {"settlement_violations", "unhalted", "halt_justified"}
    clean = (report.counts_line(run.verdict), report.run_summary(run), report.verdict_line(run.verdict))
    for text in clean:
        assert "settlement" not in text.replace("settlement fenced", "") and "unhalted" not in text
    broken = dataclasses.replace(run, verdict=Verdict(settlement_violations=SAMPLES["settlement_violations"],
                                                      unhalted=SAMPLES["unhalted"]))
    assert report.counts_line(broken.verdict) == (
        "lost: 0   duplicated: 0   regressions: 0   invariants broken: none   completed: yes   "
        "settlement: wrong reservation   unhalted: 1")
    assert report.counts_line(broken.verdict, brief=True) == ("lost 0   duplicated 0   regressions 0   "
                                                              "invariants broken: none")
    assert report.verdict_row(broken) == ("safe", "NO", "0", "0", "0", "wrong_reservation, unhalted", "-")
    assert report.verdict_line(broken.verdict) == (
        "lost 0, invariants [], settlement violations 1, unhalted 1, completed True, halted None, pending 0")
    summary = report.run_summary(broken).splitlines()
    assert summary[2] == ("  invariants broken: none   settlement violations: 1 (wrong_reservation)   "
                          "unhalted: 1   halted: no   pending: 0   completed: yes")
    assert summary[-2:] == ["  wrong_reservation at t=2 (worker 2): ds", "  unhalted at t=3 (worker 1): du"]


def test_the_summary_lists_at_most_eight_invariant_violations(run):
    many = [{"invariant": 1 + i % 3, "time": float(i), "worker": 1, "detail": f"d{i}"} for i in range(11)]
    many_run = dataclasses.replace(run, verdict=Verdict(invariant_violations=many))
    lines = report.run_summary(many_run).splitlines()
    assert lines[-2:] == ["  invariant 2 at t=7 (worker 1): d7", "  … and 3 more invariant violations"]
    assert report.verdict_row(dataclasses.replace(run, verdict=Verdict(invariant_violations=many,
                                                                       unhalted=SAMPLES["unhalted"])))[5] == \
        "1, 2, 3; unhalted"


def test_the_docs_name_every_field_and_what_ok_reads():
    """docs/verdict.md's table of fields has a row per declared field, and its ``ok`` row names every safety
    field (and ``completed``): the page says what the declaration does."""
    page = (ROOT / "docs" / "verdict.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (.*) \|$", page, re.M))
    assert {f.json for f in FIELDS} <= set(rows)
    assert {f.json for f in JUDGED} <= set(re.findall(r"`(\w+)`", rows["ok"]))


def test_the_sweep_columns_are_the_declared_ones():
    declared = [f.sweep for f in FIELDS if f.sweep]
    first = ["lost", "duplicated", "regressions", "invariants", "halted", "pending", "completed"]
    assert declared[:len(first)] == first            # a later field's column comes after the first ones
    assert COLUMNS[COLUMNS.index("ok") + 1:COLUMNS.index("events")] == tuple(declared)
    row = run_row(simkit.load("shortcut_in_memory_quarantine"), "in_memory_quarantine", 0)
    assert list(row) == list(COLUMNS)
    assert (row["ok"], row["lost"], row["invariants"], row["halted"], row["completed"]) == (False, 2, "1,2,5",
                                                                                          False, True)
