"""The run's trace: one row per step, stored column by column (no dict, tuple or id string per row)."""
from __future__ import annotations

import hashlib
from array import array

from .columns import Codes, Ids, Ints

__all__ = ["COLUMNS", "Trace"]

COLUMNS = ("time", "worker", "step", "event_id", "position", "resume_cursor", "cursor_place",
           "applied_position", "checkpoint_version", "outcome")


class Trace:
    """Columnar trace. Each row carries the durable checkpoint as it stood after the step. Times are a typed
    array, as most rows have a moment of their own (a list would keep a float object per row); numbers are
    :class:`~simkit.truth.columns.Ints`, steps, cursors and outcomes :class:`~simkit.truth.columns.Codes`, event
    ids :class:`~simkit.truth.columns.Ids`: each column reads as the list it stands for."""

    __slots__ = COLUMNS

    def __init__(self):
        self.time = array("d")
        self.worker, self.event_id = Ints("i"), Ids()
        self.step, self.resume_cursor, self.outcome = Codes(), Codes(), Codes()
        self.position, self.cursor_place, self.applied_position, self.checkpoint_version = (Ints() for _ in "abcd")

    def add(self, time, worker, step, event_id, position, checkpoint, place, outcome=""):
        self.time.append(time)
        self.worker.append(worker)
        self.step.append(step)
        self.event_id.append(event_id, position)
        self.position.append(position)
        self.resume_cursor.append(checkpoint.resume_cursor)
        self.cursor_place.append(place)
        self.applied_position.append(checkpoint.applied_position)
        self.checkpoint_version.append(checkpoint.checkpoint_version)
        self.outcome.append(outcome)

    def __len__(self) -> int:
        return len(self.time)

    def to_frame(self):
        """The trace as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd
        return pd.DataFrame({c: self.time if c == "time" else list(getattr(self, c)) for c in COLUMNS})

    def digest(self) -> str:
        """A SHA-256 of every row, for determinism checks across processes."""
        h = hashlib.sha256()
        for row in zip(*(getattr(self, c) for c in COLUMNS)):
            h.update(repr(row).encode())
        return h.hexdigest()
