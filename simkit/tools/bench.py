"""The performance benchmark (``simkit bench``, ``benchmarks/bench.py``).

Every figure is measured in one process run next to its baseline, so ratios hold on a shared, noisy machine:
``simpy_steps_per_s`` is bare SimPy processing timeouts; simkit's throughput is reported against it.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from statistics import median
from typing import Any

import simpy

from simkit.errors import SimkitError
from simkit.judge.checker import check
from simkit.model import default_id
from simkit.procedure.strategies import STRATEGIES
from simkit.runner import simulate
from simkit.scenario.read import load, parse
from simkit.truth.collector import paused
from simkit.world.simulation import World

from .bench_cost import cost_table
from .bench_memory import own_peak_rss, peak_rss_mb

__all__ = ["FULL", "QUICK", "measure", "run", "add_arguments", "table", "checker_scaling", "prefix_overhead",
           "widget_redraw_ms", "notebook_seconds", "explore_metrics", "cost_table", "peak_rss_mb",
           "own_peak_rss", "audit_seconds", "exec_ratio", "MAX_REPEAT"]

FULL = {"simpy_steps": 1_000_000, "events": 200_000, "checker_small": 10_000, "rss_events": 1_000_000,
        "sweep_seeds": 200, "explore_events": 60, "spin": 20_000_000, "prefix_scenario": "gauntlet",
        "redraw_changes": 5, "audit_budget": 60.0, "exec_scenario": "gauntlet"}
QUICK = {"simpy_steps": 20_000, "events": 2_000, "checker_small": 1_000, "rss_events": 5_000,
         "sweep_seeds": 4, "explore_events": 12, "spin": 100_000, "prefix_scenario": "retry_walkthrough",
         "redraw_changes": 2, "audit_budget": 3.0, "exec_scenario": "retry_walkthrough"}


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def simpy_steps_per_s(n: int) -> float:
    """The baseline: bare SimPy, one process yielding ``n`` timeouts."""
    env = simpy.Environment()

    def proc(env):
        for _ in range(n):
            yield env.timeout(1)

    env.process(proc(env))
    dt, _ = _timed(env.run)
    return n / dt


def generated(events: int, faults: bool = False, page_size: int = 100) -> dict:
    """The benchmark's scenario: ``safe``'s happy path, or
    the same with crashes, lost replies and overlaps."""
    data: dict[str, Any] = {"name": f"bench_{events}", "sink": "transactional",
            "generate": {"events": events, "page_size": page_size}, "timing": {"time_limit": 1e12}}
    if faults:
        data["generate"].update(overlap=0.3, lost_fetch=0.01)
        data["random_faults"] = {"crash": 0.001, "lost_response": 0.001, "max_faults": 10**9}
    return data


def events_per_s(events: int, faults: bool = False) -> float:
    """``safe`` end to end, trace and checker included (the run is not kept: each measure starts alone)."""
    sc = parse(generated(events, faults))
    dt, run = _timed(lambda: simulate(sc))
    assert run.verdict.ok, run.verdict
    return events / dt


def ideal_events_per_s(events: int, page_size: int = 100) -> float:
    """The same work with everything but its bare minimum taken away: the ceiling on ``events_per_s``.

    Per event, only what no design keeping per-event ground truth can skip, in plain lists, tuples and dicts:
    draw its behaviour and build its id (the provider), test for a replay, then keep a receipt, an effect, a
    checkpoint write and a trace row (the run; no consumer, no requests, no SimPy), and one pass of a checker
    over those logs. Divided by ``simpy_steps_per_s`` it is the ``ratio`` of a run that keeps ground truth and
    does nothing else: a real run, which also executes seed 000's procedure, its requests and crash points,
    and a full checker, costs more than this per event.
    """
    import random

    def provider():
        rng, poison = random.Random(0), 0.0  # a behaviour drawn per event, at the benchmark's rate of none
        stream = [(default_id(p), p, "poison" if rng.random() < poison else "ok")
                  for p in range(10, 10 * events + 1, 10)]
        return [stream[i:i + page_size] for i in range(0, events, page_size)], {e[0]: e for e in stream}

    def run(pages):
        receipts, id_at, effect_count, receipt_log, effects, writes, seq, now = {}, {}, {}, [], [], [], 0, 0.0
        trace = [[] for _ in range(10)]
        t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 = (column.append for column in trace)
        for page in pages:
            for eid, pos, _behavior in page:
                if eid in receipts:
                    continue
                seq, now = seq + 1, now + 1.0
                effects.append((seq, now, 1, eid))
                effect_count[eid] = effect_count.get(eid, 0) + 1
                receipts[eid], id_at[pos] = "applied", eid
                receipt_log.append((seq, now, 1, eid, "applied"))
                writes.append((seq, now, 1, "commit", "c", pos, 0))
                t0(now), t1(1), t2("commit"), t3(eid), t4(pos), t5("c"), t6(0), t7(pos), t8(0), t9("applied")
        return receipt_log, effects

    def checker(ids, receipt_log, effects):
        first = {}
        for seq, _t, _w, eid in effects:
            first.setdefault(eid, seq)
        since = {eid: max(seq, first[eid]) for seq, _t, _w, eid, _o in receipt_log if eid in first}
        return [eid for eid in ids if eid not in since]

    with paused():
        dt, (pages, ids) = _timed(provider)
        dt_run, logs = _timed(lambda: run(pages))
        dt_check, lost = _timed(lambda: checker(ids, *logs))
    assert not lost
    return events / (dt + dt_run + dt_check)


def in_steps(events: int, measure) -> dict[str, float]:
    """What :func:`~simkit.runner.simulate` does with ``safe`` on the benchmark's scenario, one step at
    a time: ``measure()`` at the ``start``, and after building the world (``provider``, mostly), running it
    (``run``) and checking it (``checker``)."""
    sc = parse(generated(events))
    with paused():
        marks = {"start": measure()}
        world = World(sc, STRATEGIES["safe"], 0)
        marks["provider"] = measure()
        world.run()
        marks["run"] = measure()
        verdict = check(world)
        marks["checker"] = measure()
    assert verdict.ok and world.trace is not None and len(world.trace)
    return marks


def phases(events: int) -> dict[str, float]:
    """Where an ``events_per_s`` event's time goes: µs per event in each step of :func:`in_steps`."""
    marks = in_steps(events, time.perf_counter)
    steps = list(marks)
    return {step: (marks[step] - marks[before]) / events * 1e6 for before, step in zip(steps, steps[1:])}


