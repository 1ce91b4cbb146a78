"""Hostile input, eighteenth round (a fresh tester): the command line's files, processes and environment. A
full disk where ``TMPDIR`` and ``/tmp`` are (or a limit on file sizes, ``ulimit -f``), and a full ``/dev/shm``
under ``--jobs 2``; an ``--out`` path holding a newline, echoed on the line that says it was written. Each:
one line naming the command or flag and the problem (exit status 2, no traceback), or the answer, each of
its lines one line. The service over HTTP (HTTP/1.0, query strings, percent-encoded paths, absolute targets,
200 KB and 20,000 headers, a race of one idempotency key with five bodies), ``live`` on a folder another run
holds, signals during ``sweep --jobs 2``, ``explore --jobs 2``, ``audit`` and ``live``, a closed or full
stdout and a closed stderr were tried and held.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import simkit_in as _cli

ROOT = Path(__file__).resolve().parents[2]


# -- 1. no usable temporary folder (a full disk, ulimit -f) --------------------------------------------------
def _simkit_without_files(args, cwd, after_tmp: bool = False) -> subprocess.CompletedProcess:
    """``simkit ARGS`` under ``RLIMIT_FSIZE`` 0 (SIGXFSZ ignored, as Python does): no file can grow, as on a
    full disk. ``after_tmp``: the limit is set once Python has found its temporary folder, so only what is
    written later fails (a pool's locks in ``/dev/shm``)."""
    code = ("import resource, signal, sys, tempfile\n"
            + ("tempfile.gettempdir()\n" if after_tmp else "")
            + "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))\n"
            "from simkit.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("args, who", [
    (["run", "retry_walkthrough"], "run retry_walkthrough"),
    (["compare", "retry_walkthrough"], "compare retry_walkthrough"),
    (["explore", "retry_walkthrough", "--max-crashes", "1"], "explore retry_walkthrough"),
    (["shrink", "gauntlet", "--strategy", "watermark_only_dedup", "--seed", "3"], "shrink gauntlet"),
    (["sweep", "retry_walkthrough", "--seeds", "2", "--jobs", "1"], "sweep retry_walkthrough"),
    (["live", "retry_walkthrough", "--kills", "1"], "live retry_walkthrough"),
])
def test_no_usable_temporary_folder_is_one_line(tmp_path, args, who):
    """Every command that runs its work apart makes a temporary folder for it (and ``sweep`` its heartbeat
    file, ``live`` its databases' folder) with ``tempfile``; on a full disk Python finds "No usable temporary
    directory" and the command printed that FileNotFoundError's traceback, exit status 1. Now: one line
    opening with the command, saying why, exit status 2."""
    done = _simkit_without_files(args, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"simkit: {who}: cannot make a temporary file or folder for the work: ")
    assert done.stderr.count("\n") == 1 and done.stdout == ""


@pytest.mark.parametrize("args", [
    ["sweep", "retry_walkthrough", "--seeds", "2", "--jobs", "2"],
    ["explore", "retry_walkthrough", "--max-crashes", "1", "--jobs", "2"],
])
def test_a_pool_whose_locks_cannot_be_made_is_one_line_naming_jobs(tmp_path, args):
    """A process pool's locks are files in ``/dev/shm``: full (here: ``RLIMIT_FSIZE`` 0 once the temporary
    folder is found), ``sweep --jobs 2`` and ``explore --jobs 2`` printed the OSError's traceback from
    multiprocessing's SemLock, exit status 1. Now one line naming ``--jobs``, exit status 2."""
    done = _simkit_without_files(args, tmp_path, after_tmp=True)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("simkit: --jobs 2: cannot start a pool of worker processes: ")
    assert done.stderr.count("\n") == 1


# -- 2. a newline in an --out path, echoed where the file was written ----------------------------------------
@pytest.mark.parametrize("args, name, said", [
    (["explore", "retry_walkthrough", "--strategy", "persist_token_on_fetch", "--max-crashes", "1"],
     "a\nb.toml", "  wrote {}: replay with"),
    (["shrink", "gauntlet", "--strategy", "watermark_only_dedup", "--seed", "3"], "a\nb.toml",
     "  wrote {}: replay with"),
    (["sweep", "retry_walkthrough", "--seeds", "2", "--jobs", "1", "--strategy", "safe"], "a\nb.csv",
     "wrote {}: one row per run"),
    (["audit", "persist_token_on_fetch", "--budget", "5", "--jobs", "1"], "a\nb.toml",
     "wrote {}: replay with"),
    (["demo"], "a\nb.png", "wrote {}: the timeline of persist_token_on_fetch"),
])
def test_a_newline_in_an_out_path_is_said_as_its_escape(tmp_path, args, name, said):
    """``--out 'a<newline>b.toml'`` is a file name Linux allows, and it was written; but the summary's
    ``wrote PATH: ...`` line printed the name raw, so one line became two (a reader of the output took
    ``b.toml: replay with ...`` for a line of its own), while the replay command on the same line escaped
    it. Now the path is said as its escape (``a\\nb.toml``), as every error line says it."""
    out = tmp_path / name
    done = _cli([*args, "--out", str(out)], tmp_path, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert out.is_file()
    escaped = str(out).replace("\n", "\\n")
    assert said.format(escaped) in done.stdout
    assert not any(line.startswith("b.") for line in done.stdout.splitlines())


# -- 3. --help and --version onto a standard output that refuses the write -----------------------------------
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"], ["serve", "--help"]])
def test_help_and_version_onto_a_full_stdout_are_one_line(args):
    """``simkit list > /dev/full`` is one line and exit status 2 (docs/cli.md: standard output that refuses a
    write); ``simkit --help > /dev/full`` (and ``--version``, ``run --help``) exited 0 with nothing written
    and nothing said: argparse drops the OSError of its own write. Now the same line, exit status 2."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "simkit", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert done.stderr == "simkit: standard output: cannot write to it: No space left on device\n"


def test_help_to_a_reader_that_goes_away_ends_quietly():
    """``simkit --help | head -c1``: as before, exit status 0 and nothing on stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "simkit", "run", "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    assert proc.stderr.read() == b""
