"""Hostile input, round 33: consumers in other languages over ``exec:`` (docs/protocol.md), written from the
docs alone, and the corners of the wire a program outside Python meets. Each test names the promise it keeps;
helper programs are in ``consumers/`` (``r33_*``).

Found:

1. ``live`` with a consumer whose ``halt`` reason holds a lone surrogate (``"x\\ud800"``, JSON's escape, or
   its raw UTF-8 bytes): the worker's report to the supervisor was ``str.encode()``, which raised; five
   tracebacks and "live worker 1 died 5 times in a row". ``run`` judged the same consumer (halted
   ``"x\\ud800"``, unjustified); now ``live`` does too. A reason ``"a\\nb"`` was ``"a b"`` in live's verdict.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent / "consumers"


def lines(*said: str) -> str:
    """``exec:`` of r33_lines.py writing ``said`` (``\\xNN``: a raw byte)."""
    return f"exec:{shlex.join([sys.executable, str(HERE / 'r33_lines.py'), *said])}"


def simkit_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The command in a process of its own; ``timeout`` bounds a hang only (no wall-clock assertion)."""
    return subprocess.run([sys.executable, "-m", "simkit", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=timeout)


# -- 1. a halt reason with a lone surrogate or a newline, in live --------------------------------------------
@pytest.mark.parametrize("escaped, reason", [("x\\\\ud800", "x\ud800"), ("a\\\\nb\\\\r", "a\nb\r")])
def test_live_judges_a_halt_whose_reason_holds_a_lone_surrogate_as_run_does(escaped, reason):
    """Every run gives a verdict (no traceback): live's worker died reporting the reason to its supervisor;
    and the reason is the consumer's (live said ``a b`` of ``a\\nb``)."""
    strategy = lines('{"op": "halt", "reason": "%s"}' % escaped)
    verdicts = []
    for command in (["run"], ["live", "--kills", "0"]):
        done = simkit_cli(command[0], "retry_walkthrough", *command[1:], "--strategy", strategy, "--json")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        verdicts.append(json.loads(done.stdout))
    assert [v["halted"] for v in verdicts] == [reason] * 2
    assert [v["ok"] for v in verdicts] == [False, False]
