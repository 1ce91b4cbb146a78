"""Hostile input, fifth round (issue 32's leftovers): a consumer that ends the process it runs in, lowers
the recursion limit or prints; ``shrink`` and ``sweep`` without an overall bound. Each: one line naming the
command, flag or problem, exit status 2, nothing written; or the answer, alone on stdout.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TWO_PAGES
from test_hostile import one_line_exit_2
from test_hostile_round4 import planted

from simkit.cli import main

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: fork, process groups")

HOSTILE = '''
import os, sys
from simkit import Consumer


def depth():
    f, n = sys._getframe(), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


class Exits(Consumer):
    def is_replay(self, event, receipts, applied_position):
        os._exit(3)


class ExitsAtImport(Consumer):
    pass


if os.environ.get("HOSTILE_EXIT_AT_IMPORT"):
    os._exit(4)


class LowersTheLimit(Consumer):
    """a limit the consumer's own frame is under, simkit's next calls over"""
    def is_replay(self, event, receipts, applied_position):
        answer = super().is_replay(event, receipts, applied_position)
        n = depth()
        while True:                     # the lowest limit allowed here, whatever the frames above count
            try:
                sys.setrecursionlimit(n)
                break
            except RecursionError:
                n += 1
        # (n, where it was n + 1: since 2c1fa9d the world's quick commit is two calls shallower, and a frame
        # to spare let it through)
        return answer


class Prints(Consumer):
    def is_replay(self, event, receipts, applied_position):
        print("a consumer's print")
        sys.stdout.write("a consumer's write\\n")
        sys.stdout.flush()
        os.write(1, b"a write to fd 1\\n")
        return super().is_replay(event, receipts, applied_position)


class DefeatsTheWallClock(Consumer):
    """the run's 900 s guard is a SIGALRM timer: stopped and ignored, then a sleep of an hour"""
    def is_replay(self, event, receipts, applied_position):
        import signal, time
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        time.sleep(3600)
        return True


class Stalls(Consumer):
    """fails (a lost event: it never commits), so that shrink has work; then each run takes a while"""
    def is_replay(self, event, receipts, applied_position):
        import time
        time.sleep(0.2)
        return True
