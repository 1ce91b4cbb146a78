"""``simkit audit``: anyone's consumer judged on everything simkit knows how to throw at it.

Three kinds of case, cheapest first, each judged by the independent checker:

1. **bundled** — every bundled scenario, as written (three seeds for a generated one);
2. **sweep** — the generated scenarios under seeded random crashes, pauses, lost replies and lost requests;
3. **explore** — every schedule of up to two faults (two crashes or pauses; or one crash with one lost reply, or
   with one lost request) on the small scripted scenarios.

A case counts only where ``safe`` passes it. With an external sink that has neither idempotency nor
transactions even the full procedure duplicates an effect when a crash or a lost reply falls between the effect
and its receipt (seed 000, "Limits and validation"): exploration there leaves out exactly those two faults (a
crash at ``after_effect``, a lost ``effect`` reply), and every other schedule counts. The first failure is
shrunk (:mod:`simkit.tools.shrink`) to a scripted scenario that ``simkit run`` replays.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cache

from simkit.errors import SimkitError
from simkit.judge.checker import Verdict
from simkit.judge.report import table
from simkit.model import CRASH_POINTS, LOST_OPS, Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import resolve, strategy_name
from simkit.runner import simulate
from simkit.scenario.read import bundled, load

from .explore import describe_kind, explore, failure_kind, fault_free
from .pool import processes
from .shrink import Shrunk, replay_command, scenario_data, shrink, toml_text
from .sweep import MAX_SEEDS

__all__ = ["Audit", "Case", "Failure", "audit", "audit_text", "cases", "failure_toml"]

#: A scripted scenario with at most this many events is explored.
SMALL = 12
#: Exploration bounds: (max_crashes, lost_responses, lost_requests), each at most two faults in all.
BOUNDS = ((2, 0, 0), (1, 1, 0), (1, 0, 1))
#: Seeded faults added to a generated scenario for the sweep.
SWEEP_FAULTS = {"crash": 0.03, "pause": 0.01, "lost_response": 0.02, "lost_request": 0.02}


@dataclass(frozen=True)
class Case:
    """One thing to try: ``kind`` (bundled, sweep, explore), the scenario, the seed, and for an exploration
    its bounds."""

    kind: str
    scenario: Scenario = field(compare=False)
    name: str
    seed: int
    bounds: tuple[int, int, int] | None = None

    @property
    def label(self) -> str:
        where = f"{self.name} seed {self.seed}"
        if self.bounds is None:
            return where
        crashes, replies, requests = self.bounds
        parts = [f"{crashes} crash{'es' if crashes != 1 else ''}"]
        parts += [f"{replies} lost repl{'ies' if replies != 1 else 'y'}"] if replies else []
        parts += [f"{requests} lost request{'s' if requests != 1 else ''}"] if requests else []
        return f"{where}, ≤{' + '.join(parts)}"


@dataclass
class Failure:
    """A case the consumer fails and ``safe`` passes: how (``describe_kind``), the faults that show it, and the
    scenario that reproduces it with them."""

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

    @property
    def ok(self) -> bool:
        return not self.failures

    def rows(self) -> list[tuple[str, str, str]]:
        """(kind, where, how it failed): one row per scenario, bounds and failure, its seeds gathered."""
        groups: dict[tuple, list[int]] = {}
        for f in self.failures:
            groups.setdefault((f.case.kind, f.case.name, f.case.bounds, f.kind), []).append(f.case.seed)
        rows = []
        for (kind, name, bounds, how), seeds in groups.items():
            case = Case(kind, None, name, seeds[0], bounds)
            where = case.label if len(seeds) == 1 else case.label.replace(
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
                "shrunk": self.shrunk.as_dict() if self.shrunk is not None else None}


def _span(seeds: list[int]) -> str:
    """``0-19`` for consecutive seeds, else ``3, 5, 9``."""
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def _seeds(sc: Scenario, n: int) -> list[int]:
    return [sc.seed] if sc.generate is None else [sc.seed + i for i in range(n)]


def _events(sc: Scenario) -> int:
    return len({p for page in sc.pages for p in page["positions"]}) if sc.pages is not None else 0


def cases(seeds: int = 3, sweep_seeds: int = 20) -> list[Case]:
    """Every case of an audit, in the order it runs them."""
    scenarios = {name: load(name) for name in bundled()}
    out = [Case("bundled", sc, name, seed) for name, sc in scenarios.items() for seed in _seeds(sc, seeds)]
    for name, sc in scenarios.items():
        if sc.generate is not None:
            rf = dataclasses.replace(sc.random_faults, **{k: max(getattr(sc.random_faults, k), v)
                                                          for k, v in SWEEP_FAULTS.items()})
            faulty = dataclasses.replace(sc, random_faults=rf)
            out += [Case("sweep", faulty, name, seed) for seed in range(sweep_seeds)]
    for name, sc in scenarios.items():
        if sc.pages is not None and _events(sc) <= SMALL:
            out += [Case("explore", sc, name, sc.seed, b) for b in BOUNDS]
    return out


@cache
def _safe_passes(case: Case) -> bool:
    """Does ``safe`` pass this case? (Cached: ``safe`` is deterministic and audited consumers share it.)"""
    return _try(case, Consumer) is None


def _try(case: Case, cls: type[Consumer], jobs: int = 1) -> Failure | None:
    if case.bounds is None:
        run = simulate(case.scenario, cls, case.seed)
        v = run.verdict
        return None if v.ok else Failure(case, describe_kind(failure_kind(v)), (), run.as_dict(), case.scenario)
    crashes, replies, requests = case.bounds
    excused = case.scenario.sink == "unsafe"
    x = explore(case.scenario, cls, max_crashes=crashes, lost_responses=replies, lost_requests=requests,
                seed=case.seed, jobs=jobs,
                points=tuple(p for p in CRASH_POINTS if not (excused and p == "after_effect")),
                ops=tuple(op for op in LOST_OPS if not (excused and op == "effect")))
    if x.first_violation is None:
        return None
    faults, verdict = x.first_violation
    base = fault_free(case.scenario)            # what explore ran: the scenario without its own faults
    return Failure(case, describe_kind(_kind_of(verdict)), tuple(faults), verdict,
                   dataclasses.replace(base, faults=tuple(faults)))


def _kind_of(verdict: dict) -> tuple:
    """:func:`~simkit.tools.explore.failure_kind` of a ``--json`` verdict object."""
    return failure_kind(Verdict.from_dict(verdict))


def audit(strategy, *, seeds: int = 3, sweep_seeds: int = 20, first_only: bool = False, shrink_first: bool = True,
          jobs: int = 1, progress: bool = False) -> Audit:
    """Judge ``strategy`` on every :func:`cases` case that ``safe`` passes.

    Args:
        strategy: a strategy name, a ``path.py:Class``/``module:Class`` reference, or a Consumer subclass.
        seeds: seeds per generated bundled scenario.
        sweep_seeds: seeds per generated scenario under random faults.
        first_only: stop at the first failure.
        shrink_first: shrink the first failure to a replayable scenario (``Audit.shrunk``).
        jobs: worker processes for each exploration (at most :data:`~simkit.tools.pool.JOBS_PER_CPU` per CPU).
        progress: a tqdm bar on stderr.

    Raises:
        StrategyError: ``strategy`` names no consumer.
        SimkitError: a bound is negative.
    """
    if seeds < 1 or sweep_seeds < 0:
        raise SimkitError(f"audit: seeds must be at least 1 and sweep_seeds at least 0 (got {seeds}, {sweep_seeds})")
    if max(seeds, sweep_seeds) > MAX_SEEDS:
        raise SimkitError(f"audit: seeds and sweep_seeds at most {MAX_SEEDS} (got {seeds}, {sweep_seeds})")
    cls = resolve(strategy) if isinstance(strategy, str) else strategy
    jobs = processes(jobs)                      # noted once here, not at each exploration
    result = Audit(strategy_name(cls), strategy if isinstance(strategy, str) else strategy_name(cls))
    todo = cases(seeds, sweep_seeds)
    from tqdm import tqdm
    with tqdm(todo, disable=not progress, desc=f"audit {result.strategy}", unit="case", leave=False) as bar:
        for case in bar:
            if not _safe_passes(case):
                result.skipped.append(case)
                continue
            result.cases += 1
            failure = None if cls is Consumer else _try(case, cls, jobs)   # safe passed it just now
            if failure is not None:
                result.failures.append(failure)
                if first_only:
                    break
    if result.failures and shrink_first:
        _shrink(result, cls)
    return result


def _shrink(result: Audit, cls: type[Consumer]) -> None:
    """Shrink the first failure; if it cannot be shrunk, keep it whole (``shrink_error`` says why)."""
    first = result.failures[0]
    again = simulate(first.scenario, cls, first.case.seed).verdict      # a replay: the same failure, if deterministic
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
    head = (f"audit {result.strategy}: {'passes' if result.ok else 'FAILS'} "
            f"({len(result.failures)} of {result.cases} cases failed; {len(result.skipped)} skipped, where safe "
            f"itself fails)")
    lines = [head]
    if result.failures:
        lines += ["", table(result.rows(), ("kind", "case", "failure")), ""]
        if result.shrunk is not None:
            a, b = result.shrunk.original, result.shrunk.shrunk
            lines.append(f"first failure shrunk from {a['pages']} pages, {a['events']} events and {a['faults']} "
                         f"faults to {b['pages']}, {b['events']} and {b['faults']}")
        elif result.shrink_error:
            lines.append(f"first failure kept whole: {result.shrink_error}")
        if path:
            seed = failure_data(result).get("seed", result.failures[0].case.seed)
            lines.append(f"wrote {path}: replay with {replay_command(path, result.reference, seed)}")
    return "\n".join(lines)
