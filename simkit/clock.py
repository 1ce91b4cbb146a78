"""One clock for every ground-truth log: simulated time plus a sequence number that orders same-instant entries."""
from __future__ import annotations


class Clock:
    """``now`` is the simulated time (read from a SimPy environment when given); ``tick()`` numbers entries.

    ``ahead`` is time a lone worker has already spent but not yet handed to the scheduler (see
    :meth:`simkit.world.World._latency`): ``now`` includes it.
    """

    __slots__ = ("env", "time", "seq", "ahead")

    def __init__(self, env=None):
        self.env = env
        self.time = 0.0
        self.seq = 0
        self.ahead = 0.0

    @property
    def now(self) -> float:
        # ``env._now`` is what SimPy's own ``Environment.now`` property returns; read directly, it is the
        # cheapest call of a run (every log entry reads the clock)
        return self.env._now + self.ahead if self.env is not None else self.time

    def tick(self) -> int:
        self.seq += 1
        return self.seq
