"""Round 28: ``simkit live``, the SQLite store and the Python API, attacked (CHANGELOG, "Fixed")."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simkit
from simkit.errors import SimkitError, described
from simkit.live.run import live
from simkit.testing import assert_passes_audit, run_on

RETRY = simkit.load("retry_walkthrough")


@pytest.mark.parametrize("param, value", [
    ("kills", "2"), ("kills", 1.5), ("kills", True), ("kills", None),
    ("seed", 2**100), ("seed", "3"), ("seed", 1.0), ("seed", True),
    ("timeout", "3"), ("timeout", True), ("timeout", None),
    ("max_delay", "3"), ("max_delay", False),
    ("at", "after_fetch"), ("at", ("after_fetch", 5)), ("at", 5),
    ("folder", 5), ("folder", b"somewhere"),
])
def test_live_of_an_argument_of_the_wrong_kind_is_one_line_naming_it(tmp_path, monkeypatch, param, value):
    """docs/cli.md: ``simkit.live.run.live`` checks what ``simkit live`` checks and names the parameter.
    ``kills="2"``, ``timeout="3"``, ``max_delay="3"`` and ``folder=5`` were TypeError tracebacks; ``seed`` of
    2**100 or ``"3"`` and ``kills=1.5`` ran (a seed ``--seed`` and ``simulate`` refuse; "1.5 asked"); ``at``
    as one string was read a character at a time (``at a: not a crash point``). Nothing is left behind."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SimkitError) as refused:
        live(RETRY, simkit.Consumer, **{"kills": 1, param: value})
    said = str(refused.value)
    assert refused.value.param == param and said.startswith(f"{param} {described(value)}: ") or \
        said.startswith("at 5: not a crash point")
    assert "\n" not in str(refused.value) and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("strategy", ["safe", "persist_token_on_fetch"])
def test_live_takes_a_strategy_by_name_as_simulate_does(strategy):
    """``live(sc, "safe")`` was ``live worker 1: AttributeError: 'str' object has no attribute
    '__qualname__'``; ``simulate`` takes a name (:func:`simkit.resolve`), and so does ``live`` now."""
    run = live(RETRY, strategy, kills=0)
    assert run.strategy == strategy and run.verdict.completed and run.kills == 0


@pytest.mark.parametrize("strategy, problem", [
    (object, "is not a Consumer subclass"), (5, "not a Consumer subclass or a strategy's name"),
    ("sfae", "unknown strategy"),
])
def test_live_of_no_strategy_is_one_line_before_any_worker(strategy, problem):
    """``live(sc, object)`` started a worker and stopped with ``live worker 1: strategy builtins:object raised
    TypeError``: the same :class:`~simkit.StrategyError` as ``simulate`` gives, before anything runs."""
    with pytest.raises(simkit.StrategyError, match=problem) as refused:
        live(RETRY, strategy, kills=0)
    assert refused.value.param == "strategy"


@pytest.mark.parametrize("scratch", ["missing/below", "a-file"])
def test_live_with_a_scratch_folder_it_cannot_use_is_one_line(tmp_path, monkeypatch, scratch):
    """``live(scratch=...)`` where no folder can be made was a FileNotFoundError (NotADirectoryError)
    traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SimkitError, match=f"^scratch {scratch}: ") as refused:
        live(RETRY, kills=0, scratch=scratch)
    assert refused.value.param == "scratch" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


# -- simkit.testing ----------------------------------------------------------------------------------------
LOSES = '''
from simkit import Consumer


class Loses(Consumer):
    """every event a replay: both of retry_walkthrough's are lost, the first case fails"""
    def is_replay(self, event, receipts, applied_position):
        return True
'''


def test_assert_passes_audit_into_a_link_writes_neither_through_it_nor_over_it(tmp_path, monkeypatch):
    """A failure file at ``out`` that is a symbolic link was written through it (``target.toml`` made, or any
    file the link names replaced), where every writer of the command refuses a link (docs/cli.md)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loses.py").write_text(LOSES)
    (tmp_path / "failure.toml").symlink_to(tmp_path / "target.toml")
    with pytest.raises(SimkitError, match="^out .*failure.toml: is a symbolic link") as refused:
        assert_passes_audit("loses.py:Loses", budget=5, sweep_seeds=0, first_only=True,
                            out=tmp_path / "failure.toml")
    assert refused.value.param == "out" and not (tmp_path / "target.toml").exists()


def test_assert_passes_audit_into_a_fifo_is_one_line_not_a_wait_for_ever(tmp_path):
    """``out`` a FIFO no one reads: the audit ran, then its failure file's write waited for a reader for
    ever (the test never ended). Now refused before the audit, as ``simkit audit --out`` refuses it."""
    (tmp_path / "loses.py").write_text(LOSES)
    os.mkfifo(tmp_path / "failure.toml")
    script = ("import simkit.testing as t\n"
              "try:\n"
              "    t.assert_passes_audit('loses.py:Loses', budget=5, sweep_seeds=0, first_only=True,\n"
              "                          out='failure.toml')\n"
              "except simkit.SimkitError as e:\n"
              "    print(e.param, e)\n")
    done = subprocess.run([sys.executable, "-c", "import simkit\n" + script], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(simkit.__file__).parents[1])})
    assert done.stdout.startswith("out out failure.toml: is not a regular file"), done.stderr[-500:]


@pytest.mark.parametrize("out", [5, b"failure.toml"])
def test_assert_passes_audit_into_an_out_that_is_no_path_is_one_line(out):
    """``out=5`` was ``TypeError: expected str, bytes or os.PathLike object, not int``, after the audit."""
    with pytest.raises(SimkitError, match="^out .*: must be a path") as refused:
        assert_passes_audit("persist_token_on_fetch", budget=5, first_only=True, out=out)
    assert refused.value.param == "out"


def test_run_on_of_one_seed_as_an_int_is_one_line_naming_seeds():
    """``run_on(Consumer, seeds=3)`` was ``TypeError: 'int' object is not iterable``."""
    with pytest.raises(SimkitError, match=r"^seeds 3: must be a tuple of seeds") as refused:
        run_on(simkit.Consumer, seeds=3)
    assert refused.value.param == "seeds"
