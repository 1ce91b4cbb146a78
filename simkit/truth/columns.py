"""Columns of ground truth that keep no object per row: integers in typed
arrays, repeated values as codes into a table of the distinct ones, event
ids as the positions they are derived from (docs/performance.md, memory).

Each column reads like the list it stands for (iteration, ``len``, indexing, ``index``, ``count``, ``in``,
``==`` with a list); its ``append`` takes any value, and a value the compact form cannot hold is kept aside,
by row. :class:`IdMap` is the dictionary counterpart: values by event id, a default id kept as its position.
"""
from __future__ import annotations

from array import array
from collections.abc import ItemsView, MutableMapping, Sequence
from functools import reduce
from itertools import repeat
from math import gcd
from operator import sub
from textwrap import indent

from simkit._codegen import compile_function
from simkit.model import default_id, default_position

__all__ = ["Column", "Ints", "Codes", "Ids", "IdMap", "SPAN", "DENSITY", "adder", "evenly_spaced"]

_WIDER = {"B": "H", "H": "I", "I": "Q"}


class Column(Sequence):
    """A column: ``__getitem__`` of one row and ``__iter__`` are each kind's
    own. ``APPEND`` is the source of an append of value ``{v}`` to column
    ``{c}`` (both names) as a generated ``add`` inlines it (:func:`adder`)."""

    __slots__ = ()
    APPEND = "{c}.append({v})"

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return self._get(i)

    def _get(self, i: int):
        raise NotImplementedError

    def __copy__(self):
        other = object.__new__(type(self))
        for cls in type(self).__mro__:
            for name in getattr(cls, "__slots__", ()):
                v = getattr(self, name)
                setattr(other, name, v[:] if isinstance(v, array) else v.copy()
                        if isinstance(v, (list, dict)) else v)
        return other

    def __eq__(self, other) -> bool:
        if not isinstance(other, (Sequence, array)) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # unhashable, as a list is (typeshed types __hash__ a method)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class Ints(Column):
    """Integers in an :mod:`array` of a signed ``typecode``; any other value
    (``None``, a bool, an integer out of range) is kept in a dictionary by
    row, its array slot holding the typecode's smallest value, ``mark``."""

    __slots__ = ("values", "other", "mark", "_top")
    APPEND = "{c}.values.append({v}) if type({v}) is int and {c}.mark < {v} <= {c}._top else {c}.append({v})"

    def __init__(self, typecode: str = "q", values=()):
        self.values = array(typecode)
        self.other: dict[int, object] = {}
        self.mark = -(1 << (8 * self.values.itemsize - 1))
        self._top = -1 - self.mark
        for v in values:
            self.append(v)

    def append(self, v) -> None:
        if type(v) is int and self.mark < v <= self._top:
            self.values.append(v)
        else:
            self.other[len(self.values)] = v
            self.values.append(self.mark)

    def __len__(self) -> int:
        return len(self.values)

    def _get(self, i: int):
        v = self.values[i]
        if v == self.mark:
            return self.other[i if i >= 0 else i + len(self.values)]
        return v

    def __iter__(self):
        if not self.other:
            return iter(self.values)
        other = self.other
        return (other[i] if i in other else v for i, v in enumerate(self.values))

    def __delitem__(self, i) -> None:
        n = len(self.values)
        gone = set(range(n)[i]) if isinstance(i, slice) else {range(n)[i]}
        del self.values[i]
        if self.other:
            kept = (k for k in range(n) if k not in gone)
            self.other = {new: self.other[old] for new, old in enumerate(kept) if old in self.other}

    def __contains__(self, v) -> bool:
        return (
            v in self.values
            if type(v) is int and v != self.mark and not self.other
            else super().__contains__(v)
        )


class Codes(Column):
    """Values that repeat (steps, outcomes, cursors), each row the code of its value in ``table``: one byte a
    row while there are at most 256 distinct values, two up to 65,536, and so on."""

    __slots__ = ("codes", "table", "_code")
    APPEND = ("x = {c}._code.get({v} if type({v}) is str else (type({v}), {v}))\n"
              "if x is None: x = {c}.code({v})\n"
              "{c}.codes.append(x)")             # after code(): it may have widened ``codes``

    def __init__(self, values=()):
        self.codes = array("B")
        self.table: list = []
        self._code: dict = {}
        for v in values:
            self.append(v)

    def code(self, v) -> int:
        """The code of ``v`` (adding it to ``table`` if it is new)."""
        key = v if type(v) is str else (type(v), v)         # 1, 1.0 and True stay apart
        c = self._code.get(key)
        if c is None:
            c = self._code[key] = len(self.table)
            self.table.append(v)
            if c >> (8 * self.codes.itemsize):
                self.codes = array(_WIDER[self.codes.typecode], self.codes)
        return c

    def append(self, v) -> None:
        c = self.code(v)
        self.codes.append(c)

    def __setitem__(self, i: int, v) -> None:
        c = self.code(v)
        self.codes[i] = c

    def __delitem__(self, i) -> None:
        del self.codes[i]

    def __len__(self) -> int:
        return len(self.codes)

    def _get(self, i: int):
        return self.table[self.codes[i]]

    def __iter__(self):
        return map(self.table.__getitem__, self.codes)

    def __contains__(self, v) -> bool:
        key = v if type(v) is str else (type(v), v)
        c = self._code.get(key) if getattr(type(v), "__hash__", None) else None
        return (c is not None and c in self.codes) or (c is None and super().__contains__(v))

    def count(self, v) -> int:
        key = v if type(v) is str else (type(v), v)
        c = self._code.get(key) if getattr(type(v), "__hash__", None) else None
        return self.codes.count(c) if c is not None else super().count(v)


