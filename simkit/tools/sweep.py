"""Seeded sweeps: many runs per configuration, in parallel,
as a tidy table and a summary with confidence intervals.

A configuration is a strategy and a crash rate (``--crash-rate`` overrides ``[random_faults] crash``); each
runs on seeds ``first_seed .. first_seed + seeds - 1``. Every run is a pure function of (scenario, strategy,
seed, faults), so the table is the same whether it was computed in one process, in ``jobs`` local processes
(:class:`concurrent.futures.ProcessPoolExecutor`) or on a Dask cluster (``dask_address``); rows come back in
configuration and seed order.

The summary gives, per configuration, the share of runs that lost an event and the share that duplicated an
effect, each with a Wilson score interval (Wilson 1927; the interval recommended by Brown, Cai and DasGupta
2001 for binomial proportions, and sound at 0 of n, where the normal approximation collapses to a point).
"""
from __future__ import annotations

import dataclasses
import os
import sys
from contextlib import suppress
from dataclasses import dataclass, field
from importlib.util import find_spec
from math import sqrt
from pathlib import Path
from statistics import NormalDist

from simkit.errors import SimkitError, described, one_or_many, printable, told, whole
from simkit.judge.verdict import FIELDS, count
from simkit.model import Scenario
from simkit.procedure.lives import not_rerunning
from simkit.procedure.strategies import STRATEGIES, strategy_name
from simkit.runner import checked, judged
from simkit.scenario.read import MAX_INT
from simkit.truth.derived import effects_count

from .pool import pool_map, processes

#: Seeds per configuration at most (``--seeds 10**18`` spent forever building its list of tasks).
MAX_SEEDS = 1_000_000
#: Runs per sweep at most, over every configuration (strategies × crash rates): each is a row held in memory,
#: and 50 ``--crash-rate`` flags at a million seeds each built a task list for ever.
MAX_RUNS = 1_000_000


def check_seed(option: str, seed: int) -> None:
    """A seed as the scenario file's ``seed`` key takes it: within :data:`~simkit.scenario.read.MAX_INT` of 0
    (a seed past 2**63 stopped a Parquet table with an OverflowError)."""
    if abs(seed) > MAX_INT:
        raise SimkitError(f"{option} {seed}: must be within {MAX_INT} either side of 0", param=option)


__all__ = ["Sweep", "sweep", "configurations", "wilson", "run_row", "check_out", "COLUMNS",
           "FORMATS", "MAX_SEEDS", "MAX_RUNS"]

#: The columns of the tidy table, one row per run: the run's, ``ok``, each verdict field's declared sweep
#: column (:class:`~simkit.judge.verdict.Declared`), the world's.
COLUMNS = ("scenario", "strategy", "settlement", "store", "crash_rate", "seed", "ok",
           *(f.sweep for f in FIELDS if f.sweep), "events", "faults", "crashes", "fetches", "effects")
#: The file types :meth:`Sweep.write` writes, by extension.
FORMATS = (".csv", ".parquet")
_PARQUET = "writing Parquet needs pyarrow (pip install 'simkit[parquet]'); or use .csv"


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for ``k`` successes in ``n`` trials."""
    if n <= 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (0.0 if k == 0 else max(0.0, center - half), 1.0 if k == n else min(1.0, center + half))


def _with_rate(sc: Scenario, crash_rate: float | None) -> Scenario:
    if crash_rate is None:
        return sc
    return dataclasses.replace(sc, random_faults=dataclasses.replace(sc.random_faults, crash=crash_rate))


def run_row(sc: Scenario, strategy, seed: int, crash_rate: float | None = None,
            label: str | None = None) -> dict:
    """One run as one row of the tidy table (:data:`COLUMNS`); ``label``, if given, names its strategy in the
    row instead of the verdict's name (:func:`configurations`)."""
    from .schedules import strategy_class
    sc = _with_rate(sc, crash_rate)
    run = judged(sc, strategy_class(strategy), seed)      # (sweep() checked sc once)
    v, w = run.verdict, run.world
    return {"scenario": sc.name, "strategy": label or run.strategy,
            "settlement": getattr(sc, "settlement", "fenced"), "store": getattr(sc, "store", "memory"),
            "crash_rate": sc.random_faults.crash, "seed": seed,
            "ok": v.ok, **{f.sweep: (f.sweep_value or count)(f.of(v)) for f in FIELDS if f.sweep},
            "events": len(w.provider.events),
            "faults": len(w.faults.fired), "crashes": w.crashes, "fetches": len(w.provider.log),
            "effects": effects_count(w.sink.effects)}


