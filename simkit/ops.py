"""The requests a consumer procedure yields, and the crash points around them (docs/vocabulary.md, "The
procedure" and "Crash points").

A consumer never does I/O: it yields one of these and receives the result. A driver (the SimPy world, or a
real process against a real database) executes it. ``LOST`` is the result of a request whose reply never came.
Each record here is the fields of one row of :data:`simkit.requests.REQUESTS`, which declares the rest (its
crash points, its lost op, whether it takes time): :data:`DECLARED` pairs them, and :func:`crash_points`,
:func:`lost_op` and the drivers read it.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from . import requests
from ._codegen import compile_function
from .errors import described
from .model import BEHAVIORS, OUTCOMES, TIMEOUT, WEAK, Event, Reply, Reservation, record
from .requests import CRASH_POINTS, EVENT_POINTS, LOST_OPS, WAIT_REASONS, Request

__all__ = ["LOST", "BLOCKED", "Load", "Fetch", "Lookup", "Skip", "Handle", "Effect", "Reserve", "Call",
           "Settle", "Commit", "Barrier", "Overwrite", "Wait", "Halt", "REQUESTS", "DECLARED", "CRASH_POINTS",
           "EVENT_POINTS", "LOST_OPS", "Request", "crash_points", "lost_op", "malformed", "WELL_FORMED",
           "request_table"]


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self):
        return self._name


#: The reply never came: the request may or may not have taken effect.
LOST = _Sentinel("LOST")
#: An external operation has no committed outcome yet (seed 000 invariant 5: it blocks the page barrier).
BLOCKED = _Sentinel("BLOCKED")


@record
class Load:
    """Read the durable checkpoint. Result: :class:`~simkit.model.Checkpoint`."""


@record
class Fetch:
    """Fetch the page at ``cursor``. Result: a Page, ``None`` (token refused) or ``LOST``."""
    cursor: str


@record
class Lookup:
    """Read receipts for these events. Result: ``(outcome by id, terminal receipt id by position)``."""
    events: tuple[Event, ...]


@record
class Skip:
    """Note that this event is a harmless replay (step 4); executes nothing. Result: ``None``."""
    event: Event


@record
class Handle:
    """Ask the handler what this event's outcome is now. Result: ``apply``, ``ignore``, ``quarantine`` or a
    non-terminal outcome."""
    event: Event


@record
class Effect:
    """Call the external sink for this event. Result: ``True`` or ``LOST``."""
    event: Event


@record
class Reserve:
    """Seed 001 steps 1-2: reserve the operation record of
    this event's external call, or reuse its reservation.

    The driver supplies the canonical request fingerprint and the authorization binding in force. Result: the
    :class:`~simkit.store.settlement.Operation` (its ``reservation`` and ``state``).
    """
    event: Event


@record
class Call:
    """Call the external service with exactly this reservation tuple (seed 001 step 2).

    Result: a :class:`~simkit.store.settlement.Reply` (the identity it carries may be another request's), or
    :data:`~simkit.store.settlement.TIMEOUT` when no reply came in time (lost, or late: a late reply is
    settled by the driver when it arrives).
    """
    event: Event
    reservation: Reservation


@record
class Settle:
    """Seed 001 steps 3-6: settle a reply or ``TIMEOUT`` observed under
    ``reservation`` into the operation record, under the run's settlement policy.
    Result: the record's state after (``committed``, ``provisional``, ``pending``)."""
    event: Event
    reservation: Reservation
    observation: Reply | str = TIMEOUT


@record
class Commit:
    """Commit a receipt (with the effect, for a transactional sink) and the resulting ``applied_position``.

    Result: ``True``; ``False`` when a terminal receipt already exists; or ``LOST``.
    """
    event: Event
    outcome: str
    applied_position: int
    with_effect: bool = False


@record
class Barrier:
    """Compare-and-swap the checkpoint from ``(cursor, version)`` to ``(next_cursor, next_version)``,
    raising ``applied_position`` to the prefix the page's receipts prove.

    Result: ``True`` if it swapped, ``False`` if the checkpoint had moved, or ``LOST``.
    """
    cursor: str
    version: int
    next_cursor: str
    next_version: int
    applied_position: int


@record
class Overwrite:
    """Write the checkpoint cursor and version without comparing (unsafe). Result: ``True`` or ``LOST``."""
    next_cursor: str
    next_version: int
    applied_position: int


@record
class Wait:
    """Back off before the next attempt; ``reason`` is one of
    :data:`~simkit.requests.WAIT_REASONS` (``caught_up`` or ``blocked``)."""
    reason: str


@record
class Halt:
    """Stop for investigation (seed 000 step 3). Never returns."""
    reason: str


def _pair() -> dict[type, Request]:
    """Each row of :data:`simkit.requests.REQUESTS` with its record here, the class of its name
    capitalised (``fetch``: :class:`Fetch`), in the rows' order. A row without a record, or a record
    without a row, is a ``TypeError`` when this module is imported: the two are one declaration."""
    here = {name: cls for name, cls in globals().items()
            if isinstance(cls, type) and cls.__module__ == __name__ and dataclasses.is_dataclass(cls)}
    paired: dict[type, Request] = {}
    for r in requests.REQUESTS:
        cls = here.pop(r.name.capitalize(), None)
        if cls is None:
            raise TypeError(f"request {r.name!r} (simkit/requests.py) has no record "
                            f"{r.name.capitalize()} in simkit/ops.py")
        names = {f.name for f in dataclasses.fields(cls)}
        if r.per_event != ("event" in names) or (r.quarantined is not None and "outcome" not in names):
            raise TypeError(f"request {r.name!r}: per_event is {r.per_event} and quarantined "
                            f"{r.quarantined is not None}, but its record {cls.__name__} has fields "
                            f"{sorted(names)}")
        paired[cls] = r
    if here:
        raise TypeError(f"records {', '.join(here)} in simkit/ops.py have no row in simkit/requests.py")
    return paired


#: Each request's record -> its row of :data:`simkit.requests.REQUESTS`, in the rows' order.
DECLARED: dict[type, Request] = _pair()
#: Every request a consumer may yield (its record), in the order of :data:`simkit.requests.REQUESTS`.
REQUESTS = tuple(DECLARED)


def crash_points(op) -> tuple[str | None, str | None]:
    """The crash points (before, after) that surround a request: its row's
    (:attr:`simkit.requests.Request.around`)."""
    r = DECLARED.get(type(op))
    if r is None:
        return None, None
    if r.quarantined is not None and op.outcome == "quarantined":
        return r.around_quarantined
    return r.around


def lost_op(op) -> str | None:
    """Which ``op`` of ``lost_response`` and ``lost_request`` faults names this request (``Reserve`` and
    ``Settle``, seed 001's store transactions, have none): its row's ``lost``."""
    r = DECLARED.get(type(op))
    return None if r is None else r.lost


def request_table() -> str:
    """docs/protocol.md's table of requests (Markdown): each row's name, its record's fields, its
    result and what it does."""
    lines = ["| op | fields | result | what it does (seed 000 step) |", "| --- | --- | --- | --- |"]
    for cls, r in DECLARED.items():
        fields = ", ".join(f"`{f.name}`" for f in dataclasses.fields(cls)) or "—"
        lines.append(f"| `{r.name}` | {fields}{' ' + r.fields_note if r.fields_note else ''} | {r.result} "
                     f"| {r.does} |")
    return "\n".join(lines)


#: The largest position or version a request may carry: SQLite's INTEGER and the trace's 64-bit columns stop
#: here. What the stores themselves refuse, before they write anything, is :mod:`simkit.store.limits`'.
MAX_FIELD = 2**63 - 1

#: What each field annotation of a request admits, as a test of its value ``v`` (``int``: an integer, not a
#: bool); any other annotation, anything. The one declaration of a well-formed field, as the wire's decoder
#: (:mod:`simkit.procedure.wire`) reads the same annotations: :func:`malformed` and :data:`WELL_FORMED` are
#: compiled from it.
_ADMITS = {
    "str": "type(v) is str",
    "int": "type(v) is int and 0 <= v <= MAX_FIELD",
    "bool": "type(v) is bool",
    # a record of these exact classes, not a subclass: one whose field is a property of its own read as one
    # event or tuple when checked and as another when executed (the handler's decision logged for another id)
    "Event": "type(v) is Event",
    "Reservation": "type(v) is Reservation",
    "Reply | str": "type(v) is Reply or type(v) is str",
    "tuple[Event, ...]": "type(v) in (tuple, list) and all(WELL_EVENT(e) for e in v)",
}
#: The fields of a record a request carries, held to their exact types too (an event's id of a ``str``
#: subclass passed ``isinstance(v, Event)`` and raised from its own ``__hash__`` in the store): record ->
#: (field, type).
_NESTED = {"Event": (("id", "str"), ("position", "int")),
           "Reservation": (("operation_id", "str"), ("fingerprint", "str"), ("binding", "str"),
                           ("generation", "int"))}
_EXACT = {"str": "type(v) is str", "int": "type(v) is int"}
#: A request's field that its type does not bound enough: (field, test of its value ``v``, what it must be).
#: (A Settle's observation of a string no policy knows, or a reply or reservation of fields of other types,
#: was a traceback from the ledger, raised as simkit's own error.)
_ALSO = {Commit: ("outcome", "v in OUTCOMES", f"one of {', '.join(OUTCOMES)}"),
         # the handler took a behaviour it did not know for a hold: "zzz" was answered reversible_hold (a str:
         # an object's own __eq__ raised from this very test)
         Handle: ("event.behavior", "type(v) is str and v in BEHAVIORS", f"one of {', '.join(BEHAVIORS)}"),
         # a Wait of any other reason was taken for one that is not caught up (a blocked worker's)
         Wait: ("reason", "v in WAIT_REASONS", f"one of {', '.join(WAIT_REASONS)}"),
         Settle: ("observation", "type(v) is str and v in WEAK or isinstance(v, Reply) and WELL_REPLY(v)",
                  f"a reply as Call gave it, or one of {', '.join(WEAK)}")}


def _well_reply(r: Reply) -> bool:
    """Whether reply ``r`` holds what a reply of ``Call`` holds besides its identity (a reservation, whose
    fields the ledgers refuse one by one: :func:`simkit.store.limits.refuse_settlement`): a request's number,
    an outcome."""
    return type(r.request) is int and type(r.outcome) is str and type(r.identity) is Reservation


_ENV = {"Event": Event, "Reservation": Reservation, "Reply": Reply, "MAX_FIELD": MAX_FIELD,
        "OUTCOMES": OUTCOMES, "BEHAVIORS": BEHAVIORS, "WAIT_REASONS": WAIT_REASONS, "WEAK": WEAK,
        "WELL_REPLY": _well_reply}


def _compiled(arg: str, lines: list[str], qualname: str) -> Callable[[Any], bool]:
    """``def check(ARG): LINES; return True``, compiled (:func:`simkit._codegen.compile_function`)."""
    source = f"def check({arg}):\n" + "".join(f"    {line}\n" for line in lines) + "    return True\n"
    return compile_function(source, "check", qualname, __name__, dict(_ENV))


#: Whether ``e``, one of a ``Lookup``'s events, is an :class:`Event` whose fields (:data:`_NESTED`) are each
#: what its annotation admits, in the range too: those the stores hold (an id of a ``str`` subclass raised
#: from its own ``__hash__`` in the store, a traceback)
_WELL_EVENT = _ENV["WELL_EVENT"] = _compiled("e", ["if type(e) is not Event: return False"] + [
    line for field, kind in _NESTED["Event"]
    for line in (f"v = e.{field}", f"if not ({_ADMITS[kind]}): return False")], "well_event")


def _rules(cls: type) -> list[tuple[str, str, str | None]]:
    """(field, test of its value ``v``, what it must be: ``None`` for its annotation) for each rule of
    record ``cls``, in the order :func:`malformed` reports them (annotations are strings: ``__future__``)."""
    rules: list[tuple[str, str, str | None]] = []
    for name, kind in _annotations(cls).items():
        if "." in name:                             # a carried record's field (:data:`_NESTED`), after it
            rules.append((name, _EXACT[kind], None))
        elif kind in _ADMITS:
            rules.append((name, _ADMITS[kind], None))
    return rules + ([_ALSO[cls]] if cls in _ALSO else [])


def _annotations(cls: type) -> dict[str, str]:
    """Each field of record ``cls`` -> its annotation, each carried record's field (``event.id``) after it."""
    out = {}
    for f in dataclasses.fields(cls):
        out[f.name] = kind = str(f.type)
        out.update((f"{f.name}.{sub}", t) for sub, t in _NESTED.get(kind, ()))
    return out


def _well_formed(cls: type) -> Callable[[Any], bool]:
    """One function testing every rule of request ``cls``
    at once: no loop, no lookup per field (the hot path)."""
    tests: dict[str, list[str]] = {}
    for name, test, _ in _rules(cls):
        tests.setdefault(name, []).append(f"({test})")
    lines = [line for name, each in tests.items()
             for line in (f"v = op.{name}", f"if not ({' and '.join(each)}): return False")]
    return _compiled("op", lines, f"well_formed.{cls.__name__}")


#: Each request's record -> whether a request of it is well-formed (:func:`malformed` would say ``None``):
#: one compiled test per record, which a driver asks before it executes a request (a False is then
#: :func:`simkit.procedure.strategies.refuse_malformed`'s).
WELL_FORMED: dict[type, Callable[[Any], bool]] = {cls: _well_formed(cls) for cls in DECLARED}
#: each test of :data:`_ADMITS` and :data:`_ALSO`, as a function of ``v`` (:func:`malformed`'s)
_ADMITTED = {test: _compiled("v", [f"if not ({test}): return False"], f"admits[{test}]")
             for test in [*_ADMITS.values(), *_EXACT.values(), *(rule[1] for rule in _ALSO.values())]}


def malformed(op) -> str | None:
    """The first field of request ``op`` whose value its annotation (or :data:`_ALSO`) does not admit, as
    ``Commit.applied_position is 2.5 (float), not int``; ``None`` if every field is well-formed. A driver asks
    before it executes a request that :data:`WELL_FORMED` refuses, and when a request fails, to blame the
    consumer's request, not itself."""
    if not dataclasses.is_dataclass(op):
        return None
    name = type(op).__name__
    annotations = _annotations(type(op))
    for field, test, must in _rules(type(op)):
        v = attrgetter(field)(op)
        if _ADMITTED[test](v):
            continue
        # described(): an int's repr may be 5,000 digits, and a consumer's object's repr may raise
        if must is not None:    # (a str subclass's repr is its str's: "behavior is 'ok', not one of ok, ...")
            kind = "" if type(v) is str else f" ({type(v).__name__})"
            return f"{name}.{field} is {described(v)}{kind}, not {must}"
        if type(v) is int and annotations[field] == "int":      # an integer field's value out of its range
            return f"{name}.{field} is {described(v)}, not within 0..2**63 - 1"
        if type(v) in (tuple, list) and annotations[field] == "tuple[Event, ...]":     # one event of them
            i = next(i for i, e in enumerate(v) if not _WELL_EVENT(e))
            return (f"{name}.{field}[{i}] is {described(v[i])} ({type(v[i]).__name__}), not an Event of a "
                    "str id and an int position within 0..2**63 - 1")
        return f"{name}.{field} is {described(v)} ({type(v).__name__}), not {annotations[field]}"
    return None
