"""``simkit live``: seed 000's procedure in real worker processes on SQLite, killed with SIGKILL (issue 9).

The worker runs the very same consumer classes as the simulation. A synchronous driver
(:class:`simkit.live.worker.Driver`) executes the requests they yield against SQLite files in one run folder,
and real time replaces simulated time (one simulated unit is a millisecond):

- ``store.db``: the durable store (:class:`~simkit.store.sqlite.SQLiteStore`; the transactional sink's effects
  commit in its transactions);
- ``provider.db``: the provider's fetch counters and its log of every response. The pages themselves are a
  pure function of scenario and seed, so every process serves the same stream;
- ``sink.db``: the handler's state and decisions, and for an external sink its effects and the external
  service's request log, each written in the sink's own transaction, outside the store's.

The provider, sink and external service are the simulation's own classes with their containers swapped for
durable ones (:mod:`simkit.store.durable`). A supervisor (:mod:`simkit.live.supervisor`) forks the worker,
kills it with SIGKILL at seeded random real instants (or, with ``at``, when the worker reports reaching a
named crash point) and restarts it; when the workers report caught up, this module judges the databases with
:func:`simkit.judge.checker.check` and ``PRAGMA integrity_check``.
No other fault is injected: no lost, late or crossed replies, no pauses; the scenario's ``[[faults]]`` and
``[random_faults]`` belong to the simulation.

This module owns the run as a whole: its databases created, the supervisor started, the databases read back
and judged, the summary line.
"""
from __future__ import annotations

import math
import os
import shutil
import signal
import sqlite3
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from simkit.errors import ScenarioError, SimkitError, Terminated, a_or_an, described, told, whole
from simkit.judge.checker import Verdict, check
from simkit.judge.report import run_summary
from simkit.model import CRASH_POINTS, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import strategy_name
from simkit.runner import checked as read_again
from simkit.runner import consumer_class
from simkit.scenario.checks import MAX_EVENTS, MAX_INT, too_many_pages
from simkit.scenario.read import parse
from simkit.scenario.write import scenario_data
from simkit.store.sqlite import SQLiteStore, connect
from simkit.truth.collector import paused
from simkit.truth.derived import effects_count
from simkit.truth.ground import GroundTruth, LedgerTruth, View
from simkit.world import provider as providers

from .supervisor import Supervisor
from .worker import FILES, LONGEST_SLEEP, Harness, LiveClock

__all__ = ["LiveRun", "MAX_SECONDS", "integrity", "live", "live_details", "live_summary", "stretched"]

#: The longest ``timeout`` or ``max_delay`` a live run takes: 11.6 days, well inside what select() and sleep()
#: accept (the longest a worker sleeps for one latency too).
MAX_SECONDS = LONGEST_SLEEP


@dataclass
class LiveRun:
    """The outcome of a live run: the verdict on the databases, the kills, and ``PRAGMA integrity_check``."""

    scenario: str
    strategy: str
    seed: int
    verdict: Verdict
    kills: int
    integrity: str
    mode: str
    starts: int
    seconds: float
    summary: dict
    #: the ground truth read back from the databases, that the verdict judged
    world: GroundTruth | None = field(repr=False, default=None)
    #: workers that died without being killed by the supervisor: (worker, exit status); each was restarted
    deaths: list = field(default_factory=list)
    #: the kills asked for (``--kills``): more than :attr:`kills` when the workers caught up first
    asked: int = 0
    #: the run reached its ``timeout`` before every worker caught up or halted (``completed`` is false)
    cut_off: bool = False

    def as_dict(self) -> dict:
        """The ``--json`` object of a run (docs/verdict.md, "The ``--json`` object", every key: ``stopped``
        is null, no progress guard runs here; ``crashes`` are the kills and the unplanned deaths), plus
        ``kills``, ``unplanned_deaths``, ``integrity``, ``mode``, ``starts`` and ``cut_off`` (docs/cli.md,
        "simkit live")."""
        world = self.world
        assert world is not None, "a live run's ground truth is read back before it is returned"
        return {"scenario": self.scenario, "strategy": self.strategy, "seed": self.seed, **self.summary,
                **self.verdict.as_dict(), "stopped": None,
                "final_checkpoint": world.store.checkpoint.as_dict(),
                "crashes": self.kills + len(self.deaths), "fetches": len(world.provider.log),
                "effects": effects_count(world.sink.effects),
                "kills": self.kills, "unplanned_deaths": len(self.deaths), "integrity": self.integrity,
                "mode": self.mode, "starts": self.starts, "cut_off": self.cut_off}


