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

import simkit
from simkit.cli import main
from simkit.errors import SimkitError, StrategyError
from simkit.procedure.consumer import Contract
from simkit.procedure.strategies import SHORTCUTS, resolve

MINE = "from simkit import Consumer\n\n\nclass Mine(Consumer):\n    pass\n"


@pytest.fixture(scope="module")
def scenario():
    return simkit.load("retry_walkthrough")


@pytest.mark.parametrize("name", ["safe", *SHORTCUTS[:2]])
def test_simulate_takes_a_registered_strategy_by_name(scenario, name):
    by_name = simkit.simulate(scenario, name)
    by_class = simkit.simulate(scenario, resolve(name))
    assert by_name.strategy == name and by_name.as_dict() == by_class.as_dict()


def test_simulate_takes_a_file_reference_as_the_command_line_does(scenario, tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text(MINE)
    monkeypatch.chdir(tmp_path)
    run = simkit.simulate(scenario, "mine.py:Mine")
    assert run.strategy == "Mine" and run.verdict.ok


@pytest.mark.parametrize("strategy, message", [
    ("sfae", r"^strategy sfae: unknown strategy \(known: safe, "),
    ("nothere.py:X", r"^strategy nothere\.py:X: no such file nothere\.py$"),
    (5, r"^strategy 5: is of type int, not a Consumer subclass or a strategy's name$"),
    (None, r"^strategy None: is of type NoneType, not a Consumer subclass or a strategy's name$"),
    (simkit.Consumer(Contract()), r"^strategy <simkit\.procedure\.consumer\.Consumer object at .*: is an "
                                  r"instance of Consumer: pass the class$"),
    (int, r"^strategy <class 'int'>: is not a Consumer subclass$"),
])
def test_simulate_refuses_what_names_no_strategy_with_one_line(scenario, strategy, message):
    with pytest.raises(StrategyError, match=message) as refused:
        simkit.simulate(scenario, strategy)
    assert isinstance(refused.value, SimkitError) and refused.value.param == "strategy"
    assert "\n" not in str(refused.value)


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


@pytest.mark.parametrize("value, kind", [("5", "an int"), ("'x'", "a str"), ("object()", "an object"),
                                         ("{}", "a dict")])
def test_a_reference_to_no_class_names_what_it_is_with_its_article(tmp_path, monkeypatch, value, kind):
    """``mine.py:X`` where ``X = 5`` said ``a int``: the article is ``an`` before a vowel."""
    (tmp_path / "mine.py").write_text(f"X = {value}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StrategyError, match=rf"^strategy mine\.py:X: mine\.py:X is {kind}, not a subclass"):
        resolve("mine.py:X")
