"""The overall bounds of issue 32 (docs/cli.md, "Bounds"): ``simkit explore``, ``simkit service --explore``
and ``simkit bench --repeat`` had none, so a huge request (``--max-crashes 3`` on the gauntlet, ``--horizon
10**9``, ``--repeat 10**9``) ran until killed. Now explore stops at ``--budget`` with every process it
started, one line and exit status 2; service --explore stops starting schedules at its ``--budget`` and, as
explore does, reports none of them (one line, exit status 2: it had said ``"complete": false`` with exit
status 0, while explore reported nothing); bench's rounds are at most 10. Each budget here is tiny: the test
checks that it is honoured, with generous margins. """
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simkit.cli import main
from simkit.tools import bench

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def simkit_cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simkit", *argv], capture_output=True, text=True,
                          timeout=timeout, start_new_session=True)


def session_alive(sid: int) -> list[int]:
    """The processes of session ``sid`` still running (not zombies): what a command left behind."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def children_cpu() -> float:
    """CPU seconds of this process's reaped children (a command, and what it
    reaped): a bound on their work that holds whatever else the machine runs,
    as ``bounded()`` of tests/scenario/test_hostile.py is for this process."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_line(err: str, text: str) -> None:
    assert err.count("\n") == 1 and err.startswith("simkit: ") and "Traceback" not in err, err
    assert text in err, err


