"""Tables of runs for a notebook (pandas frames): verdicts side by side (the cells :mod:`simkit.judge.report`
writes), invariant violations, the trace, the pages served and the receipts written (ground truth)."""
from __future__ import annotations

from collections.abc import Iterable

from simkit.errors import SimkitError, described
from simkit.judge.report import verdict_cells
from simkit.runner import Run

__all__ = ["one_run", "pages_served", "receipts", "trace_table", "verdict_frame", "violations_frame"]


def one_run(run, param: str = "run") -> Run:
    """``run`` if it is a Run (a step-through's :class:`~simkit.viz.steps.Stepped` gives its own), else one
    line naming it: ``trace_table(on_fetch)`` of 02's step-through, or of ``None``, was an
    ``AttributeError``."""
    if isinstance(getattr(run, "run", None), Run):
        run = run.run
    if not isinstance(run, Run):
        raise SimkitError(f"{param} {described(run)}: give a run (what simkit.simulate returns)", param=param)
    return run


def verdict_frame(runs):
    """The verdicts of some runs as a table, one row per run (lists shown as short strings), indexed by
    strategy, by scenario when the strategy is always the same, or by both."""
    import pandas as pd

    given = runs
    if isinstance(runs, Run):       # one run is a table of one row (it was "'Run' object is not iterable")
        runs = [runs]
    runs = list(runs) if isinstance(runs, Iterable) and not isinstance(runs, (str, bytes, dict)) else []
    if not runs or not all(isinstance(r, Run) for r in runs):
        raise SimkitError(f"runs {described(given)}: give a run or a list of runs (what simkit.simulate "
                          "returns)", param="runs")
    df = pd.DataFrame([verdict_cells(r) for r in runs])
    if df.scenario.nunique() <= 1:
        return df.drop(columns="scenario").set_index("strategy")
    if df.strategy.nunique() <= 1 < len(df):
        return df.drop(columns="strategy").set_index("scenario")
    return df.set_index(["scenario", "strategy"])


def violations_frame(run, limit: int | None = None):
    """The invariant violations the checker found, one row each (docs/verdict.md)."""
    run = one_run(run)
    import pandas as pd

    rows = run.verdict.invariant_violations[:limit]
    return pd.DataFrame(rows, columns=["invariant", "time", "worker", "detail"])


def trace_table(run):
    """The trace as a table for reading: one row per step, with the durable
    checkpoint after it. The worker column is dropped for a single worker;
    ``cursor_place`` (the provider's decoding, for plots) is left out."""
    run = one_run(run)
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
    run = one_run(run)
    import pandas as pd

    events = run.world.provider.events
    rows = [{"time": t, "worker": w, "cursor": c, "next_cursor": n, "event_ids": ids,
             "positions": tuple(events[i].position for i in ids)}
            for _seq, t, w, c, n, ids in run.world.provider.log]
    return pd.DataFrame(rows, columns=["time", "worker", "cursor", "next_cursor", "event_ids", "positions"])


def receipts(run):
    """Every durable receipt the store wrote, in order, from its own log (ground truth); time 0 holds the
    receipts of the scenario's initial state."""
    run = one_run(run)
    import pandas as pd

    rows = [{"time": t, "worker": w, "event_id": eid, "position": run.world.provider.events[eid].position,
             "outcome": outcome} for _seq, t, w, eid, outcome in run.world.store.receipt_log]
    return pd.DataFrame(rows, columns=["time", "worker", "event_id", "position", "outcome"])
