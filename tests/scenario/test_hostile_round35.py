"""Hostile input, thirty-fifth round (a fresh tester): the files the tools write, and what reads them back.

Found: ``audit --json`` said ``"shrunk": null`` and nothing more when the first failure could not be shrunk
(a consumer whose replay fails otherwise): the text said "first failure kept whole" and why, the JSON neither;
it now carries ``shrink_error``.

Held: every audit case (``regression_deep_in_page``, ``backfill_behind_start``, ``gap_two_workers``,
``long_outage``, ``late_reply_before_retry``, ``rotation_before_retry``, ``crossed_each_field``, the others)
and every bundled scenario, as written by ``scenario_data`` and as a run's ``scripted_data``, read back
through TOML to the same whole verdict for ``safe``, the seven shortcuts and fault-only mutants; ``default``,
``gauntlet``, ``wide_pages`` and ``long_stream`` under the audit's sweep faults, many seeds; ``shrink --out``
(``--settlement``, ``--store`` carried in the file) and ``explore --out`` (``--pause-duration``,
``--with-scenario-faults``, ``--settlement``) replayed by ``simkit run --json`` to the very verdict of the
tool's JSON, positions up to 2**53 - 1 too; ``audit --out`` and its JSON's ``shrunk.verdict``; sweep rows
against in-process runs.

Left alone: a ``sweep --out`` row of a run failing only by ``settlement_violations`` or ``unhalted`` shows
``ok`` False with every failure column empty (no column for either): adding them changes the columns of the
workshop's data files."""
from __future__ import annotations

import json

import simkit
from simkit.tools.audit import Audit, Case, Failure, _shrink, failure_toml


def test_audit_json_says_why_its_first_failure_was_kept_whole():
    """docs/cli.md, ``audit --json``: the object says what the text says; a failure the audit could not shrink
    (its replay fails otherwise) was ``"shrunk": null`` with no reason, where the text said why."""
    sc = simkit.load("shortcut_persist_token_on_fetch")
    case = Case("bundled", sc, sc.name, sc.seed)
    result = Audit("persist_token_on_fetch", "persist_token_on_fetch", cases=1,
                   failures=[Failure(case, "duplicated", (), {}, sc)])   # not what its replay gives
    _shrink(result, simkit.resolve("persist_token_on_fetch"))
    d = json.loads(json.dumps(result.as_dict()))
    assert d["shrunk"] is None
    assert d["shrink_error"].endswith("the consumer is not deterministic")
    assert "Expected failure: duplicated" in failure_toml(result, "out.toml")
