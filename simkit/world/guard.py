"""The progress guard of a simulated run (docs/verdict.md, "Progress guard")."""
from __future__ import annotations

import signal
from contextlib import contextmanager

from simkit.errors import TimedOut

__all__ = ["GUARD_CHUNK", "STALL_STEPS", "STEPS_PER_ITEM", "STEP_BASE", "WALL_SECONDS", "Guard", "Stopped",
           "earned_budget", "step_budget", "wall_clock"]

#: The progress guard (docs/verdict.md, "Progress guard": ``completed`` is false for a run it ended).
#: Simulated time is no guard on its own: a consumer whose requests take no time, a transient event that never
#: stops failing or latencies of 1e-300 spin at one instant, or nearly, while memory grows. Requests are
#: counted per worker and handed over every :data:`GUARD_CHUNK` (a local increment per request on the hot
#: path); a run ends, with ``stopped`` saying why, after :data:`STALL_STEPS` requests at one simulated
#: instant, or once it has spent its step budget: :data:`STEP_BASE` plus :data:`STEPS_PER_ITEM` per event that
#: holds a receipt and per cursor fetched, per worker. The budget is earned by progress, not granted by the
#: stream's size: granted, a stream of a million events that looped at its start (every fetch lost, a time
#: limit of 1e15) ran a billion steps, 72 s and 2.35 GB for a 10-line file. The bundled scenarios take at most
#: 1,380 steps per run; a million-event benchmark about 3 per event, the gauntlet's hazards about 9 per event
#: and worker.
GUARD_CHUNK = 1_000
STALL_STEPS = 100_000
STEP_BASE = 1_000_000
STEPS_PER_ITEM = 1_000


#: The longest one run may take in wall-clock time, in seconds. The step budget bounds what the world does,
#: not what a consumer's own code does between two requests: one that sleeps or spins in a hook hung ``run``
#: and ``audit``. A million-event run takes about 20 s; this is far above any run that ends.
WALL_SECONDS = 900.0


@contextmanager
def wall_clock(what):
    """Within it, :data:`WALL_SECONDS` of wall-clock time raise :class:`~simkit.errors.TimedOut` (``SIGALRM``,
    where the main thread runs and nobody else uses the timer; elsewhere, nothing), its message opening with
    ``what()``. The run's results never depend on it: it ends a run with an error, never with a verdict."""
    seconds = WALL_SECONDS

    def expired(signum, frame):
        raise TimedOut(f"{what()}: one run took more than {seconds:g} s of wall-clock time (a consumer "
                        "that sleeps or spins in its own code?)")

    try:
        if signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL or signal.getitimer(signal.ITIMER_REAL)[0]:
            raise ValueError("the timer is someone else's")
        signal.signal(signal.SIGALRM, expired)
    except (ValueError, AttributeError):  # not the main thread, the timer taken, or no SIGALRM (Windows)
        yield
        return
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)


class Stopped(Exception):
    """The progress guard ended the run; ``args[0]`` says why."""


def step_budget(workers: int, events: int, pages: int) -> int:
    """The most requests a run may take that has given ``events`` events a receipt and fetched ``pages``
    cursors (:data:`STEP_BASE`, :data:`STEPS_PER_ITEM`)."""
    return STEP_BASE + STEPS_PER_ITEM * workers * (events + pages)


def earned_budget(workers: int, store, provider) -> int:
    """:func:`step_budget` for the events ``store`` holds a receipt for and the
    cursors ``provider`` was asked (the world hands the guard this, over its
    store and provider: no reference cycle keeps a world alive past its run)."""
    return step_budget(workers, len(store.receipts), len(provider.fetch_counts()))


class Guard:
    """The progress guard's count: ``steps`` (requests handed over so far, in chunks of :data:`GUARD_CHUNK`)
    of ``budget``, and ``instant`` of them since simulated time last moved, at ``at``. (Its own object: a
    World keeps under 30 attributes, CPython's limit for the fast attribute access its hot path relies on.)"""

    __slots__ = ("steps", "budget", "at", "instant", "earned")

    def __init__(self, budget: int, earned=None):
        self.steps, self.budget, self.at, self.instant = 0, budget, -1.0, 0
        #: ``earned()``: the budget the run's progress has earned by now; asked only once ``budget`` is spent
        self.earned = earned

    def chunk(self, now: float) -> None:
        """A worker hands over :data:`GUARD_CHUNK` requests at simulated time ``now``: too many at one
        instant, or the step budget spent, ends the run (raises :class:`Stopped`)."""
        self.steps += GUARD_CHUNK
        if now != self.at:
            self.at, self.instant = now, GUARD_CHUNK
        else:
            self.instant += GUARD_CHUNK
            if self.instant >= STALL_STEPS:
                raise Stopped(f"progress guard: {self.instant} steps at t={now:g} without simulated time "
                              f"advancing")
        if self.steps >= self.budget and self.earned is not None:
            self.budget = max(self.budget, self.earned())
        if self.steps >= self.budget:
            raise Stopped(f"progress guard: the step budget of {self.budget} steps spent at t={now:g} "
                          f"({STEP_BASE} + {STEPS_PER_ITEM} per event with a receipt and cursor fetched, per "
                          "worker)")
