"""Round 66: the commands in a hostile environment (resource limits, signals, closed pipes, odd places).

What was found, each proven on the main branch first:

- Under a limit on address space (``ulimit -v``) a command failed with a traceback, exit status 1: a plain
  ``simkit run`` read its scenario file with one ``os.read`` of 16 MiB (a MemoryError for a file of 1 KiB) and
  imported matplotlib and NumPy in its work for a constant of the swimlane's; ``run --timeline`` could not
  import NumPy's OpenBLAS (an ImportError, with NumPy's twenty lines of advice), or OpenBLAS, failing to start
  a thread, raised SIGINT (``simkit: interrupted``, 130); a MemoryError or ImportError in the command's own
  process, or an ImportError in its work, was a traceback. Now each is one line, exit status 2.
- ``simkit sweep --jobs 2`` under ``ulimit -v`` (or ``ulimit -u``, which counts threads) was a traceback,
  exit status 1: ``RuntimeError: can't start new thread`` from the process pool's manager thread: now one
  line. Where the manager thread started but could not start its queue's, it died (a traceback on stderr)
  and left the command waiting for tasks no process would run, until a budget or sweep's 1,200 s stall
  guard: now its tasks fail with its error, one line at once.
- ``simkit bench`` under ``ulimit -v`` was ``CalledProcessError``'s traceback, exit status 1, when the fresh
  process timing the widget's redraw failed (a MemoryError, then SIGABRT): now one line saying why, exit 2.
- Under a limit on CPU time (``ulimit -t``) a work the kernel killed was "did the consumer end its own
  process, overflow the stack, or was it killed (out of memory)?", a pool's worker "did the consumer end its
  own process?", of ``safe`` itself: the limit, the likely cause, went unsaid. Now the line names it.
- Ctrl-Z (SIGTSTP) stopped the command alone: its work leads a process group of its own, which a terminal does
  not stop, and it ran on (a sweep's pool at full CPU) while the job was stopped. Now the work stops with the
  command, and continues with it.
"""
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from simkit.cli import commands, main
from simkit.errors import SimkitError
from simkit.procedure.programs import children, descendants
from simkit.tools import bench

ROOT = Path(__file__).resolve().parents[2]

#: Run a command with this many MiB of address space beyond what ``import simkit.cli`` took.
_UNDER_A_LIMIT = """
import resource, sys
from simkit.cli import main
size = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (int(sys.argv[1]) << 20), resource.RLIM_INFINITY))
sys.exit(main(sys.argv[2:]))
"""


def _limited(mib: int, *args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _UNDER_A_LIMIT, str(mib), *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def test_a_plain_run_needs_little_address_space(tmp_path):
    r = _limited(5, "run", "retry_walkthrough", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (0, "")
    assert "retry_walkthrough · safe · seed 0: ok" in r.stdout


def test_a_figure_under_a_limit_on_address_space_is_one_line(tmp_path):
    r = _limited(20, "run", "retry_walkthrough", "--timeline", "t.png", cwd=tmp_path)
    assert r.returncode in (0, 2), r.stderr
    if r.returncode == 2:                       # NumPy and matplotlib did not fit: said, nothing written
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("simkit: "), r.stderr
        assert "ulimit -v" in r.stderr
        assert not (tmp_path / "t.png").exists()


def test_memory_or_an_import_failing_in_the_command_is_one_line(monkeypatch, capsys):
    def no_memory(name):
        raise MemoryError()
    monkeypatch.setattr(commands.scenarios, "load", no_memory)
    assert main(["run", "retry_walkthrough"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("simkit: MemoryError: out of memory"), err


def test_an_import_failing_in_the_work_is_one_line(monkeypatch, capsys):
    def unloadable(*args, **kwargs):
        try:
            raise ImportError("libopenblas.so: failed to map segment from shared object")
        except ImportError as exc:
            raise ImportError("IMPORTANT: PLEASE READ THIS FOR ADVICE\n\n(twenty lines)") from exc
    monkeypatch.setattr(commands, "simulate", unloadable)
    assert main(["run", "retry_walkthrough"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("simkit: run retry_walkthrough: cannot import a module: ImportError: "
                          "libopenblas.so: failed to map segment from shared object"), err


def test_a_bench_measurement_whose_process_fails_is_one_line():
    with pytest.raises(SimkitError, match=r"^bench: a measurement's fresh process failed \(exit status 1\): "
                                          r"MemoryError: no room$"):
        bench._in_child("print('started')\nraise MemoryError('no room')")


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except OSError:
        return "gone"


def _until(condition, seconds: float = 60.0) -> bool:
    """Poll ``condition`` until it holds; ``seconds`` is a safety bound, not a measure."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_ctrl_z_stops_the_work_with_the_command(tmp_path):
    args = ["sweep", "gauntlet", "--seeds", "100000", "--jobs", "2"]
    proc = subprocess.Popen([sys.executable, "-m", "simkit", *args], cwd=tmp_path, process_group=0,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert _until(lambda: len(descendants(proc.pid)) >= 4)      # the reaper, the work, its two workers
        reaper = children(proc.pid)[0]
        proc.send_signal(signal.SIGTSTP)        # what a terminal's Ctrl-Z sends the command's group
        assert _until(lambda: _state(proc.pid) == "T")
        work = descendants(reaper)
        assert _until(lambda: all(_state(pid) in ("T", "gone") for pid in work)), [_state(p) for p in work]
        assert _state(reaper) != "T"            # it ends the work should the command be killed meanwhile
        proc.send_signal(signal.SIGCONT)
        assert _until(lambda: all(_state(pid) not in ("T",) for pid in [proc.pid, *work]))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGCONT)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (128 + signal.SIGTERM, "simkit: terminated by SIGTERM\n")


def test_a_work_past_its_limit_on_cpu_time_says_so(tmp_path):
    (tmp_path / "spins.py").write_text("from simkit import Consumer\n\n\nclass Spins(Consumer):\n"
                                       "    def after_fetch(self, *args):\n        while True:\n"
                                       "            pass\n")

    def two_cpu_seconds():
        resource.setrlimit(resource.RLIMIT_CPU, (2, 2))
    args = ["run", "retry_walkthrough", "--strategy", "spins.py:Spins"]
    r = subprocess.run([sys.executable, "-m", "simkit", *args], cwd=tmp_path, preexec_fn=two_cpu_seconds,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("simkit: run retry_walkthrough: the process doing the work ended (killed by "
                               "SIG"), r.stderr
    assert r.stderr.endswith(", or did it use up the CPU time each process may (ulimit -t 2)?\n"), r.stderr


def test_a_thread_that_cannot_start_in_the_work_is_one_line(monkeypatch, capsys):
    def refused(self):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(threading.Thread, "start", refused)      # the work's process inherits it
    assert main(["sweep", "retry_walkthrough", "--seeds", "2", "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("simkit: sweep retry_walkthrough: RuntimeError: can't start new thread"), err
    assert err.endswith("(a limit on processes, ulimit -u, counts threads too)\n"), err


def test_a_pool_whose_thread_dies_fails_at_once(monkeypatch, capsys):
    from multiprocessing.queues import Queue

    def refused(self):
        raise RuntimeError("can't start new thread")
    monkeypatch.setattr(Queue, "_start_thread", refused)          # the pool's manager thread starts it
    args = ["explore", "retry_walkthrough", "--max-crashes", "1", "--jobs", "2", "--budget", "30"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("simkit: explore retry_walkthrough: RuntimeError: can't start new thread"), err