def _chunk(task) -> list[dict]:
    sc, strategy, crash_rate, seeds, heartbeat, label = task
    rows = []
    for seed in seeds:
        rows.append(run_row(sc, strategy, seed, crash_rate, label))
        _beat(heartbeat)
    return rows


def _beat(heartbeat: str | None) -> None:
    """A run ended: touch ``heartbeat`` (a file of the command's, :class:`~simkit.cli.contained.Stall`), if
    any, from whichever process ran it."""
    if heartbeat is not None:
        with suppress(OSError):
            os.utime(heartbeat)


@dataclass
class Sweep:
    """The outcome of :func:`sweep`: one row per run, and a summary per configuration."""

    scenario: str
    seeds: int
    first_seed: int
    rows: list[dict] = field(default_factory=list)

    def frame(self):
        """The tidy table as a pandas DataFrame."""
        import pandas as pd
        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    def summary(self, confidence: float = 0.95) -> list[dict]:
        """Per (strategy, crash rate), in first-seen order:
        runs, ok, loss and duplication rates with Wilson CIs."""
        groups: dict[tuple, list[dict]] = {}
        for r in self.rows:
            groups.setdefault((r["strategy"], r["crash_rate"]), []).append(r)
        out = []
        for (strategy, rate), rows in groups.items():
            n = len(rows)
            loss = sum(1 for r in rows if r["lost"])
            dup = sum(1 for r in rows if r["duplicated"])
            out.append({
                "strategy": strategy, "crash_rate": rate, "runs": n, "ok": sum(1 for r in rows if r["ok"]),
                "loss_runs": loss, "loss_rate": loss / n, "loss_ci": list(wilson(loss, n, confidence)),
                "dup_runs": dup, "dup_rate": dup / n, "dup_ci": list(wilson(dup, n, confidence)),
                "lost_events": sum(r["lost"] for r in rows),
                "duplicated_events": sum(r["duplicated"] for r in rows),
                "events": sum(r["events"] for r in rows),
            })
        return out

    def write(self, path: str | Path) -> None:
        """Write the tidy table: CSV or Parquet, by the file's extension."""
        path = Path(path)
        check_out(path)
        frame = self.frame()
        if path.suffix.lower() == ".csv":
            frame.to_csv(path, index=False)
        else:
            try:
                frame.to_parquet(path, index=False)
            except ImportError:                   # an engine found but broken
                raise SimkitError(f"path {path}: {_PARQUET}", param="path") from None

    def as_dict(self, out: str | None = None) -> dict:
        """The ``simkit sweep --json`` object."""
        return {"scenario": self.scenario, "seeds": self.seeds, "first_seed": self.first_seed,
                "runs": len(self.rows), "summary": self.summary(), "out": out}


def check_out(path: str | Path) -> None:
    """``path`` names a table :meth:`Sweep.write` can write: a :data:`FORMATS`
    extension (any case), and for Parquet an installed engine; else a one-line
    :class:`SimkitError`. ``simkit sweep --out`` asks before the runs."""
    suffix = Path(path).suffix
    if suffix.lower() not in FORMATS:
        raise SimkitError(f"path {path}: unknown format {suffix or '(no extension)'!r}; use "
                          f"{', '.join(FORMATS)}",
                          param="path")
    if suffix.lower() == ".parquet" and not (find_spec("pyarrow") or find_spec("fastparquet")):
        raise SimkitError(f"path {path}: {_PARQUET}", param="path")


def _answers(address: str, timeout: float) -> None:
    """The scheduler at ``address`` answers an identity request within ``timeout`` seconds, else TimeoutError.
    ``Client(address, timeout=...)`` bounds the connection only: a listener that accepts and never speaks (a
    wrong port, a stuck proxy) kept ``sweep --dask`` waiting for ever."""
    import asyncio

    from distributed.comm import connect

    async def identity():
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity"})
            await comm.read()
        finally:
            comm.abort()

    try:
        asyncio.run(asyncio.wait_for(identity(), timeout))
    except TimeoutError:
        raise TimeoutError(f"no answer within {timeout:g} s") from None


