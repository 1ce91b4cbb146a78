"""Hostile input, twenty-sixth round (a fresh tester): the command line as a whole, what it reads, writes and
starts. Found: ``simkit run new.toml/`` read ``new.toml``; the replay hint for a name that is no UTF-8 (or
holds a newline) was an escape no shell undoes; ``explore --out`` with no violation printed the path raw; a
consumer reading the terminal (SIGTTIN), or any write of the work under ``stty tostop`` (SIGTTOU: explore's
progress bar), stopped the work silently until its budget; an option taken by a prefix of its name
(``sweep --seed 3`` as ``--seeds 3``); an empty ``--out`` taken for none; an ``exec:`` path that is no UTF-8.

Held: SIGINT, SIGTERM and SIGHUP of ``sweep``, ``explore``, ``audit`` (``--jobs 2``), ``demo`` and ``bench
--quick`` at 0.5 to 10 s, to the process or its group (no process, no file, no temporary folder left);
``| head -c5`` of every command; ``ulimit -f``; ``HOME`` unset, ``TMPDIR`` missing; ``--out`` onto the
scenario (by ``./``, a hard link, a ``.csv`` scenario for ``sweep``); number flags at their bounds (``nan``,
``inf``, ``-0.0``, 23 digits, ``1e-300``); ``--dask`` at nothing; files that ``shrink`` and ``explore --out``
wrote (every settlement, pauses, lost requests, late and crossed replies, ids and cursors of quotes, ``#``,
``[[pages]]``, emoji, positions at 2**53) read back to the same verdict.

Left alone: a single-valued option given twice takes the last (argparse's, and scripts append overrides);
matplotlib's own warnings on stderr (``--timeline t.eps``: no transparency; an unwritable ``MPLCONFIGDIR``);
``--timeline t.svgz`` embeds the temporary file's name in its gzip header.

Each: one line naming the file, key or flag and the problem (exit status 2, no traceback, nothing written),
or the verdict the same run earns.
"""
from __future__ import annotations

import contextlib
import os
import subprocess

import pytest
from conftest import simkit_in as _cli


# -- 1. an input path spelled as a folder --------------------------------------------------------------------
@pytest.mark.parametrize("ref", ["new.toml/", "new.toml/.", "retry_walkthrough/"])
def test_an_input_path_ending_in_a_slash_is_refused_not_read_as_the_file(tmp_path, ref):
    """``simkit run new.toml/`` ran the file ``new.toml`` (``Path`` drops the ``/``, which the system would
    refuse: no folder is there), as ``--out new.toml/`` wrote it until round 22. Now one line naming it."""
    (tmp_path / "new.toml").write_text('[[pages]]\ncursor = "C1"\npositions = []\nnext_cursor = "C1"\n')
    done = _cli(["run", ref], tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr == (f"simkit: {ref}: names a folder (a trailing '/'), and there is none; name the "
                           "file without it\n")


# -- 2. the replay hint for a name a shell must be given escaped ---------------------------------------------
def _words(line: str) -> list[bytes]:
    """The arguments bash makes of ``line``, as bytes."""
    done = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, timeout=30,
                          check=True)
    return done.stdout.split(b"\0")[:-1]


@pytest.mark.parametrize("arg", ["plain.toml", "it's.toml", "a\nb.toml", "\udcff.toml", "x\udce9\t\\'y",
                                 "\u2028é.toml", "\x1b[31m"])
def test_a_shell_word_is_taken_back_by_the_shell_as_the_argument(arg):
    """:func:`~simkit.tools.scenario_toml.shell_word` is printable, on one line, and bash takes it back as the
    bytes of ``arg``."""
    from simkit.tools.scenario_toml import shell_word
    word = shell_word(arg)
    assert word.isprintable()
    assert _words(word) == [os.fsencode(arg)]


def test_the_replay_hint_for_a_name_that_is_no_utf8_replays_it(tmp_path):
    """``explore --out`` to a file whose name is no UTF-8 (byte 0xff, read by Python as ``\\udcff``) and
    holds a newline wrote it, and printed ``replay with simkit run '\\udcff\\nx.toml' ...``: a name no shell
    turns back into the file's (the escape of a quoted word, quoted). Now ``$'\\xff\\nx.toml'``, which bash,
    zsh and ksh read as the file's own bytes."""
    name = os.fsdecode(b"\xff\nx.toml")
    done = _cli(["explore", "retry_walkthrough", "--strategy", "persist_token_on_fetch", "--max-crashes", "1",
                 "--out", name], tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / name).is_file()
    hint = next(line for line in done.stdout.splitlines() if "replay with" in line)
    command = hint.split("replay with ", 1)[1]
    assert _words(command)[:3] == [b"simkit", b"run", b"\xff\nx.toml"]


