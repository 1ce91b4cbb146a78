"""The run's trace: one row per step, stored column by column (no dict per row)."""
from __future__ import annotations

import hashlib
from array import array

COLUMNS = ("time", "worker", "step", "event_id", "position", "resume_cursor", "cursor_place",
           "applied_position", "checkpoint_version", "outcome")


class Trace:
    """Columnar trace. Each row carries the durable checkpoint as it stood after the step. Times are a typed
    array, as most rows have a moment of their own (a list would keep a float object per row); the rest are
    lists."""

    __slots__ = COLUMNS

    def __init__(self):
        for c in COLUMNS:
            setattr(self, c, array("d") if c == "time" else [])

    def add(self, time, worker, step, event_id, position, checkpoint, place, outcome=""):
        self.time.append(time)
        self.worker.append(worker)
        self.step.append(step)
        self.event_id.append(event_id)
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
        return pd.DataFrame({c: getattr(self, c) for c in COLUMNS})

    def digest(self) -> str:
        """A SHA-256 of every row, for determinism checks across processes."""
        h = hashlib.sha256()
        for row in zip(*(getattr(self, c) for c in COLUMNS)):
            h.update(repr(row).encode())
        return h.hexdigest()
