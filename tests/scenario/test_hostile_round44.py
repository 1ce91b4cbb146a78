"""Hostile input, forty-fourth round (a fresh tester): the environment a user's shell gives simkit.

Found: in a current folder deeper than PATH_MAX (4,096 bytes) every writer refused a relative path (``shrink
--out s.toml``, ``sweep --out``, ``run --timeline``, ``demo``, ``audit``'s default file: "cannot write it:
File name too long"), where ``echo > s.toml`` writes it: ``tempfile.mkstemp`` makes its file's name absolute.
Under a umask that takes the owner's write permission (``umask 277``, ``777``), for anyone but root, every
writer refused its own temporary file ("Permission denied": made, then opened again), ``run --store sqlite``
printed a PermissionError's traceback and ``live`` refused its own temporary folder. Under ``python -OO``
(``PYTHONOPTIMIZE=2``: docstrings dropped) ``simkit list`` showed every strategy without its description. A
command whose standard output was a non-blocking pipe (``O_NONBLOCK``, a Node.js parent's) lost, silently,
what the pipe could not take at once (``run --json`` cut at 64 KiB, exit status 0); a non-blocking stderr that
a consumer's prints filled lost the command's one line after them (exit status 2, no word why).

Held: ``LC_ALL=C``, ``POSIX``, an unknown locale, ``PYTHONIOENCODING`` (``latin-1``, ``utf-16``,
``ascii:strict``, ``utf-8:bogus``), ``PYTHONWARNINGS=error``, ``PYTHONOPTIMIZE=2`` (no check of simkit's
relies on ``assert``; ``--help`` of every command the same), ``TERM=dumb NO_COLOR=1 COLUMNS=1`` for ``run``,
``compare``, ``explore``, ``shrink``, ``sweep``, ``list``, ``live``, ``demo``, ``workshop``;
``PYTHONHASHSEED`` 0, 1, 12345 and random: ``explore``, ``shrink`` (its file too), ``sweep`` and ``compare``
``--json`` byte for byte the same; umask 022, 077, 000 and 777 as root (a written file has a plain
``open()``'s mode); a read-only current folder (``mount -o ro``): ``demo``, ``audit``, ``--out``,
``--timeline``, ``workshop`` one line each, ``run --store sqlite`` and ``live`` answer; stdin closed, stdin
and stdout closed, stderr closed, all three closed (``exec:``, ``--jobs 2``, ``live``, ``sweep --out``: the
file written whole).

Left alone: ``PYTHONIOENCODING=nonexistent`` is Python's own fatal error before simkit runs. Under ``umask
277`` the ``workshop`` notebooks (folder and files) are made with the owner's write permission (0600, 0700):
the workshop writes its folder, which a plain ``mkdir`` under that umask could not write into.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from conftest import simkit_in as _cli

ROOT = Path(__file__).resolve().parents[2]


# -- 1. a current folder deeper than PATH_MAX ---------------------------------------------------------------
def _deep(tmp_path: Path) -> list[str]:
    """Steps of 200 bytes below ``tmp_path``, past 5,000 bytes in all (made one step at a time: no system
    call takes the whole path)."""
    steps = ["x" * 200] * 25
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for step in steps:
            os.mkdir(step)
            os.chdir(step)
    finally:
        os.chdir(here)
    return steps


@pytest.mark.parametrize("args, made", [
    (["shrink", "gauntlet", "--strategy", "watermark_only_dedup", "--seed", "3", "--out", "s.toml"],
     "s.toml"),
    (["sweep", "retry_walkthrough", "--seeds", "1", "--strategy", "safe", "--jobs", "1", "--out", "w.csv"],
     "w.csv"),
])
def test_a_relative_out_path_in_a_folder_deeper_than_path_max_is_written(tmp_path, args, made):
    """docs/cli.md: an output path that can be written is written. In a folder deeper than PATH_MAX, ``--out
    s.toml`` was refused ("File name too long": ``tempfile.mkstemp`` named its temporary file by the absolute
    path), where ``echo > s.toml`` writes it. Now the file is written, and nothing else is left."""
    steps = _deep(tmp_path)
    code = ("import os, sys\n"
            f"for step in {steps!r}:\n    os.chdir(step)\n"
            "from simkit.cli import main\nrc = main(sys.argv[1:])\n"
            "print(sorted(os.listdir('.')), file=sys.stderr)\nsys.exit(rc)\n")
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == repr([made])
    assert f"wrote {made}" in done.stdout


# -- 2. a umask that takes the owner's write permission (not root) ------------------------------------------
def _as_user(args, cwd: Path, umask: int) -> subprocess.CompletedProcess:
    """``simkit ARGS`` under ``umask``, as a user who is not root: root, here, without the capabilities that
    let it pass a file's permissions (``setpriv``)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root, and no setpriv to drop CAP_DAC_OVERRIDE")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    done = subprocess.run([*prefix, sys.executable, "-m", "simkit", *args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, umask=umask, timeout=120)
    if "setpriv:" in done.stderr:
        pytest.skip(f"setpriv cannot drop the capabilities here: {done.stderr.strip()}")
    return done


