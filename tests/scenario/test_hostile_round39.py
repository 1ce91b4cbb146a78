"""Hostile input, thirty-ninth round (a fresh tester): the docs as a contract, claims run against the tool.

Found: ``simkit live --json`` had no ``stopped`` key, which docs/cli.md promises (the verdict object of
docs/verdict.md) and ``run --json`` has; it now has every key of the run's object (``stopped`` null: no
progress guard runs there), and its extra keys (``unplanned_deaths``, ``cut_off``) are documented. ``live
--at`` drew each start's pass from 1-5, so on ``shortcut_persist_token_on_fetch`` (two passes of
``before_event_commit``) a kill could miss the shortcut's only window, where docs/live.md says it "hits a
shortcut's window every time"; a worker's n-th start is now killed at the n-th pass (1-5, then again). A
``sweep --out`` row failing only by ``settlement_violations`` or ``unhalted`` had ``ok`` False and every
failure column empty; both have a column now (the workshop's data files regenerated, their other columns
unchanged). README's audit transcript ("54 of 184 cases") was stale: 189 judged and 37 left out of 226 now,
with ``unhalted`` in its failures. docs/verdict.md said the wide audit cases run on "two seeds each" (only
the generated two do); README's list of hooks left out ``validate``, ``attempt`` and ``run``;
docs/performance.md's ``bench --quick`` transcript lacked three measures (tests/project/test_docs.py now
masks the numbers of such a transcript and compares the rest, and checks every ``--json`` object docs/cli.md
spells out, key by key).

Held: every checked transcript of README.md and docs/*.md; run VERBATIM besides: docs/service.md's three curl
sessions against a fresh ``simkit serve`` (byte for byte, CRLF of ``curl -i`` aside), its config-file example,
a config subject with the ``operator`` role; docs/protocol.md's session (tapped between simkit and the Python
reference consumer) and its error lines (silence, a malformed request, no program); CONTRACT §5's TOML; every
``--help`` against docs/cli.md's tables; the ``--json`` keys of explore, sweep, shrink (and
``nothing_to_shrink``), audit, service and ``service --explore``; docs/exploring.md's measured table (every
K = 3 row of ``safe`` and the shortcuts) and its shrink claim (gauntlet seed 3: 4, 2, 1, 1, 3, 1, 2 events);
docs/challenge.md's "usually means" verdicts; ``--jobs 1000``, ``--max-crashes -1``, 4,202 arguments, SIGINT
(130) and SIGTERM (143) of ``serve``; every ``simkit.*`` name the docs cite.

Left alone then, mended in round 49: ``simkit run --seed ' 7'`` said ``--seed  7`` unquoted where other flags
quote the value; ``simkit workshop`` ended ``open it with  jupyter lab ...`` (two blanks); ``simkit list``
cuts a description at its first colon as well as its first full stop (docs/scenarios.md said "its first
sentence").
"""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import simkit
from simkit.judge.verdict import FIELDS, LIVENESS, SAFETY
from simkit.live.run import live
from simkit.tools.sweep import COLUMNS

ROOT = Path(__file__).resolve().parents[2]