def checker_scaling(small: int, rounds: int = 5) -> float:
    """Checker time at 10× the events over checker time at ``small`` events (linear ≈ 10). The two sizes are
    checked in turn, the best of ``rounds`` each, so that a slow spell of a shared machine falls on both."""
    with paused():              # as in a run (simkit.truth.collector)
        worlds = [World(parse(generated(n, faults=True)), STRATEGIES["safe"], 0).run()
                  for n in (small, 10 * small)]
        best = [float("inf")] * len(worlds)
        for _ in range(rounds):
            for i, world in enumerate(worlds):
                best[i] = min(best[i], _timed(lambda world=world: check(world))[0])
    return best[1] / best[0]


def explore_metrics(events: int) -> tuple[float, float, int]:
    """Schedules per second of ``explore --max-crashes 1``, and the time per schedule over one plain run. Both
    are the best of several timings taken in turn, so that a slow spell of a shared machine falls on both."""
    from .explore import explore
    sc = parse(generated(events, page_size=5))
    plain, dt = float("inf"), float("inf")
    for _ in range(3):
        plain = min(plain, *(_timed(lambda: simulate(sc))[0] for _ in range(3)))
        t, x = _timed(lambda: explore(sc, "safe", max_crashes=1))
        dt = min(dt, t)
    return x.schedules / dt, (dt / x.schedules) / plain, x.schedules


