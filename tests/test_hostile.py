"""Hostile input on the command line and in scenario files (issue 20): every case answered with one line and exit
status 2, nothing written, or with a verdict, in bounded time and memory. Each case here once spun, grew without
bound, printed a traceback or was accepted and judged wrongly.

The progress guard (:mod:`simkit.world`) is what bounds a run that simulated time does not: a run that spins at one
instant, or spends its step budget, ends with ``completed: false`` and ``stopped`` saying why.
"""
from __future__ import annotations

import copy
import json
import resource
import time
import tomllib

import pytest

import simkit
from conftest import TWO_PAGES, scenario_dict
from simkit import world as worlds
from simkit.cli import main
from simkit.shrink import toml_text

ZERO = {"fetch_latency": 0.0, "commit_latency": 0.0, "effect_latency": 0.0, "restart_delay": 0.0, "timeout": 0.0,
        "backoff": 0.0}
SPIN = {"pages": [{"cursor": "C5", "positions": [1, 2], "next_cursor": "C5"}]}


def one_line_exit_2(capsys, argv, message: str, out=None) -> str:
    """``simkit ARGV`` answers one line on stderr containing ``message``, exit 2, nothing on stdout or at ``out``."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("simkit: "), captured.err
    assert message in captured.err, captured.err
    if out is not None:
        assert not out.exists()
    return captured.err


def bounded(fn, seconds: float = 30.0, megabytes: float = 400.0):
    """``fn()`` within ``seconds`` and without the process's peak resident memory growing by ``megabytes``."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.monotonic()
    out = fn()
    assert time.monotonic() - began < seconds
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024 < megabytes
    return out


# -- 3. the progress guard ---------------------------------------------------------------------------------------
def test_a_zero_latency_gauntlet_is_stopped_at_one_instant():
    """Zero latencies and ``backoff = 0``: review and hold events wait for simulated time that never comes (1.5 GB
    after 36 s before the guard)."""
    data = scenario_dict("gauntlet")
    data["timing"] = dict(ZERO)
    run = bounded(lambda: simkit.simulate(simkit.parse(data)))
    d = run.as_dict()
    assert d["completed"] is False and d["ok"] is False
    assert d["stopped"].startswith(f"progress guard: {worlds.STALL_STEPS} steps at t=")
    assert d["stopped"].endswith("without simulated time advancing")


def test_a_transient_event_that_never_stops_failing_is_stopped():
    data = {**SPIN, "pages": [{"cursor": "A", "positions": [1], "next_cursor": "B"},
                              {"cursor": "B", "positions": [], "next_cursor": "B"}],
            "events": [{"position": 1, "behavior": "transient", "failures": 2**53}], "timing": dict(ZERO)}
    run = bounded(lambda: simkit.simulate(simkit.parse(data)))
    assert run.as_dict()["stopped"] == f"progress guard: {worlds.STALL_STEPS} steps at t=0 without simulated time advancing"
    assert run.verdict.pending == ["e1"] and not run.verdict.completed


@pytest.mark.parametrize("timing", [{"time_limit": 1e15},
                                    {"fetch_latency": 1e-300, "commit_latency": 1e-300, "effect_latency": 1e-300,
                                     "backoff": 1e-300, "time_limit": 1.0}], ids=["huge time limit", "1e-300"])
def test_a_self_loop_that_time_does_not_end_spends_its_step_budget(timing):
    """A page that answers its own token with events is never the end; a time limit of 1e15, or latencies of
    1e-300, leave simulated time no guard. The step budget ends the run (about 5 s, 150 MB)."""
    run = bounded(lambda: simkit.simulate(simkit.parse({**SPIN, "timing": timing})), seconds=60)
    budget = worlds.STEP_BASE + worlds.STEPS_PER_ITEM * (2 + 1)        # two events, one page, one worker
    assert run.world.guard.budget == budget
    assert run.as_dict()["stopped"].startswith(f"progress guard: the step budget of {budget} steps spent at t=")
    assert not run.verdict.completed and not run.verdict.ok


