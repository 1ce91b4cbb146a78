"""Notebook widgets (ipywidgets): a scenario explorer, a side-by-side comparison of ``safe`` and a shortcut, and a
step-through of one run with a "crash here" button.

Each widget is a small class around pure functions: :func:`explorer_run`, :func:`comparison_runs` and
:func:`stepped_run` build the input and run it, :func:`show_run`, :func:`show_comparison`, :func:`show_instant` and
:func:`show_crash` draw the result; the widget only wires its
controls to them with :func:`ipywidgets.interactive_output`. So a notebook can render the same thing statically
(``show_run(explorer_run())``) where no widget frontend runs, and tests can drive the controls by setting
``.value`` and read the last result from ``widget.run`` / ``widget.runs``.

Figures are built without pyplot and displayed as PNGs rendered here, which works the same in a notebook cell, in
a widget callback in JupyterLab 4, and in a headless kernel.
"""
from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

import ipywidgets as W
from matplotlib.figure import Figure
from IPython.display import display

from . import plot
from simkit.judge.checker import check
from simkit.procedure.consumer import Consumer
from simkit.tools.explore import fault_free, replay
from simkit.world.faults import FaultPlan
from simkit.model import CRASH_POINTS, SINKS, Fault, Scenario
from simkit.scenario.read import bundled, load, parse
from simkit.procedure.strategies import SHORTCUTS, STRATEGIES, resolve
from simkit.world.simulation import Run, World, simulate

#: Crash points that belong to one event; the others belong to a page attempt.
EVENT_POINTS = ("before_effect", "after_effect", "before_event_commit", "after_event_commit",
                "before_quarantine_receipt", "after_quarantine_receipt")
NO_CRASH = "none"

#: The explorer's starting choice: the ``default`` scenario's stream, with one crash instead of random faults.
EXPLORER_DEFAULTS = dict(strategy="safe", seed=7, crash_point="before_event_commit", crash_position=70,
                         occurrence=1, page_size=5, overlap=0.3, backfill=0.1, empty_pages=0.1, sink="idempotent")
#: Event behaviours of the explorer's stream (the bundled ``default`` scenario's rates).
EXPLORER_BEHAVIOURS = dict(stuck=0.1, poison=0.05, transient=0.05, review=0.03, hold=0.03)
EXPLORER_EVENTS = 40

OWN_SCENARIO = "(the shortcut's own scenario)"