class Ids(Column):
    """Event ids: an id its scenario did not name (:func:`~simkit.model.default_id`) as the position it is
    derived from, any other as ``-1 - `` its index in ``names``. No id string is kept per row: one is built
    each time a row is read."""

    __slots__ = ("codes", "names", "_name")
    APPEND = ("x = default_position({v}) if type({v}) is str else None\n"
              "if x is None or x >> 63: x = {c}.code({v})\n"
              "{c}.codes.append(x)")
    #: is ``{v}`` the default id of ``{p}``, and so stored as ``{p}``?
    DEFAULT_AT = "type({p}) is int and 0 <= {p} < 1 << 63 and {v} == default_id({p})"
    #: :meth:`append` with a ``position`` hint ``{p}``
    APPEND_AT = ("x = {p} if " + DEFAULT_AT + " else {c}.code({v})\n"
                 "{c}.codes.append(x)")
    #: :meth:`append` where ``{d}`` already says whether ``{v}`` is the default id of ``{p}``
    #: (``DEFAULT_AT``): several columns of one row test it once
    APPEND_KNOWN = "{c}.codes.append({p} if {d} else {c}.code({v}))"

    def __init__(self, values=()):
        self.codes = array("q")
        self.names: list = []
        self._name: dict = {}
        for v in values:
            self.append(v)

    def code(self, eid) -> int:
        """The code ``eid`` is stored as (adding it to ``names`` if it is new)."""
        p = default_position(eid) if type(eid) is str else None
        if p is not None and p < 1 << 63:
            return p
        key = eid if type(eid) is str else (type(eid), eid)
        c = self._name.get(key)
        if c is None:
            c = self._name[key] = -1 - len(self.names)
            self.names.append(eid)
        return c

    def append(self, eid, position=None) -> None:
        """Append ``eid``; ``position``, if given, is the event's, a hint that spares parsing a default id."""
        if type(position) is int and position >= 0 and eid == default_id(position) and position < 1 << 63:
            self.codes.append(position)
        else:
            self.codes.append(self.code(eid))

    def __delitem__(self, i) -> None:
        del self.codes[i]

    def decode(self, c: int):
        """The id stored as code ``c``."""
        return default_id(c) if c >= 0 else self.names[-1 - c]

    def __len__(self) -> int:
        return len(self.codes)

    def _get(self, i: int):
        return self.decode(self.codes[i])

    def __iter__(self):
        return map(self.decode, self.codes)


def adder(owner: type, params: str, columns: list[str], appends: list[str], setup: str = ""):
    """A method ``add(self, <params>)`` for ``owner``: it binds the ``columns`` (expressions) to ``c0``,
    ``c1``, ..., runs ``setup``, then ``appends`` (each a column's ``APPEND`` filled in for its ``c<i>``) with
    no call per value; a value a column refuses leaves no partial row behind. Compiled by
    :func:`simkit._codegen.compile_function`: a traceback through it shows its lines."""
    names = [f"c{i}" for i in range(len(columns))]
    body = "\n".join(line for a in appends for line in a.splitlines())
    source = (f"def add(self, {params}):\n    {', '.join(names)}, = {', '.join(columns)},\n"
              + indent(setup, "    ")
              + "\n    try:\n" + indent(body, "        ")
              + f"\n    except BaseException:\n        _truncate(({', '.join(names)},))\n        raise")
    env = {"default_id": default_id, "default_position": default_position, "_truncate": _truncate}
    return compile_function(source, "add", f"{owner.__qualname__}.add", owner.__module__, env)


def _truncate(columns) -> None:
    """Cut every column to the shortest one's length: the row being added is undone."""
    n = min(map(len, columns))
    for c in columns:
        del c[n:]


