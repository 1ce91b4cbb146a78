"""``simkit audit`` / :func:`simkit.audit`: anyone's consumer judged on every case simkit has, the first failure
shrunk to a file that ``simkit run`` replays; exit 1 for a failing consumer, 0 for a passing one, 2 on bad input."""
import dataclasses
import json
import shlex
import subprocess
import sys
import textwrap

import pytest

import simkit
from simkit.cli import main
from simkit.tools import audit as auditor
from simkit.tools.audit import Case, cases

MINE = textwrap.dedent('''
    from simkit import Consumer

    class TrustTheWatermark(Consumer):
        """Treats everything at or below the applied watermark as done, receipts or not."""

        def is_replay(self, event, receipts, applied_position):
            return event.position <= applied_position

    class Careful(Consumer):
        """safe, with its own name."""
''')


@pytest.fixture
def mine(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(MINE)
    return path


def test_every_kind_of_case_is_there():
    kinds = {c.kind for c in cases(1, 1)}
    assert kinds == {"bundled", "sweep", "explore"}
    assert {c.name for c in cases(1, 0) if c.kind == "bundled"} == set(simkit.bundled())


def test_on_the_unsafe_sink_exploration_excuses_exactly_seed_000s_limit():
    """Seed 000: no exactly-once "for an external sink that lacks transactions or idempotency". A crash at
    after_effect or a lost effect reply duplicates even safe's effect there; every other schedule counts."""
    a = simkit.audit("safe", seeds=1, sweep_seeds=0, shrink_first=False)
    assert a.ok and a.skipped == []
    unsafe = [c for c in cases(1, 0) if c.scenario.sink == "unsafe" and c.kind == "explore"]
    assert unsafe, "a bundled scenario with an unsafe sink is explored"


def test_a_case_safe_fails_is_skipped_not_blamed(monkeypatch):
    sc = simkit.load("shortcut_success_before_effect")
    faulty = dataclasses.replace(sc, faults=(simkit.parse_crash_arg("after_effect@106"),))
    assert not simkit.simulate(faulty).verdict.ok              # the documented limit, for safe itself
    monkeypatch.setattr(auditor, "cases", lambda *a: [Case("bundled", faulty, "limit", 0)])
    a = simkit.audit(simkit.resolve("success_before_effect"))
    assert a.ok and a.cases == 0 and [c.name for c in a.skipped] == ["limit"]


def test_a_failing_consumer_exits_1_and_writes_a_replayable_shrunk_failure(mine, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", f"{mine}:TrustTheWatermark", "--seeds", "1", "--sweep-seeds", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("audit TrustTheWatermark: FAILS")
    replay = out.splitlines()[-1].split("replay with ", 1)[1]
    assert (tmp_path / "simkit-audit-TrustTheWatermark.toml").exists()
    argv = shlex.split(replay)
    assert argv[:2] == ["simkit", "run"]
    assert main([*argv[1:], "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert not verdict["ok"] and verdict["lost"]


def test_a_passing_consumer_exits_0_writes_nothing_and_speaks_json(mine, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", f"{mine}:Careful", "--seeds", "1", "--sweep-seeds", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] and d["failures"] == [] and d["out"] is None and d["cases"] > 50
    assert not list(tmp_path.glob("*.toml"))


@pytest.mark.parametrize("argv, says", [
    (["audit", "nosuch.py:X"], "no such file nosuch.py"),
    (["audit", "MINE:Nope"], "has no class of that name"),
    (["audit", "safe", "--out", "x.png"], "unsupported extension '.png'"),
    (["audit", "safe", "--seeds", "0"], "--seeds 0"),
])
def test_bad_input_is_one_line_and_exit_2(argv, says, mine, capsys):
    argv = [a.replace("MINE", str(mine)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert "--strategy" not in err              # the consumer is audit's own argument, not a flag it was given


def test_the_console_script_exits_1_for_a_failing_consumer(mine, tmp_path):
    r = subprocess.run([sys.executable, "-m", "simkit", "audit", f"{mine}:TrustTheWatermark", "--seeds", "1",
                        "--sweep-seeds", "0", "--out", str(tmp_path / "f.toml")], capture_output=True, text=True)
    assert r.returncode == 1 and (tmp_path / "f.toml").exists(), r.stderr
