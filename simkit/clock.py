"""One clock for every ground-truth log: simulated time plus a sequence number that orders same-instant entries."""
from __future__ import annotations


class Clock:
    """``now`` is the simulated time (read from a SimPy environment when given); ``tick()`` numbers entries."""

    __slots__ = ("env", "time", "seq")

    def __init__(self, env=None):
        self.env = env
        self.time = 0.0
        self.seq = 0

    @property
    def now(self) -> float:
        return self.env.now if self.env is not None else self.time

    def tick(self) -> int:
        self.seq += 1
        return self.seq
