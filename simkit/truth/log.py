"""Ground-truth logs stored column by column: typed arrays for numbers, event
ids as the positions they derive from, repeated values (outcomes, kinds,
cursors) as codes, lists for everything else (:mod:`simkit.truth.columns`).

A log reads like the list of tuples it stands for as far as its readers go (iteration, ``len``, indexing,
``==`` with a list), so they need not know. A receipt row costs 33 bytes instead of a tuple with its own
sequence number, time and id objects (about 180): a million-event run keeps several rows per event. Writers
call :meth:`Log.add` with one value per column.

Each log's row is a named tuple (:class:`ReceiptRow`, :class:`WriteRow`, ... ``ServedRow`` for the provider's
log): ``log[k]`` is one, read by name (``log[k].event_id``), and so is each row of a store or sink that keeps
plain lists (SQLite, ``simkit live``). Iterating a column-stored log gives plain tuples in the same field
order, for the loops that unpack every row (a named tuple built per row made them several times slower).
"""
from __future__ import annotations

from array import array
from collections import namedtuple
from collections.abc import Callable
from copy import copy
from functools import partial
from itertools import chain
from typing import Any, NamedTuple

from simkit.model import Checkpoint

from .columns import Codes, Column, Ids, Ints, adder

__all__ = ["Log", "ReceiptLog", "ReadLog", "EffectLog", "DecisionLog", "WriteLog", "write_states",
           "ReceiptRow", "ReadRow", "EffectRow", "DecisionRow", "WriteRow", "ServedRow"]

#: column kinds beside :mod:`array` typecodes: ``ID`` an event id column, ``CODE`` a column of repeated
#: values, ``SMALL`` integers that are almost always small (workers, versions: two bytes a row, any other kept
#: aside)
ID, CODE, SMALL = "id", "code", "small"
_KINDS = {ID: Ids, CODE: Codes, SMALL: Ints}


def _maker(t: str | None) -> Callable[[], Any]:
    """What makes an empty column of kind ``t`` (a log's ``COLUMNS``): a list, a kind of
    :mod:`simkit.truth.columns`, or an :mod:`array` of that typecode."""
    if t is None:
        return list
    if t == SMALL:
        return partial(Ints, "h")
    return _KINDS[t] if t in _KINDS else partial(array, t)


class ReceiptRow(NamedTuple):
    """A durable receipt (:class:`ReceiptLog`)."""
    seq: int
    time: float
    worker: int
    event_id: str
    outcome: str


class ReadRow(NamedTuple):
    """A checkpoint load (:class:`ReadLog`)."""
    seq: int
    time: float
    worker: int
    checkpoint: Checkpoint


class EffectRow(NamedTuple):
    """An effect that happened (:class:`EffectLog`)."""
    seq: int
    time: float
    worker: int
    event_id: str


class DecisionRow(NamedTuple):
    """A handler decision (:class:`DecisionLog`)."""
    seq: int
    time: float
    worker: int
    event_id: str
    decision: str


class WriteRow(NamedTuple):
    """A durable checkpoint change (:class:`WriteLog`): its kind (``commit``, a barrier's ...), and the
    checkpoint before and after it."""
    seq: int
    time: float
    worker: int
    kind: str
    before: Checkpoint
    after: Checkpoint


class ServedRow(NamedTuple):
    """A response the provider served (``simkit.world.provider.ServedLog``): a refusal has no ``next_cursor``
    and no events."""
    seq: int
    time: float
    worker: int
    cursor: str
    next_cursor: str
    event_ids: tuple[str, ...]


class Log:
    """An append-only log. A subclass names its columns in ``COLUMNS`` as
    ``(name, kind)`` pairs: the typecode of :mod:`array` for numbers, ``ID`` for
    event ids, ``CODE`` for repeated values, ``None`` for a list of objects."""

    __slots__ = ("columns",)
    COLUMNS: tuple[tuple[str, str | None], ...] = ()
    #: the named tuple ``log[k]`` answers, its fields the columns (checked when a subclass is created; a log
    #: that declares none gets a :func:`~collections.namedtuple` of its column names)
    ROW: Any = tuple
    #: each column's kind (:class:`~simkit.truth.columns.Column` or a subclass), whose ``APPEND`` a generated
    #: writer inlines (set when a subclass is created)
    KINDS: tuple[type[Column], ...] = ()

    def __init_subclass__(cls):
        names = tuple(name for name, _t in cls.COLUMNS)
        if "ROW" not in cls.__dict__ and cls.__getitem__ is Log.__getitem__:
            cls.ROW = namedtuple(f"{cls.__name__}Row", names)
        if cls.__getitem__ is Log.__getitem__ and getattr(cls.ROW, "_fields", None) != names:
            raise TypeError(f"{cls.__name__}: its ROW's fields must be its columns {names}")
        # ``add(seq, time, ...)`` with each column's append written out (its ``APPEND``): no loop, no tuple
        # per row
        kinds = cls.KINDS = tuple(_KINDS.get(t, Column) if t is not None else Column for _n, t in cls.COLUMNS)
        cls.add = adder(cls, ", ".join(names), [f"self.columns[{i}]" for i in range(len(names))],
                        [k.APPEND.format(c=f"c{i}", v=n) for i, (k, n) in enumerate(zip(kinds, names))])
        cls.add.__doc__ = f"Append the row ({', '.join(names)})."
        cls._MAKERS = tuple(_maker(t) for _n, t in cls.COLUMNS)

    #: per column, the function that makes it empty (set when a subclass is created)
    _MAKERS: tuple[Callable[[], Any], ...] = ()

    def __init__(self, rows=()):
        self.columns = tuple([make() for make in self._MAKERS])
        for row in rows:
            self.append(row)

    def add(self, *values) -> None:     # replaced in every subclass
        raise NotImplementedError

    def append(self, row: tuple) -> None:
        """Append a row given as the log reads it back."""
        self.add(*row)

    def __copy__(self):
        other = object.__new__(type(self))
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                setattr(other, name, getattr(self, name))
        other.columns = tuple(copy(c) if isinstance(c, Column) else c[:] for c in self.columns)
        return other

    def __len__(self) -> int:
        return len(self.columns[0])

    def __iter__(self):
        return zip(*self.columns)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(map(self.ROW._make, zip(*(c[i] for c in self.columns))))
        return self.ROW._make([c[i] for c in self.columns])

    def __eq__(self, other) -> bool:
        if not isinstance(other, (Log, list, tuple)):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a list is (typeshed types __hash__ a method)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


