"""Hostile consumers, fifty-ninth round (a fresh tester): what consumer processes and plugins leave behind,
through every command and API that runs one. Found:

- an ``exec:`` consumer that double-forks a daemon into a session of its own outlived the run in the Python
  API (``simkit.testing``, ``simkit.simulate``, ``simkit.audit``): a life's end killed the consumer's process
  group only, and an audit's budget killed its pool workers' groups only, so one ``assert_passes_audit`` of
  such a consumer left 78 processes running after the test. Only a command's reaper ended them, and there
  they piled up one per life until the command's end. A consumer's process now adopts the orphans of what it
  forks (``PR_SET_CHILD_SUBREAPER``), and a life's end, a forked copy of explore's end and a pool's end kill
  everything below it first (:func:`simkit.procedure.programs.end_below`);
- the same daemons outlived a live run of the Python API (``simkit.live.run.live``), one per kill: the
  supervisor's SIGKILL of a worker let its ``exec:`` consumer die by ``PR_SET_PDEATHSIG``, orphaning them.
  A live worker adopts them now, and the supervisor stops it and kills all below it before its SIGKILL;
- ``explore()`` (the Python API) returned with a consumer process still running, until the garbage collector
  freed its life: a run that explore's prefix sharing cuts short from within (``_Done``) left its lives
  unended. A worker's life now ends on any exception out of it, as it did when the run was closed.
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from simkit import audit, load
from simkit.errors import SimkitError
from simkit.live.run import live
from simkit.procedure.external import live_processes
from simkit.testing import assert_ok_on
from simkit.tools.explore import explore

REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "consumers" / "python" / "consumer.py"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER and /proc")

DAEMON = """\
import os, runpy, sys, time
if os.fork() == 0:                          # a daemon: a session of its own, its parent gone
    os.setsid()
    if os.fork() == 0:
        with open({pids!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        for fd in (0, 1, 2):
            os.close(fd)
        time.sleep(60)
    os._exit(0)
os.wait()
if {hang}:                                  # silent, for the audit's budget to end it
    time.sleep(60)
sys.argv = [{reference!r}]
runpy.run_path({reference!r}, run_name="__main__")
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


@linux
def test_a_daemon_an_exec_consumer_forks_ends_with_the_run_in_the_python_api(tmp_path):
    pids = tmp_path / "pids"
    script, hangs = tmp_path / "daemon.py", tmp_path / "hangs.py"
    script.write_text(DAEMON.format(pids=str(pids), reference=str(REFERENCE), hang=False))
    hangs.write_text(DAEMON.format(pids=str(pids), reference=str(REFERENCE), hang=True))
    try:
        assert_ok_on(f"exec:{sys.executable} {script}", "retry_walkthrough")     # each life's end
        assert len(_started(pids)) == 2                             # a daemon for each of its two lives
        assert [pid for pid in _started(pids) if _running(pid)] == []
        with pytest.raises(SimkitError, match="ran out before a case was judged"):
            audit(f"exec:{sys.executable} {hangs}", jobs=1, budget=1)      # its worker killed at the budget
        assert [pid for pid in _started(pids) if _running(pid)] == []
    finally:
        for pid in _started(pids):
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def _started(pids: Path) -> list[int]:
    return [int(x) for x in pids.read_text().split()] if pids.exists() else []


@linux
def test_a_daemon_an_exec_consumer_forks_ends_with_its_worker_in_a_live_run_of_the_python_api(tmp_path):
    pids, script = tmp_path / "pids", tmp_path / "daemon.py"
    script.write_text(DAEMON.format(pids=str(pids), reference=str(REFERENCE), hang=False))
    try:
        run = live(load("gauntlet"), f"exec:{sys.executable} {script}", kills=3, max_delay=0.05)
        assert run.kills == 3 and _started(pids)                     # (a kill may land before one)
        assert [pid for pid in _started(pids) if _running(pid)] == []
    finally:
        for pid in _started(pids):
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_explore_of_an_exec_consumer_leaves_no_consumer_process_running_when_it_returns():
    explore(load("retry_walkthrough"), f"exec:{sys.executable} {REFERENCE}", max_crashes=1,
            share_prefixes=True)                    # (as where forking pays: a pytest process forks slowly)
    assert live_processes() == []                   # (its last life was ended by the garbage collector)
