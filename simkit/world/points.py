"""Faults as the world takes them around a request: its crash points (a crash discards the consumer, a pause
stalls the worker; docs/vocabulary.md, "Crash points"), a request lost on its way and a reply lost.

:class:`FaultPoints` is a part of :class:`~simkit.world.simulation.World` (the base of its other parts, which
lose requests and replies with it): it uses the world's ``faults``, ``_row`` and ``_latency``. It keeps when
a worker issued a call that paused at its crash point (:attr:`FaultPoints.issued`): the pause falls after
that moment, as a slow network does.
"""
from __future__ import annotations

from simkit.procedure.driver import Driver
from simkit.truth.trace import REPLY_LOST

from .faults import FaultPlan

__all__ = ["Crash", "FaultPoints"]


class Crash(Exception):
    """A crash point struck: the worker's consumer is discarded with all its memory."""


class FaultPoints(Driver, part=True):
    """Crash points, pauses, lost requests and lost replies (a part of the world)."""

    # the world's (:class:`simkit.world.simulation.World`), as are its ``_row`` and ``_latency``
    faults: FaultPlan
    #: worker -> when it issued its ``Call``, set by the world only where the call pauses at its crash point
    #: (off the path of every other request), taken by the call
    issued: dict[int, float]

    def _point(self, worker, point, event):
        """Pass a crash point: a crash raises, a pause is returned for the caller to take (:meth:`_pause`)."""
        fault = self.faults.at_point(worker, point, event.position if event is not None else None)
        if fault is not None and fault.kind == "crash":
            self._row(worker, "crash", event, point)
            raise Crash
        return fault

    def _pause(self, worker, fault, event):
        self._row(worker, "pause", event, fault.point)
        yield from self._latency(fault.duration)
        self._row(worker, "resume", event, fault.point)

    def _lost(self, worker: int, op: str, event, lost: bool = False) -> bool:
        """Is the reply of this request, which took effect, lost? (Then :meth:`_no_reply`.)"""
        return self.faults.reply_lost(worker, op, event.position if event is not None else None) or lost

    def _unsent(self, worker: int, op: str, event) -> bool:
        """Is this request lost on its way (no effect; then :meth:`_no_reply`)? Asked after its latency."""
        return self.faults.request_lost(worker, op, event.position if event is not None else None)

    def _no_reply(self, worker, step, event, outcome=REPLY_LOST):
        """No reply (``reply lost``: took effect; ``request lost``: never arrived): the caller times out."""
        self._row(worker, step, event, outcome)
        yield from self._latency(self.timing.timeout)
