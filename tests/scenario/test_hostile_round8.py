"""Hostile input, eighth round (issue 32, a fresh tester): the reaper (a consumer that kills it, one that
writes on the pipe the work's answer comes back on, memory held in a ``memfd``), round trips of the files
``explore`` and ``shrink`` write, and ``live`` under a consumer that ruins its databases or its report pipe.
Each: one line naming the file, key or flag and the problem, exit status 2, nothing left behind; or the
answer.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TWO_PAGES
from test_hostile_round7 import _all_gone

from simkit.cli import main

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, subreapers, memfd")

HOSTILE = '''
import os, signal, struct, subprocess, time
from simkit import Consumer


class KillsTheReaper(Consumer):
    """starts a process in a session of its own that a shell forks and leaves (no fork hook of Python's
    reaches it), then SIGKILLs its parent: the reaper"""
    def is_replay(self, event, receipts, applied_position):
        subprocess.run(["setsid", "sh", "-c", f"sleep 300 & echo $! >> {os.environ['STRAY_PID']}"])
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(300)


class WritesOnTheAnswersPipe(Consumer):
    """writes the head of a 128 MiB message on every pipe it inherited (the one the work's answer goes back
    on among them), then sleeps"""
    def is_replay(self, event, receipts, applied_position):
        size = int(os.environ.get("CLAIMED", 1 << 27))
        for fd in range(3, 256):
            try:
                if os.fstat(fd).st_mode & 0o170000 == 0o010000:
                    os.write(fd, struct.pack("!i", -1) + struct.pack("!Q", size) + b"x")
            except OSError:
                pass
        time.sleep(3600)


class ClosesItsFiles(Consumer):
    """closes every file descriptor it did not open (the pipe the work's answer goes back on among them)"""
    def is_replay(self, event, receipts, applied_position):
        os.closerange(3, 4096)
        time.sleep(300)


class ClosesItsFilesAndGoesOn(Consumer):
    """closes every file descriptor it did not open, and goes on: the work's answer has nowhere to go"""
    def is_replay(self, event, receipts, applied_position):
        os.closerange(3, 4096)
        return super().is_replay(event, receipts, applied_position)


class HoldsAMemfd(Consumer):
    """holds 256 MiB in an anonymous file it never maps (no proportional set size counts it)"""
    def is_replay(self, event, receipts, applied_position):
        fd = os.memfd_create("hog")
        for _ in range(8):
            os.write(fd, b"x" * (32 << 20))
        time.sleep(3600)                # until the bound ends it (or the test's own timeout fails it)
        return super().is_replay(event, receipts, applied_position)


class RemovesTheDatabases(Consumer):
    """in a live worker: removes the run's databases (the open ones go on, unlinked)"""
    def is_replay(self, event, receipts, applied_position):
        for name in os.listdir(os.environ["LIVE_DIR"]):
            os.unlink(os.path.join(os.environ["LIVE_DIR"], name))
        return super().is_replay(event, receipts, applied_position)


class GarblesItsReports(Consumer):
    """in a live worker: a line of bytes that are no UTF-8 on the pipe the worker reports on"""
    def is_replay(self, event, receipts, applied_position):
        import gc
        from simkit.live.worker import Driver
        for o in gc.get_objects():
            if isinstance(o, Driver):
                os.write(o.fd, b"\\xff\\xfe garbage\\n")
        return super().is_replay(event, receipts, applied_position)
'''


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    (tmp_path / "two.toml").write_text(TWO_PAGES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def simkit_cli(*argv, cwd, env=None, timeout=120) -> subprocess.CompletedProcess:
    """``simkit ARGV`` in a process of its own; ``timeout`` is a safety bound, not a measure (a command that
    hangs fails the test with TimeoutExpired, and is killed)."""
    return subprocess.run([sys.executable, "-m", "simkit", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, "TMPDIR": str(cwd), **(env or {})})


def one_line(proc: subprocess.CompletedProcess, message: str) -> None:
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("simkit: "), proc.stderr
    assert message in proc.stderr, proc.stderr


def _no_leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith((".simkit-", "simkit-"))]


# -- 1. the reaper -------------------------------------------------------------------------------------------
@linux
def test_a_consumer_that_kills_the_reaper_leaves_no_process_in_a_session_of_its_own(hostile):
    """The reaper ended what the consumer started in another session; a consumer that SIGKILLed the reaper
    first left it running under init (round 7 checked the one line only). Now the command adopts the
    work's orphans while the work runs (``PR_SET_CHILD_SUBREAPER``) and, when the reaper is gone, ends them
    itself."""
    pids = hostile / "pids"
    try:        # before: the daemon held the command's stderr, and the test's read of it, for 300 s
        proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:KillsTheReaper", cwd=hostile,
                          env={"STRAY_PID": str(pids)}, timeout=60)
    finally:
        strays = [int(x) for x in pids.read_text().split()] if pids.exists() else []
        assert strays and _all_gone(strays), "the consumer's daemon outlived the command"
    one_line(proc, "simkit: run two: the process doing the work ended (how, unknown) without a result")
    assert not _no_leftovers(hostile)


@linux
def test_a_consumer_writing_on_the_answers_pipe_is_stopped_at_the_budget(hostile):
    """The command read the work's answer with a blocking ``recv``: a consumer that wrote the head of a long
    message on the pipe, then slept, held the command past its budget for as long as it liked."""
    proc = simkit_cli("explore", "two.toml", "--strategy", "hostile.py:WritesOnTheAnswersPipe",
                      "--max-crashes", "0", "--budget", "3", cwd=hostile)
    one_line(proc, "simkit: explore two: the budget of 3 s (--budget) ran out")


@linux
def test_an_answer_longer_than_the_memory_bound_is_one_line(hostile):
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:WritesOnTheAnswersPipe", "--max-memory",
                      "64", cwd=hostile, env={"CLAIMED": str(1 << 40)})
    one_line(proc, "simkit: run two: the work's answer would be 1099511627776 bytes, more than the 64 MiB")


@linux
def test_a_consumer_that_closes_the_answers_pipe_is_told_so(hostile):
    """``the process doing the work ended (killed by SIGKILL) without a result: did the consumer end its own
    process ...``: it had not ended; simkit killed it, once its answers' pipe was closed."""
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:ClosesItsFiles", cwd=hostile)
    one_line(proc, "simkit: run two: the work closed the pipe its answer goes back on, and was stopped: did "
                   "the consumer close or replace file descriptors it did not open?")


@linux
def test_a_consumer_that_closes_the_answers_pipe_and_goes_on_is_told_so(hostile):
    """The work then ended on its own, exit status 0, and the line asked only whether the consumer had ended
    its process, overflowed the stack or run out of memory."""
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:ClosesItsFilesAndGoesOn", cwd=hostile)
    one_line(proc, "simkit: run two: the process doing the work ended (exit status 0) without a result: did "
                   "the consumer end its own process, or close or replace file descriptors it did not open?")


@linux
def test_memory_held_in_a_memfd_counts_against_max_memory(hostile):
    """An anonymous file (``memfd_create``) the consumer writes and never maps is in no process's ``Pss``: 256
    MiB of it ran to the end under ``--max-memory 100`` (and 2 GiB would have too)."""
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:HoldsAMemfd", "--max-memory", "100",
                      cwd=hostile)
    one_line(proc, "simkit: run two: the work's processes (the consumer's among them) used more than 100 MiB")


# -- 2. round trips ------------------------------------------------------------------------------------------
WATERMARK = "shortcut_watermark_only_dedup"


def _replays(out: Path, capsys, strategy: str = "watermark_only_dedup") -> dict:
    assert main(["run", str(out), "--strategy", strategy, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["v\x7f.toml", "v\x01\x1b[2J.toml"], ids=["DEL", "escape"])
def test_an_out_path_with_a_control_character_is_written_as_a_file_run_reads(tmp_path, capsys, name):
    """The replay command in the file's comment holds the path: a DEL or an escape in it made a comment TOML
    refuses (``not valid TOML: Found invalid character '\\x7f'``)."""
    out = tmp_path / name
    assert main(["explore", WATERMARK, "--strategy", "watermark_only_dedup", "--max-crashes", "0", "--out",
                 str(out)]) == 0
    capsys.readouterr()
    assert not _replays(out, capsys)["ok"]


def test_a_strategy_file_with_a_control_character_in_its_name_shrinks_to_a_file_run_reads(tmp_path, capsys,
                                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w\x7f.py").write_text("from simkit.procedure.shortcuts import WatermarkOnlyDedup as W\n")
    out = tmp_path / "small.toml"
    assert main(["shrink", WATERMARK, "--strategy", "w\x7f.py:W", "--out", str(out)]) == 0
    capsys.readouterr()
    assert not _replays(out, capsys, "w\x7f.py:W")["ok"]


def test_a_scenario_file_named_blank_is_written_back_with_a_name_run_takes(tmp_path, capsys):
    """A file `` .toml`` without a ``name`` key is named by its stem, `` ``: ``explore --out`` wrote ``name =
    " "``, which ``simkit run`` refuses (``' ' is empty``)."""
    import simkit.scenario.read as read
    text = (Path(str(read.SCENARIO_DIR / f"{WATERMARK}.toml"))).read_text()
    blank = tmp_path / " .toml"
    blank.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith("name")))
    out = tmp_path / "v.toml"
    assert main(["explore", str(blank), "--strategy", "watermark_only_dedup", "--max-crashes", "0", "--out",
                 str(out)]) == 0
    capsys.readouterr()
    verdict = _replays(out, capsys)
    assert not verdict["ok"] and verdict["scenario"].strip()


# -- 3. live -------------------------------------------------------------------------------------------------
@linux
def test_live_whose_consumer_removes_the_databases_is_one_line(hostile):
    """A traceback (FileNotFoundError: no store database at ...) from reading the run back."""
    folder = hostile / "run"
    proc = simkit_cli("live", "two.toml", "--strategy", "hostile.py:RemovesTheDatabases", "--kills", "0",
                      "--dir", str(folder), "--timeout", "30", cwd=hostile, env={"LIVE_DIR": str(folder)})
    one_line(proc, f"simkit: live two: the run's databases in {folder} cannot be read back")


@linux
def test_live_whose_worker_reports_bytes_that_are_no_utf8_is_judged(hostile):
    """A traceback (UnicodeDecodeError) from the supervisor: a line it does not understand is now passed
    over, as any other it does not know."""
    proc = simkit_cli("live", "two.toml", "--strategy", "hostile.py:GarblesItsReports", "--kills", "0",
                      "--timeout", "30", cwd=hostile)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("two · GarblesItsReports · seed 0: ok")


@linux
def test_live_sleeps_a_latency_past_what_sleep_takes_until_its_timeout(hostile):
    """``fetch_latency = 1e13`` (a valid scenario: the simulation runs it) was ``live worker 1:
    OverflowError: timestamp out of range for platform time_t``, naming no key. A live run sleeps it; its
    timeout ends the run first."""
    (hostile / "slow.toml").write_text("[timing]\nfetch_latency = 1e13\n" + TWO_PAGES)
    proc = simkit_cli("live", "slow.toml", "--kills", "0", "--timeout", "2", "--json", cwd=hostile)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["completed"] is False


# -- 4. flags ------------------------------------------------------------------------------------------------
def test_an_integer_bound_is_said_as_itself(capsys):
    """``--max-memory 1073741825: must be at most 1.07374e+09``: a bound rounded to six digits, in a form the
    flag does not take."""
    from test_hostile import one_line_exit_2
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--max-memory", "1073741825"],
                    "simkit: --max-memory 1073741825: must be at most 1073741824")


@pytest.mark.parametrize("folder", ["", " "])
def test_an_empty_live_dir_names_no_folder(tmp_path, capsys, monkeypatch, folder):
    """``--dir ''`` (an unset variable) ran live in the current folder and left its databases there."""
    from test_hostile import one_line_exit_2
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["live", "retry_walkthrough", "--kills", "0", "--dir", folder],
                    f"simkit: --dir {folder!r}: names no folder")
    assert not list(tmp_path.iterdir())


# -- 5. a signal while simkit starts -------------------------------------------------------------------------
INTERRUPTS_AN_IMPORT = '''
import os, signal, sys


class Interrupt:
    """Ctrl-C the moment simkit imports its model: a user's, while the command starts (deterministic here)"""
    def find_spec(self, name, path=None, target=None):
        if name == "simkit.model":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, Interrupt())
