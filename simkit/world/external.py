"""The external service an event's effect is sent to (seed 001), and the authorization it is called under.

The service executes effects into the sink's effect log (ground truth for ``duplicated``). With an
``idempotent`` sink its idempotency key is the logical request — operation id and canonical request
fingerprint (seed 001 step 7, "use idempotency ... for effects outside the settlement transaction"): a retry
of the same request never runs the effect twice, even under a new reservation forced by a rotated principal,
while a changed request runs it. An ``unsafe`` sink deduplicates nothing: seed 001's "Limits" — the pattern
does not make an external side effect atomic with the durable record.

Every request it sees, its own and the foreign ones whose replies cross into a call, is logged in
:attr:`ExternalService.requests`; the checker reads a reply's true identity there, never from the reply.
Latency, timeouts, lost and late replies are the world's business (:mod:`simkit.world.simulation`).
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, replace

from simkit.model import Reply, Reservation, fingerprint, owned
from simkit.truth.clock import TimeSource

from .sink import Sink

__all__ = ["principal_at", "Request", "ExternalService"]


def principal_at(rotations: tuple[float, ...], now: float) -> str:
    """The authorization binding in force at ``now``: ``P1``
    until the first credential rotation, then ``P2``..."""
    return f"P{1 + bisect_right(rotations, now)}"


@dataclass(frozen=True, slots=True)
class Request:
    """One request the service saw: ``fate`` is ``ran`` (the effect ran), ``deduplicated`` (same operation id
    and fingerprint as an earlier request: answered again, no effect) or ``foreign`` (another client's request
    whose reply crossed into one of ours; its effect is not in this sink). ``time`` is when it arrived,
    ``sent`` when its worker issued it (before its latency, and any pause at its crash point)."""

    seq: int
    time: float
    worker: int
    identity: Reservation
    fate: str
    sent: float


class ExternalService:
    """Executes effects for reservation tuples; ground truth of every request and whose reply is whose."""

    def __init__(self, sink: Sink, clock: TimeSource | None = None):
        self.sink = sink
        self.clock = clock or sink.clock
        self.requests: list[Request] = []
        self._ran: set[tuple[str, str]] = set()

    def keep_ran(self, ran) -> None:
        """Remember the logical requests run, (operation id, fingerprint), in ``ran``: a mutable set, only
        ever added to and asked about (``simkit live`` gives a durable one)."""
        self._ran = ran

    def state(self) -> tuple:
        """What this service's future, and the verdict on it, depend on (explore's fingerprints): every
        request it saw and the logical requests it ran."""
        return tuple(self.requests), frozenset(self._ran)

    def _log(self, worker: int, identity: Reservation, fate: str, sent: float | None = None) -> Reply:
        seq, now = self.clock.tick(), self.clock.now
        # the log keeps its own tuple: the one the caller holds (and gets back in the reply) is the caller's
        self.requests.append(Request(seq, now, worker, owned(identity), fate, now if sent is None else sent))
        return Reply(identity, seq)

    def execute(self, worker: int, identity: Reservation, sent: float | None = None) -> Reply:
        """The request arrives, issued at ``sent`` (by default now): run the effect unless the idempotent
        service already ran this logical request."""
        key = (identity.operation_id, identity.fingerprint)
        if self.sink.kind == "idempotent" and key in self._ran:
            return self._log(worker, identity, "deduplicated", sent)
        self._ran.add(key)
        self.sink.record(worker, self.sink.effect_of(identity.operation_id, identity.fingerprint))
        return self._log(worker, identity, "ran", sent)

    def crossed(self, identity: Reservation, differs: str) -> Reply:
        """A reply carrying another request's identity: another client's request that
        reused this operation id, differing from ``identity`` in ``differs``: a different
        request body (``fingerprint``), the principal before ``identity``'s (``binding``:
        ``P1`` for a call bound to ``P2``, "another principal" for ``P1``), or an older
        generation (``generation``). The call it crosses into never reached the service."""
        if differs == "fingerprint":
            other = replace(identity, fingerprint=fingerprint({"operation_id": identity.operation_id,
                                                               "request": "another client's"}))
        elif differs == "binding":
            k = int(identity.binding[1:]) if identity.binding[1:].isdigit() else 1
            other = replace(identity, binding=f"P{k - 1}" if k > 1 else "another principal")
        else:
            other = replace(identity, generation=identity.generation - 1)
        return self._log(0, other, "foreign")

    def identity_of(self, request: int) -> Reservation | None:
        """Ground truth: the tuple of the request with this sequence number."""
        for r in self.requests:
            if r.seq == request:
                return r.identity
        return None