def test_the_guard_is_in_the_text_summary_and_json(tmp_path, capsys):
    data = scenario_dict("gauntlet")
    data["timing"] = dict(ZERO)
    path = tmp_path / "zero.toml"
    path.write_text(toml_text(data))
    assert main(["run", str(path)]) == 0
    text = capsys.readouterr().out
    assert "completed: no" in text and "\n  stopped: progress guard: 100000 steps at t=" in text
    assert main(["run", str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stopped"].startswith("progress guard: ") and d["completed"] is False


def test_no_bundled_run_comes_near_the_guard():
    """The budgets are generous: every bundled scenario x strategy takes under 1,500 steps (the guard counts in
    chunks of GUARD_CHUNK, so a run that ends unguarded shows 0 or 1,000 here)."""
    for name in simkit.bundled():
        sc = simkit.load(name)
        for strategy in simkit.STRATEGIES.values():
            run = simkit.simulate(sc, strategy)
            assert run.as_dict()["stopped"] is None
            assert run.world.guard.steps <= 2 * worlds.GUARD_CHUNK < worlds.STALL_STEPS


# -- 4. a consumer whose own code raises ---------------------------------------------------------------------
MINE = '''
import json
from simkit import Consumer


class Boom(Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise ValueError("boom")


class Library(Consumer):
    def is_replay(self, event, receipts, applied_position):
        return json.loads("{")


class NotARequest(Consumer):
    def run(self):
        yield "fetch please"


class Returns(Consumer):
    def run(self):
        return
        yield
'''


@pytest.fixture
def mine(tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text(MINE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("cls, message", [
    ("Boom", "simkit: strategy mine.py:Boom raised ValueError: boom in is_replay (mine.py:8)\n"),
    ("Library", "simkit: strategy mine.py:Library raised JSONDecodeError: Expecting property name enclosed in double "
                "quotes: line 1 column 2 (char 1) in is_replay (mine.py:13)\n"),
    ("NotARequest", "simkit: strategy mine.py:NotARequest yielded 'fetch please' (str), which is not a request of "
                    "simkit.ops\n"),
    ("Returns", "simkit: strategy mine.py:Returns: its run() returned; a consumer yields requests until the world "
                "stops it (caught up, halted or crashed)\n"),
])
def test_a_consumer_that_raises_is_one_line_naming_it(mine, capsys, cls, message):
    """41 lines of traceback and exit 1 before; now the strategy, the exception and where, exit 2, no figure."""
    out = mine / "t.png"
    assert main(["run", "retry_walkthrough", "--strategy", f"mine.py:{cls}", "--timeline", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == message and not out.exists()


def test_simulate_raises_a_simkit_error_carrying_it(mine):
    cls = simkit.resolve("mine.py:Boom")
    with pytest.raises(simkit.ConsumerError, match=r"^strategy mine.py:Boom raised ValueError: boom in is_replay"):
        simkit.simulate(simkit.load("retry_walkthrough"), cls)
    assert issubclass(simkit.ConsumerError, simkit.SimkitError)


@pytest.mark.parametrize("argv", [
    ["explore", "retry_walkthrough", "--strategy", "mine.py:Boom", "--max-crashes", "1", "--jobs", "2"],
    ["sweep", "default", "--strategy", "mine.py:Boom", "--seeds", "2", "--jobs", "2"],
    ["shrink", "retry_walkthrough", "--strategy", "mine.py:Boom"],
    ["audit", "mine.py:Boom", "--seeds", "1", "--sweep-seeds", "0"],
], ids=["explore", "sweep", "shrink", "audit"])
def test_explore_sweep_shrink_and_audit_report_it_the_same_way(mine, capsys, argv):
    err = one_line_exit_2(capsys, argv, "strategy mine.py:Boom raised ValueError: boom in is_replay (mine.py:8)")
    assert not list(mine.glob("*.toml"))
