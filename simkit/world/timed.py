"""The requests that take simulated time, as the world executes them: fetch, effect, commit, the page barrier
(and the unsafe overwrite), and a worker's wait.

Each spends its latency (ahead of the scheduler when it may), can be lost
on its way (it takes no effect) or lose its reply (it took effect): either
way the caller gets ``LOST`` after ``timeout``. Each writes its trace row.

:class:`TimedRequests` is a part of :class:`~simkit.world.simulation.World` (its base, above
:class:`~simkit.world.calls.ExternalCalls` and :class:`~simkit.world.points.FaultPoints`, whose ``_unsent``,
``_lost`` and ``_no_reply`` it uses): it uses the world's ``_ahead``, ``_wait``, ``_sync`` and ``_row``.
The requests executed at once, and ``Commit``'s quick path, are the world's.
"""
from __future__ import annotations

from simkit.ops import DECLARED, LOST, Barrier, Commit, Effect, Fetch, Overwrite
from simkit.procedure.driver import Driver
from simkit.truth.trace import CONFLICT, CURSOR_REFUSED, REQUEST_LOST, commit_step, fetched_outcome

from .calls import ExternalCalls

__all__ = ["TimedRequests"]

#: The ``op`` of the ``lost_request`` and ``lost_response`` faults that lose each request
#: (simkit/requests.py), read once: these methods run for every event.
_FETCH, _EFFECT, _COMMIT, _BARRIER, _OVERWRITE = (DECLARED[t].lost
                                                  for t in (Fetch, Effect, Commit, Barrier, Overwrite))


class TimedRequests(ExternalCalls, part=True):
    """``Fetch``, ``Effect``, ``Commit``, ``Barrier``, ``Overwrite`` and ``Wait`` with latency, faults and
    trace rows; each method is a generator function, as :mod:`simkit.requests` declares them ``timed`` (a part
    of the world, checked in its class: :attr:`~simkit.procedure.driver.Driver.timed`)."""

    def fetch(self, worker, op):
        if not self._ahead(self.timing.fetch_latency):
            yield from self._wait(self.timing.fetch_latency)
        if self._unsent(worker, _FETCH, None):  # the provider is never asked: no log row, no fetch counted
            yield from self._no_reply(worker, "fetch", None, REQUEST_LOST)
            return LOST
        page = super().fetch(worker, op)
        if page is None:
            self._row(worker, "fetch", None, CURSOR_REFUSED)
            return None
        if self._lost(worker, _FETCH, None, self.provider.response_lost()):
            yield from self._no_reply(worker, "fetch", None)
            return LOST
        top = page.events[-1].position if page.events else None
        self._row(worker, "fetch", None, fetched_outcome(len(page.events)), top)
        return page

    def effect(self, worker, op):
        if not self._ahead(self.timing.effect_latency):
            yield from self._wait(self.timing.effect_latency)
        if self._unsent(worker, _EFFECT, op.event):     # the sink runs nothing
            yield from self._no_reply(worker, "effect", op.event, REQUEST_LOST)
            return LOST
        super().effect(worker, op)
        if self._lost(worker, _EFFECT, op.event):
            yield from self._no_reply(worker, "effect", op.event)
            return LOST
        self._row(worker, "effect", op.event)
        return True

    def commit(self, worker, op):
        if not self._ahead(self.timing.commit_latency):
            yield from self._wait(self.timing.commit_latency)
        step = commit_step(op.outcome)
        if self._unsent(worker, _COMMIT, op.event):     # no receipt, no effect, no applied_position
            yield from self._no_reply(worker, step, op.event, REQUEST_LOST)
            return LOST
        ok = Driver.commit(self, worker, op)
        if self._lost(worker, _COMMIT, op.event):
            yield from self._no_reply(worker, step, op.event)
            return LOST
        self._row(worker, step, op.event, op.outcome if ok else CONFLICT)
        return ok

    def barrier(self, worker, op):
        return (yield from self._checkpoint_write(worker, super().barrier, op, _BARRIER))

    def overwrite(self, worker, op):
        return (yield from self._checkpoint_write(worker, super().overwrite, op, _OVERWRITE))

    def _checkpoint_write(self, worker, write, op, lost):
        """A page barrier (``Barrier``, or the unsafe ``Overwrite``): the store's write between faults;
        ``lost`` is the op of the faults that lose it."""
        if not self._ahead(self.timing.commit_latency):
            yield from self._wait(self.timing.commit_latency)
        if self._unsent(worker, lost, None):            # no compare, no swap
            yield from self._no_reply(worker, "barrier", None, REQUEST_LOST)
            return LOST
        ok = write(worker, op)
        step = "barrier" if ok else "barrier_rejected"
        if self._lost(worker, lost, None):
            yield from self._no_reply(worker, step, None)
            return LOST
        self._row(worker, step, None, op.next_cursor)
        return ok

    def wait(self, worker, op):
        self._row(worker, op.reason)
        super().wait(worker, op)
        yield from self._sync()
        yield self.env.timeout(self.timing.backoff)