def _read_back(folder: Path, scenario: Scenario, provider, t0: float, halts, completed: bool) -> GroundTruth:
    """The run's ground truth, read back from its databases before they
    close: the store's logs as the store answers them, the provider's, sink's
    and service's read into plain lists, the settlement ledger's history."""
    clock = LiveClock(t0)
    h = Harness(folder, scenario, provider, clock, SQLiteStore.open(folder / "store.db", clock))
    try:
        p, s, svc = h.ground_truth()
        truth = GroundTruth.build(provider=p, store=h.store, sink=s, service=svc, halts=halts,
                                  completed=completed, scenario=scenario, settlement=scenario.settlement)
        history = LedgerTruth(View(list(h.store.operations.history)))
        return replace(truth, store=replace(truth.store, operations=history))
    finally:
        h.close()


def _judged(where: Path, scenario: Scenario, provider, t0: float, halts, completed: bool):
    """The run's ground truth read back (:func:`_read_back`), its verdict and its :func:`integrity`; one line
    if the databases are gone or are no databases any more (removed or overwritten by the consumer?)."""
    try:
        with paused():
            world = _read_back(where, scenario, provider, t0, halts, completed)
            verdict = check(world)
        return world, verdict, integrity(where)
    except (OSError, sqlite3.Error) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else told(exc)
        raise SimkitError(f"live {scenario.name}: the run's databases in {where} cannot be read back: "
                          f"{problem} (did the consumer remove or overwrite them?)") from None


def integrity(folder: Path) -> str:
    """``PRAGMA integrity_check`` of every database of the run: ``ok``, or what is wrong where."""
    problems = []
    for name in FILES:
        db = connect(folder / name)
        try:
            result = "; ".join(r[0] for r in db.execute("PRAGMA integrity_check"))
        finally:
            db.close()
        if result != "ok":
            problems.append(f"{name}: {result}")
    return "; ".join(problems) or "ok"


def _unheld(where: Path) -> None:
    """Refuse a folder that holds a database of a run (or its ``-wal``, ``-shm``, ``-journal``), or a link in
    its place: a dangling ``store.db`` link was followed, and the run's store written where it pointed."""
    held = [n for name in FILES for n in (name, f"{name}-wal", f"{name}-shm", f"{name}-journal")
            if os.path.lexists(where / n)]
    if link := next((n for n in held if (where / n).is_symlink()), None):
        raise SimkitError(f"folder {where}: {link} is a symbolic link: neither written through nor replaced; "
                          "remove the link", param="folder")
    if held:
        raise SimkitError(f"folder {where}: already holds a live run's databases", param="folder")


def stretched(scenario: Scenario, events: int) -> Scenario:
    """``scenario``, a ``[generate]`` one, with a stream of ``events`` (``simkit live --events``), read again
    as its file would be: held to the file's bounds (``[generate] events``, and the pages its ``empty_pages``
    makes), and every key that names a position of the stream within it (``[initial] receipts = [400]`` over a
    stream cut to 10 events was a KeyError traceback from the workers' databases, exit 1)."""
    if scenario.generate is None or events < 1:
        raise SimkitError(f"events {events}: needs a [generate] scenario and a positive count",
                          param="events")
    if events > MAX_EVENTS:
        raise SimkitError(f"events {events}: at most {MAX_EVENTS}, as [generate] events", param="events")
    if (problem := too_many_pages(events, scenario.generate["empty_pages"])) is not None:
        raise SimkitError(f"events {events}: generate.empty_pages {problem}", param="events")
    data = scenario_data(replace(scenario, generate={**scenario.generate, "events": events}))
    try:
        return parse(data, source=scenario.source)
    except ScenarioError as exc:                # "NAME.toml: key 'initial.receipts': position 400 is ..."
        raise SimkitError(f"events {events}: {exc}", param="events") from None


