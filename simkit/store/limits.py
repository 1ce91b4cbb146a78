"""What either store can hold, checked by both before they write anything (issue 32, "stores that disagree").

SQLite keeps an integer in 64 bits (``INTEGER``: -2**63..2**63 - 1) and text as UTF-8, which has no lone
surrogate (``'\\ud800'``); the memory store keeps any Python value. A consumer's value past them was kept by
the memory store and judged, while SQLite raised an error of its own (``OverflowError``,
``UnicodeEncodeError``): the same consumer got two answers. Both stores now ask these functions first and
refuse the same values with the same :class:`Unstorable` line, which names the value and the field it came in
(by its name in :mod:`simkit.ops`: ``event.position``, ``next_cursor``); the simulation reports it as the
consumer's malformed request (:func:`simkit.procedure.strategies.refuse_malformed`, CLI exit 2).

:func:`refuse_unwritable` is on the simulation's hot path (one call per commit): two comparisons and a
membership test, its message built only when it refuses.
"""
from __future__ import annotations

from simkit.errors import SimkitError, described
from simkit.model import OUTCOMES
from simkit.ops import MAX_FIELD

__all__ = ["LEAST_INTEGER", "MAX_FIELD", "Unstorable", "refuse_unwritable", "refuse_text", "refuse_integer",
           "refuse_event", "refuse_barrier", "refuse_overwrite", "refuse_settlement"]

#: SQLite's INTEGER holds -2**63..2**63 - 1 (:data:`~simkit.ops.MAX_FIELD` is its top): an event's position
#: or a barrier's expected version may be anything in it; a position or version written must be 0 or more.
LEAST_INTEGER = -(2**63)

_OUTCOMES = frozenset(OUTCOMES)


class Unstorable(SimkitError, ValueError):
    """A value no store can hold, refused before anything is written. ``field`` names it as :mod:`simkit.ops`
    does (``applied_position``, ``event.id``, ``next_cursor``); the message opens with it."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field} {problem}")
        self.field = field

    def __reduce__(self):               # (the command's work sends it across a pipe: simkit.cli.contained)
        return type(self), (self.field, str(self)[len(self.field) + 1:])


def refuse_unwritable(outcome: str | None = None, applied_position: int = 0, next_version: int = 0) -> None:
    """Refuse, before anything is written, a receipt outcome that is not one of :data:`~simkit.model.OUTCOMES`
    and an ``applied_position`` or ``next_version`` outside 0..2**63 - 1 (:class:`Unstorable`; a value that is
    no number, the ``TypeError`` of comparing it). Both stores call it first in each write."""
    if ((outcome is not None and outcome not in _OUTCOMES) or not 0 <= applied_position <= MAX_FIELD
            or not 0 <= next_version <= MAX_FIELD):
        if outcome is not None and outcome not in _OUTCOMES:
            raise Unstorable("outcome", f"is {outcome!r:.60}, not one of {', '.join(OUTCOMES)}")
        field, n = ("applied_position", applied_position) if not 0 <= applied_position <= MAX_FIELD else (
            "next_version", next_version)
        raise Unstorable(field, f"is {described(n)}, not within 0..2**63 - 1")


def refuse_text(field: str, value) -> None:
    """Refuse ``value`` unless it is text SQLite keeps as it is: a ``str`` (an integer in a TEXT column comes
    back a string) that UTF-8 can encode (no lone surrogate). An astral character (``'😀'``) is text like any.
    """
    if type(value) is str and value.isascii():      # the usual case, at once
        return
    if not isinstance(value, str):
        raise Unstorable(field, f"is {described(value)} ({type(value).__name__}), not str")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = ord(value[exc.start])
        raise Unstorable(field, f"{described(value)} holds a lone surrogate (U+{char:04X}), which no store "
                                "can hold: text is kept as UTF-8") from None


def refuse_integer(field: str, value) -> None:
    """Refuse ``value`` unless it is an integer SQLite's INTEGER holds (-2**63..2**63 - 1): a position, or the
    version a barrier expects (which, out of that range, SQLite could not even compare)."""
    if isinstance(value, int) and LEAST_INTEGER <= value <= MAX_FIELD:
        return
    if not isinstance(value, int):
        raise Unstorable(field, f"is {described(value)} ({type(value).__name__}), not int")
    raise Unstorable(field, f"is {described(value)}, not within -2**63..2**63 - 1 (SQLite's INTEGER)")


def refuse_event(event_id, position) -> None:
    """What both stores refuse in a commit's event, besides :func:`refuse_unwritable`'s: an id that is no text
    SQLite holds, a position outside its INTEGER. (The memory store asks only where the id is not the
    position's default one, ``e{position}`` with the position in 0..2**63 - 1: that one it knows is fine.)"""
    refuse_text("event.id", event_id)
    refuse_integer("event.position", position)


def refuse_barrier(cursor, version, next_cursor, next_version, applied_position) -> None:
    """What both stores refuse in a page barrier, in this order, before they compare or write anything."""
    refuse_unwritable(None, applied_position, next_version)
    refuse_text("cursor", cursor)
    refuse_integer("version", version)
    refuse_text("next_cursor", next_cursor)


def refuse_overwrite(next_cursor, next_version, applied_position) -> None:
    """What both stores refuse in an unconditional checkpoint write, before they write anything."""
    refuse_unwritable(None, applied_position, next_version)
    refuse_text("next_cursor", next_cursor)


def refuse_settlement(reservation, observation) -> None:
    """What both ledgers refuse in a ``Settle``, before they decide anything: a tuple (the one the consumer
    settles under, a reply's identity) whose text SQLite cannot keep or whose generation it cannot compare.
    Fields named as :class:`~simkit.ops.Settle`'s (``reservation.binding``, ``observation.identity.*``)."""
    tuples = [("reservation", reservation)]
    if not isinstance(observation, str):
        tuples.append(("observation.identity", getattr(observation, "identity", None)))
    for name, r in tuples:
        for field in ("operation_id", "fingerprint", "binding"):
            refuse_text(f"{name}.{field}", getattr(r, field, None))
        refuse_integer(f"{name}.generation", getattr(r, "generation", None))