# -- 3. explore --out with no violation, named as typed ------------------------------------------------------
def test_explore_without_a_violation_says_the_out_path_as_its_escape(tmp_path):
    """``explore --out 'a<newline>b<ESC>[31m.toml'`` with no violation printed ``no violation: a`` and a
    second line ``b`` that turned the terminal red: the path raw, where every other line says it as its escape
    (round 18's ``wrote ...``). Now one line, escaped, and no file."""
    name = "a\nb\x1b[31m.toml"
    done = _cli(["explore", "retry_walkthrough", "--max-crashes", "1", "--out", name], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "  no violation: a\\nb\\x1b[31m.toml not written"
    assert "\x1b" not in done.stdout and not (tmp_path / name).exists()


# -- 4. the work on a terminal: reading it, writing it under tostop ------------------------------------------
READS = '''import sys
from simkit import Consumer


class ReadsStdin(Consumer):
    """Reads a line of standard input at each fetch, as a debugger's prompt would."""

    def after_fetch(self, checkpoint, page):
        sys.stdin.readline()
        return None
        yield
'''


def _on_a_terminal(args, cwd, timeout: float, tostop: bool = False) -> tuple[int | None, str]:
    """``python -m simkit ARGS`` with a terminal (a pty) as its controlling terminal and standard streams, as
    from an interactive shell (``tostop``: after ``stty tostop``): its exit status (None if it had not ended
    after ``timeout`` seconds, a bound for a hang, when it is killed) and what it wrote."""
    import pty
    import select
    import signal
    import sys
    import termios
    import time
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover -- the child
        if tostop:
            mode = termios.tcgetattr(0)
            mode[3] |= termios.TOSTOP
            termios.tcsetattr(0, termios.TCSANOW, mode)
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "simkit", *args], env)
    out, deadline, status = b"", time.monotonic() + timeout, None
    try:
        while status is None and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                with contextlib.suppress(OSError):      # the terminal's other end closed
                    out += os.read(fd, 65536)
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
        if status is None:
            os.killpg(pid, signal.SIGKILL)              # the command, its reaper and work: the pty's session
            os.waitpid(pid, 0)
        while select.select([fd], [], [], 0.2)[0]:
            try:
                if not (chunk := os.read(fd, 65536)):
                    break
            except OSError:
                break
            out += chunk
    finally:
        os.close(fd)
    return status, out.decode(errors="replace").replace("\r\n", "\n")


def test_a_consumer_reading_the_terminal_reads_nothing_and_is_judged(tmp_path):
    """A consumer that reads standard input (``input()``, ``breakpoint()``), run from a terminal: its process,
    in a process group of its own, was stopped by SIGTTIN, and the command waited silently for its budget
    (1,200 s) before one line said it did not end. Now its standard input is ``/dev/null``: it reads nothing,
    and the run is judged (``breakpoint()`` is one line: the consumer raised BdbQuit)."""
    (tmp_path / "reads.py").write_text(READS)
    status, out = _on_a_terminal(["run", "retry_walkthrough", "--strategy", "reads.py:ReadsStdin"], tmp_path,
                                 timeout=90)
    assert status == 0, out
    assert out.startswith("retry_walkthrough · ReadsStdin · seed 0: ok\n"), out


@pytest.mark.parametrize("args", [
    ["explore", "retry_walkthrough", "--max-crashes", "1"],
    ["sweep", "retry_walkthrough", "--seeds", "3", "--strategy", "safe", "--jobs", "2"],
    ["run", "retry_walkthrough", "--strategy", "prints.py:Prints"],
], ids=["explore's progress", "sweep's progress", "a consumer's print"])
def test_a_terminal_under_tostop_does_not_stop_the_work(tmp_path, args):
    """Under ``stty tostop`` a process outside the terminal's foreground process group that writes to it is
    stopped (SIGTTOU), and the work runs in a process group of its own: ``simkit explore`` on a terminal (its
    progress bar), ``sweep`` and a consumer that prints stopped at their first write, and the command waited
    for its budget (``explore``: 600 s, then "the budget ran out", for an exploration of a second). Now the
    work ignores SIGTTOU, which lets it write, and the command ends with its answer."""
    (tmp_path / "prints.py").write_text(
        "from simkit import Consumer\n\n\nclass Prints(Consumer):\n"
        "    def after_fetch(self, checkpoint, page):\n        print('fetched', page.next_cursor)\n"
        "        return None\n        yield\n")
    status, out = _on_a_terminal(args, tmp_path, timeout=90, tostop=True)
    assert status == 0, out
    assert "Traceback" not in out and "simkit:" not in out, out