def live(scenario: Scenario, strategy: type[Consumer] | str = Consumer, kills: int = 30,
         seed: int | None = None, max_delay: float | None = None, at: tuple[str, ...] = (),
         folder: str | os.PathLike | None = None, timeout: float = 600.0,
         scratch: str | os.PathLike | None = None) -> LiveRun:
    """Run ``strategy`` on ``scenario`` in real worker
    processes on SQLite, kill them ``kills`` times, and judge.

    Args:
        strategy: a Consumer subclass, or a strategy's name as :func:`~simkit.simulate` takes it.
        kills: SIGKILLs to deliver (fewer if the workers catch up first).
        seed: the provider's seed and the kill schedule's (default: the scenario's).
        max_delay: random mode, the longest a worker runs before its kill, in seconds (default: twice the
            median time per page barrier, measured as the run goes).
        at: point mode, the crash points (docs/vocabulary.md, "Crash points") to kill at instead of random
            instants.
        folder: where the database files go (default: a temporary folder, removed afterwards).
        timeout: seconds before the run is cut off (``completed`` is then false).
        scratch: where the temporary folder goes (default: the system's); ``simkit live`` gives a folder of
            its own, which it removes however the run ends (the run's process may be killed).

    Raises:
        SimkitError: bad arguments, named by ``param`` (a StrategyError for the strategy), or a ``folder``
            that cannot be created (one line).
    """
    strategy, at = _arguments(strategy, kills, seed, max_delay, at, timeout, folder)
    scenario = read_again(scenario)     # an edited one: as simulate, explore, shrink and sweep read it
    seed = scenario.seed if seed is None else seed
    provider = providers.build(scenario, seed)
    with ExitStack() as stack, _terminate_as_interrupt():
        try:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="simkit-live-", dir=scratch))
        except OSError as exc:          # a scratch folder missing, a file, full: a traceback
            problem = exc.strerror or exc
            raise SimkitError(f"scratch {scratch}: cannot make a temporary folder in it: {problem}",
                              param="scratch") from None
        where = Path(folder) if folder is not None else Path(tmp)
        made = not where.exists()
        try:
            where.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SimkitError(f"folder {where}: cannot create it: {exc.strerror or exc}",
                              param="folder") from None
        stack.enter_context(_owned(where))
        _unheld(where)
        began = time.monotonic()
        t0 = time.monotonic()
        _create(where, scenario, provider, LiveClock(t0), "folder" if folder is not None else None, made)
        sup = Supervisor(where, scenario, provider, strategy, seed, kills, max_delay, tuple(at), timeout, t0)
        completed = sup.run()
        world, verdict, checked = _judged(where, scenario, provider, t0, sup.halts, completed)
        return LiveRun(scenario.name, strategy_name(strategy), seed, verdict, sup.kills, checked,
                       "points" if at else "random", sup.starts, time.monotonic() - began,
                       {"settlement": scenario.settlement}, world, sup.deaths, kills, not completed)


def _arguments(strategy, kills, seed, max_delay, at, timeout,
               folder) -> tuple[type[Consumer], tuple[str, ...]]:
    """What ``simkit live`` checks of its flags, checked of :func:`live`'s arguments and said naming the
    parameter (docs/cli.md): a strategy by name as :func:`~simkit.simulate` takes it, a whole ``kills``, a
    ``seed`` as ``--seed`` (a str, a float or 2**100 ran), seconds that are numbers, ``at`` a sequence of
    crash points (one str was read a character at a time), a ``folder`` that is a path. The strategy as a
    class, and ``at`` as a tuple."""
    strategy = consumer_class(strategy)
    whole("kills", kills, 0)
    if seed is not None and (type(seed) is not int or abs(seed) > MAX_INT):
        raise SimkitError(f"seed {described(seed)}: must be an integer within {MAX_INT} either side of 0",
                          param="seed")
    if max_delay is not None:
        _seconds("max_delay", max_delay)
    _seconds("timeout", timeout)
    if isinstance(at, (str, bytes)) or not isinstance(at, (tuple, list)):
        raise SimkitError(f"at {described(at)}: must be a tuple of crash points' names", param="at")
    for point in at:
        if point not in CRASH_POINTS:
            said = point if isinstance(point, str) else described(point)
            raise SimkitError(f"at {said}: not a crash point (one of {', '.join(CRASH_POINTS)})", param="at")
    path = os.fspath(folder) if isinstance(folder, os.PathLike) else folder
    if folder is not None and not isinstance(path, str):
        raise SimkitError(f"folder {described(folder)}: must be a path (a str or a pathlib.Path)",
                          param="folder")
    if folder is not None and not str(folder).strip():      # Path("") is the current folder
        raise SimkitError(f"folder {str(folder)!r}: names no folder", param="folder")
    return strategy, tuple(at)