'''


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    return planted(tmp_path, monkeypatch, HOSTILE)


def simkit_cli(*argv, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simkit", *argv], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, **(env or {})})


# -- 1. a consumer that ends its own process -----------------------------------------------------------------
@linux
@pytest.mark.parametrize("command", ["run", "shrink"])
def test_a_consumer_calling_os_exit_is_one_line(hostile, command):
    """``os._exit(3)`` in a hook ended ``simkit run`` and ``simkit shrink``
    with exit status 3 and nothing said at all. The run is now in a process
    of its own (as explore's is): its end is one line, exit status 2."""
    proc = simkit_cli(command, "two.toml", "--strategy", "hostile.py:Exits", "--json", cwd=hostile)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (f"simkit: {command} two: the process doing the work ended (exit status 3) without "
                           "a result: did the consumer end its own process, overflow the stack, or was it "
                           "killed (out of memory)?\n")


@linux
def test_a_consumer_module_calling_os_exit_at_import_is_one_line(hostile):
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:ExitsAtImport", cwd=hostile,
                      env={"HOSTILE_EXIT_AT_IMPORT": "1"})
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("simkit: run two: the process doing the work ended (exit status 4)")


# -- 2. the recursion limit ----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "shrink"])
def test_a_consumer_that_lowers_the_recursion_limit_is_one_line(hostile, capsys, command):
    """``sys.setrecursionlimit(depth + 5)`` in a hook: RecursionError in the world's own code after the hook
    returned, 50 lines of traceback and exit status 1."""
    one_line_exit_2(capsys, [command, "two.toml", "--strategy", "hostile.py:LowersTheLimit", "--json"],
                    f"simkit: {command} two: RecursionError: maximum recursion depth exceeded")
    assert sys.getrecursionlimit() >= 1000


# -- 3. a consumer that prints -------------------------------------------------------------------------------
@linux
@pytest.mark.parametrize("argv", [["run", "two.toml"], ["shrink", "two.toml"],
                                  ["sweep", "two.toml", "--seeds", "2", "--jobs", "1"],
                                  ["sweep", "two.toml", "--seeds", "4", "--jobs", "2"],
                                  ["explore", "two.toml", "--max-crashes", "0"]],
                         ids=["run", "shrink", "sweep", "sweep --jobs 2", "explore"])
def test_what_a_consumer_prints_goes_to_stderr_and_json_stays_one_object(hostile, argv):
    """A consumer's ``print``, ``sys.stdout.write`` and ``os.write(1, ...)`` came out on stdout before the
    verdict: ``--json`` was no longer one JSON object."""
    proc = simkit_cli(*argv, "--strategy", "hostile.py:Prints", "--json", cwd=hostile)
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)
    assert proc.stdout.count("\n") == 1
    for line in ("a consumer's print", "a consumer's write", "a write to fd 1"):
        assert line in proc.stderr


# -- 4. shrink's budget --------------------------------------------------------------------------------------
@linux
def test_shrink_ends_at_its_budget_with_one_line_and_nothing_written(hostile):
    """Shrinking runs the scenario again and again, for as long as it takes:
    a slow consumer on a big stream kept it going for hours. Now ``--budget``
    (600 s by default, as explore's) ends it: one line, exit 2, no file."""
    start = time.monotonic()
    proc = simkit_cli("shrink", "two.toml", "--strategy", "hostile.py:Stalls", "--budget", "1", "--out",
                      "shrunk.toml", cwd=hostile)
    assert time.monotonic() - start < 60
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ("simkit: shrink two: the budget of 1 s (--budget) ran out before the failing run "
                           "was shrunk; nothing written. Raise --budget\n")
    assert not (hostile / "shrunk.toml").exists()
    assert [p.name for p in hostile.iterdir() if p.name.startswith(".simkit-")] == []


@pytest.mark.parametrize("budget, problem", [("0", "must be positive"), ("nan", "must be a finite number"),
                                             ("1e7", "must be at most 1e+06")])
def test_shrink_budget_out_of_range_is_one_line(capsys, budget, problem):
    one_line_exit_2(capsys, ["shrink", "retry_walkthrough", "--budget", budget],
                    f"--budget {budget}: {problem}")


def test_shrink_within_its_budget_is_as_before(hostile, capsys):
    assert main(["shrink", "shortcut_persist_token_on_fetch", "--strategy", "persist_token_on_fetch",
                 "--budget", "600", "--out", "s.toml"]) == 0
    assert Path("s.toml").read_text().startswith("# Replay: simkit run THIS_FILE")
    assert capsys.readouterr().out.startswith(
        "shrink shortcut_persist_token_on_fetch · persist_token_on_fetch")


# -- 5. sweep's size -----------------------------------------------------------------------------------------
def test_a_sweep_of_too_many_runs_is_refused_before_any(capsys):
    """50 ``--crash-rate`` flags at a million seeds each: 400 million runs, a task list built for minutes and
    rows held in memory; each flag alone was within bounds."""
    rates = [arg for i in range(50) for arg in ("--crash-rate", f"0.{i:02d}")]
    start = time.process_time()
    one_line_exit_2(capsys, ["sweep", "retry_walkthrough", "--seeds", "1000000", *rates],
                    "--seeds 1000000: × 8 strategies × 50 crash rates is 400000000 runs; a sweep does at "
                    "most 1000000")
    assert time.process_time() - start < 5



# -- fresh cases ---------------------------------------------------------------------------------------------
@linux
def test_what_live_workers_print_goes_to_stderr(hostile):
    """``simkit live --json``: the workers' prints (real processes, sharing the command's stdout) came before
    the verdict object."""
    proc = simkit_cli("live", "two.toml", "--strategy", "hostile.py:Prints", "--kills", "1", "--json",
                      "--timeout", "120", cwd=hostile)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["strategy"] == "Prints" and proc.stdout.count("\n") == 1
    assert "a consumer's print" in proc.stderr


@linux
@pytest.mark.parametrize("argv", [["sweep", "two.toml", "--seeds", "1", "--jobs", "1", "--strategy"],
                                  ["explore", "two.toml", "--max-crashes", "0", "--strategy"],
                                  ["audit", "--budget", "5"],
                                  ["live", "two.toml", "--kills", "1", "--timeout", "60", "--strategy"]],
                         ids=["sweep", "explore", "audit", "live"])
def test_a_consumer_module_ending_the_process_at_import_is_one_line_in_sweep_explore_audit(hostile, argv):
    """The strategy was imported by the command itself, before
    its work's process: exit status 4, nothing said."""
    proc = simkit_cli(*argv, "hostile.py:ExitsAtImport", cwd=hostile, env={"HOSTILE_EXIT_AT_IMPORT": "1"})
    assert (proc.returncode, proc.stdout) == (2, "")
    assert "the process doing the work ended (exit status 4) without a result" in proc.stderr
    assert proc.stderr.count("\n") == 1


@linux
def test_a_run_whose_process_ends_leaves_no_figure_and_no_temporary_file(hostile):
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:Exits", "--timeline", "t.png",
                      "--swimlane", "s.png", cwd=hostile)
    assert proc.returncode == 2
    assert sorted(p.name for p in hostile.iterdir()) == ["hostile.py", "two.toml"]


@linux
def test_a_100_kb_scenario_name_is_not_echoed_whole(hostile, capsys):
    """``name = "nnn…"`` (100,000 characters) and a consumer that ends the run's process: a 100 KB line. Now
    its start, how much was left out, and the end that says the problem."""
    Path("long.toml").write_text(f'name = "{"n" * 100_000}"\n{TWO_PAGES}')
    err = one_line_exit_2(capsys, ["run", "long.toml", "--strategy", "hostile.py:Exits"],
                          "characters left out) …")
    assert len(err) < 2_100
    assert err.rstrip().endswith("without a result: did the consumer end its own process, overflow the "
                                 "stack, or was it killed (out of memory)?")


@linux
def test_a_consumer_that_defeats_the_runs_wall_clock_is_stopped_all_the_same(hostile, capsys, monkeypatch):
    """A consumer that stops the run's SIGALRM timer and sleeps hung ``simkit run`` for the hour. The run's
    process has a budget of its own now (RUN_BUDGET: past the 900 s guard; 3 s here)."""
    import simkit.cli.commands as commands
    monkeypatch.setattr(commands, "RUN_BUDGET", 3.0)
    start = time.monotonic()
    one_line_exit_2(capsys, ["run", "two.toml", "--strategy", "hostile.py:DefeatsTheWallClock"],
                    "simkit: run two: did not end within 3 s of wall-clock time; stopped, nothing reported")
    assert time.monotonic() - start < 60
