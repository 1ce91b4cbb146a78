"""Hostile input, round 33: consumers in other languages over ``exec:`` (docs/protocol.md), written from the
docs alone, and the corners of the wire a program outside Python meets. Each test names the promise it keeps;
helper programs are in ``consumers/`` (``r33_*``).

Found:

1. ``live`` with a consumer whose ``halt`` reason holds a lone surrogate (``"x\\ud800"``, JSON's escape, or
   its raw UTF-8 bytes): the worker's report to the supervisor was ``str.encode()``, which raised; five
   tracebacks and "live worker 1 died 5 times in a row". ``run`` judged the same consumer (halted
   ``"x\\ud800"``, unjustified); now ``live`` does too. A reason ``"a\\nb"`` was ``"a b"`` in live's verdict.
2. ``exec:./run`` of a script saved with Windows line ends (``#!/bin/sh\\r``): "its #! line names /bin/sh,
   which is not there", of a /bin/sh that is there. Now it says the line ends in a carriage return and names
   ``/bin/sh\\r``. A script with no ``#!`` line, or a byte order mark before it, said "Exec format error"
   alone; now it says which.
3. ``live`` of a consumer that sends ``effect`` on a transactional sink (it runs each effect twice:
   ``effect``, then the commit that carries it): the worker ran it on the sink's list in its own memory, not
   the store's effects table the checker reads; ok in live, ``duplicated`` in run. Now live writes it to the
   store.
4. A line opening with a byte order mark was told to "decode using utf-8-sig": Python's advice, for simkit.
5. ``--help`` of run, explore, shrink, live and audit named a strategy's name, ``file.py:Class`` and
   ``module:Class``, never ``exec:COMMAND``; now it does.
6. A consumer whose requests sit in its output buffer (no flush: Python, C's stdio, awk on a pipe) was told it
   "wrote nothing for 10 s" and no more; now the line says a consumer flushes each request line, and
   docs/protocol.md says so, and that ``mawk`` reads its input in blocks without ``-W interactive``.
7. ``run --swimlane`` of a run whose halt reason holds a lone surrogate: the trace's frame raised in pandas
   3's Arrow strings, told as "a value ... a store cannot hold", exit 2 and no verdict. Now such a column is
   kept as objects (a run without one gives the same frame as before).

Held: a seed 000 + 001 consumer in awk (mawk), written from docs/protocol.md alone, is ok on every bundled
scenario it was run on, in ``run`` (memory and sqlite), ``explore`` (forked, the same schedules as ``safe``),
``live`` with kills and ``--at``, and passes ``audit``; the session of docs/protocol.md is the wire's, line
for line; CRLF line ends, a request written a byte at a time, NaN, ``1e400``, ``\\u`` escapes in keys and
values, duplicate keys (nested too), a NUL after the object, a JSON array; ``exec:`` of a directory, a file
that is not executable, a missing ``#!`` interpreter, an unclosed quote, an empty command, ``FOO=1 cmd``;
a consumer that closes stdout and lives on, exits 0 at caught up (judged stopped; before the end of a
stuck token, not completed), skips no ``skip``, looks up no empty page, reads the next page ahead of its
barrier (all ok, audit passes); a process it leaves in a session of its own, and one behind a wrapper
without ``exec`` when simkit is SIGKILLed, are reaped; commits of events the stream never served are judged
the same in run, sqlite and live.

Left alone: a consumer that forks and exits 0 while its child goes on speaking is a stop (docs/protocol.md)
only once simkit finds it silent for 0.1 s, so a fast child may get further first (a wall-clock race,
inherent in noticing an exit); ``live --json`` has no ``stopped`` key although docs/cli.md calls it the
verdict object plus four keys (live has no progress guard; what a cut-off should say there is the lead's
call); examples/consumers/cost.py prints a negative cost per request when the process start, measured apart,
took longer under load than in the runs.
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
    strategy = lines('{"op": "halt", "reason": "' + escaped + '"}')
    verdicts = []
    for command in (["run"], ["live", "--kills", "0"]):
        done = simkit_cli(command[0], "retry_walkthrough", *command[1:], "--strategy", strategy, "--json")
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        verdicts.append(json.loads(done.stdout))
    assert [v["halted"] for v in verdicts] == [reason] * 2
    assert [v["ok"] for v in verdicts] == [False, False]


# -- 2. a script that cannot start says why -----------------------------------------------------------------
@pytest.mark.parametrize("head, said", [
    (b"#!/bin/sh\r\nexit 0\r\n", "its #! line ends in a carriage return (Windows line ends), so it names "
                                 "/bin/sh\\r, which is not there"),
    (b"echo no shebang\n", "Exec format error: it has no #! line: begin it with one, or name its interpreter "
                           "(exec:sh {path})"),
    (b"\xef\xbb\xbf#!/bin/sh\nexit 0\n", "Exec format error: it begins with a byte order mark, before its #! "
                                         "line"),
])
def test_a_script_that_cannot_start_says_what_keeps_it(tmp_path, head, said):
    """Bad input is one clear line: a script saved with Windows line ends was said to name ``/bin/sh``
    "which is not there" (the system looks for ``/bin/sh\\r``); one with no ``#!`` line, or a byte order mark
    before it, was "Exec format error" alone."""
    path = tmp_path / "run"
    path.write_bytes(head)
    path.chmod(0o755)
    done = simkit_cli("run", "retry_walkthrough", "--strategy", f"exec:{path}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"simkit: strategy exec:{path}: worker 1: cannot start {str(path)!r}: "
                           f"{said.format(path=path)}\n")


# -- 3. an effect of its own on a transactional sink, in live ------------------------------------------------
def test_live_sees_an_effect_request_on_a_transactional_sink():
    """Every buggy consumer caught, in live as in run: on a transactional sink, live executed ``effect`` in
    the worker's memory, not the store's effects table the checker reads, so a consumer running each effect
    twice (``effect``, then the commit that carries it) was ok in live and duplicated in run."""
    strategy = f"exec:{sys.executable} {HERE / 'r33_double_effect.py'}"
    for command in (["run"], ["live", "--kills", "0"]):
        done = simkit_cli(command[0], "ignored_event", *command[1:], "--strategy", strategy, "--json")
        assert done.returncode == 0, done.stderr[-2000:]
        verdict = json.loads(done.stdout)
        assert verdict["ok"] is False and verdict["duplicated"], (command, verdict)


# -- 4. a byte order mark -----------------------------------------------------------------------------------
def test_a_line_opening_with_a_byte_order_mark_is_told_without_advice_for_python():
    """One clear line: a line opening with a byte order mark (PowerShell's and .NET's UTF-8 may write one) was
    told to "decode using utf-8-sig", advice for simkit's own Python, not for the consumer's author (the
    service's bodies were fixed so in round 12)."""
    done = simkit_cli("run", "retry_walkthrough", "--strategy", lines('\\xef\\xbb\\xbf{"op": "load"}'))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "not JSON (Unexpected UTF-8 BOM: a line is JSON in UTF-8 with no byte order mark" in done.stderr
    assert "utf-8-sig" not in done.stderr and done.stderr.count("\n") == 1


# -- 5. --help names exec: -----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["run", "explore", "shrink", "live", "audit"])
def test_help_names_exec_where_a_strategy_is_taken(command):
    """docs/protocol.md: ``exec:COMMAND`` is taken wherever a strategy is; ``--help``, what an author in
    another language reads first, named a strategy's name, ``file.py:Class`` and ``module:Class`` only."""
    done = simkit_cli(command, "--help")
    assert done.returncode == 0 and "exec:COMMAND" in " ".join(done.stdout.split())


# -- 6. a request left in the consumer's buffer -------------------------------------------------------------
def test_silence_says_a_consumer_flushes_each_request_line():
    """One clear line: the commonest first mistake of a consumer in any language is output left in a block
    buffer (Python's ``print``, C's stdio, awk); simkit waited, then said "wrote nothing" and no more."""
    strategy = f"exec:{sys.executable} {HERE / 'r33_unflushed.py'}"
    done = simkit_cli("run", "retry_walkthrough", "--strategy", strategy, env={"SIMKIT_EXEC_TIMEOUT": "1"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.endswith("wrote nothing for 1 s (wall clock; SIMKIT_EXEC_TIMEOUT sets it): killed; a "
                                "consumer flushes its output after each request line\n"), done.stderr


# -- 7. a halt reason with a lone surrogate, drawn -----------------------------------------------------------
def test_a_swimlane_draws_a_halt_whose_reason_holds_a_lone_surrogate(tmp_path):
    """``run --swimlane`` of the consumer of test 1: the trace's frame (pandas 3's strings are Arrow's UTF-8)
    raised UnicodeEncodeError, said to be "a value the consumer gave that a store cannot hold", exit 2 and no
    verdict, for a run the checker had judged."""
    strategy = lines('{"op": "load"}', '{"op": "fetch", "cursor": "C7"}',
                     '{"op": "halt", "reason": "x\\\\ud800"}')
    done = simkit_cli("run", "retry_walkthrough", "--strategy", strategy,
                      "--swimlane", str(tmp_path / "s.png"))
    assert done.returncode == 0 and "halted: x\\ud800" in done.stdout, done.stderr[-2000:]
    assert (tmp_path / "s.png").stat().st_size > 0