def _seconds(param: str, value) -> None:
    """``max_delay`` or ``timeout``: a number of seconds, finite, positive and at most :data:`MAX_SECONDS`
    (the selector's and the clock's limits are near 2**31 ms)."""
    if type(value) not in (int, float):
        raise SimkitError(f"{param} {described(value)}: must be a number of seconds, not "
                          f"{a_or_an(type(value).__name__)}", param=param)
    if not math.isfinite(value):
        raise SimkitError(f"{param} {value}: must be a finite number", param=param)
    if param == "max_delay" and value <= 0:
        raise SimkitError(f"max_delay {value}: must be positive", param=param)
    if param == "max_delay" and value > MAX_SECONDS:
        raise SimkitError(f"max_delay {value}: must be at most {MAX_SECONDS} seconds", param=param)
    if not 0 < value <= MAX_SECONDS:
        raise SimkitError(f"{param} {value}: must be positive and at most {MAX_SECONDS} seconds", param=param)


@contextmanager
def _owned(where: Path):
    """``where`` held by this run alone (an exclusive ``flock`` on the folder, released when the run's
    processes end, however): two runs started at once on one ``--dir`` both found it empty, and the one whose
    databases failed to be made removed the other's."""
    try:
        fd = os.open(where, os.O_RDONLY)
    except OSError as exc:
        raise SimkitError(f"folder {where}: cannot open it: {exc.strerror or exc}", param="folder") from None
    try:
        try:
            import fcntl  # POSIX; live runs its workers by fork anyway
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SimkitError(f"folder {where}: another live run is using it", param="folder") from None
        except (OSError, ImportError):          # a file system without locks: as before, unguarded
            pass
        yield
    finally:
        os.close(fd)


def _create(where: Path, scenario: Scenario, provider, clock: LiveClock, param: str | None,
            made: bool) -> None:
    """The run's fresh databases; if the disk is full or the folder unwritable,
    none of them is left behind (nor the folder, if ``made`` for the run), and
    the error is one line (it was a traceback from inside SQLite)."""
    try:
        Harness.create(where, scenario, provider, clock).close()
    except (OSError, sqlite3.Error) as exc:
        for name in FILES:
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    (where / f"{name}{suffix}").unlink(missing_ok=True)
                except OSError:
                    pass
        if made:
            shutil.rmtree(where, ignore_errors=True)    # made for this run: nothing else is in it
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else told(exc)
        raise SimkitError(f"{'folder ' if param else 'live: '}{where}: cannot create the run's databases: "
                          f"{problem}",
                          param=param) from None


@contextmanager
def _terminate_as_interrupt():
    """SIGTERM and SIGHUP stop a live run the way Ctrl-C does:
    :class:`~simkit.errors.Terminated` (a KeyboardInterrupt) unwinds it, the workers are
    killed and the temporary folder removed (SIGTERM's default action left 17 MB of databases
    behind and printed nothing). Outside the main thread, signals stay as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, _frame):
        raise Terminated(signum)

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def live_details(run: LiveRun) -> str:
    """What the kills and the databases say about a live run:
    the line ``simkit live`` adds to a run's summary."""
    how = "at random instants" if run.mode == "random" else "at named crash points"
    deaths = (f", {len(run.deaths)} unplanned deaths ("
              + ", ".join(f"worker {w}: status {code}" for w, code in run.deaths[:4])
              + (", …" if len(run.deaths) > 4 else "") + ")") if run.deaths else ""
    # a run cut off at its timeout said "the workers caught up first" of the kills it had no time for
    why = "" if run.cut_off else (" (the workers caught up first"
                                  + (": the pass named was never reached)" if run.mode == "points" else ")"))
    short = "" if run.kills >= run.asked else f" of {run.asked} asked{why}"
    return (f"  live: {run.kills} SIGKILLs{short} {how}{deaths}, {run.starts} worker starts, "
            f"{run.seconds:.1f} s{' (cut off at the timeout)' if run.cut_off else ''}   "
            f"integrity_check: {run.integrity}")


def live_summary(run: LiveRun) -> str:
    """``simkit run``'s summary, and what the kills and the databases say (:func:`live_details`)."""
    return run_summary(run) + "\n" + live_details(run)
