"""Hostile input, round 25: consumers over the wire (``exec:COMMAND``, docs/protocol.md) that are hostile or
sloppy programs. Each test names the promise it keeps; helper programs are in ``consumers/``."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent / "consumers"


def python(script: str, *args: str) -> str:
    return f"exec:{sys.executable} {HERE / script} {' '.join(args)}".rstrip()


def simkit_cli(*args: str, env: dict | None = None, timeout: float = 120,
               stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    """The command in a process of its own; ``timeout`` bounds a hang only (no wall-clock assertion)."""
    return subprocess.run([sys.executable, "-m", "simkit", *args], stdout=subprocess.PIPE, stderr=stderr,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)


# -- 1. a daemon of the consumer's that holds its stderr and writes without end ------------------------------
def test_a_daemon_flooding_the_consumers_stderr_does_not_hold_the_lifes_end():
    """A life's end (here retry_walkthrough's crash before e107 commits) passed through what was left on the
    killed consumer's stderr until the pipe was empty; a daemon of its own session (``setsid``, out of reach
    of the group's SIGKILL) writing to it without end kept it from ever being empty: the run never ended
    (every run ends in bounded time). Now at most 1 MiB and half a second of it is passed through."""
    done = simkit_cli("run", "retry_walkthrough", "--json", "--strategy", python("stderr_daemon.py"),
                      timeout=90, stderr=subprocess.DEVNULL)
    assert done.returncode == 0 and '"ok": true' in done.stdout
