"""A strategy named by a string in the public API, and references to things that are no file.

``simkit.simulate(sc, "safe")`` ended in an AttributeError traceback from deep in the world: the API took
only a class. It now resolves a string as ``--strategy`` does. A plugin path or an ``exec:`` program that is
a named pipe (FIFO), a directory or a device was said to be "no such file" (or, for ``exec:``, "Permission
denied" at the run's start): the message now says what it is; and a path too long to look up was a
traceback.
"""
from __future__ import annotations

import os
import sys

import pytest

from simkit.cli import main
from simkit.errors import StrategyError
from simkit.procedure.strategies import resolve

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mkfifo, /dev/null")


@linux
@pytest.mark.parametrize("make, kind", [(os.mkfifo, "a named pipe"), (os.mkdir, "a directory")])
def test_a_plugin_path_that_is_no_file_says_what_it_is(tmp_path, monkeypatch, capsys, make, kind):
    """A FIFO was "no such file"; had it been opened, the import would have waited for a writer for ever."""
    monkeypatch.chdir(tmp_path)
    make("mine.py")
    with pytest.raises(StrategyError, match=rf"^strategy mine\.py:Mine: mine\.py is {kind}, not a file$"):
        resolve("mine.py:Mine")
    assert main(["run", "retry_walkthrough", "--strategy", "mine.py:Mine"]) == 2
    assert capsys.readouterr() == ("", f"simkit: --strategy mine.py:Mine: mine.py is {kind}, not a file\n")


@linux
@pytest.mark.parametrize("program, kind", [("pipe", "a named pipe"), ("folder", "a directory"),
                                           ("/dev/null", "a character device")])
def test_an_exec_program_that_is_no_file_says_what_it_is(tmp_path, monkeypatch, capsys, program, kind):
    """``exec:./pipe`` ran, and each worker life failed to start it: "Permission denied"."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe")
    os.mkdir("folder")
    path = program if program.startswith("/") else f"./{program}"
    assert main(["run", "retry_walkthrough", "--strategy", f"exec:{path}"]) == 2
    assert capsys.readouterr() == ("", f"simkit: --strategy exec:{path}: {path} is {kind}, not a file\n")


def test_an_exec_program_that_is_not_there_is_still_said_at_its_start(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "retry_walkthrough", "--strategy", "exec:./nothere"]) == 2
    assert capsys.readouterr().err.endswith("cannot start './nothere': No such file or directory\n")


def test_a_plugin_path_too_long_to_look_up_is_one_line(tmp_path, monkeypatch):
    """``Path.is_file`` raised ENAMETOOLONG: a traceback."""
    monkeypatch.chdir(tmp_path)
    where = "a" * 5000 + ".py"
    with pytest.raises(StrategyError, match=r"\.py cannot be read: File name too long$"):
        resolve(f"{where}:Mine")
