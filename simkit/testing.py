"""simkit in a consumer author's own test suite: judge your consumer with pytest instead of shelling out.

::

    # test_my_consumer.py
    from simkit.testing import assert_ok_on, assert_passes_audit
    from my_consumer import MyConsumer

    def test_my_consumer_passes_the_audit():
        assert_passes_audit(MyConsumer, budget=30)

    def test_my_consumer_on_the_walkthroughs():
        assert_ok_on(MyConsumer, "retry_walkthrough", "quarantine_boundary")

A failure raises ``AssertionError`` whose message is what ``simkit audit``
(or ``simkit compare``) prints: the verdict table, then the ``simkit run``
line that replays the first failure from the scenario file written for it.

It is also a pytest plugin: ``pytest_plugins = ["simkit.testing"]`` in a ``conftest.py`` adds the fixture
``simkit_audit`` (:func:`assert_passes_audit` writing its failure file into the test's ``tmp_path``) and the
option ``--simkit-budget SECONDS`` (the audit's budget for every test that uses the fixture).
"""
from __future__ import annotations

import inspect
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from simkit.errors import ConsumerError, SimkitError, described
from simkit.judge.report import table, verdict_row
from simkit.model import Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import at_qualname, resolve, strategy_ref
from simkit.runner import Run, simulate
from simkit.scenario.read import load
from simkit.scenario.write import scenario_data
from simkit.tools.audit import Audit, audit, audit_text, failure_toml
from simkit.tools.scenario_toml import file_stem, replay_command, toml_text
from simkit.tools.sweep import MAX_SEEDS
from simkit.tools.writing import refusal, write_text

__all__ = ["assert_ok_on", "assert_passes_audit", "pytest_addoption", "run_on", "simkit_audit"]

#: The audit budget, in seconds of wall time, when a test names none: a test suite's scale, not ``simkit
#: audit``'s.
BUDGET = 30.0


def _consumer(consumer) -> type[Consumer]:
    return resolve(consumer) if isinstance(consumer, str) else consumer


def _reference(consumer) -> str:
    """How ``simkit run`` names ``consumer`` from anywhere: as given when it is a string, else
    ``path/to/file.py:Class`` for a class defined in a file (a test module is often not importable by its
    module name from the shell); a class defined in a function as it would be at its module's top level, and
    one no file defines (a notebook cell's) as ``FILE.py:Class``: :func:`_unnamed` says so under the line."""
    if isinstance(consumer, str):
        return consumer
    ref = strategy_ref(consumer)
    if ref.split(":")[0] in ("simkit", "", "exec") or ref == getattr(consumer, "name", None):
        return ref
    source = _source(consumer)
    if source is None:
        return f"FILE.py:{consumer.__name__}" if ref.startswith("__main__:") else ref
    path = Path(source).resolve()
    try:
        path = path.relative_to(Path.cwd())
    except ValueError:
        pass
    return f"{path}:{consumer.__qualname__.rpartition('.<locals>.')[2]}"


def _source(consumer) -> str | None:
    """The ``.py`` file that defines ``consumer``, or ``None`` (a notebook cell or an interactive session,
    where ``inspect`` raises ``OSError``: it was that traceback instead of the failure's message)."""
    try:
        source = inspect.getsourcefile(consumer)
    except (TypeError, OSError):
        return None
    return source if source is not None and source.endswith(".py") and os.path.isfile(source) else None


def _unnamed(consumer) -> str:
    """The line under a replay line whose consumer no command line can find as it stands (``""`` for one it
    can): a class defined inside a function, made by ``type()`` where its module does not hold it, or in no
    file at all."""
    if isinstance(consumer, str):
        return ""
    ref, name = _reference(consumer), consumer.__name__
    if ref.startswith("FILE.py:"):
        return (f"\n{name} is defined in no file (a notebook cell or an interactive session), which no "
                "command line can read: saved in one, it replays as that line says, FILE.py that file's path")
    if "<locals>" in consumer.__qualname__ and ref != strategy_ref(consumer):
        inside = consumer.__qualname__.rpartition(".<locals>.")[0].replace(".<locals>", "")
        return (f"\n{name} is defined inside {inside}(), where no command line finds it: defined at the top "
                "level of its module, it replays as that line says")
    module = sys.modules.get(consumer.__module__)
    held = module is None or at_qualname(vars(module), consumer.__qualname__) is consumer
    if ".py:" in ref and not held:
        return (f"\n{name} is not what its module holds under that name (made by type() in a function, or "
                f"defined again since): assigned to {consumer.__qualname__} at the top level of its module, "
                "it replays as that line says")
    return ""


