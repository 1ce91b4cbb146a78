"""What the widgets display, as plain functions a notebook can call where no widget frontend runs: one run's
verdict, timeline and fates; a comparison; an instant of the step-through; what a crash there changes.

Figures are built without pyplot and displayed as PNGs rendered here, which works the same in a notebook cell,
in a widget callback in JupyterLab 4, and in a headless kernel.
"""
from __future__ import annotations

import base64

import numpy as np
from IPython.display import display
from matplotlib.figure import Figure, SubFigure

from simkit.errors import SimkitError, described
from simkit.judge.checker import FATES
from simkit.model import Fault
from simkit.runner import Run

from .canvas import png
from .fates import fates, fates_legend
from .frames import one_run, verdict_frame, violations_frame
from .instant import instant
from .legend import MARKS
from .steps import Stepped, fate_changes, fault_arg, instant_note
from .timeline import compare, timeline, timeline_legend

__all__ = ["RUN_FIGSIZE", "display_png", "draw_run", "run_axes", "run_tables", "show_comparison",
           "show_crash", "show_instant", "show_run", "widest_legends"]


#: The figure of one run (:func:`show_run`, the explorer's): its size, its Axes, and what is drawn in them.
RUN_FIGSIZE = (11, 7.5)


def run_axes(fig: Figure) -> list:
    """A run's figure's Axes: the timeline above the event fates."""
    return list(fig.subplots(2, 1, height_ratios=(3, 1.3)))


def draw_run(axes, run: Run) -> None:
    """One run's timeline and event fates, in the Axes :func:`run_axes` made."""
    top, bottom = axes
    timeline(top, run)
    fates(bottom, run)


def widest_legends(axes) -> None:
    """Over a run drawn by :func:`draw_run`, the widest legends any run's figure has (every mark, every fate):
    the room a run's figure may need, for a :class:`~simkit.viz.canvas.Canvas`."""
    top, bottom = axes
    timeline_legend(top, MARKS)
    fates_legend(bottom, FATES)


def run_tables(run: Run, note: str | None = None) -> None:
    """The verdict of one run, a note (where its crash struck, say) and the first invariant violations."""
    display(verdict_frame([run]))
    if note:
        print(note)
    if run.verdict.invariant_violations:
        display(violations_frame(run, 5))


def show_run(run: Run, note: str | None = None) -> None:
    """The verdict of one run, the first invariant violations, and its timeline and event fates."""
    run = one_run(run)
    run_tables(run, note)
    fig = Figure(figsize=RUN_FIGSIZE, layout="constrained")
    draw_run(run_axes(fig), run)
    _show(fig)


def show_comparison(runs) -> None:
    """The verdicts side by side, then both timelines on one position scale and both events' fates."""
    pair = [] if isinstance(runs, (str, bytes)) or not hasattr(runs, "__iter__") else list(runs)
    if len(pair) != 2:      # one run was "cannot unpack non-iterable Run object"
        raise SimkitError(f"runs {described(runs)}: give the pair comparison_runs returns, (safe, shortcut)",
                          param="runs")
    safe, other = runs = [one_run(r, "runs") for r in pair]
    print(f"{safe.scenario}, seed {safe.seed}: the same input for both strategies")
    display(verdict_frame(runs))
    if other.verdict.invariant_violations:
        display(violations_frame(other, 5))
    rows = max(-(-len(r.world.provider.events) // 20) for r in runs)
    fates_height = 1.1 + 0.25 * rows
    fig = Figure(figsize=(13, 5.6 + fates_height), layout="constrained")
    top, bottom = _two_rows(fig, (5.6, fates_height))
    compare(top.subplots(1, 2), runs)
    for ax, run in zip(bottom.subplots(1, 2), runs):
        fates(ax, run, title=f"event fates: {run.strategy}")
    _show(fig)


def _two_rows(fig: Figure, height_ratios: tuple[float, float]) -> tuple[SubFigure, SubFigure]:
    """Two subfigures, one above the other (matplotlib types ``subfigures`` as one subfigure or an array)."""
    rows = fig.subfigures(2, 1, height_ratios=height_ratios)
    assert isinstance(rows, np.ndarray)
    return rows[0], rows[1]


def _show(fig: Figure) -> None:
    """Display a figure as the PNG rendered here. Figures are built without pyplot (no global figure registry,
    no backend): a widget callback in JupyterLab then draws the same figure as a notebook cell does."""
    display_png(png(fig), repr(fig))


def display_png(data: bytes, text: str) -> None:
    """Display PNG bytes, with ``text`` for a frontend that shows no images."""
    display({"image/png": base64.b64encode(data).decode("ascii"), "text/plain": text}, raw=True)


def show_instant(stepped: Stepped, row: int) -> None:
    """The timeline with the instant marked, and the instant's memory beside its durable state."""
    print(instant_note(stepped, row))
    run = stepped.run
    fig = Figure(figsize=(11, 8), layout="constrained")
    top, bottom = fig.subplots(2, 1, height_ratios=(3, 2.2))
    timeline(top, run, now=run.trace.time[row])
    instant(bottom, run, row)
    _show(fig)


def show_crash(stepped: Stepped, fault: Fault | None, rerun: Run | None) -> None:
    """What a crash at that pass changes: both verdicts, the events whose fate changes, both timelines, the
    fates of the crashed run with the changed events framed."""
    if fault is None:
        print("no crash point is passed after this step: nothing to crash")
        return
    assert rerun is not None, "crash_rerun gives every crash its rerun"
    run = stepped.run
    changes = fate_changes(run, rerun)
    same = rerun.trace.digest() == run.trace.digest()
    print(f"crash here: --crash {fault_arg(fault)}. " + (
        "The run already crashes at this pass: nothing changes." if same else
        f"{len(changes)} event{'s' if len(changes) != 1 else ''} change{'s' if len(changes) == 1 else ''} "
        f"fate"
        + (": " + ", ".join(changes.event_id) if len(changes) else "") + "."))
    display(verdict_frame([run, rerun]).set_axis(["as run", "crash here"]).rename_axis("run"))
    if len(changes):
        display(changes)
    fig = Figure(figsize=(13, 7), layout="constrained")
    top, bottom = _two_rows(fig, (5, 1.8))
    compare(top.subplots(1, 2), [run, rerun],
                 titles=[f"{run.strategy} as run", f"with --crash {fault_arg(fault)}"])
    fates(bottom.subplots(), rerun, title="event fates with the crash (framed: changed)",
               highlight=set(changes.event_id))
    _show(fig)
