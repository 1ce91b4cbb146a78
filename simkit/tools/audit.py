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

import dataclasses
import os
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from functools import partial

from simkit.errors import ConsumerError, SimkitError, described, printable, whole
from simkit.judge.report import table
from simkit.model import CRASH_POINTS, LOST_OPS, Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.lives import not_rerunning
from simkit.procedure.strategies import strategy_name
from simkit.runner import consumer_class, judged, simulate

from .audit_cases import BOUNDS, SMALL, Case, cases, twins
from .exploration import Exploration
from .explore import Split, begin, below, describe_kind, failing, failure_kind
from .pool import processes, served
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
    left_out: list[Case] = field(default_factory=list)  # cases the budget left out (or first_only stopped)
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
        """The ``simkit audit --json`` object; ``shrink_error`` says why the file holds the failure whole."""
        return {"strategy": self.strategy, "ok": self.ok, "cases": self.cases,
                "skipped": [c.kind + ": " + c.label for c in self.skipped],
                "failures": [{"kind": f.case.kind, "case": f.case.label, "failure": f.kind,
                              "faults": [x.as_dict() for x in f.faults], "verdict": f.verdict}
                             for f in self.failures],
                "left_out": [c.kind + ": " + c.label for c in self.left_out],
                "stalled": [c.kind + ": " + c.label for c in self.stalled], "budget": self.budget,
                "shrunk": self.shrunk.as_dict() if self.shrunk is not None else None,
                "shrink_error": self.shrink_error}


def _span(seeds: list[int]) -> str:
    """``0-19`` for consecutive seeds, else ``3, 5, 9``."""
    consecutive = seeds == list(range(seeds[0], seeds[0] + len(seeds)))
    return f"{seeds[0]}-{seeds[-1]}" if consecutive else ", ".join(map(str, seeds))


#: Does ``safe`` pass this case? Kept across audits in this process: ``safe`` is deterministic and audited
#: consumers share it.
_SAFE_PASSES: dict[Case, bool] = {}


def _try(case: Case, cls: type[Consumer]):
    """The consumer on ``case``: ``("done", failure or None, stalled)``, stalled if an exploration was skipped
    because the fault-free run stalled (its schedules would each run to the time limit); or, for an
    exploration with subtrees left to run (:func:`~simkit.tools.explore.begin`), ``("split", split)``, the
    split without its consumer."""
    if case.bounds is None:
        run = judged(case.scenario, cls, case.seed)      # (a case is simkit's own: checked once, as made)
        v = run.verdict
        return "done", (None if v.ok else Failure(case, describe_kind(failure_kind(v)), (), run.as_dict(),
                                                  case.scenario)), False
    crashes, replies, requests = case.bounds
    excused, ops = case.scenario.sink == "unsafe", case.ops or LOST_OPS
    split = begin(case.scenario, cls, max_crashes=crashes, lost_responses=replies, lost_requests=requests,
                  seed=case.seed, keep_faults=case.keep_faults, stop_if_failing=True,
                  points=tuple(p for p in CRASH_POINTS if not (excused and p == "after_effect")),
                  ops=ops, reply_ops=tuple(op for op in ops if not (excused and op == "effect")))
    first = split.result.first_violation
    if first is not None and not first[0]:      # the fault-free run fails: no schedule with a fault was run
        stalled = not first[1]["completed"] and first[1]["halted"] is None     # Halt("") halts too
        return "done", _explored(case, split.result), stalled
    # a one-fault violation is the first whatever the subtrees hold (they have two faults or more)
    if split.roots and first is None:
        if len(split.roots) >= _SPLIT_FROM:
            return "split", dataclasses.replace(split, ref=None)
        split.result.merge(below(split, split.roots))
    return "done", _explored(case, split.result), False


def _explored(case: Case, x: Exploration) -> Failure | None:
    """The failure of an exploration of ``case``: its first violation, if any."""
    if x.first_violation is None:
        return None
    faults, verdict = x.first_violation
    return Failure(case, describe_kind(failure_kind(verdict)), tuple(faults), verdict,
                   failing(case.scenario, faults, case.keep_faults))


def _work(under_way: tuple[type[Consumer], list[Case]], task):
    """A task of the audit ``under_way`` (consumer, cases: bound by :func:`_outcomes` and inherited by its
    forked processes, so a test's class need not pickle; a global, it was another thread's audit's, whose
    consumer a pool forked meanwhile judged: round 61), in any process. ``("case", who, i)``: :func:`_try` of
    case ``i`` by the audited consumer (``who`` 0) or by ``safe`` (1). ``("below", who, i, split, roots)``:
    the exploration of those subtrees of the case's split (:func:`~simkit.tools.explore.below`)."""
    (cls, todo), (kind, who, i, *rest) = under_way, task
    consumer = Consumer if who else cls
    try:
        if kind == "below":
            split, roots = rest
            return below(dataclasses.replace(split, ref=consumer), roots)
        return _try(todo[i], consumer)
    except ConsumerError as e:              # which case: what the user runs again
        raise ConsumerError(f"{e}; audit case {todo[i].kind}: {todo[i].label}") from None