def _dask(tasks, address: str, done, timeout: float):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise SimkitError("dask_address needs dask.distributed: pip install 'simkit[dask]'",
                          param="dask_address") from None
    try:
        _answers(address, timeout)
        client = Client(address, timeout=timeout)
    except Exception as exc:        # noqa: BLE001 -- distributed's: tls:// with no context, ucx:// unbuilt, ...
        raise SimkitError(f"dask_address {address}: cannot connect to the scheduler: {told(exc)}",
                          param="dask_address") from None
    try:
        futures = client.map(_chunk, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        results: list = [None] * len(tasks)
        for f in as_completed(futures):
            results[index[f.key]] = f.result()
            done(results[index[f.key]])
        return results
    finally:
        client.close()


def _check(seeds: int, strategies: tuple, crash_rates: tuple, first_seed: int, jobs: int | None,
           dask_address: str | None) -> None:
    """:func:`sweep`'s arguments against their bounds (``SimkitError`` naming the parameter)."""
    whole("seeds", seeds, 1)
    if seeds > MAX_SEEDS:
        raise SimkitError(f"seeds {seeds}: at most {MAX_SEEDS} per configuration", param="seeds")
    whole("first_seed", first_seed, None)
    check_seed("first_seed", first_seed)
    if abs(last := first_seed + seeds - 1) > MAX_INT:    # said as the last seed: it was named the first one
        raise SimkitError(f"first_seed {first_seed}: the last of {seeds} seeds is {last}; each seed must be "
                          f"within {MAX_INT} either side of 0", param="first_seed")
    for rate in crash_rates:
        if rate is not None and (type(rate) not in (int, float) or not 0.0 <= rate <= 1.0):
            raise SimkitError(f"crash_rates {described(rate)}: must be between 0 and 1", param="crash_rates")
    if jobs is not None:
        whole("jobs", jobs, 1)
    if dask_address is not None and not dask_address.strip():   # '' ran here, as if no address were given
        raise SimkitError(f"dask_address {dask_address!r}: expected a scheduler's address (tcp://host:8786)",
                          param="dask_address")
    if (runs := seeds * len(strategies) * len(crash_rates)) > MAX_RUNS:
        n, k = len(strategies), len(crash_rates)
        raise SimkitError(f"seeds {seeds}: × {n} strateg{'y' if n == 1 else 'ies'} × {k} crash "
                          f"rate{'' if k == 1 else 's'} is {runs} runs; a sweep does at most {MAX_RUNS}",
                          param="seeds")


def configurations(strategies, crash_rates) -> list[tuple[object, float | None, str | None]]:
    """Each configuration of a sweep once, in the order first given: ``(strategy, crash rate, label)``.

    A configuration named twice (``safe`` and ``safe``, or ``simkit.procedure.consumer:Consumer``; rates
    ``0.1`` and ``0.10``, ``0`` and ``-0``) ran twice, and its runs, pure functions of (scenario, strategy,
    seed), counted as twice the trials: a confidence interval narrower than the sweep's. ``label`` names the
    rows of a consumer whose verdict name another consumer of the sweep shares (``a/one.py:MoveOn`` and
    ``b/two.py:MoveOn`` were one row, a loss rate of neither): the reference as given (``module:Class`` for a
    class); ``None`` keeps the verdict's name."""
    from simkit.runner import consumer_class

    from .schedules import strategy_class
    first: dict[type, object] = {}
    for s in strategies:
        first.setdefault(strategy_class(s) if isinstance(s, str) else consumer_class(s), s)
    names = [strategy_name(cls) for cls in first]
    labels: list[str | None] = []
    for (cls, s), name in zip(first.items(), names):
        ref = s if isinstance(s, str) else f"{cls.__module__}:{cls.__qualname__}"
        labels.append(ref if names.count(name) > 1 else None)
    labels = [f"{label} #{i + 1}" if label is not None and labels.count(label) > 1 else label
              for i, label in enumerate(labels)]
    rates = list(dict.fromkeys(None if r is None else r + 0.0 for r in crash_rates))  # -0.0 + 0.0 is 0.0
    return [(s, rate, label) for s, label in zip(first.values(), labels) for rate in rates]


def sweep(scenario: Scenario, strategies=tuple(STRATEGIES), seeds: int = 100, crash_rates=(None,), *,
          first_seed: int = 0, jobs: int | None = None, dask_address: str | None = None,
          dask_timeout: float = 10.0, progress: bool = False, chunk: int | None = None,
          heartbeat: str | None = None) -> Sweep:
    """Run every strategy at every crash rate on ``seeds`` seeds.

    Args:
        scenario: the scenario (generated ones give each seed its own provider; random faults their own
            draws).
        strategies: names, ``path.py:Class`` / ``module:Class`` references, or Consumer subclasses (one
            alone is a list of one).
        seeds: how many seeds per configuration, from ``first_seed``.
        crash_rates: crash probabilities per crash-point pass; ``None`` keeps the scenario's own (one alone
            is a list of one).
        jobs: local worker processes (default: one per CPU; at most :data:`~simkit.tools.pool.JOBS_PER_CPU`
            per CPU and one per task); 1 runs in this process.
        dask_address: a Dask distributed scheduler (``tcp://host:8786``) to run on instead.
        dask_timeout: seconds to wait for the scheduler to answer.
        progress: show a tqdm bar on stderr.
        chunk: seeds per task (default: enough tasks to keep every worker busy).
        heartbeat: a file touched as each run ends (by each chunk as it ends on a Dask cluster), so that
            the command can stop a sweep where no run ends any more (``simkit sweep``, docs/cli.md).

    Raises:
        SimkitError: a bound or rate is out of range, or the Dask scheduler cannot be reached.
    """
    not_rerunning()         # a script's top-level sweep() forks no pool inside each life
    strategies, crash_rates = one_or_many("strategies", strategies, (str, type)), one_or_many(
        "crash_rates", crash_rates, (int, float, type(None)))
    checked(scenario)       # ("retry_walkthrough" was an AttributeError: no name)
    _check(seeds, strategies, crash_rates, first_seed, jobs, dask_address)
    jobs = (os.cpu_count() or 1) if jobs is None else processes(jobs)
    configs = configurations(strategies, crash_rates)
    workers = jobs if dask_address is None else 8
    size = chunk or min(50, max(1, -(-seeds * len(configs) // (4 * workers))))
    beat = None if dask_address is not None else heartbeat      # a path of this machine's
    tasks = [(scenario, s, rate, range(first_seed + a, first_seed + min(seeds, a + size)), beat, label)
             for s, rate, label in configs for a in range(0, seeds, size)]
    from tqdm import tqdm
    bar = tqdm(total=len(configs) * seeds, disable=not progress, file=sys.stderr, unit="run",
               desc=f"sweep {scenario.name}", leave=False)
    def done(rows: list) -> None:
        bar.update(len(rows))
        _beat(heartbeat)
    try:
        chunks = _dask(tasks, dask_address, done, dask_timeout) if dask_address is not None else pool_map(
            _chunk, tasks, jobs, done, chunksize=1)
        result = Sweep(scenario.name, seeds, first_seed)
        for rows in chunks:
            result.rows.extend(rows)
    finally:
        bar.close()
    return result


def summary_table(s: Sweep) -> str:
    """What ``simkit sweep`` prints: one line per configuration."""
    from simkit.judge.report import table
    pct = lambda x: f"{100 * x:.2f}%"
    # a row is named as its --strategy was given when two share a class name: a path's escape or newline
    # coloured the terminal or broke the table, printed as it is
    rows = [(printable(r["strategy"]), f"{r['crash_rate']:g}", str(r["runs"]), str(r["ok"]),
             f"{pct(r['loss_rate'])} [{pct(r['loss_ci'][0])}, {pct(r['loss_ci'][1])}]",
             f"{pct(r['dup_rate'])} [{pct(r['dup_ci'][0])}, {pct(r['dup_ci'][1])}]",
             f"{r['lost_events']} of {r['events']}", str(r["duplicated_events"])) for r in s.summary()]
    head = (f"sweep {s.scenario}: seeds {s.first_seed}..{s.first_seed + s.seeds - 1} per configuration, "
            f"{len(s.rows)} runs\n\n")
    return head + table(rows, ("strategy", "crash rate", "runs", "ok", "runs losing events (95% CI)",
                               "runs duplicating effects (95% CI)", "lost events", "duplicated effects"))