def _simkit(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simkit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_live_json_has_every_key_of_the_run_json_and_the_page_names_the_rest():
    """docs/cli.md, ``simkit live``: ``--json`` is "the verdict object plus ..."; ``stopped`` was missing."""
    sc = simkit.load("retry_walkthrough")
    ran = simkit.simulate(sc, "safe").as_dict()
    lived = json.loads(json.dumps(live(sc, "safe", kills=0, seed=0).as_dict()))
    assert set(ran) <= set(lived), set(ran) - set(lived)
    assert lived["stopped"] is None and lived["cut_off"] is False
    for key in ran:
        assert type(lived[key]) is type(ran[key]) or ran[key] is None or lived[key] is None, key
    row = next(line for line in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `--json` | the [verdict object]") and "`kills`" in line)
    assert not [k for k in set(lived) - set(ran) if f"`{k}`" not in row]


@pytest.mark.parametrize("shortcut, point", [("persist_token_on_fetch", "before_event_commit"),
                                             ("success_before_effect", "after_event_commit"),
                                             ("max_position_watermark", "before_event_commit")])
def test_live_at_a_crash_point_hits_the_shortcuts_window_every_time(shortcut, point):
    """docs/live.md: ``--at POINT`` "hits a shortcut's window every time"; seed 0 drew a pass past the
    worker's last on ``shortcut_persist_token_on_fetch`` and no kill landed (``lost: 0``). The first start now
    dies at the first pass, on every seed."""
    for seed in (0, 1):
        r = live(simkit.load(f"shortcut_{shortcut}"), shortcut, kills=1, seed=seed, at=(point,))
        assert r.kills == 1 and r.verdict.lost, (seed, r.verdict.lost)


def test_a_sweep_row_says_why_its_run_failed(tmp_path):
    """``sweep --out``: a row with ``ok`` False and every failure column empty told the reader nothing; each
    field that can fail a run has its column (docs/verdict.md, "Fields")."""
    failing = {f.sweep for f in FIELDS if f.property in (SAFETY, LIVENESS)}
    assert None not in failing and failing <= set(COLUMNS)
    done = _simkit("sweep", "late_response", "--strategy", "safe", "--settlement", "last_write_wins",
                   "--seeds", "1", "--jobs", "1", "--out", "runs.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "runs.csv", newline="", encoding="utf-8") as f:
        (row,) = csv.DictReader(f)
    assert row["ok"] == "False" and row["settlement_violations"] == "committed_downgraded"
    assert (row["lost"], row["duplicated"], row["invariants"], row["unhalted"]) == ("0", "0", "", "0")
    out = next(line for line in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `--out FILE` | one row per run"))
    assert [c for c in COLUMNS if f"`{c}`" not in out] == []


def test_the_readme_audit_transcript_counts_every_case_the_audit_has():
    """README's audit of ``MoveOn`` is not run (it takes its budget); its counts said 184 judged and 24 left
    out, 208 cases, where the audit has 226: what it judged plus what it left out is every case."""
    from simkit.tools.audit_cases import cases
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index("$ simkit audit yours.py:MoveOn"):]
    judged = int(re.search(r"\(\d+ of (\d+) cases failed", block).group(1))
    left_out = re.search(r"not judged: (\d+) cases", block[:block.index("```")])   # none when all fit
    left = int(left_out.group(1)) if left_out else 0
    assert judged + left == len(cases())


def test_the_audit_page_says_which_wide_cases_run_on_two_seeds():
    """docs/verdict.md, "simkit audit": the wide cases ran "two seeds each", where only the generated ones do
    (a scripted one runs once: its seed changes nothing)."""
    from simkit.tools.audit_cases import WIDE, cases
    text = " ".join((ROOT / "docs" / "verdict.md").read_text(encoding="utf-8").split())
    named = re.search(r"the generated ones \(([^)]*)\) on two seeds each, the scripted ones once", text)
    assert named, "docs/verdict.md no longer says which wide cases run on two seeds"
    twice = {c.name for c in cases() if c.kind == "wide" and c.seed != 0}
    assert set(re.findall(r"`(\w+)`", named.group(1))) == twice
    assert {c.name for c in cases() if c.kind == "wide"} == set(WIDE)


def test_the_readme_names_every_hook_docs_hooks_documents():
    """README, "Bring your own consumer": "overrides one of its documented hooks: ..." left out ``validate``
    (step 3), ``attempt`` and ``run``, which docs/hooks.md documents and ``simkit.Consumer`` has."""
    hooks = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^### (\w+)$", hooks, re.M))
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    listed = readme[readme.index("overrides one of its documented hooks:"):readme.index("([the hooks]")]
    assert documented == set(re.findall(r"`(\w+)`", listed))
    assert all(callable(getattr(simkit.Consumer, h)) for h in documented)