def prefix_overhead(name: str, fresh: bool = True) -> dict[str, float]:
    """``explore_prefix_overhead``: the time per explored schedule of ``simkit explore NAME --max-crashes 1``,
    prefixes shared by forking (:mod:`simkit.tools.forked`), over the time of one plain run of NAME (the best
    of five, taken before and after); ``explore_scratch_overhead``: the same with every schedule run from
    scratch. ``fresh``: in a fresh process, as the command runs, not in this one, whose heap the other
    measurements filled (a fork copies the page tables of all of it: 1.5 ms a fork after the benchmark's runs,
    0.4 ms in a process that has imported simkit)."""
    if fresh:
        return json.loads(_in_child(f"import json, simkit.tools.bench as b\n"
                                    f"print(json.dumps(b.prefix_overhead({name!r}, fresh=False)))"))
    from .explore import explore
    sc = load(name)
    plain = min(_timed(lambda: simulate(sc))[0] for _ in range(5))
    out = {}
    for key, share in (("explore_prefix_overhead", True), ("explore_scratch_overhead", False)):
        t, x = _timed(lambda share=share: explore(sc, "safe", max_crashes=1, share_prefixes=share))
        out[key] = t / x.schedules
    plain = min(plain, *(_timed(lambda: simulate(sc))[0] for _ in range(5)))
    return {k: v / plain for k, v in out.items()}


def widget_redraw_ms(changes: int) -> float:
    """The explorer widget's median redraw after a control change
    (:func:`simkit.viz.explorer.redraw_ms`), in a fresh child process, as in a learner's kernel:
    not in this one, whose heap the other measurements filled and whose earlier explorers stay
    registered with ipywidgets. An IPython shell runs in the child, so what the widget displays
    is formatted as a kernel formats it (the verdict table as HTML too), not only printed."""
    return float(_in_child("from IPython.core.interactiveshell import InteractiveShell\n"
                           "InteractiveShell.instance()\n"
                           f"import simkit.viz.widgets as w\nprint(w.redraw_ms(changes={changes}))\n"))


