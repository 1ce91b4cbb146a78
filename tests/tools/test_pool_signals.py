"""No worker process outlives ``sweep --jobs``, ``explore --jobs`` or ``audit`` (issue 32,
:mod:`simkit.tools.pool`): after SIGTERM or SIGKILL their workers lived on under PID 1 (seen alive 30
minutes), and whatever read the command's pipes hung; SIGTERM exited -15 with no message. Now SIGTERM, SIGINT
and SIGHUP end the command with one line and 128 + the signal, and every worker (and every process a worker
forked) is gone; SIGKILL takes the workers along.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG")

COMMANDS = {
    "sweep": ["sweep", "default", "--seeds", "100000", "--jobs", "2"],
    "explore": ["explore", "gauntlet", "--strategy", "safe", "--max-crashes", "3", "--jobs", "2"],
    "audit": ["audit", "safe", "--jobs", "2", "--budget", "600"],
}


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (``/proc/PID/task/*/children``)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = {int(x) for x in (task / "children").read_text().split()}
            except OSError:
                continue
            todo.extend(kids - found)
            found |= kids
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def started(argv: list[str]) -> tuple[subprocess.Popen, set[int]]:
    """The command, once both its pool workers run."""
    proc = subprocess.Popen([sys.executable, "-m", "simkit", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(kids := descendants(proc.pid)) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the pool never started"
        time.sleep(0.1)
    time.sleep(0.5)                             # the workers at work: a fork of explore's may be running
    return proc, kids | descendants(proc.pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_signal_ends_the_command_and_every_worker(command, sig):
    proc, kids = started(COMMANDS[command])
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    name = "interrupted" if sig == signal.SIGINT else f"terminated by {sig.name}"
    assert (proc.returncode, err) == (128 + sig, f"simkit: {name}\n")
    deadline = time.monotonic() + 10
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in kids if alive(k)]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_sigkill_takes_the_workers_along(command):
    proc, kids = started(COMMANDS[command])
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in kids if alive(k)]