# -- 5. an option named by a prefix of another's name --------------------------------------------------------
@pytest.mark.parametrize("args, extra", [
    (["sweep", "retry_walkthrough", "--strategy", "safe", "--jobs", "1", "--seeds", "10", "--seed", "3"],
     "--seed 3"),
    (["audit", "safe", "--budget", "1", "--seed", "7"], "--seed 7"),
    (["run", "retry_walkthrough", "--strat", "persist_token_on_fetch"], "--strat persist_token_on_fetch"),
], ids=["sweep --seed", "audit --seed", "run --strat"])
def test_an_option_is_not_taken_by_a_prefix_of_its_name(tmp_path, args, extra):
    """argparse took an option by any prefix of its name: ``sweep --seeds 10 --seed 3`` (``--seed`` as ``run``
    has it) ran 3 seeds from 0, and ``audit safe --seed 7`` 7 seeds per generated scenario, without a word: a
    flag of one command read as another's. Now an option is taken by its full name only; any other word is one
    line naming it, exit 2, nothing run."""
    done = _cli([*args, "--json"], tmp_path)
    command = args[0]
    assert (done.returncode, done.stdout) == (2, ""), done.stdout
    assert done.stderr == (f"simkit: {command}: unrecognized arguments: {extra} (see simkit {command} --help)"
                           "\n")


# -- 6. an empty output path ---------------------------------------------------------------------------------
@pytest.mark.parametrize("args, option", [
    (["explore", "retry_walkthrough", "--strategy", "persist_token_on_fetch", "--max-crashes", "1"], "--out"),
    (["shrink", "retry_walkthrough", "--strategy", "persist_token_on_fetch"], "--out"),
    (["sweep", "retry_walkthrough", "--seeds", "1", "--strategy", "safe", "--jobs", "1"], "--out"),
    (["audit", "persist_token_on_fetch", "--budget", "5", "--jobs", "1"], "--out"),
    (["demo"], "--out"),
    (["run", "retry_walkthrough"], "--timeline"),
], ids=["explore", "shrink", "sweep", "audit", "demo", "run --timeline"])
def test_an_empty_output_path_is_refused_not_ignored(tmp_path, args, option):
    """``--out "$UNSET"`` (an empty path) was taken for no ``--out`` at all: ``explore`` then said "add --out
    FILE", ``shrink`` printed the scenario, ``sweep`` wrote nothing, and said nothing of it; ``audit`` wrote
    its default file; ``demo --out ''`` and ``--timeline ''`` said "is a folder" (``Path('')`` is the current
    one). Now one line saying it names no file, as ``live --dir ''`` does; exit 2, nothing written."""
    done = _cli([*args, f"{option}="], tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stdout
    assert done.stderr == f"simkit: {option} '': names no file; give one, or leave {option} out\n"
    assert list(tmp_path.iterdir()) == []


# -- 7. an exec: consumer whose path is no UTF-8 -------------------------------------------------------------
def test_an_exec_consumer_at_a_path_that_is_no_utf8_runs(tmp_path):
    """``--strategy exec:'python3 ./c<0xff>'``, a file Linux allows, could not run at all: its class, named
    after the command, was a UnicodeEncodeError (a class's name is UTF-8), which the command said was "a value
    the consumer gave that a store cannot hold". Now the class is named with the byte's escape (``\\xff``)
    and the run judged; the replay hint gives the command back as bash takes it (``$'...\\xff'``)."""
    from pathlib import Path
    source = Path(__file__).resolve().parents[2] / "examples" / "consumers" / "python" / "consumer.py"
    (tmp_path / os.fsdecode(b"c\xff")).write_bytes(source.read_bytes())
    strategy = os.fsdecode(b"exec:python3 ./c\xff --publish-token-on-fetch")
    done = _cli(["shrink", "retry_walkthrough", "--strategy", strategy, "--out", "s.toml"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("shrink retry_walkthrough · exec:python3 ./c\\xff --publish-token-on-fetch "
                                  "· seed 0: lost"), done.stdout
    hint = done.stdout.splitlines()[-1].split("replay with ", 1)[1]
    assert _words(hint)[3:5] == [b"--strategy", b"exec:python3 ./c\xff --publish-token-on-fetch"]
    again = _cli(["run", "s.toml", "--strategy", strategy], tmp_path)
    assert again.returncode == 0 and ": NOT ok\n" in again.stdout, again.stderr
