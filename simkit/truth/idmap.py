"""A dictionary keyed by event id that keeps no id string (:class:`IdMap`): values by event id, a default id
(:func:`~simkit.model.default_id`) kept as its position, its values as the codes of a
:class:`~simkit.truth.columns.Codes` (docs/performance.md, memory)."""
from __future__ import annotations

from collections.abc import ItemsView, MutableMapping

from simkit.model import default_id, default_position

from .columns import Codes

__all__ = ["IdMap", "SPAN", "DENSITY"]


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
