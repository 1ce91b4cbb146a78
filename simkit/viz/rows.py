"""A run's trace as numpy columns, for the figures that select their marks from it (the timeline)."""
from __future__ import annotations

import numpy as np

__all__ = ["Rows", "fell", "numbers"]


class Rows:
    """The trace's columns as numpy arrays, each as :meth:`~simkit.truth.trace.Trace.to_frame` types it (a
    number column with a missing value as floats, ``NaN`` where missing): what the timeline selects its marks
    from. Building a pandas frame and selecting from it was a sixth of a widget's redraw (issue 31)."""

    def __init__(self, trace):
        self.time = np.array(trace.time, dtype=float)
        self.worker, self.position, self.cursor_place, self.applied_position, self.checkpoint_version = (
            numbers(getattr(trace, name))
            for name in ("worker", "position", "cursor_place", "applied_position", "checkpoint_version"))
        self.step, self.event_id, self.outcome = (
            np.array(list(getattr(trace, name)), dtype=object) for name in ("step", "event_id", "outcome"))

    def isin(self, name: str, values) -> np.ndarray:
        """Which rows' ``name`` is one of ``values``."""
        column, values = getattr(self, name), frozenset(values)
        return np.fromiter((v in values for v in column), bool, len(column))


def numbers(column) -> np.ndarray:
    values = list(column)
    if any(v is None for v in values):
        return np.array([np.nan if v is None else v for v in values], dtype=float)
    return np.array(values, dtype=np.int64 if all(type(v) is int for v in values) else None)


def fell(values: np.ndarray) -> np.ndarray:
    """Rows whose value is below the row before's (never the first)."""
    return np.concatenate([[False], values[1:] < values[:-1]]) if len(values) else np.zeros(0, dtype=bool)
