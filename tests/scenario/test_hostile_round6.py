"""Hostile input, sixth round: what a fresh tester tried past rounds 1-5. An ``exec:`` consumer that writes
its stderr without ever ending a line. Each: one line naming the problem and exit status 2, or a verdict,
within bounded time and memory.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: select on pipes")


def _exec_consumer(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\nsys.stdin.readline()\n{body}\n")
    script.chmod(0o755)
    return f"exec:{script}"


def _refused(tmp_path: Path, strategy: str) -> subprocess.CompletedProcess:
    """``simkit run retry_walkthrough --strategy STRATEGY``, which must end with exit 2 and print nothing."""
    done = subprocess.run([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--strategy",
                           strategy], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    return done


@linux
def test_stderr_without_a_newline_is_passed_through_in_bounded_memory_and_time(tmp_path):
    """64 MiB on stderr and no newline: held whole, each read copied all of it again (quadratic: the run
    was killed at the consumer's 10 s wall clock, having grown by what it held); now passed through in
    pieces of at most a line's bound, and the run gives its verdict."""
    strategy = _exec_consumer(tmp_path, "noisy", (
        "chunk = b'e' * 65536\n"
        "for _ in range(1024):\n"
        "    os.write(2, chunk)\n"
        "print(json.dumps({'op': 'halt', 'reason': 'done'}), flush=True)\n"
    ))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--strategy", strategy,
                           "--json"], capture_output=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-300:]
    assert time.monotonic() - start < 30
    assert done.stderr.count(b"e") >= 64 << 20
    assert done.stdout.startswith(b"{") and done.stdout.count(b"\n") == 1


@linux
def test_a_request_line_nested_past_the_stack_is_named_as_the_lines_fault(tmp_path):
    """100,000 nested arrays in a request line: was 'raised RecursionError ... in raw_decode (decoder.py)',
    as if the consumer had raised; now the line is named as not JSON, like any other bad line."""
    strategy = _exec_consumer(tmp_path, "deep", (
        "print('{\"op\": ' + '[' * 100000 + ']' * 100000 + '}', flush=True)\n"
        "sys.stdin.readline()\n"
    ))
    done = _refused(tmp_path, strategy)
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("simkit: "), done.stderr
    assert "not JSON (nested too deep to read)" in done.stderr and "RecursionError" not in done.stderr


def test_a_request_line_naming_a_key_twice_is_refused_as_the_service_refuses_a_body(tmp_path):
    """``{"op": "halt", "op": "fetch", ...}``: the last key won, so one line said two things (the service
    answers such a body 400); now the line is not JSON, named as the consumer's fault."""
    strategy = _exec_consumer(tmp_path, "twice", (
        "print('{\"op\": \"halt\", \"op\": \"fetch\", \"reason\": \"x\"}', flush=True)\n"
        "sys.stdin.readline()\n"
    ))
    done = _refused(tmp_path, strategy)
    assert done.stderr.count("\n") == 1 and "key 'op' twice in one object" in done.stderr, done.stderr


def test_a_figure_under_a_file_says_the_file_is_no_folder(tmp_path):
    """``--timeline afile/x.png`` where ``afile`` is a file said 'no such folder', as if it were missing."""
    (tmp_path / "afile").write_text("mine")
    done = subprocess.run([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--timeline",
                           "afile/x.png"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "'afile' is a file, not a folder" in done.stderr, done.stderr
    assert (tmp_path / "afile").read_text() == "mine"


def _gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)                # not left behind by this test, whatever simkit did
    return False


SESSION = '''
import os, subprocess
from simkit import Consumer


class Daemonizes(Consumer):
    """starts a process in a session of its own, out of reach of its group's SIGKILL, and forgets it"""
    def run(self):
        p = subprocess.Popen(["sleep", "300"], start_new_session=True)
        with open(os.environ["STRAY_PID"], "a") as f:
            f.write(f"{p.pid}\\n")
        return (yield from super().run())
'''


@linux
@pytest.mark.parametrize("kind", ["python", "exec"])
def test_a_process_a_consumer_starts_in_a_session_of_its_own_ends_with_the_command(tmp_path, kind):
    """A consumer's child in a new session (``setsid``, a daemon) lived on under init after the command
    (the process group's SIGKILL does not reach another session); now the process running the work adopts
    such orphans and ends them before it answers."""
    if kind == "python":
        (tmp_path / "daemon.py").write_text(SESSION)
        strategy = "daemon.py:Daemonizes"
    else:
        strategy = _exec_consumer(tmp_path, "daemon", (
            "import subprocess\n"
            "p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            "open(os.environ['STRAY_PID'], 'a').write(f'{p.pid}\\n')\n"
            "print(json.dumps({'op': 'halt', 'reason': 'done'}), flush=True)\n"
            "sys.stdin.readline()\n"
        ))
    pids = tmp_path / "pids"
    done = subprocess.run([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--strategy",
                           strategy], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "STRAY_PID": str(pids)})
    assert done.returncode == 0, done.stderr
    started = [int(p) for p in pids.read_text().split()]
    assert started and all([_gone(pid) for pid in started])   # each one checked (and ended)
