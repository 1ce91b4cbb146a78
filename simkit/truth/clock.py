"""One clock for every ground-truth log: simulated time plus a sequence number that orders same-instant entries."""
from __future__ import annotations

__all__ = ["Clock"]


class Clock:
    """``now`` is the simulated time (read from a SimPy environment when given); ``tick()`` numbers entries.

    ``ahead`` is time a lone worker has already spent but not yet handed to the scheduler (see
    :meth:`simkit.world.simulation.World._latency`): ``now`` includes it.
    """

    __slots__ = ("env", "time", "seq", "ahead", "_base", "_added", "_sum")

    def __init__(self, env=None):
        self.env = env
        self.time = 0.0
        self.seq = 0
        self.ahead = 0.0
        self._base = self._added = None     # the SimPy time and ``ahead`` at the last read, and their sum
        self._sum = 0.0

    @property
    def now(self) -> float:
        """Every log entry of one instant reads the clock: they share one float, not one each (SimPy's public
        ``Environment.now`` returns the same float object until time moves)."""
        env = self.env
        if env is None:
            return self.time
        base = env.now
        if base is not self._base or self.ahead is not self._added:
            self._base, self._added = base, self.ahead
            self._sum = base + self._added
        return self._sum

    def tick(self) -> int:
        self.seq += 1
        return self.seq
