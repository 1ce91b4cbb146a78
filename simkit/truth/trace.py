"""The run's trace: one row per step, stored column by column (no dict, tuple or id string per row)."""
from __future__ import annotations

import hashlib
from array import array
from typing import TYPE_CHECKING

from simkit.model import REPLY_LOST, REQUEST_LOST

from .columns import Codes, Column, Ids, Ints, adder

__all__ = ["COLUMNS", "CONFLICT", "CROSSED_REPLY", "CURSOR_REFUSED", "DETAILS", "KINDS", "NO_PAGE",
           "REPLY_LOST", "REQUEST_LOST", "Trace", "commit_step", "crossed_outcome", "fetched_outcome",
           "is_fetched", "transition_outcome", "untraced", "validated_outcome"]

COLUMNS = ("time", "worker", "step", "event_id", "position", "resume_cursor", "cursor_place",
           "applied_position", "checkpoint_version", "outcome")

# -- outcomes: what the world writes in the ``outcome`` column, and what a reader may compare it with. A
# reader compares whole outcomes with these constants and reads the parts of a composite one from the typed
# details (:data:`DETAILS`, :meth:`Trace.detail`); it never parses an outcome.
#: ``fetch``: the provider refused the cursor (the consumer halts)
CURSOR_REFUSED = "cursor refused"
#: ``commit`` or ``quarantine``: a terminal receipt already existed, nothing was written
CONFLICT = "conflict"
#: the start of an ``effect`` outcome whose reply carried another request's identity (detail ``crossed``)
CROSSED_REPLY = "crossed reply"
#: Typed details of some rows, kept apart from the columns (sparse, out of the digest) and added to
#: :meth:`Trace.to_frame`: ``action``, ``before`` and ``after`` of a ``settle``, ``settle_late`` or
#: ``validate`` row (docs/vocabulary.md, "Settlement"; a validation has no ``before``), ``crossed`` the
#: identity an ``effect`` row's crossed reply carried.
DETAILS = ("action", "before", "after", "crossed")
#: The outcomes of a ``fetch`` row that handed its worker no page: the cursor refused, the reply lost (the
#: provider served it), the request lost on its way (the provider was never asked). Every other ``fetch``
#: outcome is :func:`fetched_outcome`'s.
NO_PAGE = frozenset({CURSOR_REFUSED, REPLY_LOST, REQUEST_LOST})


def commit_step(outcome: str) -> str:
    """The step of a receipt's row: ``quarantine`` for a durable quarantine receipt, else ``commit``."""
    return "quarantine" if outcome == "quarantined" else "commit"


def fetched_outcome(events: int) -> str:
    """``fetch``: a page of ``events`` events came back."""
    return f"{events} events"


def is_fetched(step: str, outcome: str) -> bool:
    """Did a row with this ``step`` and ``outcome`` hand its worker a page (a ``fetch`` of
    :func:`fetched_outcome`, not one of :data:`NO_PAGE`)?"""
    return step == "fetch" and outcome not in NO_PAGE


def crossed_outcome(identity) -> str:
    """``effect``: the reply carried ``identity``, another request's (:data:`CROSSED_REPLY`)."""
    return f"{CROSSED_REPLY} {identity}"


def transition_outcome(action: str, before, after) -> str:
    """``settle`` and ``settle_late``: the ledger's transition (details ``action``, ``before``, ``after``)."""
    return f"{action}: {before} -> {after}"


def validated_outcome(action: str, state) -> str:
    """``validate``: the first transaction of ``split_validate_write``
    decided (details ``action``, ``after``)."""
    return f"{action} {state or ''}".strip()


def untraced(*_row, **_given) -> None:
    """A trace row not written: the ``_row`` of a world that keeps no trace (``World(keep_trace=False)``)."""