def _in_child(code: str) -> str:
    """The last line ``code`` prints, run in a fresh Python process (matplotlib drawing off screen); one that
    fails is one line, its last (``CalledProcessError``'s traceback hid why, under ``ulimit -v`` say)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "MPLBACKEND": "Agg"})
    if out.returncode or not out.stdout.strip():    # a traceback, a library's abort (ulimit -v): one line
        how = (f"killed by {signal.Signals(-out.returncode).name}" if out.returncode < 0
               else f"exit status {out.returncode}")
        said = out.stderr.strip().splitlines() or ["it printed nothing"]
        errors = [line for line in said if re.match(r"Fatal Python error: |[\w.]+(Error|Exception)\b", line)]
        raise SimkitError(f"bench: a measurement's fresh process failed ({how}): {(errors or said)[-1]}")
    return out.stdout.splitlines()[-1]


def notebook_seconds(folder: str | None = None, timeout: int = 1800) -> dict[str, float]:
    """Seconds to execute each notebook of ``notebooks/`` (nbclient, in a fresh kernel each, in the notebook's
    own folder), by file name. Minutes in all: ``--notebooks`` asks for it."""
    import nbformat

    from .notebook_run import executed
    here = Path(folder) if folder is not None else Path(__file__).resolve().parents[2] / "notebooks"
    return {path.name: _timed(lambda path=path: executed(nbformat.read(path, as_version=4), here, timeout))[0]
            for path in sorted(here.glob("*.ipynb"))}


def sweep_scaling(seeds: int) -> float:
    """Sweep throughput with 2 jobs over throughput with 1 job, on the ``default`` scenario."""
    from .sweep import sweep
    sc = load("default")
    one, _ = _timed(lambda: sweep(sc, ("safe",), seeds, jobs=1))
    two, _ = _timed(lambda: sweep(sc, ("safe",), seeds, jobs=2))
    return one / two


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def cpu_scaling(n: int) -> float:
    """The machine's own baseline for ``sweep_scaling``: two pure-Python loops in 2 processes over in 1.

    On a shared machine two virtual cores rarely give twice the work of one; this says what they gave now, and
    ``sweep_efficiency`` (sweep_scaling / cpu_scaling, within one round) what share of it a sweep used."""
    from concurrent.futures import ProcessPoolExecutor
    one, _ = _timed(lambda: [_spin(n), _spin(n)])
    with ProcessPoolExecutor(max_workers=2) as pool:
        two, _ = _timed(lambda: list(pool.map(_spin, (n, n))))
    return one / two


def audit_seconds(budget: float) -> dict[str, float]:
    """``audit_s``: the wall time of an audit of a passing consumer (``safe`` under another name, so that
    nothing is skipped as the reference itself) at ``budget``, on every core, as ``simkit audit`` runs it; and
    ``audit_left_out``, the cases the budget left out (0: the whole audit fitted)."""
    from simkit.procedure.consumer import Consumer
    from simkit.tools.audit import audit

    class Passing(Consumer):
        """``safe``, under its own name."""

    start = time.perf_counter()
    result = audit(Passing, jobs=None, budget=budget, shrink_first=False)
    assert result.ok, result.rows()
    return {"audit_s": time.perf_counter() - start, "audit_left_out": len(result.left_out)}


def exec_ratio(name: str) -> float | None:
    """``exec_ratio``: the best wall time of a run of ``name`` by the reference consumer in Python without
    simkit (``examples/consumers/python/run``: a process per worker life, docs/protocol.md) over that of
    in-process ``safe`` on the same run; ``None`` outside a checkout, where the examples are not."""
    command = Path(__file__).resolve().parents[2] / "examples" / "consumers" / "python" / "run"
    if not command.exists():
        return None
    from simkit.procedure.strategies import resolve
    sc, external = load(name), resolve(f"exec:{command}")
    times = {cls: min(_timed(lambda cls=cls: simulate(sc, cls))[0] for _ in range(3))
             for cls in (STRATEGIES["safe"], external)}
    return times[external] / times[STRATEGIES["safe"]]


def _round(sizes: dict) -> dict:
    """One round of every timed figure, each next to its own baseline."""
    base = simpy_steps_per_s(sizes["simpy_steps"])
    eps = events_per_s(sizes["events"])
    eps_faults = events_per_s(sizes["events"], faults=True)
    ideal = ideal_events_per_s(sizes["events"])
    sched_per_s, overhead, schedules = explore_metrics(sizes["explore_events"])
    sweep, cpu = sweep_scaling(sizes["sweep_seeds"]), cpu_scaling(sizes["spin"])
    return {"simpy_steps_per_s": base, "events_per_s": eps, "events_per_s_faults": eps_faults,
            "ratio": eps / base, "faults_ratio": eps_faults / eps, "ratio_ceiling": ideal / base,
            "explore_schedules_per_s": sched_per_s, "explore_schedules": schedules,
            "explore_overhead": overhead,
            "sweep_scaling": sweep, "cpu_scaling": cpu, "sweep_efficiency": sweep / cpu,
            "checker_scaling": checker_scaling(sizes["checker_small"]),
            **prefix_overhead(sizes["prefix_scenario"]),
            "widget_redraw_ms": widget_redraw_ms(sizes["redraw_changes"])}


DIGITS = {"simpy_steps_per_s": 0, "events_per_s": 0, "events_per_s_faults": 0, "ratio": 3, "faults_ratio": 2,
          "ratio_ceiling": 3, "explore_schedules_per_s": 1, "explore_schedules": 0, "explore_overhead": 2,
          "sweep_scaling": 2, "cpu_scaling": 2, "sweep_efficiency": 2, "checker_scaling": 2,
          "explore_prefix_overhead": 2, "explore_scratch_overhead": 2, "widget_redraw_ms": 1}


def measure(sizes: dict = FULL, repeat: int = 1, notebooks: bool = False) -> dict:
    """Every figure of the benchmark: the median over ``repeat`` rounds (each ratio is taken within its round,
    then the median of the ratios), so one noisy moment on a shared machine does not decide a figure. With
    ``notebooks``, also ``notebook_seconds`` (each notebook's execution) and ``slowest_notebook``."""
    rounds = [_round(sizes) for _ in range(repeat)]
    m = {k: round(median(r[k] for r in rounds), digits or None) for k, digits in DIGITS.items()}
    rss = peak_rss_mb(sizes["rss_events"])
    m.update({"peak_rss_mb_1m": round(rss.pop("peak"), 1), "ideal_rss_mb_1m": round(rss.pop("ideal"), 1),
              "rss_mb_1m_after": {k: round(v, 1) for k, v in rss.items()},
              "us_per_event": {k: round(v, 2) for k, v in phases(sizes["events"]).items()},
              "events": sizes["events"], "repeat": repeat,
              "cost": cost_table(seeds=2 if sizes is QUICK else 5)})
    m.update({k: round(v, 1) for k, v in audit_seconds(sizes["audit_budget"]).items()})
    ratio = exec_ratio(sizes["exec_scenario"])
    m["exec_ratio"] = None if ratio is None else round(ratio, 1)
    if notebooks:
        seconds = notebook_seconds()
        m["notebook_seconds"] = {k: round(v, 1) for k, v in seconds.items()}
        m["slowest_notebook"] = max(seconds, key=seconds.__getitem__) if seconds else None
    return m


def table(m: dict) -> str:
    lines = [f"{'measure':28} value"]
    for key, value in m.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        if key != "cost":
            lines.append(f"{key:28} {value}")
    lines.append("")
    lines.append(f"{'strategy':24} {'fetches/event':>14} {'replayed/crash':>15} {'writes/page':>12}")
    for r in m["cost"]:
        lines.append(f"{r['strategy']:24} {r['fetches_per_event']:14.3f} {r['replayed_per_crash']:15.2f}"
                     f" {r['checkpoint_writes_per_page']:12.2f}")
    return "\n".join(lines)


#: ``--repeat``'s bound: rounds of fixed sizes, so the benchmark's worst case is this many rounds
#: (docs/cli.md)
MAX_REPEAT = 10


def run(quick: bool = False, repeat: int | None = None, as_json: bool = False,
        notebooks: bool = False) -> int:
    """Measure and print; ``simkit bench`` and ``benchmarks/bench.py``."""
    repeat = (1 if quick else 3) if repeat is None else repeat
    if repeat < 1:
        raise SimkitError(f"bench: repeat must be at least 1, got {repeat}", param="repeat")
    if repeat > MAX_REPEAT:                     # the benchmark's time is its rounds: bounded by this bound
        raise SimkitError(f"bench: repeat must be at most {MAX_REPEAT}, got {repeat} (a round of the full "
                          "benchmark takes minutes)", param="repeat")
    m = measure(QUICK if quick else FULL, repeat, notebooks)
    print(json.dumps(m) if as_json else table(m))
    return 0


def add_arguments(p) -> None:
    """The options of ``simkit bench`` and ``benchmarks/bench.py``."""
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--quick", action="store_true", help="tiny sizes: check that the benchmark works")
    p.add_argument("--repeat", type=int, default=None, metavar="N",
                   help=f"rounds to take the median of, 1-{MAX_REPEAT} (default 3; 1 with --quick)")
    p.add_argument("--notebooks", action="store_true",
                   help="also time executing each notebook (minutes): notebook_seconds, slowest_notebook")
