"""Hostile use, forty-fifth round (a fresh tester): the public Python API as a consumer author's own test
suite and notebook use it (``simkit.testing`` from a project outside the repository, under plain pytest,
``-n 2``, ``-p no:cacheprovider``, from another folder, and in a Jupyter kernel through nbclient). Found:

- a consumer in a package of the user's (``mypkg/cons.py`` with ``from .base import Loud``): the replay line
  ``simkit.testing`` printed, ``--strategy mypkg/cons.py:PkgBad``, and ``simkit audit mypkg/cons.py:PkgBad``
  itself were "failed to import: ImportError: attempted relative import with no known parent package". Such a
  file is imported as its package's module now, when loading it alone raises ``ImportError``;
- a consumer nested in a class (``Suite.Inner``) was printed as ``nested.py:Suite.Inner``, which
  ``--strategy`` refused ("has no class of that name"): a reference's class is a qualified name now;
- a consumer defined inside a test function, a fixture or a parametrized factory was printed as
  ``--strategy 'test_api:test_local_bad.<locals>.Local'``, which no command line can import. The line names
  the file and class as they would be at its module's top level now, and a line under it says so (as for a
  class made by ``type()`` in a function, which its module does not hold: it had no word at all);
- a consumer defined in a notebook cell (or ``python -c``): ``assert_ok_on`` and ``assert_passes_audit`` of a
  buggy one were an ``OSError: source code not available`` traceback from ``inspect``, not the failure. Now
  the failure, its replay line naming ``FILE.py:Class`` and a line saying to save the class in a file;
- a ``@dataclass`` consumer (whose generated ``__init__`` never calls ``Consumer.__init__``, and takes the
  contract as its first field) was "raised AttributeError: 'DC' object has no attribute 'contract' in validate
  (consumer.py:204)", blaming simkit's file and saying nothing of what to do: now one line saying to call
  ``super().__init__(contract)``, or ``@dataclass(init=False)``;
- ``assert_ok_on(buggy, scenario)`` of a :class:`~simkit.Scenario` edited in Python (``replace(load(
  "retry_walkthrough"), workers=2)``) printed ``simkit run retry_walkthrough``, which replays the bundled one,
  and of one parsed from a dict, ``simkit run my_case``, "no such scenario". Such a scenario is written to a
  file for its replay line now (one that its name or file still holds as it is is named so);
- ``run_on``/``assert_ok_on(consumer, seeds=range(10**9))`` ran for days, keeping every Run (its world too)
  in memory: at most ``MAX_SEEDS`` seeds now, as ``simkit.audit`` and ``sweep`` take them, else one line;
- a hook raising in one of ``assert_ok_on``'s runs (several scenarios and seeds) was the consumer's line
  alone, no word of which run raised: the line names the scenario and seed and its ``simkit run`` now;
- ``simkit.testing.pytest_addoption``, exported, had no docstring.

Held: the plugin's fixture and ``--simkit-budget`` under ``-n 2`` and ``-p no:cacheprovider``; replay lines
relative to the folder pytest ran from (another than the project's) replay from there; consumers with
``__slots__``, mixins whose ``__init__`` chains through ``super()``, subclasses of bundled shortcuts, a
conftest module's class; ``jobs=2`` audits of a class defined in a test (no worker process left after); the
same verdicts twice in one process and across processes of other hash seeds; ``@dataclass(init=False)``
consumers.

Left alone: a replay line naming a test module that imports the user's own package (``from mypkg import``)
needs that package importable from the shell (installed, or on ``PYTHONPATH``), as pytest's ``pythonpath``
setting made it: simkit cannot know the user's path. ``assert_passes_audit`` (and ``simkit audit``) of a
consumer whose hook raises in some case is the consumer's line alone, not which case: the audit's own
(``tools/audit.py``), left for its owner. Under pytest a ``ConsumerError`` shows its cause chain through
SimPy: the cause is the user's own frame, worth its lines. ``pytest --forked`` is not installed here
(untried).
"""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import simkit_in as _cli

import simkit
from simkit import Consumer, ConsumerError
from simkit.procedure.strategies import PersistTokenOnFetch, resolve
from simkit.testing import assert_ok_on, run_on