class Trace:
    """Columnar trace. Each row carries the durable checkpoint as it stood after the step. Times are a typed
    array, as most rows have a moment of their own (a list would keep a float object per row); numbers are
    :class:`~simkit.truth.columns.Ints`, steps, cursors and outcomes :class:`~simkit.truth.columns.Codes`,
    event ids :class:`~simkit.truth.columns.Ids`: each column reads as the list it stands for."""

    __slots__ = COLUMNS + ("details",)

    def __init__(self):
        self.time = array("d")
        self.worker, self.event_id = Ints("h"), Ids()
        self.step, self.resume_cursor, self.outcome = Codes(), Codes(), Codes()
        self.position, self.cursor_place, self.applied_position = Ints(), Ints(), Ints()
        self.checkpoint_version = Ints("h")
        #: row -> its :data:`DETAILS` as a tuple, for the few rows that have them
        self.details: dict[int, tuple] = {}

    def __len__(self) -> int:
        return len(self.time)

    if TYPE_CHECKING:                            # generated below (:func:`_add`)
        def add(self, time: float, worker: int, step: str, event_id, position, checkpoint, place,
                outcome: str = "") -> None: ...

    def note(self, action=None, before=None, after=None, crossed=None) -> None:
        """Give the last row its typed details (:data:`DETAILS`)."""
        self.details[len(self.time) - 1] = (action, before, after, crossed)

    def detail(self, row: int) -> dict:
        """The typed details of ``row`` (``None`` for each it lacks)."""
        return dict(zip(DETAILS, self.details.get(row, (None,) * len(DETAILS))))

    def to_frame(self):
        """The trace as a pandas DataFrame (pandas is imported only here)."""
        import pandas as pd
        columns = {c: self.time if c == "time" else list(getattr(self, c)) for c in COLUMNS}
        try:
            frame = pd.DataFrame(columns)
        except UnicodeEncodeError:  # a consumer's text with a lone surrogate (a halt reason "x\\ud800"),
            frame = pd.DataFrame({  # which pandas 3's strings (Arrow's UTF-8) cannot hold: kept as objects
                c: pd.Series(v, dtype=object if any(type(x) is str for x in v) else None)
                for c, v in columns.items()})
        for i, name in enumerate(DETAILS):          # object columns: None where a row has no such detail
            column = [None] * len(frame)
            for row, values in self.details.items():
                column[row] = values[i]
            frame[name] = pd.Series(column, index=frame.index, dtype=object)
        return frame

    def digest(self) -> str:
        """A SHA-256 of every row, for determinism checks across processes."""
        h = hashlib.sha256()
        for row in zip(*(getattr(self, c) for c in COLUMNS)):
            h.update(repr(row).encode())
        return h.hexdigest()


#: each column's kind, in :data:`COLUMNS`' order (whose ``APPEND`` a generated writer inlines)
KINDS = (Column, Ints, Codes, Ids, Ints, Codes, Ints, Ints, Ints, Codes)


def _add():
    """``Trace.add(time, worker, step, event_id, position, checkpoint, place,
    outcome="")``, each column's append written out (its ``APPEND``): ``checkpoint``
    is the durable one after the step, ``place`` its cursor's place."""
    values = ("time", "worker", "step", "event_id", "position", "resume_cursor", "place", "applied_position",
              "checkpoint_version", "outcome")
    setup = ("resume_cursor, applied_position, checkpoint_version = checkpoint.resume_cursor, "
             "checkpoint.applied_position, checkpoint.checkpoint_version")
    appends = [(Ids.APPEND_AT if k is Ids else k.APPEND).format(c=f"c{i}", v=v, p="position")
               for i, (k, v) in enumerate(zip(KINDS, values))]
    add = adder(Trace, 'time, worker, step, event_id, position, checkpoint, place, outcome=""',
                [f"self.{c}" for c in COLUMNS], appends, setup)
    add.__doc__ = (
        "Append a row: ``checkpoint`` is the durable one after the step, ``place`` its cursor's place."
    )
    return add


Trace.add = _add()  # type: ignore[method-assign]  # the generated method the stub in Trace declares
