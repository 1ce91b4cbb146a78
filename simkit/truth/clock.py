"""One clock for every ground-truth log: simulated time
plus a sequence number that orders same-instant entries."""
from __future__ import annotations

from typing import Protocol

__all__ = ["Clock", "TimeSource"]


class TimeSource(Protocol):
    """What a log reads of its clock: :class:`Clock` in a simulation, :class:`simkit.live.worker.LiveClock`
    (real time, system-wide sequence numbers) in a live run."""

    @property
    def now(self) -> float: ...

    def tick(self) -> int: ...


class Clock:
    """``now`` is the simulated time (read from a SimPy environment when given); ``tick()`` numbers entries.

    ``ahead`` is time a lone worker has already spent but not yet handed to the scheduler (see
    :meth:`simkit.world.simulation.World._latency`): ``now`` includes it.
    """

    __slots__ = ("env", "time", "seq", "ahead")

    def __init__(self, env=None):
        self.env = env
        self.time = 0.0
        self.seq = 0
        self.ahead = 0.0

    @property
    def now(self) -> float:
        """The simulated time (the logs and the trace keep times in typed arrays, not as float objects)."""
        env = self.env
        return self.time if env is None else env.now + self.ahead

    def tick(self) -> int:
        self.seq += 1
        return self.seq
