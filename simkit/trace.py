"""The run's trace: one row per step, stored column by column (no dict per row)."""
from __future__ import annotations

import hashlib

COLUMNS = ("time", "worker", "step", "event_id", "position", "resume_cursor", "cursor_place",
           "applied_position", "checkpoint_version", "outcome")


class Trace:
    """Columnar trace. Each row carries the durable checkpoint as it stood after the step."""

    __slots__ = COLUMNS + ("_append",)

    def __init__(self):
        for c in COLUMNS:
            setattr(self, c, [])
        self._append = tuple(getattr(self, c).append for c in COLUMNS)

    def add(self, time, worker, step, event_id, position, checkpoint, place, outcome=""):
        a = self._append
        a[0](time)
        a[1](worker)
        a[2](step)
        a[3](event_id)
        a[4](position)
        a[5](checkpoint.resume_cursor)
        a[6](place)
        a[7](checkpoint.applied_position)
        a[8](checkpoint.checkpoint_version)
        a[9](outcome)

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
