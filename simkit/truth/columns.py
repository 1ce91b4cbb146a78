"""Columns of ground truth that keep no object per row: integers in typed arrays, repeated values as codes into a
table of the distinct ones, event ids as the positions they are derived from (docs/performance.md, memory).

Each column reads like the list it stands for (iteration, ``len``, indexing, ``index``, ``count``, ``in``, ``==``
with a list); its ``append`` takes any value, and a value the compact form cannot hold is kept aside, by row.
"""
from __future__ import annotations

from array import array
from collections.abc import Sequence

from simkit.model import default_id, default_position

__all__ = ["Column", "Ints", "Codes", "Ids"]

_WIDER = {"B": "H", "H": "I", "I": "Q"}


class Column(Sequence):
    """A column: ``__getitem__`` of one row and ``__iter__`` are each kind's own."""

    __slots__ = ()

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return self._get(i)

    def _get(self, i: int):
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        if not isinstance(other, (Sequence, array)) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class Ints(Column):
    """Integers in an :mod:`array` of ``typecode``; any other value (``None``, a bool, an integer out of range) is
    kept in a dictionary by row, its array slot holding the typecode's smallest value as a mark."""

    __slots__ = ("values", "other", "_mark")

    def __init__(self, typecode: str = "q", values=()):
        self.values = array(typecode)
        self.other: dict[int, object] = {}
        self._mark = -(1 << (8 * self.values.itemsize - 1))
        for v in values:
            self.append(v)

    def append(self, v) -> None:
        if type(v) is int and v != self._mark:
            try:
                self.values.append(v)
                return
            except OverflowError:
                pass
        self.other[len(self.values)] = v
        self.values.append(self._mark)

    def __len__(self) -> int:
        return len(self.values)

    def _get(self, i: int):
        v = self.values[i]
        if v == self._mark:
            return self.other[i if i >= 0 else i + len(self.values)]
        return v

    def __iter__(self):
        if not self.other:
            return iter(self.values)
        other = self.other
        return (other[i] if i in other else v for i, v in enumerate(self.values))

    def __contains__(self, v) -> bool:
        return v in self.values if type(v) is int and v != self._mark and not self.other else super().__contains__(v)


class Codes(Column):
    """Values that repeat (steps, outcomes, cursors), each row the code of its value in ``table``: one byte a row
    while there are at most 256 distinct values, two up to 65,536, and so on."""

    __slots__ = ("codes", "table", "_code")

    def __init__(self, values=()):
        self.codes = array("B")
        self.table: list = []
        self._code: dict = {}
        for v in values:
            self.append(v)

    def append(self, v) -> None:
        key = v if type(v) is str else (type(v), v)         # 1, 1.0 and True stay apart
        c = self._code.get(key)
        if c is None:
            c = self._code[key] = len(self.table)
            self.table.append(v)
            if c >> (8 * self.codes.itemsize):
                self.codes = array(_WIDER[self.codes.typecode], self.codes)
        self.codes.append(c)

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
    derived from, any other as ``-1 - `` its index in ``names``. No id string is kept per row: one is built each
    time a row is read."""

    __slots__ = ("codes", "names", "_name")

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

    def decode(self, c: int):
        """The id stored as code ``c``."""
        return default_id(c) if c >= 0 else self.names[-1 - c]

    def __len__(self) -> int:
        return len(self.codes)

    def _get(self, i: int):
        return self.decode(self.codes[i])

    def __iter__(self):
        return map(self.decode, self.codes)