def assert_passes_audit(consumer, *, budget: float | None = BUDGET, seeds: int = 1, sweep_seeds: int = 5,
                        first_only: bool = False, jobs: int | None = 1,
                        out: str | Path | None = None) -> Audit:
    """Judge ``consumer`` as ``simkit audit`` does (:func:`simkit.audit`); return the :class:`~simkit.Audit`
    when it passes.

    Args:
        consumer: a Consumer subclass, or a strategy name / ``path.py:Class`` / ``module:Class`` reference.
        budget: seconds of wall time; the cheapest cases run first, and cases left when it is spent are not
            judged (``None``: every case, which takes minutes).
        seeds: seeds per bundled scenario.
        sweep_seeds: seeds per generated scenario under random faults.
        first_only: stop at the first failing case (the quickest way to a red test).
        jobs: worker processes.
        out: where to write the first failure as a scenario file (default: a new temporary folder).

    Raises:
        AssertionError: the consumer fails a case ``safe`` passes; the message is the audit's verdict table
            and the ``simkit run`` line that replays the first failure from ``out``.
    """
    __tracebackhide__ = True            # pytest shows the test's line and this message, not simkit's source
    if out is not None:
        _writable(out)                  # before minutes of audit
    result = audit(_consumer(consumer), seeds=seeds, sweep_seeds=sweep_seeds, first_only=first_only,
                   jobs=jobs, budget=budget)
    if result.ok:
        return result
    result = replace(result, reference=_reference(consumer))
    if out is None:
        path = Path(tempfile.mkdtemp(prefix="simkit-audit-")) / f"{file_stem(result.strategy)}.toml"
    else:
        path = Path(out)
    write_text("out", path, failure_toml(result, str(path)))     # whole or not at all
    raise AssertionError("\n" + audit_text(result, str(path)) + _unnamed(consumer))


def _writable(out) -> None:
    """``out`` as a file :func:`assert_passes_audit` may write its failure to, as ``simkit audit --out`` takes
    one (docs/cli.md, "Exit status"): a path, not a folder, in a folder that exists, and neither a symbolic
    link (it was written through, replacing whatever file the link names) nor a FIFO, socket or device (a
    FIFO no one reads held the test for ever). One line naming ``out``."""
    if not isinstance(out, (str, os.PathLike)) or not isinstance(os.fspath(out), str):
        raise SimkitError(f"out {described(out)}: must be a path (a str or a pathlib.Path) of a .toml file",
                          param="out")
    try:
        problem = refusal(Path(out))      # as every writer of the command line refuses one
    except OSError as exc:                # a name too long for the system, a loop of links
        problem = f"cannot write it: {exc.strerror or exc}"
    if problem is None:
        return
    raise SimkitError(f"out {out}: {problem}", param="out")


def _runs(consumer, scenarios, seeds, settlement) -> list[tuple[str, Scenario | None, Run]]:
    """(how ``simkit run`` names the scenario, the :class:`~simkit.Scenario` given, if one was, the run) for
    each scenario and seed."""
    cls = _consumer(consumer)
    if seeds is not None and (isinstance(seeds, (str, bytes)) or not isinstance(seeds, (tuple, list, range))):
        raise SimkitError(f"seeds {described(seeds)}: must be a tuple of seeds (seeds=(3,) for one)",
                          param="seeds")      # an int was a TypeError: 'int' object is not iterable
    if seeds is not None and not len(seeds):        # assert_ok_on(buggy, seeds=()) passed, judging nothing
        raise SimkitError(f"seeds {described(seeds)}: names no seed, so nothing would be run: give one at "
                          "least, or None for each scenario's own", param="seeds")
    if seeds is not None and len(seeds) > MAX_SEEDS:     # range(10**9): days of runs, each Run kept
        raise SimkitError(f"seeds {described(seeds)}: {len(seeds)} seeds, at most {MAX_SEEDS} (as "
                          "simkit.audit and sweep take them)", param="seeds")
    runs = []
    for given in scenarios or ("retry_walkthrough",):
        scenario = given if isinstance(given, Scenario) else load(given)
        made = given if isinstance(given, Scenario) else None
        target = scenario.name if made is not None else str(given)
        for seed in seeds if seeds is not None else (None,):
            try:
                runs.append((target, made, simulate(scenario, cls, seed, settlement=settlement)))
            except ConsumerError as exc:    # which of the runs raised, and how to see it again
                replay = replay_command(_replayable(target, made), _reference(consumer), seed, settlement)
                shown = scenario.seed if seed is None else seed
                raise ConsumerError(f"{exc}; running {target} seed {shown}: replay with {replay}") from exc
    return runs


