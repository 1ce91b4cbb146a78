"""The progress guard of a simulated run (docs/verdict.md, "Progress guard")."""
from __future__ import annotations

__all__ = ["GUARD_CHUNK", "STALL_STEPS", "STEPS_PER_ITEM", "STEP_BASE", "Guard", "Stopped", "step_budget"]

#: The progress guard (docs/verdict.md, "Progress guard": ``completed`` is false for a run it ended). Simulated
#: time is no guard on its own: zero latencies with ``backoff = 0``, a transient event that never stops failing or
#: latencies of 1e-300 spin at one instant, or nearly, while memory grows. Requests are counted per worker and
#: handed over every :data:`GUARD_CHUNK` (a local increment per request on the hot path); a run ends, with
#: ``stopped`` saying why, after :data:`STALL_STEPS` requests at one simulated instant, or once it has spent its
#: step budget: :data:`STEP_BASE` plus :data:`STEPS_PER_ITEM` per event and page of the stream, per worker. The
#: bundled scenarios take at most 1,380 steps per run; a million-event benchmark about 3 per event.
GUARD_CHUNK = 1_000
STALL_STEPS = 100_000
STEP_BASE = 1_000_000
STEPS_PER_ITEM = 1_000


class Stopped(Exception):
    """The progress guard ended the run; ``args[0]`` says why."""


def step_budget(workers: int, events: int, pages: int) -> int:
    """The most requests a run may take (:data:`STEP_BASE`, :data:`STEPS_PER_ITEM`)."""
    return STEP_BASE + STEPS_PER_ITEM * workers * (events + pages)


class Guard:
    """The progress guard's count: ``steps`` (requests handed over so far, in chunks of :data:`GUARD_CHUNK`) of
    ``budget``, and ``instant`` of them since simulated time last moved, at ``at``. (Its own object: a World
    keeps under 30 attributes, CPython's limit for the fast attribute access its hot path relies on.)"""

    __slots__ = ("steps", "budget", "at", "instant")

    def __init__(self, budget: int):
        self.steps, self.budget, self.at, self.instant = 0, budget, -1.0, 0

    def chunk(self, now: float) -> None:
        """A worker hands over :data:`GUARD_CHUNK` requests at simulated time ``now``: too many at one instant,
        or the step budget spent, ends the run (raises :class:`Stopped`)."""
        self.steps += GUARD_CHUNK
        if now != self.at:
            self.at, self.instant = now, GUARD_CHUNK
        else:
            self.instant += GUARD_CHUNK
            if self.instant >= STALL_STEPS:
                raise Stopped(f"progress guard: {self.instant} steps at t={now:g} without simulated time advancing")
        if self.steps >= self.budget:
            raise Stopped(f"progress guard: the step budget of {self.budget} steps spent at t={now:g} "
                          f"({STEP_BASE} + {STEPS_PER_ITEM} per event and page per worker)")
