"""The handler and its sink: what an event's processing decides, and the effects it leaves.

``decide`` is the business outcome of handling an event at a moment (seed 000 step 4, docs/vocabulary.md, "The
procedure"; the behaviours of docs/scenarios.md, "Events"); ``effect`` is the external call of the
``idempotent`` and ``unsafe`` sinks. The effect log is ground truth for the checker; for the ``transactional``
sink the store's commit writes it.
"""
from __future__ import annotations

from collections.abc import Mapping

from simkit.model import Event, EventSpec, canonical_request, fingerprint
from simkit.truth.clock import Clock, TimeSource
from simkit.truth.columns import IdMap
from simkit.truth.log import DecisionLog, EffectLog

from .events import EventTable

__all__ = ["Sink"]

_DEFAULT = EventSpec()


class Sink:
    """A sink of kind ``transactional``, ``idempotent`` or ``unsafe`` (the scenario's ``sink``:
    docs/scenarios.md, "Top-level keys")."""

    def __init__(self, kind: str, specs: dict[int, EventSpec] | None = None, clock: TimeSource | None = None,
                 events: EventTable | None = None):
        self.kind = kind
        #: the provider's event table: an event of the stream is decided by its own behaviour, not by the copy
        #: a request carries (a consumer may send any)
        self._events = events
        #: every event of the stream is ``ok`` (or there is no table): a request that says ``ok`` is applied
        #: with no lookup, as the table would have it
        self._all_ok = events is None or set(events.behaviors.table) <= {"ok"}
        self.external = kind != "transactional"
        self.clock = clock or Clock()
        self._specs = specs or {}
        self._calls: dict[str, int] = {}
        self._first_seen: dict[str, float] = {}
        #: (seq, time, worker, event id) for every effect that happened
        self.effects = EffectLog()
        #: event id -> how many effects it had (an :class:`~simkit.truth.columns.IdMap`: no id string kept)
        self.effect_count: IdMap | dict[str, int] = IdMap()
        #: (seq, time, worker, event id, decision) for every handler decision
        self.decisions = DecisionLog()
        #: event id -> the fingerprint of its canonical request (:meth:`effect_of`), as first asked
        self._canonical: dict[str, str] = {}

    def decide(self, worker: int, event: Event) -> str:
        """The handler's outcome for ``event`` now: ``apply``,
        ``ignore``, ``quarantine`` or a non-terminal outcome.

        Every decision but an ``ok`` event's ``apply`` is logged:
        it is the ground truth a receipt is judged by. An event of the stream is decided by the provider's
        copy (``events``): the behaviour a request carries is the consumer's word."""
        if self._all_ok and event.behavior == "ok":
            return "apply"
        table = self._events
        if table is not None and (row := table.row(event.id)) is not None:
            behavior, position = table.behaviors[row], table.positions[row]
        else:                           # no table (a hand-built sink), or an id the stream does not hold
            behavior, position = event.behavior, event.position
        if behavior == "ok":
            return "apply"              # no state: an ``ok`` event's outcome never depends on its history
        now = self.clock.now
        spec = self._specs.get(position, _DEFAULT)
        calls = self._calls[event.id] = self._calls.get(event.id, 0) + 1
        first = self._first_seen.setdefault(event.id, now)
        if behavior == "ignore":
            decision = "ignore"         # a final policy decision: this event needs no effect
        elif behavior == "poison":
            decision = "quarantine"
        elif behavior == "transient":
            decision = "retry_later" if calls <= spec.failures else "apply"
        elif behavior == "dead_letter":     # a retryable dead letter, redriven: invariant 5 blocks on it
            decision = "dead_letter" if calls <= spec.failures else "apply"
        elif behavior == "review":
            decision = "operator_review" if now < first + spec.resolve_after else spec.resolution
        else:  # hold
            decision = "reversible_hold" if now < first + spec.release_after else "apply"
        self.decisions.add(self.clock.tick(), now, worker, event.id, decision)
        return decision

    def keep_handler_state(self, calls, first_seen) -> None:
        """Keep the handler's memory in these mutable mappings: per event id its calls so far (``calls``) and
        when it first reached the handler (``first_seen``). ``simkit live`` gives durable ones."""
        self._calls, self._first_seen = calls, first_seen

    def handler_state(self, events: Mapping[str, Event]) -> tuple[dict[str, int], dict[str, float | None]]:
        """What the handler's future answers depend on: per transient event its calls so far (capped at its
        failures), per review or hold event when it was first seen."""
        calls: dict[str, int] = {}
        seen: dict[str, float | None] = {}
        for eid, n in self._calls.items():
            event = events.get(eid)
            if event is not None and event.behavior in ("transient", "dead_letter"):
                spec = self._specs.get(event.position)
                calls[eid] = min(n, spec.failures if spec is not None else 1)
            elif event is None or event.behavior != "ok":
                seen[eid] = self._first_seen.get(eid)
        return calls, seen

    def effect(self, worker: int, event_id: str) -> None:
        """Run the event's effect. The ``idempotent`` sink deduplicates by event id; ``unsafe`` never does."""
        if self.kind == "idempotent" and event_id in self.effect_count:
            return
        self.record(worker, event_id)

    def record_initial(self, event_id: str) -> None:
        """The effect of an initial receipt (``[initial] receipts``): it happened before time 0
        (sequence 0, time 0, worker 0). As
        :meth:`simkit.store.sqlite.SQLiteStore.record_initial_effect` for a store's own effects."""
        self.effects.append((0, 0.0, 0, event_id))
        self.effect_count[event_id] = 1

    def state(self, events: Mapping[str, Event]) -> tuple:
        """What this sink's future, and the verdict on it, depend on (explore's fingerprints): the effects per
        event id, the handler's memory as far as it can still change an answer (:meth:`handler_state`), and
        the latest decision per event. Its logs are history, left out."""
        calls, seen = self.handler_state(events)
        return dict(self.effect_count.items()), calls, seen, {rec[3]: rec[4] for rec in self.decisions}

    def effect_of(self, operation_id: str, request_fingerprint: str) -> str:
        """Whose effect a request the external service ran is: ``operation_id``, the event's, when it carries
        the fingerprint of the event's canonical request (or the id is none of the stream's); else another
        request's that reused the operation id, kept as ``"<id>/<fingerprint's first 12 digits>"``, an effect
        no handler decided. (A consumer that called with a tuple of its own, a request body that is not the
        event's, had the effect credited to the event: its ``applied`` receipt held, and the run was ok.)"""
        table = self._events
        if table is None or (row := table.row(operation_id)) is None:
            return operation_id
        canonical = self._canonical.get(operation_id)
        if canonical is None:
            canonical = self._canonical[operation_id] = fingerprint(canonical_request(table.event(row)))
        if request_fingerprint == canonical:
            return operation_id
        return f"{operation_id}/{request_fingerprint[:12]}"

    def record(self, worker: int, event_id: str) -> None:
        self.effects.add(self.clock.tick(), self.clock.now, worker, event_id)
        self.count(event_id)

    def count(self, event_id: str, position: int | None = None) -> None:
        """One more effect of ``event_id``: :meth:`record` but its row (a journal writes it:
        :mod:`simkit.truth.journal`). ``position``: the event's, given only if ``event_id`` is its default id
        (then it is not parsed)."""
        count = self.effect_count
        if type(count) is IdMap:
            if position is None:
                count.increment(event_id)
            else:
                count.set_at(position, count.at(position, 0) + 1)
        else:
            count[event_id] = count.get(event_id, 0) + 1