def run_on(consumer, *scenarios: str | Path | Scenario, seeds: tuple[int, ...] | None = None,
           settlement: str | None = None) -> list[Run]:
    """``consumer`` run on each scenario (a bundled name, a file, or a :class:`~simkit.Scenario`; default
    ``retry_walkthrough``), at the scenario's own seed or at each of ``seeds``; the runs in that order."""
    return [run for _, _, run in _runs(consumer, scenarios, seeds, settlement)]


def assert_ok_on(consumer, *scenarios: str | Path | Scenario, seeds: tuple[int, ...] | None = None,
                 settlement: str | None = None) -> list[Run]:
    """:func:`run_on`, and every verdict ``ok``; return the runs.

    Raises:
        AssertionError: some run is not ok; the message is the verdict table of every run and a ``simkit run``
            line for each one that failed.
    """
    __tracebackhide__ = True
    runs = _runs(consumer, scenarios, seeds, settlement)
    where: dict[tuple[str, int], str] = {}      # once a scenario: an edited one is written once, not a seed
    failed = []
    for target, given, r in runs:
        if not r.verdict.ok:
            if (key := (target, id(given))) not in where:
                where[key] = _replayable(target, given)
            failed.append((where[key], r))
    if not failed:
        return [r for _, _, r in runs]
    rows = [(target, str(r.seed), *verdict_row(r)[1:]) for target, _, r in runs]
    ref = _reference(consumer)                  # (read from the source file: once, not once a failed run)
    lines = [f"{len(failed)} of {len(runs)} runs of {ref} are not ok", "",
             table(rows, ("scenario", "seed", "ok", "lost", "duplicated", "regressions", "invariants broken",
                          "halted")), ""]
    lines += [f"replay: {replay_command(target, ref, r.seed, settlement)}"
              for target, r in failed]
    raise AssertionError("\n" + "\n".join(lines) + _unnamed(consumer))


def _replayable(target: str, scenario: Scenario | None) -> str:
    """How ``simkit run`` finds the scenario run as ``target``: ``target`` itself when it was given by name or
    file (``scenario`` None); for a :class:`Scenario` given, its bundled name or its file while they hold it
    as it is, else a scenario file written for it (one parsed or edited in Python: its name was replayed as
    another scenario, the bundled one it was edited from, or as none)."""
    if scenario is None:
        return target
    for ref in (scenario.name, scenario.source):
        try:
            if load(ref) == scenario:
                return ref
        except SimkitError:
            pass
    path = Path(tempfile.mkdtemp(prefix="simkit-scenario-")) / f"{file_stem(scenario.name)}.toml"
    text = toml_text(scenario_data(scenario), f"{scenario.name}, as simkit.testing ran it")
    write_text("scenario", path, text)         # whole or not at all
    return str(path)


# -- the pytest plugin: pytest_plugins = ["simkit.testing"] --------------------------------------------------
def _seconds(text: str) -> float:
    """``--simkit-budget``'s value: seconds, as the audit's ``budget`` takes them (pytest's usage error, not a
    traceback from the first test that audits)."""
    import argparse
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 10**6:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds from more than 0 to 10^6")
    return seconds


def pytest_addoption(parser) -> None:
    """The plugin's option ``--simkit-budget SECONDS``: the budget of every :func:`simkit_audit` that names
    none."""
    parser.getgroup("simkit").addoption(
        "--simkit-budget", type=_seconds, default=None, metavar="SECONDS",
        help=f"seconds of wall time for each simkit_audit (default {BUDGET:g})")


def simkit_audit(request, tmp_path) -> Callable[..., Audit]:
    """:func:`assert_passes_audit`, its failure file written into the test's ``tmp_path`` and its budget
    ``--simkit-budget`` unless the call names one."""
    budget = request.config.getoption("--simkit-budget", default=None)

    def judged(consumer, **options) -> Audit:
        options.setdefault("budget", budget if budget is not None else BUDGET)
        __tracebackhide__ = True
        options.setdefault("out", tmp_path / "simkit-audit-failure.toml")
        return assert_passes_audit(consumer, **options)

    return judged


try:  # a fixture where pytest is installed; the functions above need no pytest
    import pytest
except ImportError:                     # pragma: no cover
    pass
else:
    simkit_audit = pytest.fixture(simkit_audit)
