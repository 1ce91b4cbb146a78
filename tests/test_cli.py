"""The command line of CONTRACT §6: JSON shapes, tables, and one clear line with exit 2 for bad input."""
import json
import subprocess
import sys

import pytest

from simkit.cli import main

GOOD = """
name = "tiny"
[initial]
resume_cursor = "C1"
[[pages]]
cursor = "C1"
positions = [1, 2]
next_cursor = "C2"
[[pages]]
cursor = "C2"
positions = []
next_cursor = "C2"
"""

BAD = {
    "missing key": ("[[pages]]\ncursor = 'C1'\nnext_cursor = 'C1'\n", "key 'pages[0].positions': missing"),
    "wrong type": (GOOD.replace('name = "tiny"', 'workers = "two"'), "key 'workers': expected int, got str 'two'"),
    "unknown crash point": (GOOD + "[[faults]]\nkind = 'crash'\npoint = 'during_lunch'\n",
                            "key 'faults[0].point': 'during_lunch' is not one of after_fetch"),
    "duplicate cursor": (GOOD + "[[pages]]\ncursor = 'C1'\npositions = []\nnext_cursor = 'C1'\n",
                         "key 'pages[2].cursor': duplicate cursor 'C1'"),
    "not toml": ("name = ", "not valid TOML"),
    "rate out of range": ("[generate]\noverlap = 2.0\n", "key 'generate.overlap': must be between 0 and 1"),
    "unknown key": ("colour = 'blue'\n" + GOOD, "key 'colour': unknown key"),
}


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "simkit", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_scenario_one_line_exit_2(tmp_path, case):
    text, message = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = tmp_path / "timeline.png"
    r = cli("run", str(path), "--timeline", str(out))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(path) in lines[0] and message in lines[0], lines[0]
    assert not out.exists()                                   # nothing half-written


@pytest.mark.parametrize("args, message", [
    (["run", "retry_walkthrough", "--strategy", "optimistic"], "--strategy optimistic: unknown strategy"),
    (["run", "retry_walkthrough", "--crash", "during_lunch"], "--crash during_lunch: key 'point'"),
    (["run", "no_such_scenario"], "no_such_scenario: no such scenario"),
    (["run", "retry_walkthrough", "--seed", "x"], "invalid int value"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_one_line_exit_2(args, message):
    r = cli(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr


def test_run_json_has_the_contract_fields(capsys):
    assert main(["run", "retry_walkthrough", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d == {
        "scenario": "retry_walkthrough", "strategy": "safe", "seed": 0, "ok": True, "lost": [], "duplicated": [],
        "regressions": 0, "invariant_violations": [], "halted": None, "pending": [], "completed": True,
        "settlement": "fenced", "settlement_violations": [],
        "final_checkpoint": {"resume_cursor": "C8", "applied_position": 107, "checkpoint_version": 2},
        "crashes": 1, "fetches": 3, "effects": 2,
    }


def test_run_crash_flag(capsys):
    assert main(["run", "retry_walkthrough", "--crash", "after_event_commit@106", "--crash", "before_page_barrier",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["crashes"] == 3 and d["ok"]


def test_compare_json_and_table(capsys):
    assert main(["compare", "shortcut_watermark_only_dedup", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"] == "shortcut_watermark_only_dedup" and d["seed"] == 0
    by = {r["strategy"]: r for r in d["results"]}
    assert by["safe"]["ok"] and by["watermark_only_dedup"]["lost"] == ["e105"]
    assert main(["compare", "shortcut_watermark_only_dedup"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("watermark_only_dedup"))
    assert "invariants broken" in table and row.split()[:4] == ["watermark_only_dedup", "NO", "1", "(e105)"]


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("scenario    gauntlet", "strategy    safe", "strategy    compare_tokens", "settlement  fenced"):
        assert word in out


def test_demo_prints_table_and_writes_png(tmp_path):
    r = cli("demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "safe                    yes" in r.stdout
    assert (tmp_path / "simkit-demo-timeline.png").stat().st_size > 10_000


def test_user_strategy_on_the_command_line(tmp_path, capsys):
    (tmp_path / "mine.py").write_text("from simkit import Consumer\nclass Mine(Consumer):\n    pass\n")
    assert main(["run", "gauntlet", "--strategy", f"{tmp_path / 'mine.py'}:Mine", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["strategy"] == "Mine" and d["ok"]