'''


@linux
def test_ctrl_c_while_simkit_imports_is_one_line(tmp_path):
    """A Ctrl-C in the first tenth of a second (found by a random-delay loop of signals: 2 of 25) printed
    ``KeyboardInterrupt`` with a traceback through importlib, exit status 1."""
    (tmp_path / "sitecustomize.py").write_text(INTERRUPTS_AN_IMPORT)
    here = str(Path(__file__).resolve().parents[2])     # this tree: an editable install may name another
    proc = simkit_cli("run", "retry_walkthrough", cwd=tmp_path,
                      env={"PYTHONPATH": os.pathsep.join([str(tmp_path), here])})
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "simkit: interrupted\n")


@pytest.mark.parametrize("suffix, argv", [
    (".csv", ["sweep", "retry_walkthrough", "--seeds", "1", "--strategy", "safe", "--jobs", "1", "--out"]),
    (".toml", ["shrink", WATERMARK, "--strategy", "watermark_only_dedup", "--out"]),
    (".png", ["run", "retry_walkthrough", "--timeline"]),
], ids=["sweep", "shrink", "run"])
def test_an_output_path_that_is_a_fifo_is_not_replaced(tmp_path, capsys, suffix, argv):
    """``mkfifo rows.csv; simkit sweep ... --out rows.csv & cat rows.csv``: the FIFO was renamed over by a
    file of its own, and its reader waited for ever."""
    from test_hostile import one_line_exit_2
    fifo = tmp_path / f"out{suffix}"
    os.mkfifo(fifo)
    one_line_exit_2(capsys, [*argv, str(fifo)],
                    f"{fifo}: is not a regular file (a FIFO, a socket or a device)")
    assert fifo.is_fifo() and [p.name for p in tmp_path.iterdir()] == [fifo.name]


# -- 6. a consumer that ignores SIGCHLD ----------------------------------------------------------------------
IGNORES_SIGCHLD = '''
import signal
from simkit import Consumer