# -- simkit explore --budget ---------------------------------------------------------------------------------
@linux
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_huge_exploration_ends_at_its_budget_with_every_process(tmp_path, jobs):
    out = tmp_path / "first.toml"
    start = children_cpu()
    proc = subprocess.Popen([sys.executable, "-m", "simkit", "explore", "gauntlet", "--max-crashes", "3",
                             "--lost-responses", "2", "--jobs", jobs, "--budget", "2", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    stdout, stderr = proc.communicate(timeout=120)
    assert children_cpu() - start < 60
    assert proc.returncode == 2 and stdout == ""
    one_line(stderr, "explore gauntlet: the budget of 2 s (--budget) ran out before every schedule of up "
                     "to 3 crashes and 2 lost replies was run; none is reported")
    time.sleep(0.5)
    assert session_alive(proc.pid) == [] and not out.exists()


def test_an_exploration_within_its_budget_is_as_before(capsys):
    assert main(["explore", "retry_walkthrough", "--max-crashes", "1", "--budget", "600", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schedules"] == 9


@pytest.mark.parametrize("budget, problem", [("0", "must be positive"), ("-1", "must be positive"),
                                             ("nan", "must be a finite number"),
                                             ("1e9", "must be at most 1e+06"), ("x", "expected a number")])
def test_explore_budget_is_a_positive_number_of_seconds(capsys, budget, problem):
    assert main(["explore", "retry_walkthrough", "--budget", budget]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"simkit: --budget {budget}: {problem}\n"


CONSUMERS = '''
import os, time
from simkit import Consumer

class Exits(Consumer):
    def is_replay(self, event, receipts, applied_position):
        os._exit(3)

class Swallows(Consumer):
    """sleeps, and swallows whatever is raised to stop it"""
    def is_replay(self, event, receipts, applied_position):
        while True:
            try:
                time.sleep(1)
            except BaseException:
                pass
'''


@linux
@pytest.mark.parametrize("cls, text", [
    ("Exits", "explore retry_walkthrough: the process doing the work ended (exit status 3) without a result"),
    ("Swallows", "explore retry_walkthrough: the budget of 3 s (--budget) ran out"),
])
def test_a_consumer_that_ends_the_process_or_will_not_stop_is_one_line(tmp_path, cls, text):
    """os._exit in the consumer ended `simkit explore` with exit status 3 and nothing said; one that swallowed
    the wall clock's exception never ended."""
    (tmp_path / "mine.py").write_text(CONSUMERS)
    proc = simkit_cli("explore", "retry_walkthrough", "--strategy", f"{tmp_path}/mine.py:{cls}",
                      "--max-crashes", "1", "--budget", "3")
    assert proc.returncode == 2 and proc.stdout == ""
    one_line(proc.stderr, text)


# -- simkit service --explore --budget -----------------------------------------------------------------------
@pytest.mark.parametrize("json_flag", [["--json"], []], ids=["--json", "text"])
def test_service_explore_stops_at_its_budget_and_reports_nothing_as_explore_does(capsys, json_flag):
    """``--horizon 10**9`` makes more schedules than anyone can run. The budget ran out with exit status 0 and
    a partial tally (``"complete": false``, "36/36 schedules ok, then the budget ran out"), where ``simkit
    explore`` stops with one line, exit status 2 and nothing reported: now both do the latter. The run is in
    this process: its CPU time bounds it, whatever else the machine runs."""
    start = time.process_time()
    assert main(["service", "checkpoint_service", "--explore", "--horizon", str(10**9), "--client", "correct",
                 "--budget", "1", *json_flag]) == 2
    assert time.process_time() - start < 60
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    one_line(captured.err, "service checkpoint_service --explore: the budget of 1 s (--budget) ran out "
                           "after ")
    assert "of client correct, before every schedule was run; none is reported" in captured.err


def test_service_explore_within_its_budget_says_nothing_of_it(capsys):
    assert main(["service", "checkpoint_service", "--explore", "--client", "correct", "--max-crashes", "1",
                 "--lost-responses", "0", "--horizon", "1", "--json"]) == 0
    (tally,) = json.loads(capsys.readouterr().out)["explore"]
    assert "complete" not in tally and tally["runs"] > 0


@pytest.mark.parametrize("budget", ["0", "nan", "-5", "1e7"])
def test_service_budget_out_of_range_is_one_line(capsys, budget):
    assert main(["service", "checkpoint_service", "--explore", "--budget", budget]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"simkit: --budget {float(budget):g}: seconds from more than 0 to 1e+06") and \
        err.count("\n") == 1


# -- simkit bench --repeat -----------------------------------------------------------------------------------
@pytest.mark.parametrize("repeat", [str(bench.MAX_REPEAT + 1), str(10**9)])
def test_bench_repeat_is_bounded_before_any_round(capsys, monkeypatch, repeat):
    monkeypatch.setattr(bench, "measure", lambda *a, **k: pytest.fail("a round ran"))
    assert main(["bench", "--quick", "--repeat", repeat]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"simkit: bench: --repeat must be at most {bench.MAX_REPEAT}, got {repeat} (a round of the full "
         "benchmark takes minutes)\n"
    )


def test_bench_repeat_at_its_bound_is_accepted(capsys, monkeypatch):
    monkeypatch.setattr(bench, "measure", lambda sizes, repeat, notebooks: {"repeat": repeat, "cost": []})
    assert main(["bench", "--quick", "--repeat", str(bench.MAX_REPEAT)]) == 0
    assert f"repeat                       {bench.MAX_REPEAT}" in capsys.readouterr().out


def test_the_explore_process_leaves_no_child_when_it_answers(capsys):
    """The work's process is reaped, whatever it forked killed, once the answer is in."""
    before = {p for p in os.listdir("/proc") if p.isdigit()} if sys.platform.startswith("linux") else set()
    assert main(["explore", "retry_walkthrough", "--max-crashes", "1", "--jobs", "2"]) == 0
    assert "no violations" in capsys.readouterr().out
    if before:                                  # no new child of this process, not even a zombie
        mine = [p for p in os.listdir("/proc") if p.isdigit() and p not in before
                and Path(f"/proc/{p}/stat").exists() and _ppid(p) == os.getpid()]
        assert mine == []


def _ppid(pid: str) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_a_note_of_the_work_reaches_the_command_as_one_line(capsys, monkeypatch):
    """The work runs in a process of its own (simkit.cli.contained.within): its Note warnings still reach the
    command, said as the command's one line naming the flag."""
    monkeypatch.setattr("os.cpu_count", lambda: 2)          # forked with the work: 8 processes at most
    assert main(["explore", "retry_walkthrough", "--max-crashes", "1", "--jobs", str(10**6), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "simkit: --jobs 1000000: using 8 worker processes (4 per CPU at most)\n"
    assert json.loads(captured.out)["schedules"] == 9