_SEQ, _TIME, _WORKER = ("seq", "q"), ("time", "d"), ("worker", SMALL)


class ReceiptLog(Log):
    """Every durable receipt: (seq, time, worker, event id, outcome)."""
    __slots__ = ()
    ROW = ReceiptRow
    COLUMNS = (_SEQ, _TIME, _WORKER, ("event_id", ID), ("outcome", CODE))


class ReadLog(Log):
    """Every checkpoint load: (seq, time, worker, checkpoint)."""
    __slots__ = ()
    ROW = ReadRow
    COLUMNS = (_SEQ, _TIME, _WORKER, ("checkpoint", None))


class EffectLog(Log):
    """Every effect that happened: (seq, time, worker, event id)."""
    __slots__ = ()
    ROW = EffectRow
    COLUMNS = (_SEQ, _TIME, _WORKER, ("event_id", ID))


class DecisionLog(Log):
    """Every handler decision: (seq, time, worker, event id, decision)."""
    __slots__ = ()
    ROW = DecisionRow
    COLUMNS = (_SEQ, _TIME, _WORKER, ("event_id", ID), ("decision", CODE))


def _fields(cp: Checkpoint) -> tuple[str, int, int]:
    return cp.resume_cursor, cp.applied_position, cp.checkpoint_version


class WriteLog(Log):
    """Every durable checkpoint change of one store, read as (seq, time, worker, kind, before, after).

    It keeps only each change's result: a change starts from the one before it (the first from ``initial``),
    so ``before`` is rebuilt when read, and the store must write a row for every change of its checkpoint
    (:class:`~simkit.store.memory.MemoryStore` has no other way to change it). A commit that raises
    ``applied_position`` thus keeps no checkpoint object of its own.
    """

    __slots__ = ("initial",)
    ROW = WriteRow
    COLUMNS = (_SEQ, _TIME, _WORKER, ("kind", CODE),
               ("resume_cursor", CODE), ("applied_position", "q"), ("checkpoint_version", SMALL))

    def __init__(self, initial: Checkpoint):
        super().__init__()
        self.initial = initial

    def append(self, row: tuple) -> None:
        seq, time, worker, kind, before, after = row
        if before != self.last():
            raise ValueError(f"write {row}: does not start from the checkpoint the log ends with")
        self.add(seq, time, worker, kind, *_fields(after))

    def last(self) -> Checkpoint:
        """The checkpoint the last change left (``initial`` if none)."""
        return self._after(-1) if len(self) else self.initial

    def _after(self, i: int) -> Checkpoint:
        return Checkpoint(*(c[i] for c in self.columns[4:]))

    def states(self):
        """The rows with ``before`` and ``after`` as plain ``(resume_cursor,
        applied_position, checkpoint_version)`` tuples: what a reader of
        every row (the checker) takes, building no checkpoints."""
        seq, time, worker, kind, *after = self.columns
        return zip(seq, time, worker, kind, chain([_fields(self.initial)], zip(*after)), zip(*after))

    def __iter__(self):
        for seq, time, worker, kind, before, after in self.states():
            yield seq, time, worker, kind, Checkpoint(*before), Checkpoint(*after)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [WriteRow._make(row) for row in list(self)[i]]
        i = range(len(self))[i]
        return WriteRow(*(c[i] for c in self.columns[:4]), self.initial if i == 0 else self._after(i - 1),
                        self._after(i))


def write_states(writes):
    """:meth:`WriteLog.states` of any sequence of write rows (a store that keeps a plain list, a test's)."""
    if isinstance(writes, WriteLog):
        return writes.states()
    return ((s, t, w, k, _fields(b), _fields(a)) for s, t, w, k, b, a in writes)