ROOT = str(Path(__file__).resolve().parents[2])


def _package(tmp_path: Path) -> Path:
    """``proj/r45pkg``: a consumer whose module imports its base relatively."""
    pkg = tmp_path / "proj" / "r45pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("from simkit.procedure.strategies import PersistTokenOnFetch\n\n\n"
                                 "class Base(PersistTokenOnFetch):\n    pass\n")
    (pkg / "cons.py").write_text("from .base import Base\n\n\nclass PkgBad(Base):\n    pass\n")
    return pkg


def test_a_consumer_in_a_package_with_relative_imports_replays_from_its_path(tmp_path):
    _package(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _cli(["run", "retry_walkthrough", "--strategy", "../proj/r45pkg/cons.py:PkgBad", "--json"],
                cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert '"ok": false' in done.stdout


def test_the_replay_line_of_a_package_consumer_works_as_printed(tmp_path):
    _package(tmp_path)
    script = ("import sys; sys.path.insert(0, 'proj')\nfrom r45pkg.cons import PkgBad\n"
              "from simkit.testing import assert_ok_on\ntry:\n    assert_ok_on(PkgBad)\n"
              "except AssertionError as e:\n    print(e)\n")
    env = {**os.environ, "PYTHONPATH": ROOT}
    said = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120).stdout
    replay = re.search(r"replay: (simkit run .*)", said)
    assert replay and "proj/r45pkg/cons.py:PkgBad" in replay[1], said
    again = _cli([*shlex.split(replay[1])[1:], "--json"], cwd=tmp_path)
    assert again.returncode == 0 and '"ok": false' in again.stdout, again.stderr


def test_a_nested_class_is_found_by_its_qualified_name(tmp_path):
    (tmp_path / "nested45.py").write_text("from simkit.procedure.strategies import PersistTokenOnFetch\n\n\n"
                                          "class Suite:\n    class Inner(PersistTokenOnFetch):\n"
                                          "        pass\n")
    cls = resolve(f"{tmp_path / 'nested45.py'}:Suite.Inner")
    assert cls.__qualname__ == "Suite.Inner"
    with pytest.raises(simkit.StrategyError, match=r"has no class of that name \(Suite\.Nope\)"):
        resolve(f"{tmp_path / 'nested45.py'}:Suite.Nope")


def test_a_class_defined_in_a_test_is_named_as_a_file_would_name_it_and_said_so():
    class Local(PersistTokenOnFetch):
        pass

    with pytest.raises(AssertionError) as failed:
        assert_ok_on(Local)
    said = str(failed.value)
    here = os.path.relpath(__file__)
    assert f"replay: simkit run retry_walkthrough --strategy {here}:Local --seed 0" in said, said
    assert "<locals>" not in said
    assert ("Local is defined inside "
            "test_a_class_defined_in_a_test_is_named_as_a_file_would_name_it_and_said_so(), where no "
            "command line finds it: defined at the top level of its module") in said


def test_a_class_of_no_file_fails_with_its_message_not_an_oserror(tmp_path):
    """``python -c`` stands for a notebook cell: ``inspect`` finds no source for either."""
    script = ("from simkit.procedure.strategies import PersistTokenOnFetch\n"
              "from simkit.testing import assert_ok_on, assert_passes_audit\n"
              "class Mine(PersistTokenOnFetch):\n    pass\n"
              "for check in (lambda: assert_ok_on(Mine),\n"
              "              lambda: assert_passes_audit(Mine, budget=5, first_only=True, sweep_seeds=0)):\n"
              "    try:\n        check()\n    except AssertionError as e:\n        print(e)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "replay: simkit run retry_walkthrough --strategy FILE.py:Mine --seed 0" in done.stdout
    assert "replay with simkit run" in done.stdout and "--strategy FILE.py:Mine" in done.stdout
    assert done.stdout.count("Mine is defined in no file (a notebook cell or an interactive session)") == 2


@dataclasses.dataclass
class Fields(Consumer):
    """A dataclass's own ``__init__`` takes the contract as ``retries`` and never calls Consumer's."""

    retries: int = 3


@dataclasses.dataclass(init=False)
class KeepsInit(Consumer):
    retries: int = 3


def test_a_dataclass_consumer_is_told_to_call_consumers_init():
    with pytest.raises(ConsumerError) as refused:
        simkit.simulate(simkit.load("retry_walkthrough"), Fields)
    said = str(refused.value)
    assert said.endswith("its __init__ never called simkit.Consumer.__init__, so self.contract is unset: "
                         "call super().__init__(contract) in it (a @dataclass writes an __init__ that does "
                         "not: @dataclass(init=False) keeps Consumer's)"), said
    assert simkit.simulate(simkit.load("retry_walkthrough"), KeepsInit).verdict.ok


def test_every_name_simkit_testing_exports_has_a_docstring():
    import simkit.testing as testing
    assert [n for n in testing.__all__ if not (getattr(testing, n).__doc__ or "").strip()] == []


def _edited() -> simkit.Scenario:
    return dataclasses.replace(simkit.load("retry_walkthrough"), workers=2)


def _parsed() -> simkit.Scenario:
    data = tomllib.loads(Path(simkit.load("retry_walkthrough").source).read_text())
    return simkit.parse({**data, "name": "my_case"})


@pytest.mark.parametrize("made", [_edited, _parsed])
def test_the_replay_line_of_a_scenario_made_in_python_replays_that_scenario(made):
    """``simkit run retry_walkthrough`` replayed the bundled scenario, not the one edited from it;
    ``simkit run my_case`` was "no such scenario"."""
    scenario = made()
    with pytest.raises(AssertionError) as failed:
        assert_ok_on(PersistTokenOnFetch, scenario)
    replay = re.search(r"replay: (simkit run .*)", str(failed.value))
    words = shlex.split(replay[1])
    assert words[2].endswith(".toml"), words
    again = simkit.load(words[2])
    assert dataclasses.replace(again, source=scenario.source) == scenario
    with pytest.raises(AssertionError, match="replay: simkit run retry_walkthrough --strategy"):
        assert_ok_on(PersistTokenOnFetch, simkit.load("retry_walkthrough"))     # as it is: by its name


def test_run_on_a_billion_seeds_is_one_line_not_days_of_runs_held_in_memory():
    with pytest.raises(simkit.SimkitError, match=r"^seeds range\(0, 1000000000\): 1000000000 seeds, at most "
                                                 r"1000000 \(as simkit.audit and sweep take them\)$"):
        run_on("persist_token_on_fetch", seeds=range(10**9))


def _made():
    return type("Made45", (PersistTokenOnFetch,), {})


def test_a_class_made_by_type_in_a_function_is_said_to_be_no_name_its_module_holds():
    with pytest.raises(AssertionError) as failed:
        assert_ok_on(_made())
    said = str(failed.value)
    assert f"--strategy {os.path.relpath(__file__)}:Made45 --seed 0" in said
    assert said.endswith("Made45 is not what its module holds under that name (made by type() in a function, "
                         "or defined again since): assigned to Made45 at the top level of its module, it "
                         "replays as that line says"), said


class RaisesAt107(Consumer):
    """Raises on one event of ``retry_walkthrough`` alone."""

    def is_replay(self, event, receipts, applied_position):
        if event.position == 107:
            raise ValueError("boom")
        return super().is_replay(event, receipts, applied_position)


def test_a_hook_raising_in_one_of_assert_ok_ons_runs_names_that_run_and_its_replay():
    """It was the consumer's line alone: which scenario and seed of the several raised, no word."""
    with pytest.raises(ConsumerError) as raised:
        assert_ok_on(RaisesAt107, "transient_storm", "retry_walkthrough", seeds=(0, 1))
    line = RaisesAt107.is_replay.__code__.co_firstlineno + 2
    assert str(raised.value).endswith(
        f"raised ValueError: boom in is_replay (test_hostile_round45.py:{line}); "
        f"running retry_walkthrough seed 0: replay with simkit run retry_walkthrough --strategy "
        f"{os.path.relpath(__file__)}:RaisesAt107 --seed 0"), str(raised.value)
