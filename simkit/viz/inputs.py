"""The widgets' inputs and runs: the explorer's generated scenario and its one crash (``--crash`` spelled the
same way), the run it draws, where its crash struck, and the comparison's pair of runs (docs/scenarios.md)."""
from __future__ import annotations

from simkit.model import Fault, Scenario
from simkit.ops import EVENT_POINTS  # crash points that belong to one event (simkit/requests.py)
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import resolve, scenario_of
from simkit.runner import Run, simulate
from simkit.scenario.read import load, parse

__all__ = ["EVENT_POINTS", "EXPLORER_BEHAVIOURS", "EXPLORER_DEFAULTS", "EXPLORER_EVENTS", "NO_CRASH",
           "OWN_SCENARIO", "comparison_runs", "crash_arg", "crash_fault", "crash_note", "explorer_run",
           "explorer_scenario", "strategy_class", "strategy_name"]

NO_CRASH = "none"

#: The explorer's starting choice: the ``default`` scenario's stream, with one crash instead of random faults.
EXPLORER_DEFAULTS = dict(strategy="safe", seed=7, crash_point="before_event_commit", crash_position=70,
                         occurrence=1, page_size=5, overlap=0.3, backfill=0.1, empty_pages=0.1,
                         sink="idempotent")
#: Event behaviours of the explorer's stream (the bundled ``default`` scenario's rates).
EXPLORER_BEHAVIOURS = dict(stuck=0.1, poison=0.05, transient=0.05, review=0.03, hold=0.03)
EXPLORER_EVENTS = 40

OWN_SCENARIO = "(the shortcut's own scenario)"
def explorer_scenario(seed: int = 7, page_size: int = 5, overlap: float = 0.3, backfill: float = 0.1,
                      empty_pages: float = 0.1, sink: str = "idempotent",
                      events: int = EXPLORER_EVENTS) -> Scenario:
    """The explorer's generated scenario. The provider contract permits backfills exactly when the backfill
    rate is above zero, so the safe consumer knows to trust receipts rather than its watermark."""
    return parse({
        "name": "explorer",
        "description": "a generated stream chosen in the explorer",
        "sink": sink, "seed": seed,     # a backfill of "0.1" or None is parse's to name (was a TypeError)
        "backfills": type(backfill) in (int, float) and backfill > 0,
        "generate": {"events": events, "page_size": page_size, "overlap": overlap, "backfill": backfill,
                     "empty_pages": empty_pages, **EXPLORER_BEHAVIOURS},
    }, source="explorer")


def crash_fault(point: str, position: int | None = None, occurrence: int = 1) -> tuple[Fault, ...]:
    """The explorer's one crash, as ``--crash POINT[@POSITION][#OCCURRENCE]`` would give it. ``position`` is
    used only for the crash points that belong to one event; ``none`` gives no fault."""
    if point == NO_CRASH:
        return ()
    return (Fault("crash", point, position if point in EVENT_POINTS else None, occurrence),)


def crash_arg(point: str, position: int | None = None, occurrence: int = 1) -> str:
    """The ``--crash`` argument that names the same fault."""
    (fault,) = crash_fault(point, position, occurrence) or (None,)
    if fault is None:
        return ""
    return point + (f"@{fault.position}" if fault.position is not None else "") + (
        f"#{occurrence}" if occurrence != 1 else "")


def explorer_run(strategy: str | type[Consumer] = "safe", seed: int = 7,
                 crash_point: str = "before_event_commit",
                 crash_position: int = 70, occurrence: int = 1, page_size: int = 5, overlap: float = 0.3,
                 backfill: float = 0.1, empty_pages: float = 0.1, sink: str = "idempotent") -> Run:
    """One run of the explorer's choice: ``strategy`` (a name, a reference :func:`~simkit.resolve` accepts, or
    a :class:`~simkit.Consumer` subclass) on :func:`explorer_scenario` with one crash."""
    sc = explorer_scenario(seed, page_size, overlap, backfill, empty_pages, sink)
    cls = strategy if isinstance(strategy, type) else resolve(strategy)
    return simulate(sc, cls, seed, crash_fault(crash_point, crash_position, occurrence))


def crash_note(run: Run, requested: bool = True) -> str:
    """One line saying where the explorer's crash struck, or that its point was never reached."""
    trace = run.trace
    if "crash" in trace.step:
        i = trace.step.index("crash")
        eid = trace.event_id[i]
        where = f" at {eid} (position {trace.position[i]})" if eid else ""
        return (f"crash: {trace.outcome[i]}{where}, t={trace.time[i]:g}; the worker restarted from durable "
                "state only")
    if requested:
        return ("crash: its point was never reached in this run (an effect point needs an external sink, a "
                "quarantine point a poison event, a position an event that gets that far)")
    return "crash: none"


def comparison_runs(shortcut: str, scenario: str = OWN_SCENARIO, seed: int | None = None) -> tuple[Run, Run]:
    """``safe`` and ``shortcut`` on the same input: the shortcut's own scenario (:func:`scenario_of`) by
    default, or a bundled scenario by name; ``seed`` defaults to the scenario's."""
    sc = load(scenario_of(shortcut) if scenario == OWN_SCENARIO else scenario)
    return simulate(sc, resolve("safe"), seed), simulate(sc, resolve(shortcut), seed)


def strategy_class(strategy) -> type[Consumer]:
    return strategy if isinstance(strategy, type) else resolve(strategy)


def strategy_name(strategy) -> str:
    return strategy if isinstance(strategy, str) else strategy.__name__
