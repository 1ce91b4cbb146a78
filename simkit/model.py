"""The vocabulary of docs/vocabulary.md as plain data: events, pages, checkpoints, outcomes, crash points; and
the scenario file's tables (docs/scenarios.md) they are read into."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import MISSING, dataclass, field, fields
from typing import dataclass_transform

from . import requests
from ._codegen import compile_function

__all__ = [
    "TERMINAL", "NON_TERMINAL", "OUTCOMES", "BEHAVIORS", "CRASH_POINTS", "SINKS", "FAULT_KINDS",
    "LOST_FAULTS", "REPLY_LOST", "REQUEST_LOST", "REPLY_FAULTS", "LOST_OPS", "MAX_FAULTS", "record",
    "default_id", "default_position", "is_default_id", "Event", "Page", "Checkpoint", "Fault", "EventSpec",
    "Timing", "RandomFaults", "Initial", "Scenario", "PENDING", "PROVISIONAL", "COMMITTED", "STATES",
    "POLICIES", "WEAK", "TIMEOUT", "FIELDS", "CROSSED_FIELDS", "Reservation", "Reply", "owned",
    "canonical_request", "fingerprint",
]

#: Outcomes a receipt may bind to an event id (docs/vocabulary.md, "Outcomes").
TERMINAL = ("applied", "ignored", "quarantined")
NON_TERMINAL = ("retry_later", "dead_letter", "operator_review", "reversible_hold")
OUTCOMES = TERMINAL + NON_TERMINAL

#: Event behaviours (docs/scenarios.md, "Events"): how the handler and sink treat an event.
BEHAVIORS = ("ok", "ignore", "poison", "transient", "review", "hold", "dead_letter")

#: Crash points (docs/vocabulary.md, "Crash points"), in the order a page attempt reaches them: those of the
#: requests declared in :mod:`simkit.requests`.
CRASH_POINTS = requests.CRASH_POINTS

SINKS = ("transactional", "idempotent", "unsafe")
FAULT_KINDS = ("crash", "lost_response", "lost_request", "pause", "late_reply", "crossed_reply")
#: Faults that lose one message of a request (docs/scenarios.md, "Faults"): they name the request by ``op``
#: (:data:`LOST_OPS`). ``lost_response``: the request took effect, its reply never came; ``lost_request``: the
#: request never arrived. Either way the caller times out not knowing which.
LOST_FAULTS = ("lost_response", "lost_request")
#: The trace outcome of a request whose caller got no reply and times out: it took effect but its reply was
#: lost (``lost_response``, or a fetch response the provider lost), or it never arrived and nothing changed
#: (``lost_request``). The caller cannot tell them apart; the trace, written by the world, can.
REPLY_LOST, REQUEST_LOST = "reply lost", "request lost"
#: Faults on the reply of an external call (seed 001): they always name the ``effect`` op.
REPLY_FAULTS = ("late_reply", "crossed_reply")
#: The requests those faults name (:mod:`simkit.requests`, each request's ``lost``).
LOST_OPS = requests.LOST_OPS
#: The most faults of each kind in one explored schedule (``simkit explore``, ``simkit service --explore``): a
#: schedule is explored one recursion level per fault, and their number grows as passes ** K.
MAX_FAULTS = 50


@dataclass_transform(frozen_default=True)
def record(cls):
    """A frozen, slotted dataclass whose ``__init__`` sets the slots directly.

    The values on the hot path of a run (events, pages, checkpoints, requests) are immutable, so a consumer
    cannot change durable state behind the store's back; this keeps that and builds them at the cost of a
    plain class (a frozen dataclass's own ``__init__`` goes through ``object.__setattr__`` per field). The
    ``__init__`` is compiled by :func:`simkit._codegen.compile_function`: a traceback through it shows its
    lines.
    """
    cls = dataclass(frozen=True, slots=True)(cls)
    unsupported = [f.name for f in fields(cls) if f.default_factory is not MISSING or not f.init or f.kw_only]
    if unsupported or hasattr(cls, "__post_init__"):
        raise TypeError(f"@record {cls.__name__}: plain fields with plain defaults only "
                        f"(no default_factory, init=False, kw_only or __post_init__): {unsupported}")
    names = [f.name for f in fields(cls)]
    env = {f"_set_{n}": getattr(cls, n).__set__ for n in names}
    params = []
    for f in fields(cls):
        if f.default is not MISSING:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        else:
            params.append(f.name)
    body = "".join(f"\n    _set_{n}(self, {n})" for n in names) or "\n    pass"
    cls.__init__ = compile_function(f"def __init__(self, {', '.join(params)}):{body}", "__init__",
                                    f"{cls.__qualname__}.__init__", cls.__module__, env)
    # what that __init__ is and the member descriptors it sets, in order (simkit/_native_world.c, make)
    _RECORDS[cls] = (cls.__init__, tuple(getattr(cls, n) for n in names))
    return cls


#: each record class -> (its compiled ``__init__``, the member descriptors it sets, in order)
_RECORDS: dict[type, tuple] = {}


def default_id(position: int) -> str:
    """The id of an event its scenario does not name:
    ``e<position>`` (docs/scenarios.md, ``[[pages]] ids``)."""
    return f"e{position}"


def is_default_id(event_id, position) -> bool:
    """``default_position(event_id) == position``, found by building the id, not parsing it: the cheaper
    question where the position is known (a commit's, a page's events)."""
    return type(position) is int and 0 <= position < 10**19 and event_id == f"e{position}"


# the last id default_position read, and its answer (a run asks ~5 times in a row)
_LAST_PARSED: list = ["", None]


def default_position(event_id: str) -> int | None:
    """The position whose :func:`default_id` ``event_id`` is, or ``None`` (a named id, or ``e007``)."""
    last = _LAST_PARSED
    if event_id is last[0]:
        return last[1]
    digits = event_id[1:]
    # no position is past 2**63 (19 digits); int() raises past 4,300 of them
    if (event_id[:1] != "e" or not digits.isdigit() or not digits.isascii()
            or (digits[0] == "0" and digits != "0") or len(digits) > 19):
        p = None
    else:
        p = int(digits)
    last[0], last[1] = event_id, p
    return p


@record
class Event:
    """One event of the stream: a stable `id`, its `position` in the source's total order."""

    id: str
    position: int
    behavior: str = "ok"


@record
class Page:
    """The provider's answer to ``fetch(cursor)``: events in source order plus ``next_cursor``."""

    cursor: str
    events: tuple[Event, ...]
    next_cursor: str


@record
class Checkpoint:
    """The durable record of seed 000 "Keep two kinds of progress"."""

    resume_cursor: str
    applied_position: int
    checkpoint_version: int

    def as_dict(self) -> dict:
        return {
            "resume_cursor": self.resume_cursor,
            "applied_position": self.applied_position,
            "checkpoint_version": self.checkpoint_version,
        }


@dataclass(frozen=True, slots=True)
class Fault:
    """One scripted fault (``[[faults]]``, docs/scenarios.md, "Faults")."""

    kind: str
    point: str | None = None
    position: int | None = None
    occurrence: int = 1
    worker: int = 1
    op: str | None = None
    duration: float = 50.0
    delay: float = 0.0          # late_reply: the reply arrives this long after the request ran
    differs: str | None = None  # crossed_reply: fingerprint | binding | generation

    def as_dict(self) -> dict:
        d: dict[str, object] = {"kind": self.kind}
        for key in ("point", "position", "op", "differs"):
            if getattr(self, key) is not None and not (key == "op" and self.kind in REPLY_FAULTS):
                d[key] = getattr(self, key)
        if self.occurrence != 1:
            d["occurrence"] = self.occurrence
        if self.worker != 1:
            d["worker"] = self.worker
        if self.kind == "pause":
            d["duration"] = self.duration
        if self.kind == "late_reply":
            d["delay"] = self.delay
        return d


@dataclass(frozen=True, slots=True)
class EventSpec:
    """Per-event behaviour parameters from ``[[events]]``."""

    behavior: str = "ok"
    failures: int = 1
    resolve_after: float = 30.0
    resolution: str = "quarantine"
    release_after: float = 30.0


@dataclass(slots=True)
class Timing:
    """Simulated durations (``[timing]``, docs/scenarios.md, "Timing")."""

    fetch_latency: float = 1.0
    commit_latency: float = 0.5
    effect_latency: float = 0.5
    restart_delay: float = 5.0
    timeout: float = 10.0
    backoff: float = 5.0
    time_limit: float = 10000.0


@dataclass(slots=True)
class RandomFaults:
    """Seeded faults (``[random_faults]``, docs/scenarios.md, "Random faults"): probabilities per crash-point
    pass, per reply (``lost_response``) or per request (``lost_request``)."""

    crash: float = 0.0
    lost_response: float = 0.0
    lost_request: float = 0.0
    pause: float = 0.0
    pause_duration: float = 20.0
    max_faults: int = 25


@dataclass(slots=True)
class Initial:
    """Durable state at time 0 (``[initial]``, docs/scenarios.md, "Initial state")."""

    resume_cursor: str | None = None
    applied_position: int = 0
    checkpoint_version: int = 0
    receipts: tuple[int, ...] = ()

    def durable(self, events: Iterable[Event], start: str) -> tuple[Checkpoint, dict[str, tuple[str, int]]]:
        """The checkpoint and the receipts (event id -> ``("applied",
        position)``) at time 0, for a stream of ``events`` whose first cursor is
        ``start``: what the SimPy world and ``simkit live`` both begin from."""
        id_at = {e.position: e.id for e in events}
        receipts = {id_at[p]: ("applied", p) for p in self.receipts}
        return Checkpoint(self.resume_cursor or start, self.applied_position,
                          self.checkpoint_version), receipts


@dataclass(slots=True)
class Scenario:
    """A parsed, validated scenario file."""

    name: str
    description: str = ""
    sink: str = "transactional"
    backfills: bool = False
    workers: int = 1
    seed: int = 0
    settlement: str = "fenced"
    store: str = "memory"
    initial: Initial = field(default_factory=Initial)
    timing: Timing = field(default_factory=Timing)
    pages: tuple[dict, ...] | None = None
    generate: dict | None = None
    events: dict[int, EventSpec] = field(default_factory=dict)
    faults: tuple[Fault, ...] = ()
    random_faults: RandomFaults = field(default_factory=RandomFaults)
    #: ``[auth] rotate_at``: moments the credential rotates (seed 001: the authorization binding changes)
    rotate_at: tuple[float, ...] = ()
    source: str = "<scenario>"


# -- settlement of retryable external calls (docs/vocabulary.md, settlement) ---------------------------------
PENDING, PROVISIONAL, COMMITTED = "pending", "provisional", "committed"
STATES = (PENDING, PROVISIONAL, COMMITTED)
#: The settlement policies (docs/vocabulary.md, "Settlement"), in the order of the table there: the scenario
#: key ``settlement`` (:data:`simkit.scenario.read.SETTLEMENTS`) and the ledger
#: (:data:`simkit.store.settlement.POLICIES`).
POLICIES = ("fenced", "last_write_wins", "unfenced", "split_validate_write")
#: Weak observations (seed 001 step 5): they may only ever write ``provisional``.
WEAK = ("timeout", "cancelled", "expired")
TIMEOUT = "timeout"
FIELDS = ("operation_id", "fingerprint", "binding", "generation")
#: What a crossed reply's identity may differ in (``[[faults]] kind = "crossed_reply"``, key ``differs``).
CROSSED_FIELDS = ("fingerprint", "binding", "generation")


@dataclass(frozen=True, slots=True)
class Reservation:
    """Seed 001 step 1: the tuple a call is made with and every reply must match."""

    operation_id: str
    fingerprint: str
    binding: str
    generation: int

    def differs(self, other: Reservation) -> tuple[str, ...]:
        """The fields in which ``other`` differs from this tuple."""
        return tuple(f for f in FIELDS if getattr(self, f) != getattr(other, f))

    def __str__(self) -> str:
        return f"({self.operation_id}, {self.fingerprint[:8]}, {self.binding}, g{self.generation})"


@dataclass(frozen=True, slots=True)
class Reply:
    """A success reply from the external service: the identity it carries and the service's number of the
    request it answers (ground truth: :attr:`simkit.world.external.ExternalService.requests`)."""

    identity: Reservation
    request: int
    outcome: str = "success"


def owned(value):
    """A copy of a :class:`Reservation` or :class:`Reply` (its identity copied too) that no one else holds;
    any other value as it is. What ground truth keeps of a consumer's request is its own, and so is what it
    hands back: a consumer that rewrote the tuple it had called with after the call (``object.__setattr__``)
    rewrote the service's log, and a stale binding passed as the one in force (docs/verdict.md, "Crashes are
    real": every value handed to a consumer is a copy or immutable)."""
    if isinstance(value, Reservation):
        return Reservation(value.operation_id, value.fingerprint, value.binding, value.generation)
    if isinstance(value, Reply):
        return Reply(owned(value.identity), value.request, value.outcome)
    return value


def canonical_request(event: Event) -> dict:
    """The request an event's effect sends: what the fingerprint covers (seed 001, "Limits": a trustworthy
    canonicalization scheme). The operation id is the event id."""
    return {"operation_id": event.id, "position": event.position, "effect": "apply"}


def fingerprint(request: dict) -> str:
    """SHA-256 of the canonical JSON of a request (never
    ``hash()``: a run must not depend on PYTHONHASHSEED)."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