@pytest.mark.parametrize("umask", [0o277, 0o777], ids=["umask277", "umask777"])
def test_an_out_file_under_a_umask_without_the_owners_write_is_written_with_that_mode(tmp_path, umask):
    """``umask 277``: ``shrink --out s.toml`` made its temporary file, took its write permission (the mode
    a plain ``open()`` gives) and opened it again to write: "Permission denied", nothing written. Now the file
    is written whole, with that mode once written."""
    args = ["shrink", "gauntlet", "--strategy", "watermark_only_dedup", "--seed", "3", "--out", "s.toml"]
    done = _as_user(args, tmp_path, umask)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "s.toml"
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]
    out.chmod(0o600)
    assert "Expected failure" in out.read_text()


@pytest.mark.parametrize("args", [
    ["run", "retry_walkthrough", "--store", "sqlite"],
    ["live", "retry_walkthrough", "--kills", "1"],
])
def test_simkits_own_files_under_a_umask_without_the_owners_write(tmp_path, args):
    """``umask 277``: ``run --store sqlite`` printed a PermissionError's traceback (the store's temporary
    folder, made read-only, could hold no database) and ``live`` said it could not make its temporary folder.
    simkit's own folders and files are the owner's to write, whatever the umask takes from the others."""
    done = _as_user(args, tmp_path, 0o277)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert f"{args[1]} · safe · seed 0: ok" in done.stdout


# -- 3. python -OO: docstrings dropped ----------------------------------------------------------------------
def test_list_describes_every_strategy_under_python_OO(tmp_path):
    """``PYTHONOPTIMIZE=2`` (``python -OO``) drops docstrings, and ``simkit list`` read each strategy's
    description from its class's: every ``strategy`` line ended in blanks. Now the same lines as without."""
    plain = _cli(["list"], tmp_path)
    optimized = _cli(["list"], tmp_path, env={"PYTHONOPTIMIZE": "2"})
    assert plain.returncode == optimized.returncode == 0
    assert optimized.stdout == plain.stdout
    assert all(len(line.split()) > 2 for line in plain.stdout.splitlines() if line.startswith("strategy"))


# -- 4. standard output a non-blocking pipe -----------------------------------------------------------------
def _held(fd: int) -> int:
    """The bytes waiting in the pipe ``fd`` reads (``FIONREAD``)."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def test_a_non_blocking_stdout_gets_the_whole_answer(tmp_path):
    """A parent may hand the command a non-blocking pipe (``O_NONBLOCK``, as Node.js does) and read it later:
    ``simkit run --json`` of more than the pipe holds (64 KiB) was cut there, silently, exit status 0 (the
    buffered writes dropped what the pipe refused). Now the whole object."""
    (tmp_path / "big.toml").write_text("[generate]\nevents = 3000\npage_size = 10\n\n[random_faults]\n"
                                       "crash = 0.05\n")
    read, write = os.pipe()
    os.set_blocking(write, False)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["run", "big.toml", "--strategy", "persist_token_on_fetch", "--json"]
    proc = subprocess.Popen([sys.executable, "-m", "simkit", *args], cwd=tmp_path, stdout=write,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    os.close(write)
    deadline = time.monotonic() + 120       # a bound for a hang only
    while proc.poll() is None and _held(read) < 1 << 16 and time.monotonic() < deadline:
        time.sleep(0.05)                    # read once the pipe is full (or the command has ended)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert len(data) > 1 << 16 and json.loads(data)["strategy"] == "persist_token_on_fetch"


def test_the_one_line_reaches_a_non_blocking_stderr_a_consumer_filled(tmp_path):
    """What a consumer prints goes to stderr; a non-blocking one that it filled (100 KB) before raising lost
    the rest of its output and the command's one line after it, silently: exit status 2 and no word why.
    Now every byte, the one line last."""
    (tmp_path / "chatty.py").write_text("from simkit import Consumer\n\n\nclass Chatty(Consumer):\n"
                                        "    def after_fetch(self, *a, **k):\n        print('x' * 100000)\n"
                                        "        raise ValueError('boom')\n")
    read, write = os.pipe()
    os.set_blocking(write, False)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--strategy",
                             "chatty.py:Chatty"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=write,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(write)
    deadline = time.monotonic() + 120       # a bound for a hang only
    while proc.poll() is None and _held(read) < 1 << 16 and time.monotonic() < deadline:
        time.sleep(0.05)                    # read once the pipe is full (or the command has ended)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode()
    assert proc.wait(timeout=120) == 2
    line = "simkit: strategy chatty.py:Chatty raised ValueError: boom in after_fetch (chatty.py:7)"
    assert said.splitlines()[-1] == line
    assert said.count("x") >= 100000