def _outcomes(cls, todo: list[Case], jobs: int, deadline: float | None):
    """``(i, "pass" | "fail" | "skipped", failure, stalled)`` of each case as it is judged, until the
    deadline: in this process when ``jobs`` is 1 and there is no deadline, else in ``jobs`` forked processes
    (:func:`~simkit.tools.pool.served`), killed at the deadline or when the caller stops asking. Cases are
    handed out cheapest first; an exploration's subtrees, in groups, go to every process as soon as its
    one-fault schedules are judged, ahead of the cases after it, so that no process idles at the end while
    another runs the dearest exploration alone. A case the consumer fails is then tried by ``safe`` (next in
    line) unless its answer is known. A case that runs exactly what an earlier one runs
    (:func:`~simkit.tools.audit_cases.twins`) is not run: it is judged as that one is, right after it."""
    same = twins(todo)                              # a case that runs what an earlier one runs is not run
    later = {j for js in same.values() for j in js}
    queue: deque[tuple] = deque(("case", 0, i) for i in range(len(todo)) if i not in later)
    splits: dict[tuple[int, int], list] = {}       # (who, i) -> [split, groups still out]
    held: dict[int, tuple[Failure | None, bool]] = {}   # the consumer's failures waiting for safe's answer
    for task, out in served(partial(_work, (cls, todo)), queue, jobs, deadline, "audit"):
        kind, who, i = task[:3]
        if kind == "below":
            entry = splits[who, i]
            entry[0].result.merge(out)
            entry[1] -= 1
            if entry[1]:
                continue
            failure, stalled = _explored(todo[i], splits.pop((who, i))[0].result), False
        elif out[0] == "split":
            groups = _groups(out[1].roots, jobs)
            splits[who, i] = [out[1], len(groups)]
            queue.extendleft(("below", who, i, _part(out[1], g), g) for g in reversed(groups))
            continue
        else:
            _done, failure, stalled = out
        if who:
            for j in (i, *same.get(i, ())):
                _SAFE_PASSES[todo[j]] = failure is None
            judged, passes = held.pop(i), failure is None
        elif failure is not None and cls is not Consumer and todo[i] not in _SAFE_PASSES:
            held[i] = (failure, stalled)
            queue.appendleft(("case", 1, i))
            continue
        else:
            judged, passes = (failure, stalled), cls is not Consumer and _SAFE_PASSES.get(todo[i], False)
        yield (i, *_status(judged, passes))
        for j in same.get(i, ()):
            yield (j, *_status(_twin(judged, todo[j]), passes))


def _part(split: Split, roots: list) -> Split:
    """What a task below ``roots`` needs of ``split``: not the other roots, nor their extensions."""
    return dataclasses.replace(split, roots=[], known={k: split.known[k] for k, _fault in roots
                                                       if k in split.known})


def _twin(judged: tuple[Failure | None, bool], case: Case) -> tuple[Failure | None, bool]:
    """What a case judged (its failure, and whether it stalled) as its twin ``case`` would have judged it
    (:func:`~simkit.tools.audit_cases.twins`): the same runs, the failure named after the twin's scenario and
    reproduced by it."""
    failure, stalled = judged
    if failure is None:
        return judged
    scenario = (case.scenario if case.bounds is None
                else failing(case.scenario, failure.faults, case.keep_faults))
    verdict = {**failure.verdict, "scenario": case.scenario.name}
    return Failure(case, failure.kind, failure.faults, verdict, scenario), stalled


#: Groups an exploration's subtrees are dealt into, per worker process: small enough that the last to finish
#: leaves little of one process idle, large enough that each is worth its message (at least
#: :data:`_ROOTS_PER_GROUP` subtrees). An exploration with fewer than :data:`_SPLIT_FROM` subtrees (a second
#: or less) runs whole where it began.
_GROUPS_PER_JOB, _ROOTS_PER_GROUP, _SPLIT_FROM = 8, 4, 16


def _groups(roots: list, jobs: int) -> list[list]:
    """``roots`` dealt round-robin into groups for ``jobs`` processes (:data:`_GROUPS_PER_JOB`): the early
    roots, with the longest suffixes, spread over all of them."""
    n = max(1, min(_GROUPS_PER_JOB * jobs, len(roots) // _ROOTS_PER_GROUP))
    return [roots[k::n] for k in range(n)]


def _status(judged: tuple[Failure | None, bool], safe_passes: bool) -> tuple[str, Failure | None, bool]:
    """``(status, failure, stalled)`` of a case the consumer passed or failed (``judged``), given whether
    ``safe`` passes it (asked only when the consumer fails it)."""
    failure, stalled = judged
    if failure is None:
        return "pass", None, stalled
    return ("fail", failure, stalled) if safe_passes else ("skipped", None, stalled)


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
        SimkitError: a count that is no int, or out of its bounds (naming its parameter).
    """
    not_rerunning()         # a script's top-level audit() is not run again inside each life
    whole("seeds", seeds, 1, MAX_SEEDS)
    whole("sweep_seeds", sweep_seeds, 0, MAX_SEEDS)
    if budget is not None and (type(budget) not in (int, float) or not 0 < budget <= 10**6):
        raise SimkitError(f"budget: seconds from more than 0 to 10^6 (got {described(budget)})",
                          param="budget")
    if jobs is not None and (type(jobs) is not int or jobs < 1):
        raise SimkitError(f"jobs: a whole number of processes, at least 1 (got {described(jobs)})",
                          param="jobs")
    cls = consumer_class(strategy)
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
    if todo and not done:       # it said "passes (0 of 0 cases failed)", exit 0, having judged nothing
        raise SimkitError(f"budget: {budget:g} s ran out before a case was judged: give more", param="budget")
    _tally(result, todo, done)
    if first_only:
        del result.failures[1:]
    if result.failures and shrink_first:
        _shrink(result, cls)
    return result


def _tally(result: Audit, todo: list[Case], done: dict[int, tuple]) -> None:
    """Each case into ``result``: left out, skipped, or judged (a pass or a failure), and stalled."""
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
            replay = printable(replay_command(path, result.reference, seed))
            lines.append(f"wrote {printable(path)}: replay with {replay}")
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
