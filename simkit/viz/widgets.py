"""Notebook widgets (ipywidgets) under one name: ``from simkit.viz import widgets`` then
``widgets.explorer()``, ``widgets.comparison()``, ``widgets.stepper()``, and the pure parts they are built of.

Each widget is a small class around pure functions: :func:`explorer_run`, :func:`comparison_runs` and
:func:`stepped_run` build the input and run it, :func:`show_run`, :func:`show_comparison`,
:func:`show_instant` and
:func:`show_crash` draw the result; the widget only wires its controls to them with
:func:`ipywidgets.interactive_output`. So a notebook can render the same thing statically
(``show_run(explorer_run())``) where no widget frontend runs, and tests can drive the controls by setting
``.value`` and read the last result from ``widget.run`` / ``widget.runs``.

Each part lives in a module of its own (the table in :mod:`simkit.viz`); this one only answers their names.
"""
from __future__ import annotations

from . import plot
from .comparison import Comparison, comparison
from .crashes import crash_effect, crash_effects, single_crashes
from .explorer import Explorer, explorer, redraw_ms
from .frames import pages_served, receipts, trace_table, verdict_frame, violations_frame
from .inputs import (
    EVENT_POINTS,
    EXPLORER_BEHAVIOURS,
    EXPLORER_DEFAULTS,
    EXPLORER_EVENTS,
    NO_CRASH,
    OWN_SCENARIO,
    comparison_runs,
    crash_arg,
    crash_fault,
    crash_note,
    explorer_run,
    explorer_scenario,
)
from .predict import Prediction, prediction
from .show import show_comparison, show_crash, show_instant, show_run
from .stepper import Stepper, stepper
from .steps import Stepped, crash_after, crash_rerun, fate_changes, fault_arg, instant_note, stepped_run

__all__ = ["EVENT_POINTS", "EXPLORER_BEHAVIOURS", "EXPLORER_DEFAULTS", "EXPLORER_EVENTS", "NO_CRASH",
           "OWN_SCENARIO", "Comparison", "Explorer", "Prediction", "Stepped", "Stepper", "comparison",
           "comparison_runs", "crash_after", "crash_arg", "crash_effect", "crash_effects", "crash_fault",
           "crash_note", "crash_rerun", "explorer", "explorer_run", "explorer_scenario", "fate_changes",
           "fault_arg", "instant_note", "pages_served", "plot", "prediction", "receipts", "redraw_ms",
           "show_comparison", "show_crash", "show_instant", "show_run", "single_crashes", "stepped_run",
           "stepper", "trace_table", "verdict_frame", "violations_frame"]
