"""``simkit audit``: anyone's consumer judged on everything simkit knows how to throw at it, within a budget.

The cases (:mod:`simkit.tools.audit_cases`) run cheapest first, in as many processes as the machine has cores,
each judged by the independent checker. A case counts only where ``safe`` passes it (asked only when the
consumer fails it). With an external sink that has neither idempotency nor transactions even the full
procedure duplicates an effect when a crash or a lost reply falls between the effect and its receipt (seed
000, "Limits and validation"): exploration there leaves out exactly those two faults (a crash at
``after_effect``, a lost ``effect`` reply), and every other schedule counts. What the budget leaves out is
said, never passed over in silence. The first failure is shrunk (:mod:`simkit.tools.shrink`) to a scripted
scenario that ``simkit run`` replays.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cache
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkProcess
from typing import cast

from simkit.errors import SimkitError
from simkit.judge.report import table
from simkit.model import CRASH_POINTS, LOST_OPS, Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import resolve, strategy_name
from simkit.runner import simulate

from .audit_cases import BOUNDS, SMALL, Case, cases
from .explore import describe_kind, explore, failing, failure_kind, fault_free
from .pool import processes, terminated, worker_start
from .shrink import Shrunk, replay_command, scenario_data, shrink, toml_text
from .sweep import MAX_SEEDS

__all__ = ["BOUNDS", "BUDGET", "SMALL", "Audit", "Case", "Failure", "audit", "audit_text", "cases",
           "failure_toml"]

#: ``simkit audit``'s default budget, in seconds of wall time.
BUDGET = 60.0


@dataclass
class Failure:
    """A case the consumer fails and ``safe`` passes: how (``describe_kind``), the faults that show it, and
    the scenario that reproduces it with them."""

    case: Case
    kind: str
    faults: tuple[Fault, ...]
    verdict: dict
    scenario: Scenario = field(repr=False)


@dataclass
class Audit:
    """The outcome of :func:`audit`."""

    strategy: str
    reference: str
    cases: int = 0
    skipped: list[Case] = field(default_factory=list)       # cases safe itself fails
    failures: list[Failure] = field(default_factory=list)
    shrunk: Shrunk | None = None
    shrink_error: str | None = None
    # cases the budget left out (or first_only stopped)
    left_out: list[Case] = field(default_factory=list)
    stalled: list[Case] = field(default_factory=list)       # explorations skipped: the fault-free run stalled
    budget: float | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def rows(self) -> list[tuple[str, str, str]]:
        """(kind, where, how it failed): one row per scenario, bounds and failure, its seeds gathered."""
        groups: dict[tuple, list[Case]] = {}
        for f in self.failures:
            c = f.case
            groups.setdefault((c.kind, c.name, c.bounds, c.ops, c.keep_faults, f.kind), []).append(c)
        rows = []
        for (kind, *_where, how), group in groups.items():
            seeds = [c.seed for c in group]
            where = group[0].label if len(seeds) == 1 else group[0].label.replace(
                f"seed {seeds[0]}", f"{len(seeds)} seeds ({_span(seeds)})")
            rows.append((kind, where, how))
        return rows

    def as_dict(self) -> dict:
        """The ``simkit audit --json`` object."""
        return {"strategy": self.strategy, "ok": self.ok, "cases": self.cases,
                "skipped": [c.kind + ": " + c.label for c in self.skipped],
                "failures": [{"kind": f.case.kind, "case": f.case.label, "failure": f.kind,
                              "faults": [x.as_dict() for x in f.faults], "verdict": f.verdict}
                             for f in self.failures],
                "left_out": [c.kind + ": " + c.label for c in self.left_out],
                "stalled": [c.kind + ": " + c.label for c in self.stalled], "budget": self.budget,
                "shrunk": self.shrunk.as_dict() if self.shrunk is not None else None}


def _span(seeds: list[int]) -> str:
    """``0-19`` for consecutive seeds, else ``3, 5, 9``."""
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


@cache
def _safe_passes(case: Case) -> bool:
    """Does ``safe`` pass this case? (Cached: ``safe`` is deterministic and audited consumers share it.)"""
    return _try(case, Consumer)[0] is None


def _try(case: Case, cls: type[Consumer]) -> tuple[Failure | None, bool]:
    """The consumer's failure of ``case``, if any, and whether an exploration was skipped because the
    fault-free run stalled (its schedules would each run to the time limit)."""
    if case.bounds is None:
        run = simulate(case.scenario, cls, case.seed)
        v = run.verdict
        return (None if v.ok else Failure(case, describe_kind(failure_kind(v)), (), run.as_dict(),
                                          case.scenario),
                False)
    # what explore runs: the scenario without its faults
    base = fault_free(case.scenario, case.keep_faults)
    first = simulate(base, cls, case.seed)
    if not first.verdict.ok:
        stalled = not first.verdict.completed and not first.verdict.halted
        return Failure(case, describe_kind(failure_kind(first.verdict)), (), first.as_dict(), base), stalled
    crashes, replies, requests = case.bounds
    excused = case.scenario.sink == "unsafe"
    x = explore(case.scenario, cls, max_crashes=crashes, lost_responses=replies, lost_requests=requests,
                seed=case.seed, keep_faults=case.keep_faults,
                points=tuple(p for p in CRASH_POINTS if not (excused and p == "after_effect")),
                ops=tuple(op for op in case.ops or LOST_OPS if not (excused and op == "effect")))
    if x.first_violation is None:
        return None, False
    faults, verdict = x.first_violation
    return Failure(case, describe_kind(failure_kind(verdict)), tuple(faults), verdict,
                   failing(case.scenario, faults, case.keep_faults)), False


# The consumer and the cases of the audit under way, inherited by its forked worker processes (a consumer
# class defined in a test or a notebook cell need not pickle).
_UNDER_WAY: tuple[type[Consumer], list[Case]] | None = None


def _judge(i: int) -> tuple[int, str, Failure | None, bool]:
    """Case ``i`` of the audit under way: ``(i, "pass" | "fail" | "skipped", failure, stalled)``."""
    assert _UNDER_WAY is not None, "judged only inside _outcomes"
    cls, todo = _UNDER_WAY
    failure, stalled = _try(todo[i], cls)
    if failure is None:
        return i, "pass", None, stalled
    if cls is not Consumer and _safe_passes(todo[i]):
        return i, "fail", failure, stalled
    return i, "skipped", None, stalled


def _outcomes(cls, todo: list[Case], jobs: int, deadline: float | None):
    """Each case's :func:`_judge` outcome as it comes, until the deadline: in this process when ``jobs`` is 1
    and there is no deadline, else in ``jobs`` forked processes, killed at the deadline or when the caller
    stops asking."""
    global _UNDER_WAY
    _UNDER_WAY = (cls, todo)
    try:
        if jobs == 1 and deadline is None:
            yield from map(_judge, range(len(todo)))
        else:
            with terminated():              # SIGTERM and SIGHUP end the audit, and with it every worker
                yield from _forked(len(todo), jobs, deadline)
    finally:
        _UNDER_WAY = None


def _forked(n: int, jobs: int, deadline: float | None):
    """:func:`_judge` of cases ``0 … n-1`` in ``jobs`` forked processes, each handed the next case as soon as
    it answers (so the cheapest run first); stops at the deadline, and kills every process when done."""
    ctx = multiprocessing.get_context("fork")
    workers: list[tuple[ForkProcess, Connection]] = []
    for _ in range(jobs):
        mine, theirs = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(theirs, os.getpid()), daemon=True)
        process.start()
        theirs.close()
        workers.append((process, mine))
    upcoming = iter(range(n))
    busy = []
    try:
        for _process, conn in workers:
            i = next(upcoming, None)
            if i is not None:
                conn.send(i)
                busy.append(conn)
        while busy:
            left = None if deadline is None else deadline - time.monotonic()
            # wait() answers with some of the connections it was given
            ready = cast("list[Connection]", wait(busy, timeout=left)) if left is None or left > 0 else []
            if not ready:
                return
            for conn in ready:
                try:
                    out = conn.recv()
                except EOFError:
                    raise SimkitError(
                        "audit: a worker process died (did the consumer end its own process?)"
                    ) from None
                if isinstance(out, BaseException):
                    raise out
                yield out
                i = next(upcoming, None)
                if i is None:
                    busy.remove(conn)
                else:
                    conn.send(i)
    finally:
        for process, conn in workers:
            with suppress(ProcessLookupError):
                assert process.pid is not None                  # started above
                # the worker and what it forked (explore's prefixes)
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()                                  # (were it killed before it led its own group)
            process.join()
            conn.close()


def _serve(conn, parent: int) -> None:
    """A worker process of :func:`_forked`, leading its own process group (killed whole when the audit is
    done) and dying with the audit (:func:`~simkit.tools.pool.worker_start`): judge each case index it is
    sent, answer with the outcome (or the exception, as a one-line :class:`SimkitError` if it does not
    pickle)."""
    os.setpgid(0, 0)
    worker_start(parent)
    while True:
        i = conn.recv()
        out: tuple[int, str, Failure | None, bool] | Exception
        try:
            out = _judge(i)
        except Exception as exc:        # a one-line consumer error, sent to the caller to raise
            out = exc
        try:
            conn.send(out)
        except Exception:
            conn.send(SimkitError(str(out)))


def audit(strategy, *, seeds: int = 3, sweep_seeds: int = 20, first_only: bool = False,
          shrink_first: bool = True,
          jobs: int | None = 1, budget: float | None = None, progress: bool = False) -> Audit:
    """Judge ``strategy`` on every :func:`~simkit.tools.audit_cases.cases` case that ``safe`` passes.

    Args:
        strategy: a strategy name, a ``path.py:Class``/``module:Class`` reference, or a Consumer subclass.
        seeds: seeds per generated bundled scenario.
        sweep_seeds: seeds per generated scenario under random faults.
        first_only: stop at the first failure.
        shrink_first: shrink the first failure to a replayable scenario (``Audit.shrunk``).
        jobs: worker processes running cases (``None``: one per core; at most
            :data:`~simkit.tools.pool.JOBS_PER_CPU` per CPU). One, with no budget, runs in this process.
        budget: seconds of wall time; cases not judged by then are ``Audit.left_out`` (``None``: no limit).
        progress: a tqdm bar on stderr.

    Raises:
        StrategyError: ``strategy`` names no consumer.
        SimkitError: a bound is negative.
    """
    if seeds < 1 or sweep_seeds < 0:
        raise SimkitError(f"audit: seeds must be at least 1 and sweep_seeds at least 0 (got {seeds}, "
                          f"{sweep_seeds})")
    if max(seeds, sweep_seeds) > MAX_SEEDS:
        raise SimkitError(f"audit: seeds and sweep_seeds at most {MAX_SEEDS} (got {seeds}, {sweep_seeds})")
    if budget is not None and not 0 < budget <= 10**6:
        raise SimkitError(f"budget: seconds from more than 0 to 10^6 (got {budget})")
    cls = resolve(strategy) if isinstance(strategy, str) else strategy
    result = Audit(strategy_name(cls), strategy if isinstance(strategy, str) else strategy_name(cls),
                   budget=budget)
    todo = cases(seeds, sweep_seeds)
    jobs = processes(os.cpu_count() or 1 if jobs is None else jobs, len(todo))
    deadline = None if budget is None else time.monotonic() + budget
    done: dict[int, tuple] = {}
    from tqdm import tqdm
    with tqdm(total=len(todo), disable=not progress, desc=f"audit {result.strategy}", unit="case",
              leave=False) as bar:
        for i, status, failure, stalled in _outcomes(cls, todo, jobs, deadline):
            done[i] = (status, failure, stalled)
            bar.update()
            if deadline is not None:
                bar.set_postfix_str(f"budget {max(0.0, deadline - time.monotonic()):.0f} s left")
            if first_only and status == "fail":
                break
    for i, case in enumerate(todo):
        if i not in done:
            result.left_out.append(case)
            continue
        status, failure, stalled = done[i]
        if stalled:
            result.stalled.append(case)
        if status == "skipped":
            result.skipped.append(case)
            continue
        result.cases += 1
        if failure is not None:
            result.failures.append(failure)
    if first_only:
        del result.failures[1:]
    if result.failures and shrink_first:
        _shrink(result, cls)
    return result


def _shrink(result: Audit, cls: type[Consumer]) -> None:
    """Shrink the first failure; if it cannot be shrunk, keep it whole (``shrink_error`` says why)."""
    first = result.failures[0]
    # a replay: the same failure, if deterministic
    again = simulate(first.scenario, cls, first.case.seed).verdict
    if (kind := describe_kind(failure_kind(again))) != first.kind:
        result.shrink_error = f"its replay gives {kind}, not {first.kind}: the consumer is not deterministic"
        return
    try:
        result.shrunk = shrink(first.scenario, cls, first.case.seed)
        result.shrunk.reference = result.reference
    except SimkitError as exc:
        result.shrink_error = str(exc)


def failure_data(result: Audit) -> dict:
    """The scenario file of the first failure: shrunk if it could be, else as it failed."""
    if result.shrunk is not None:
        return result.shrunk.data
    first = result.failures[0]
    data = scenario_data(first.scenario)
    data["seed"] = first.case.seed
    return data


def failure_toml(result: Audit, path: str) -> str:
    """The first failure as a scenario file that ``simkit run`` replays from ``path``."""
    data = failure_data(result)
    seed = data.get("seed", result.failures[0].case.seed)
    replay = replay_command(path, result.reference, seed)
    return toml_text(data, f"The first failure simkit audit found for {result.strategy} "
                           f"({result.failures[0].case.kind}: {result.failures[0].case.label}).\n"
                           f"Replay: {replay}\nExpected failure: {result.failures[0].kind}")


def audit_text(result: Audit, path: str | None = None) -> str:
    """What ``simkit audit`` prints: a verdict line, a table of failures, the replay line."""
    head = (f"audit {result.strategy}: {'passes' if result.ok else 'FAILS'} ({len(result.failures)} of "
            f"{result.cases} cases failed; {len(result.skipped)} skipped, where safe itself fails)")
    lines = [head] + _left_out(result)
    if result.failures:
        lines += ["", table(result.rows(), ("kind", "case", "failure")), ""]
        if result.shrunk is not None:
            a, b = result.shrunk.original, result.shrunk.shrunk
            lines.append(f"first failure shrunk from {a['pages']} pages, {a['events']} events and "
                         f"{a['faults']} faults to {b['pages']}, {b['events']} and {b['faults']}")
        elif result.shrink_error:
            lines.append(f"first failure kept whole: {result.shrink_error}")
        if path:
            seed = failure_data(result).get("seed", result.failures[0].case.seed)
            lines.append(f"wrote {path}: replay with {replay_command(path, result.reference, seed)}")
    return "\n".join(lines)


def _left_out(result: Audit) -> list[str]:
    """What the audit did not judge, by kind: what the budget left out, explorations a stalled run skipped."""
    lines = []
    if result.left_out:
        kinds = Counter(c.kind for c in result.left_out)
        why = "the first failure" if result.budget is None else f"the budget of {result.budget:g} s"
        lines.append(f"not judged: {len(result.left_out)} cases "
                     f"({', '.join(f'{n} {k}' for k, n in kinds.items())})"
                     f", left out by {why}; the dearest come last")
    if result.stalled:
        lines.append(f"schedules skipped: the fault-free run stalled in {len(result.stalled)} explorations "
                     f"({', '.join(sorted({c.name for c in result.stalled}))})")
    return lines