class IgnoresSigchld(Consumer):
    """lets the kernel reap its children (no zombies of its own): SIGCHLD set to SIG_IGN, in simkit's
    process"""
    def is_replay(self, event, receipts, applied_position):
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        return super().is_replay(event, receipts, applied_position)
'''


@linux
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_explore_with_a_consumer_that_ignores_sigchld_is_no_traceback(tmp_path, jobs):
    """``ChildProcessError: [Errno 10] No child processes``, a traceback from explore's prefix forks (whose
    ends it waits for: the kernel had reaped them). Now one line saying why; once explore waits for its forks
    whatever SIGCHLD's disposition (simkit/tools/forked.py), the verdict."""
    (tmp_path / "sigchld.py").write_text(IGNORES_SIGCHLD)
    proc = simkit_cli("explore", "retry_walkthrough", "--strategy", "sigchld.py:IgnoresSigchld",
                      "--max-crashes", "1", "--jobs", jobs, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode != 0:
        one_line(proc, "the consumer set SIGCHLD to SIG_IGN")


@linux
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_explore_with_a_consumer_that_ignores_sigchld_is_judged(tmp_path, jobs):
    """explore waits for its forks whatever the consumer made of SIGCHLD (simkit.tools.forked._waitable)."""
    (tmp_path / "sigchld.py").write_text(IGNORES_SIGCHLD)
    proc = simkit_cli("explore", "retry_walkthrough", "--strategy", "sigchld.py:IgnoresSigchld",
                      "--max-crashes", "1", "--jobs", jobs, cwd=tmp_path)
    assert proc.returncode == 0 and "no violations" in proc.stdout, proc.stderr


@linux
def test_prefixes_shared_by_forking_with_a_consumer_that_ignores_sigchld(tmp_path):
    """Each schedule forked at its fault and waited for; the consumer's SIG_IGN is its own again after."""
    (tmp_path / "sigchld.py").write_text(IGNORES_SIGCHLD)
    code = ("import signal, simkit\nfrom simkit.tools.explore import explore\n"
            "x = explore(simkit.load('retry_walkthrough'), 'sigchld.py:IgnoresSigchld', max_crashes=1, "
            "share_prefixes=True)\n"
            "print(x.schedules, x.ok, signal.getsignal(signal.SIGCHLD) is signal.SIG_IGN)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    schedules, ok, ignored = proc.stdout.split()
    assert int(schedules) > 1 and (ok, ignored) == ("True", "True"), proc.stderr