# -- pure parts: input, run, rendering -------------------------------------------------------------------------
def explorer_scenario(seed: int = 7, page_size: int = 5, overlap: float = 0.3, backfill: float = 0.1,
                      empty_pages: float = 0.1, sink: str = "idempotent", events: int = EXPLORER_EVENTS) -> Scenario:
    """The explorer's generated scenario. The provider contract permits backfills exactly when the backfill
    rate is above zero, so the safe consumer knows to trust receipts rather than its watermark."""
    return parse({
        "name": "explorer",
        "description": "a generated stream chosen in the explorer",
        "sink": sink, "backfills": backfill > 0, "seed": seed,
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
    return fault.point + (f"@{fault.position}" if fault.position is not None else "") + (
        f"#{occurrence}" if occurrence != 1 else "")


def explorer_run(strategy: str | type[Consumer] = "safe", seed: int = 7, crash_point: str = "before_event_commit",
                 crash_position: int = 70, occurrence: int = 1, page_size: int = 5, overlap: float = 0.3,
                 backfill: float = 0.1, empty_pages: float = 0.1, sink: str = "idempotent") -> Run:
    """One run of the explorer's choice: ``strategy`` (a name, a reference :func:`~simkit.resolve` accepts, or
    a :class:`~simkit.Consumer` subclass) on :func:`explorer_scenario` with one crash."""
    sc = explorer_scenario(seed, page_size, overlap, backfill, empty_pages, sink)
    cls = strategy if isinstance(strategy, type) else resolve(strategy)
    return simulate(sc, cls, seed, crash_fault(crash_point, crash_position, occurrence))


def crash_note(run: Run, requested: bool = True) -> str:
    """One line saying where the explorer's crash struck, or that its point was never reached."""
    df = run.trace.to_frame()
    crashes = df[df.step == "crash"]
    if len(crashes):
        row = crashes.iloc[0]
        where = f" at {row.event_id} (position {int(row.position)})" if row.event_id else ""
        return f"crash: {row.outcome}{where}, t={row.time:g}; the worker restarted from durable state only"
    if requested:
        return ("crash: its point was never reached in this run (an effect point needs an external sink, a "
                "quarantine point a poison event, a position an event that gets that far)")
    return "crash: none"


def single_crashes(scenario: Scenario, strategy="safe", seed: int | None = None) -> list[Fault]:
    """Every single-crash schedule of ``strategy`` on ``scenario``: a crash at each crash-point pass of its
    fault-free run (:func:`simkit.tools.explore.fault_free`), as ``simkit.tools.explore.explore(..., max_crashes=1)`` runs
    them, in the order they are passed."""
    sc = fault_free(scenario)
    world = World(sc, _strategy(strategy), sc.seed if seed is None else seed)
    world.faults.record = True                  # keep every pass: what a crash can strike
    world.run()
    return [Fault("crash", point, position, n, worker) for worker, point, position, n in world.faults.passes]


def _harms(v) -> tuple[set, set]:
    """What went wrong in a verdict, item by item: safety (a lost or duplicated event, a regression, a broken
    invariant, a settlement violation) and liveness (the run did not complete: a halt without cause, a stall)."""
    safety = ({("lost", e) for e in v.lost} | {("duplicated", e) for e in v.duplicated}
              | {("regression", i) for i in range(v.regressions)} | {("invariant", k) for k in v.invariants_broken}
              | {("settlement", s["kind"]) for s in v.settlement_violations})
    return safety, ({("incomplete",)} if not v.completed else set())


def crash_effect(fault_free_verdict, crashed_verdict) -> str:
    """``worse``, ``same`` or ``better``: a crashed run against the fault-free run of the same strategy and input.

    Safety first: the crash made the run worse if it added a lost or duplicated event, a regression, a broken
    invariant or a settlement violation; better if it added none of these and took one away. A halt that stopped
    the retry before an event the fault-free run lost was lost is better, even though a halt without cause leaves
    the run incomplete: the event is still there to be investigated, not gone. Only when safety is unchanged does
    liveness decide (the crash left the run incomplete: worse; let it complete: better).
    """
    (safe_before, live_before), (safe_after, live_after) = _harms(fault_free_verdict), _harms(crashed_verdict)
    for before, after in ((safe_before, safe_after), (live_before, live_after)):
        if after - before:
            return "worse"
        if before - after:
            return "better"
    return "same"


def crash_effects(scenario: Scenario, strategies=None, seed: int | None = None):
    """Every single-crash schedule of each strategy on ``scenario``, judged against that strategy's fault-free run
    (:func:`crash_effect`): a frame indexed by (crash point, strategy) with the count of schedules ``run`` and how
    many came out ``worse``, ``same`` and ``better``. Crash points a strategy never passes have ``run`` 0.

    For :func:`simkit.viz.plot.crash_matrix`: ``fx = crash_effects(sc)``, then
    ``crash_matrix(ax, fx.worse.unstack(), fx.run.unstack(), better=fx.better.unstack())``.
    """
    import pandas as pd

    strategies = list(STRATEGIES if strategies is None else strategies)
    rows = {(p, _name(s)): dict(run=0, worse=0, same=0, better=0) for p in CRASH_POINTS for s in strategies}
    for strategy in strategies:
        base = replay(scenario, _strategy(strategy), (), seed)
        for fault in single_crashes(scenario, strategy, seed):
            row = rows[fault.point, _name(strategy)]
            row["run"] += 1
            row[crash_effect(base.verdict, replay(scenario, _strategy(strategy), (fault,), seed).verdict)] += 1
    index = pd.MultiIndex.from_tuples(list(rows), names=["crash point", "strategy"])
    return pd.DataFrame(list(rows.values()), index=index, columns=["run", "worse", "same", "better"])


def _strategy(strategy) -> type[Consumer]:
    return strategy if isinstance(strategy, type) else resolve(strategy)


def _name(strategy) -> str:
    return strategy if isinstance(strategy, str) else strategy.__name__


def _ids(xs, limit=6):
    if not xs:
        return "-"
    return ", ".join(xs[:limit]) + (f", … ({len(xs)} in all)" if len(xs) > limit else "")


def verdict_frame(runs):
    """The verdicts of some runs as a table, one row per run (lists shown as short strings), indexed by
    strategy, by scenario when the strategy is always the same, or by both."""
    import pandas as pd

    rows = []
    for r in runs:
        v, cp = r.verdict, r.world.store.checkpoint
        rows.append({
            "scenario": r.scenario, "strategy": r.strategy, "ok": v.ok, "lost": _ids(v.lost),
            "duplicated": _ids(v.duplicated), "regressions": v.regressions,
            "invariants broken": ", ".join(map(str, v.invariants_broken)) or "-", "halted": v.halted or "-",
            "pending": _ids(v.pending), "completed": v.completed, "crashes": r.world.crashes,
            "final checkpoint": f"{cp.resume_cursor} / {cp.applied_position} / v{cp.checkpoint_version}",
        })
    df = pd.DataFrame(rows)
    if df.scenario.nunique() <= 1:
        return df.drop(columns="scenario").set_index("strategy")
    if df.strategy.nunique() <= 1 < len(df):
        return df.drop(columns="strategy").set_index("scenario")
    return df.set_index(["scenario", "strategy"])


def violations_frame(run, limit: int | None = None):
    """The invariant violations the checker found, one row each (CONTRACT §4)."""
    import pandas as pd

    rows = run.verdict.invariant_violations[:limit]
    return pd.DataFrame(rows, columns=["invariant", "time", "worker", "detail"])


def trace_table(run):
    """The trace as a table for reading: one row per step, with the durable checkpoint after it. The worker
    column is dropped for a single worker; ``cursor_place`` (the provider's decoding, for plots) is left out."""
    df = run.trace.to_frame()
    df["position"] = df["position"].astype("Int64")
    cols = ["time", "worker", "step", "event_id", "position", "resume_cursor", "applied_position",
            "checkpoint_version", "outcome"]
    if run.world.scenario.workers == 1:
        cols.remove("worker")
    return df[cols]


def pages_served(run):
    """Every response the provider served, from its own log (ground truth): the cursor asked for, the
    ``next_cursor`` returned and the events' ids and positions."""
    import pandas as pd

    events = run.world.provider.events
    rows = [{"time": t, "worker": w, "cursor": c, "next_cursor": n, "event_ids": ids,
             "positions": tuple(events[i].position for i in ids)}
            for _seq, t, w, c, n, ids in run.world.provider.log]
    return pd.DataFrame(rows, columns=["time", "worker", "cursor", "next_cursor", "event_ids", "positions"])


def receipts(run):
    """Every durable receipt the store wrote, in order, from its own log (ground truth); time 0 holds the
    receipts of the scenario's initial state."""
    import pandas as pd

    rows = [{"time": t, "worker": w, "event_id": eid, "position": run.world.provider.events[eid].position,
             "outcome": outcome} for _seq, t, w, eid, outcome in run.world.store.receipt_log]
    return pd.DataFrame(rows, columns=["time", "worker", "event_id", "position", "outcome"])


def show_run(run: Run, note: str | None = None) -> None:
    """The verdict of one run, the first invariant violations, and its timeline and event fates."""
    display(verdict_frame([run]))
    if note:
        print(note)
    if run.verdict.invariant_violations:
        display(violations_frame(run, 5))
    fig = Figure(figsize=(11, 7.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=(3, 1.3))
    plot.timeline(top, run)
    plot.fates(bottom, run)
    _show(fig)


def comparison_runs(shortcut: str, scenario: str = OWN_SCENARIO, seed: int | None = None) -> tuple[Run, Run]:
    """``safe`` and ``shortcut`` on the same input: the shortcut's own ``shortcut_<name>`` scenario by default,
    or a bundled scenario by name; ``seed`` defaults to the scenario's."""
    sc = load(f"shortcut_{shortcut}" if scenario == OWN_SCENARIO else scenario)
    return simulate(sc, resolve("safe"), seed), simulate(sc, resolve(shortcut), seed)


def show_comparison(runs) -> None:
    """The verdicts side by side, then both timelines on one position scale and both events' fates."""
    safe, other = runs
    print(f"{safe.scenario}, seed {safe.seed}: the same input for both strategies")
    display(verdict_frame(runs))
    if other.verdict.invariant_violations:
        display(violations_frame(other, 5))
    rows = max(-(-len(r.world.provider.events) // 20) for r in runs)
    fates_height = 1.1 + 0.25 * rows
    fig = Figure(figsize=(13, 5.6 + fates_height), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=(5.6, fates_height))
    plot.compare(top.subplots(1, 2), runs)
    for ax, run in zip(bottom.subplots(1, 2), runs):
        plot.fates(ax, run, title=f"event fates: {run.strategy}")
    _show(fig)


def _show(fig: Figure) -> None:
    """Display a figure as the PNG rendered here. Figures are built without pyplot (no global figure registry,
    no backend): a widget callback in JupyterLab then draws the same figure as a notebook cell does."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    display({"image/png": base64.b64encode(buf.getvalue()).decode("ascii"), "text/plain": repr(fig)}, raw=True)


# -- the step-through: one run, instant by instant, and a crash at any of them ---------------------------------------
class _Passes(FaultPlan):
    """The world's fault plan, noting how many trace rows were written before each crash-point pass: where on the
    trace a crash at that pass would strike."""

    def __init__(self, world: World, faults, random_faults, seed: int):
        super().__init__(faults, random_faults, seed)
        self.world = world
        self.rows_before: list[int] = []

    def at_point(self, worker, point, position):
        n = len(self.passes)
        fault = super().at_point(worker, point, position)
        if len(self.passes) > n:
            self.rows_before.append(len(self.world.trace))
        return fault


@dataclass
class Stepped:
    """One run to step through: the run, its input, and every crash-point pass as (trace rows written before it,
    the crash that would strike there)."""

    run: Run
    scenario: Scenario
    strategy: type[Consumer]
    faults: tuple[Fault, ...]
    passes: list[tuple[int, Fault]] = field(default_factory=list)


def stepped_run(scenario: Scenario | str = "retry_walkthrough", strategy: str | type[Consumer] = "safe",
                seed: int | None = None, faults: tuple[Fault, ...] = ()) -> Stepped:
    """Run ``strategy`` on ``scenario`` (a bundled name or a :class:`~simkit.Scenario`), noting where each crash
    point is passed: the same run, row for row, as :func:`~simkit.simulate` gives."""
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
    """The crash at the first crash-point pass after trace row ``row``: what "crash here" adds; ``None`` when no
    crash point is passed after it."""
    return next((fault for rows, fault in stepped.passes if rows > row), None)


def crash_rerun(stepped: Stepped, row: int) -> tuple[Fault | None, Run | None]:
    """The run again with a crash at the first pass after ``row`` (:func:`crash_after`), besides its own faults."""
    fault = crash_after(stepped, row)
    if fault is None:
        return None, None
    return fault, simulate(stepped.scenario, stepped.strategy, stepped.run.seed, stepped.faults + (fault,))


def fate_changes(before: Run, after: Run):
    """The events whose fate (:func:`simkit.judge.checker.event_fates`) differs between two runs of one input."""
    import pandas as pd

    from simkit.judge.checker import event_fates

    a, b = event_fates(before.world, before.verdict), event_fates(after.world, after.verdict)
    events = before.world.provider.events
    rows = [{"event_id": e, "position": events[e].position, "before": a[e], "after": b.get(e, "-")}
            for e in sorted(a, key=lambda e: (events[e].position, e)) if a[e] != b.get(e)]
    return pd.DataFrame(rows, columns=["event_id", "position", "before", "after"])


def fault_arg(fault: Fault) -> str:
    """``--crash POINT[@POSITION][#OCCURRENCE]`` for a crash (worker 1; another worker is named in words)."""
    arg = crash_arg(fault.point, fault.position, fault.occurrence) if fault.position is not None or \
        fault.point not in EVENT_POINTS else f"{fault.point}#{fault.occurrence}"
    return arg + (f" (worker {fault.worker})" if fault.worker != 1 else "")


def instant_note(stepped: Stepped, row: int) -> str:
    """One line: the instant, and where "crash here" would strike."""
    state = plot.instant_state(stepped.run, row)
    fault = crash_after(stepped, row)
    nxt = f"crash here: {fault_arg(fault)}" if fault else "no crash point is passed after this step"
    return f"t = {state.time:g}, after row {row}: {state.what}. {nxt}"


def show_instant(stepped: Stepped, row: int) -> None:
    """The timeline with the instant marked, and the instant's memory beside its durable state."""
    print(instant_note(stepped, row))
    run = stepped.run
    fig = Figure(figsize=(11, 8), layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=(3, 2.2))
    plot.timeline(top, run, now=run.trace.time[row])
    plot.instant(bottom, run, row)
    _show(fig)


def show_crash(stepped: Stepped, fault: Fault | None, rerun: Run | None) -> None:
    """What a crash at that pass changes: both verdicts, the events whose fate changes, both timelines, the fates
    of the crashed run with the changed events framed."""
    if fault is None:
        print("no crash point is passed after this step: nothing to crash")
        return
    run = stepped.run
    changes = fate_changes(run, rerun)
    same = rerun.trace.digest() == run.trace.digest()
    print(f"crash here: --crash {fault_arg(fault)}. " + (
        "The run already crashes at this pass: nothing changes." if same else
        f"{len(changes)} event{'s' if len(changes) != 1 else ''} change{'s' if len(changes) == 1 else ''} fate"
        + (": " + ", ".join(changes.event_id) if len(changes) else "") + "."))
    display(verdict_frame([run, rerun]).set_axis(["as run", "crash here"]).rename_axis("run"))
    if len(changes):
        display(changes)
    fig = Figure(figsize=(13, 7), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=(5, 1.8))
    plot.compare(top.subplots(1, 2), [run, rerun],
                 titles=[f"{run.strategy} as run", f"with --crash {fault_arg(fault)}"])
    plot.fates(bottom.subplots(), rerun, title="event fates with the crash (framed: changed)",
               highlight=set(changes.event_id))
    _show(fig)


# -- the widgets ------------------------------------------------------------------------------------------------
def _slider(cls, value, **kw):
    return cls(value=value, continuous_update=False, style={"description_width": "initial"},
               layout=W.Layout(width="260px"), **kw)


class Explorer(W.VBox):
    """Strategy, seed, crash point and position, page size, overlap/backfill/empty-page rates and sink kind;
    every change reruns the scenario and redraws the verdict, the timeline and the event fates.

    ``controls`` maps each :func:`explorer_run` argument to its control; ``run`` is the last run drawn.
    ``strategies`` adds your own consumers to the strategy menu, by the name you give them.
    """

    def __init__(self, strategies: dict[str, type[Consumer]] | None = None, **values):
        v = {**EXPLORER_DEFAULTS, **values}
        self.run: Run | None = None
        self.strategies = dict(strategies or {})
        self.controls = {
            "strategy": W.Dropdown(options=[*STRATEGIES, *self.strategies], value=v["strategy"],
                                   description="strategy"),
            "seed": W.BoundedIntText(value=v["seed"], min=0, max=10**6, description="seed",
                                     layout=W.Layout(width="180px")),
            "sink": W.Dropdown(options=list(SINKS), value=v["sink"], description="sink"),
            "crash_point": W.Dropdown(options=[NO_CRASH, *CRASH_POINTS], value=v["crash_point"],
                                      description="crash at"),
            "crash_position": _slider(W.IntSlider, v["crash_position"], min=10, max=10 * EXPLORER_EVENTS, step=10,
                                      description="at position"),
            "occurrence": _slider(W.IntSlider, v["occurrence"], min=1, max=10, description="n-th time reached"),
            "page_size": _slider(W.IntSlider, v["page_size"], min=1, max=12, description="page size"),
            "overlap": _slider(W.FloatSlider, v["overlap"], min=0, max=1, step=0.05, description="overlap rate"),
            "backfill": _slider(W.FloatSlider, v["backfill"], min=0, max=0.5, step=0.05,
                                description="backfill rate"),
            "empty_pages": _slider(W.FloatSlider, v["empty_pages"], min=0, max=0.5, step=0.05,
                                   description="empty-page rate"),
        }
        c = self.controls
        c["crash_point"].observe(self._position_applies, "value")
        self._position_applies()
        self.output = W.interactive_output(self._draw, c)
        rows = [
            W.HBox([c["strategy"], c["seed"], c["sink"]]),
            W.HBox([c["crash_point"], c["crash_position"], c["occurrence"]]),
            W.HBox([c["page_size"], c["overlap"], c["backfill"], c["empty_pages"]]),
        ]
        super().__init__([*rows, self.output])

    def _position_applies(self, change=None):
        self.controls["crash_position"].disabled = self.controls["crash_point"].value not in EVENT_POINTS
        self.controls["occurrence"].disabled = self.controls["crash_point"].value == NO_CRASH

    def _draw(self, **values):
        values["strategy"] = self.strategies.get(values["strategy"], values["strategy"])
        self.run = explorer_run(**values)
        show_run(self.run, crash_note(self.run, values["crash_point"] != NO_CRASH))


class Comparison(W.VBox):
    """``safe`` beside a chosen shortcut on the same input, redrawn when the shortcut, scenario or seed changes.

    ``runs`` is the last ``(safe, shortcut)`` pair drawn.
    """

    def __init__(self, shortcut: str = SHORTCUTS[0], scenario: str = OWN_SCENARIO, seed: int | None = None):
        self.runs: tuple[Run, Run] | None = None
        self._last = None
        self.controls = {
            "shortcut": W.Dropdown(options=list(SHORTCUTS), value=shortcut, description="shortcut"),
            "scenario": W.Dropdown(options=[OWN_SCENARIO, *bundled()], value=scenario, description="input",
                                   layout=W.Layout(width="380px")),
            "seed": W.BoundedIntText(value=self._scenario_seed(shortcut, scenario) if seed is None else seed,
                                     min=0, max=10**6, description="seed", layout=W.Layout(width="180px")),
        }
        for name in ("shortcut", "scenario"):
            self.controls[name].observe(self._reset_seed, "value")
        self.output = W.interactive_output(self._draw, self.controls)
        super().__init__([W.HBox(list(self.controls.values())), self.output])

    @staticmethod
    def _scenario_seed(shortcut, scenario):
        return load(f"shortcut_{shortcut}" if scenario == OWN_SCENARIO else scenario).seed

    def _reset_seed(self, change):
        c = self.controls
        c["seed"].value = self._scenario_seed(c["shortcut"].value, c["scenario"].value)

    def _draw(self, shortcut, scenario, seed):
        if self._last == (shortcut, scenario, seed):
            return              # the seed was reset by the same change: already drawn
        self._last = (shortcut, scenario, seed)
        self.runs = comparison_runs(shortcut, scenario, seed)
        show_comparison(self.runs)


def explorer(strategies: dict[str, type[Consumer]] | None = None, **values) -> Explorer:
    """The scenario explorer, starting from :data:`EXPLORER_DEFAULTS` updated by ``values``; ``strategies``
    adds your own consumers (name → class) to its strategy menu."""
    return Explorer(strategies, **values)


def comparison(shortcut: str = SHORTCUTS[0], scenario: str = OWN_SCENARIO, seed: int | None = None) -> Comparison:
    """``safe`` beside ``shortcut`` on the same input (by default the shortcut's own scenario)."""
    return Comparison(shortcut, scenario, seed)


class Stepper(W.VBox):
    """Step through one run: a slider over its trace rows shows, at each instant, the worker's memory (page in
    hand, ``next_cursor`` held, the event it is at) beside the durable checkpoint and receipts; "crash here" reruns
    it with a crash at the next crash-point pass and shows which events change fate.

    ``stepped`` is the run (:func:`stepped_run`); ``controls["row"]`` the slider; ``instant`` the last
    :class:`~simkit.viz.plot.Instant` drawn; after "crash here", ``fault``, ``rerun`` and ``changes``
    (:func:`fate_changes`).
    """

    def __init__(self, scenario: Scenario | str = "retry_walkthrough", strategy: str | type[Consumer] = "safe",
                 seed: int | None = None, row: int = 0):
        self.stepped = stepped_run(scenario, strategy, seed)
        self.instant = None
        self.fault = self.rerun = self.changes = None
        last = len(self.stepped.run.trace) - 1
        self.controls = {"row": W.IntSlider(value=min(max(row, 0), last), min=0, max=last, description="step",
                                            continuous_update=False, style={"description_width": "initial"},
                                            layout=W.Layout(width="520px"))}
        self.button = W.Button(description="crash here", icon="bolt", button_style="danger",
                               tooltip="rerun with a crash at the next crash-point pass and show what changes")
        self.button.on_click(self._crash)
        self.output = W.interactive_output(self._draw, self.controls)
        self.crash_output = W.Output()
        super().__init__([W.HBox([self.controls["row"], self.button]), self.output, self.crash_output])

    def _draw(self, row):
        self.instant = plot.instant_state(self.stepped.run, row)
        show_instant(self.stepped, row)

    def _crash(self, _button=None):
        self.fault, self.rerun = crash_rerun(self.stepped, self.controls["row"].value)
        self.changes = fate_changes(self.stepped.run, self.rerun) if self.rerun is not None else None
        with self.crash_output:
            self.crash_output.clear_output(wait=True)
            show_crash(self.stepped, self.fault, self.rerun)


def stepper(scenario: Scenario | str = "retry_walkthrough", strategy: str | type[Consumer] = "safe",
            seed: int | None = None, row: int = 0) -> Stepper:
    """Step through ``strategy`` on ``scenario`` (by default seed 000's walkthrough with ``safe``), starting at trace
    row ``row``; "crash here" shows what a crash at any instant would change."""
    return Stepper(scenario, strategy, seed, row)
