"""The step-through's run: one run with every crash-point pass noted against the trace, the crash "crash here"
adds after any row, the rerun with it and the events whose fate changes."""
from __future__ import annotations

from dataclasses import dataclass, field

from simkit.judge.checker import check, event_fates
from simkit.model import Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.runner import Run, simulate
from simkit.scenario.read import load
from simkit.world.faults import FaultPlan
from simkit.world.simulation import World

from .inputs import EVENT_POINTS, crash_arg
from .inputs import strategy_class as _strategy
from .inputs import strategy_name as _name
from .instant import instant_state, trace_row

__all__ = ["Stepped", "crash_after", "crash_rerun", "fate_changes", "fault_arg", "instant_note",
           "stepped_run"]


class _Passes(FaultPlan):
    """The world's fault plan, noting how many trace rows were written before each crash-point pass: where on
    the trace a crash at that pass would strike."""

    def __init__(self, world: World, faults, random_faults, seed: int):
        super().__init__(faults, random_faults, seed)
        self.world: World | None = world       # None once the run is over (no cycle)
        self.rows_before: list[int] = []

    def at_point(self, worker, point, position):
        n = len(self.passes)
        fault = super().at_point(worker, point, position)
        if len(self.passes) > n:
            self.rows_before.append(len(self.world.trace))
        return fault


@dataclass
class Stepped:
    """One run to step through: the run, its input, and every crash-point pass as (trace rows written before
    it, the crash that would strike there)."""

    run: Run
    scenario: Scenario
    strategy: type[Consumer]
    faults: tuple[Fault, ...]
    passes: list[tuple[int, Fault]] = field(default_factory=list)


def stepped_run(scenario: Scenario | str = "retry_walkthrough", strategy: str | type[Consumer] = "safe",
                seed: int | None = None, faults: tuple[Fault, ...] = ()) -> Stepped:
    """Run ``strategy`` on ``scenario`` (a bundled name or a :class:`~simkit.Scenario`), noting where each
    crash point is passed: the same run, row for row, as :func:`~simkit.simulate` gives."""
    sc = load(scenario) if isinstance(scenario, str) else scenario
    cls, seed = _strategy(strategy), sc.seed if seed is None else seed
    world = World(sc, cls, seed, tuple(faults))
    plan = world.faults = _Passes(world, tuple(sc.faults) + tuple(faults), sc.random_faults, seed)
    try:
        world.run()
    finally:
        plan.world = None                       # no cycle: the world is freed with the run
    run = Run(sc.name, _name(strategy), seed, check(world), world)
    passes = [(rows, Fault("crash", point, position, n, worker))
              for rows, (worker, point, position, n) in zip(plan.rows_before, plan.passes)]
    return Stepped(run, sc, cls, tuple(faults), passes)


def crash_after(stepped: Stepped, row: int) -> Fault | None:
    """The crash at the first crash-point pass after trace row ``row``: what "crash here" adds; ``None`` when
    no crash point is passed after it (:class:`~.instant.RowError` for a row the trace lacks)."""
    row = trace_row(stepped.run, row)
    return next((fault for rows, fault in stepped.passes if rows > row), None)


def crash_rerun(stepped: Stepped, row: int) -> tuple[Fault | None, Run | None]:
    """The run again with a crash at the first pass after
    ``row`` (:func:`crash_after`), besides its own faults."""
    fault = crash_after(stepped, row)
    if fault is None:
        return None, None
    return fault, simulate(stepped.scenario, stepped.strategy, stepped.run.seed, stepped.faults + (fault,))


def fate_changes(before: Run, after: Run):
    """The events whose fate (:func:`simkit.judge.checker.event_fates`)
    differs between two runs of one input."""
    import pandas as pd

    a, b = event_fates(before.world, before.verdict), event_fates(after.world, after.verdict)
    events = before.world.provider.events
    rows = [{"event_id": e, "position": events[e].position, "before": a[e], "after": b.get(e, "-")}
            for e in sorted(a, key=lambda e: (events[e].position, e)) if a[e] != b.get(e)]
    return pd.DataFrame(rows, columns=["event_id", "position", "before", "after"])


def fault_arg(fault: Fault) -> str:
    """``--crash POINT[@POSITION][#OCCURRENCE]`` for a crash (worker 1; another worker is named in words)."""
    point = fault.point
    assert point is not None, "a crash names its crash point"
    arg = crash_arg(point, fault.position, fault.occurrence) if fault.position is not None or \
        point not in EVENT_POINTS else f"{point}#{fault.occurrence}"
    return arg + (f" (worker {fault.worker})" if fault.worker != 1 else "")


def instant_note(stepped: Stepped, row: int) -> str:
    """One line: the instant, and where "crash here" would strike."""
    state = instant_state(stepped.run, row)
    fault = crash_after(stepped, row)
    nxt = f"crash here: {fault_arg(fault)}" if fault else "no crash point is passed after this step"
    return f"t = {state.time:g}, after row {row}: {state.what}. {nxt}"
