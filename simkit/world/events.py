"""The provider's event table: every event of the stream
as columns, no object per event (docs/performance.md).

Positions are a typed array and behaviours codes; ids are derived from positions
(:func:`~simkit.model.default_id`) unless the scenario names some, and an :class:`~simkit.model.Event` is
built only when one is asked for. The table reads as the dictionary of events by id it stands for.
"""
from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import ItemsView, Mapping, Sequence, ValuesView
from dataclasses import replace
from typing import Literal

from simkit.model import Event, default_id, default_position, is_default_id
from simkit.truth.columns import Codes, evenly_spaced
from simkit.truth.passes import NATIVE

__all__ = ["EventTable"]


class _Values(ValuesView):
    def __iter__(self):
        table = self._mapping
        return map(table.event, range(len(table)))


class _Items(ItemsView):
    def __iter__(self):
        table = self._mapping
        return ((e.id, e) for e in map(table.event, range(len(table))))


class _Derived(Sequence):
    """The default ids of a run of positions, built when read."""

    __slots__ = ("_positions",)

    def __init__(self, positions):
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [default_id(p) for p in self._positions[i]]
        return default_id(self._positions[i])

    def __iter__(self):
        return map(default_id, self._positions)


class EventTable(Mapping):
    """Events by id, in the stream's order. Row ``i`` holds ``positions[i]``, ``behaviors[i]`` and ``ids[i]``
    (``ids`` is ``None`` when every id is the default one of its position)."""

    __slots__ = ("positions", "behaviors", "ids", "_index", "_order", "_grid")

    def __init__(self, positions: array, behaviors: Codes, ids: list[str] | None = None):
        self.positions, self.behaviors = positions, behaviors
        if ids is not None and all(eid == default_id(p) for eid, p in zip(ids, positions)):
            ids = None
        self.ids = ids
        #: named ids: id -> row; else None, and a row is found by its position
        self._index = None if ids is None else {eid: i for i, eid in enumerate(ids)}
        #: rows in position order (ties in stream order); None when the rows are in position order already
        ordered = all(a < b for a, b in zip(positions, positions[1:]))
        self._order = None if ordered else array("q",
                                                 sorted(range(len(positions)), key=positions.__getitem__))
        #: :func:`evenly_spaced` of ordered positions, once asked (False: not yet)
        self._grid: tuple[int, int] | None | Literal[False] = False

    @classmethod
    def of(cls, events) -> EventTable:
        """The table of these events, in their order."""
        events = list(events)
        return cls(array("q", (e.position for e in events)), Codes(e.behavior for e in events),
                   [e.id for e in events])

    def row(self, event_id) -> int | None:
        """The row of ``event_id``, or ``None``."""
        if self._index is not None:
            return self._index.get(event_id)
        p = default_position(event_id) if type(event_id) is str else None
        if p is None:
            return None
        positions, order = self.positions, self._order
        if order is None:
            if self._grid is False:
                self._grid = evenly_spaced(positions)
            grid = self._grid
            i = (p - grid[0]) // grid[1] if grid is not None else bisect_left(positions, p)
            return i if 0 <= i < len(positions) and positions[i] == p else None
        k = bisect_left(order, p, key=positions.__getitem__)
        return order[k] if k < len(order) and positions[order[k]] == p else None

    def rank(self, event_id) -> int | None:
        """The index of ``event_id`` in :meth:`by_position`'s order, or ``None``: what a reader walking the
        stream in position order looks an id up by, with no dictionary of ids."""
        i = self.row(event_id)
        if i is None or self._order is None:
            return i
        if self.ids is None:                    # positions are distinct: a search finds the rank
            return bisect_left(self._order, self.positions[i], key=self.positions.__getitem__)
        return self._order.index(i)             # named ids: a scripted stream, a few events

    def rank_is_row(self) -> bool:
        """Is every row's :meth:`rank` the row itself (default ids, rows in position order)?"""
        return self.ids is None and self._order is None

    def id_at(self, i: int) -> str:
        return self.ids[i] if self.ids is not None else default_id(self.positions[i])

    def event(self, i: int) -> Event:
        """The event of row ``i``."""
        return Event(self.ids[i] if self.ids is not None else default_id(self.positions[i]),
                     self.positions[i], self.behaviors[i])

    def events(self, rows: Sequence[int]) -> tuple[Event, ...]:
        """The events of these rows (a page's): :meth:`event` of each, in C where built and every id is
        default (``simkit._native.events_of``, which answers ``None`` for a row it does not index)."""
        if NATIVE is not None and self.ids is None:
            b = self.behaviors
            if (page := NATIVE.events_of(self.positions, b.codes, b.table, rows, Event)) is not None:
                return page
        return tuple(map(self.event, rows))

    def placed(self, op):
        """``op``, a request about one event, with its event where the stream holds it. A consumer may send an
        event of the stream at a position of its own (an ``exec:`` line, or an ``Event`` it built): the world
        matches the scenario's faults, keeps the receipt and fingerprints the call by the provider's copy, as
        the handler decides by its behaviour (:class:`~simkit.world.sink.Sink`). A position of its own dodged
        the scenario's crash at the event's (round 17). An id the stream does not hold keeps its own."""
        e = op.event
        eid, position, plain = e.id, e.position, type(e) is Event
        if plain and self.ids is None and is_default_id(eid, position):
            return op                   # a default id at its own position: the stream's event, or none
        i = self.row(eid)
        if i is None or (plain and self.positions[i] == position):
            return op
        return replace(op, event=Event(eid, self.positions[i], e.behavior))

    def by_position(self) -> tuple[Sequence, Sequence]:
        """Ids and positions in position order (ties in the stream's order), as sequences built on read."""
        if self._order is None:
            return (_Derived(self.positions) if self.ids is None else self.ids), self.positions
        positions = array("q", (self.positions[i] for i in self._order))
        ids = _Derived(positions) if self.ids is None else [self.ids[i] for i in self._order]
        return ids, positions

    def __getitem__(self, event_id) -> Event:
        i = self.row(event_id)
        if i is None:
            raise KeyError(event_id)
        return self.event(i)

    def __contains__(self, event_id) -> bool:
        return self.row(event_id) is not None

    def __iter__(self):
        return iter(self.ids) if self.ids is not None else map(default_id, self.positions)

    def __len__(self) -> int:
        return len(self.positions)

    def values(self):
        return _Values(self)

    def items(self):
        return _Items(self)

    def __repr__(self) -> str:
        return f"EventTable({len(self)} events)"