class IdMap(MutableMapping):
    """A dictionary keyed by event id that keeps no id string: a default id (:func:`~simkit.model.default_id`)
    as its position, in a typed array of value codes indexed from the first position set (code 0: none) while
    it stays dense enough (:data:`DENSITY`), else in ``aside``, a dictionary by position; any other id in
    ``named``. Values repeat (outcomes, counts): the array is the codes of a :class:`Codes`, ``slots``. The
    position-keyed
    :meth:`at` and :meth:`set_at` are the hot path's: they parse no id. Iteration: the array's ids in position
    order, then ``aside``'s, then ``named``'s."""

    __slots__ = ("base", "slots", "aside", "named", "_size")

    def __init__(self, items=()):
        self.base = 0
        self.slots = Codes()                       # by slot: ``_NONE`` (code 0) where no value is kept
        self.slots.code(_NONE)
        self.aside: dict[int, object] = {}
        self.named: dict = {}
        self._size = 0                              # how many positions the array holds a value for
        for k, v in dict(items).items():
            self[k] = v

    @staticmethod
    def _position(eid) -> int | None:
        return default_position(eid) if type(eid) is str else None

    def at(self, position: int, default=None):
        """The value of the default id of ``position`` (``default`` if none)."""
        i = position - self.base
        codes = self.slots.codes
        if 0 <= i < len(codes):
            c = codes[i]
            if c:
                return self.slots.table[c]
        return self.aside.get(position, default) if self.aside else default

    def set_at(self, position: int, v) -> None:
        """Set the value of the default id of ``position``."""
        if not self.slots.codes and not self.aside:
            self.base = position
        i = position - self.base
        if not (0 <= i < len(self.slots.codes) or self._grow(i)) or (self.aside and position in self.aside):
            self.aside[position] = v
            return
        c = self.slots.code(v)                     # first: it may widen ``codes``
        self._size += not self.slots.codes[i]
        self.slots.codes[i] = c

    def _grow(self, i: int) -> bool:
        """Extend the array through slot ``i`` (in steps of at least 256 slots), if it stays dense enough."""
        n = len(self.slots.codes)
        if not 0 <= i < SPAN + DENSITY * (self._size + 1):
            return False
        self.slots.codes.frombytes(bytes(max(i + 1 - n, 256) * self.slots.codes.itemsize))
        return True

    def increment(self, eid) -> None:
        """Count one more for ``eid`` (a value of 0 if it had none)."""
        p = self._position(eid)
        if p is None:
            self.named[eid] = self.named.get(eid, 0) + 1
        else:
            self.set_at(p, self.at(p, 0) + 1)

    def _pop_at(self, position: int) -> bool:
        i = position - self.base
        if 0 <= i < len(self.slots.codes) and self.slots.codes[i]:
            self.slots.codes[i] = 0
            self._size -= 1
            return True
        return self.aside.pop(position, _NONE) is not _NONE

    def __getitem__(self, eid):
        p = self._position(eid)
        v = self.named.get(eid, _NONE) if p is None else self.at(p, _NONE)
        if v is _NONE:
            raise KeyError(eid)
        return v

    def __contains__(self, eid) -> bool:
        p = self._position(eid)
        return eid in self.named if p is None else self.at(p, _NONE) is not _NONE

    def get(self, eid, default=None):
        p = self._position(eid)
        return self.named.get(eid, default) if p is None else self.at(p, default)

    def __setitem__(self, eid, v) -> None:
        p = self._position(eid)
        if p is None:
            self.named[eid] = v
        else:
            self.set_at(p, v)

    def __delitem__(self, eid) -> None:
        p = self._position(eid)
        if p is None:
            del self.named[eid]
        elif not self._pop_at(p):
            raise KeyError(eid)

    def _positions(self):
        base = self.base
        return (base + i for i, c in enumerate(self.slots.codes) if c)

    def __iter__(self):
        yield from map(default_id, self._positions())
        yield from map(default_id, list(self.aside))
        yield from list(self.named)

    def __len__(self) -> int:
        return self._size + len(self.aside) + len(self.named)

    def items(self):
        return _IdMapItems(self)

    def __repr__(self) -> str:
        return f"IdMap({dict(self.items())!r})"


#: An :class:`IdMap`'s array grows to a slot only below ``SPAN + DENSITY * (values + 1)`` (and then by at
#: least 256 slots): a position further on is kept aside. A stream spaced by up to ``DENSITY``, or with a few
#: gaps, stays in the array.
SPAN, DENSITY = 1024, 16
_NONE = object()


class _IdMapItems(ItemsView):
    def __iter__(self):
        m = self._mapping
        table, base = m.slots.table, m.base
        yield from ((default_id(base + i), table[c]) for i, c in enumerate(m.slots.codes) if c)
        yield from ((default_id(p), v) for p, v in list(m.aside.items()))
        yield from list(m.named.items())


def evenly_spaced(positions: Sequence[int]) -> tuple[int, int] | None:
    """``(first, step)`` if the sorted, distinct ``positions`` are ``first``, ``first + step``, ... with no
    gap (a generated stream): a position's index is then ``(p - first) // step``, no search."""
    if not positions:
        return None
    first = positions[0]
    step = reduce(gcd, map(sub, positions, repeat(first)), 0) or 1
    return (first, step) if (positions[-1] - first) // step + 1 == len(positions) else None
