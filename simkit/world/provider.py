"""The provider: ordered pages behind opaque continuation tokens (docs/vocabulary.md, "Terms": page, cursor),
scripted or generated as a scenario says (docs/scenarios.md, "Pages" and "Generated streams").

A provider is a chain of pages, one per cursor. :class:`Provider` serves them and logs every response;
:meth:`Provider.deliverable` and :meth:`Provider.place` answer, for the checker and for plots only, which
events a cursor can still deliver and where in the stream it stands (which events join it late is
:func:`simkit.truth.derived.late_arrivals`). No consumer ever calls them.
"""
from __future__ import annotations

import random
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from simkit.model import Event, EventSpec, Page, Scenario, default_id
from simkit.truth.clock import Clock
from simkit.truth.columns import Codes, Column
from simkit.truth.log import Log, ServedRow

from . import order
from .arrivals import arrival_order, page_chain
from .events import EventTable
from .memo import per_scenario

__all__ = ["Provider", "ServedLog", "scripted", "generated", "build"]
_INF = float("inf")


@dataclass(slots=True)
class _Entry:
    rows: Sequence[int]     # the rows of the event table this page carries, in page order
    next_cursor: str
    stuck: int = 0          # the first `stuck` fetches answer an empty page with the same token
    own: tuple[Event, ...] | None = None     # a scripted page's own copies (its ids, positions, behaviours)


def _chain(entries: dict[str, _Entry], start: str) -> tuple[list[str], dict[str, int]]:
    """The cursors from ``start`` on, following ``next_cursor`` until an unknown or repeated one, and each
    one's index in that chain."""
    chain: list[str] = []
    index: dict[str, int] = {}
    cursor = start
    while cursor in entries and cursor not in index:
        index[cursor] = len(chain)
        chain.append(cursor)
        cursor = entries[cursor].next_cursor
    return chain, index


def _stream(entries: dict[str, tuple], chain: list[str], extra: tuple[Event, ...]) -> dict[str, Event]:
    """Every event of a scripted stream by id (``entries``: cursor -> (events, ...)), in the order ids first
    appear in ``extra``, then in the chain's pages, then in the pages off the chain. An id's value is its last
    copy on the chain, else its first elsewhere."""
    events: dict[str, Event] = {e.id: e for e in extra}
    for c in chain:
        for e in entries[c][0]:
            events[e.id] = e
    if len(chain) < len(entries):              # pages off the chain still belong to the stream
        for page in entries.values():
            for e in page[0]:
                events.setdefault(e.id, e)
    return events


class _PageIds(Column):
    """The provider log's column of event ids served: per response the page
    it served, its ids built when read; a response that served no page, or a
    row appended as it reads (a hand-written one), keeps its ids as given."""

    __slots__ = ("pages", "_table")

    def __init__(self, table: EventTable):
        self.pages: list[_Entry | tuple[str, ...]] = []
        self._table = table

    def append(self, entry: _Entry | tuple[str, ...]) -> None:
        self.pages.append(entry)

    def __delitem__(self, i) -> None:
        del self.pages[i]

    def __len__(self) -> int:
        return len(self.pages)

    def _ids(self, entry: _Entry | tuple[str, ...]) -> tuple[str, ...]:
        if not isinstance(entry, _Entry):
            return tuple(entry)
        if entry.own is not None:
            return tuple(e.id for e in entry.own)
        table = self._table
        if table.ids is None:                   # default ids: no call per event but the id's own
            return tuple(map(default_id, map(table.positions.__getitem__, entry.rows)))
        return tuple(map(table.id_at, entry.rows))

    def _get(self, i: int) -> tuple[str, ...]:
        return self._ids(self.pages[i])

    def rows(self, i: int) -> Sequence[int] | None:
        """The event-table rows response ``i`` served, or ``None`` (no page, its own copies, ids as given)."""
        entry = self.pages[i]
        return entry.rows if isinstance(entry, _Entry) and entry.own is None else None

    def __iter__(self):
        return map(self._ids, self.pages)


class ServedLog(Log):
    """Every response served: (seq, time, worker, cursor, next_cursor, event ids), a :class:`ServedRow`. A row
    keeps the page it served, not its ids."""
    __slots__ = ()
    ROW = ServedRow
    COLUMNS = (("seq", "q"), ("time", "d"), ("worker", "q"), ("cursor", None), ("next_cursor", None),
               ("event_ids", None))

    def __init__(self, table: EventTable):
        super().__init__()
        self.columns = (*self.columns[:5], _PageIds(table))


class Provider:
    """Serves pages by cursor; knows its whole stream (ground truth)."""

    def __init__(self, entries: dict[str, _Entry], start: str, events: EventTable, lost_fetch: float = 0.0,
                 rng: random.Random | None = None):
        self._entries = entries
        self.start = start
        self._fetches: dict[str, int] = {}
        self.lost_fetch = lost_fetch
        self._rng = rng if rng is not None or lost_fetch <= 0 else random.Random(0)  # (none where none draws)
        self.clock = Clock()
        #: Ground truth: every response served, as (seq, time, worker, cursor, next_cursor, event ids).
        self.log = ServedLog(events)
        chain, self._index = _chain(entries, start)
        #: every event of the stream by id (:class:`~simkit.world.events.EventTable`)
        self.events = events
        self.head = max(events.positions, default=0)
        #: per chain index, the place; per event row the last chain index whose page carries it (-1: none
        #: does), dropped once built: only :meth:`deliverable` needs it, in a run that leaves events
        #: unaccounted for
        self._chain = chain
        self._last: array | None = None
        self._place = self._places(chain)[1]
        self._disordered: frozenset[str] | None = None
        self._late: frozenset[str] | None = None

    def _places(self, chain: list[str]) -> tuple[array, list[int]]:
        """Each event row's last chain index, and per chain index the highest position behind the cursor, or
        just below the first it still delivers."""
        entries, positions, n = self._entries, self.events.positions, len(chain)
        last = array("q", [-1]) * len(positions)
        hi: list[int | None] = [None] * n  # per chain index: the highest and lowest position of the events
        lo: list[int | None] = [None] * n       # whose last chain index it is (None: no such event)
        for k in range(n - 1, -1, -1):
            top = bottom = None
            for i in reversed(entries[chain[k]].rows):
                # Walking the chain backwards, the first copy of an event met is the one the table holds.
                if last[i] < 0:
                    last[i] = k
                    pos = positions[i]
                    if top is None:
                        top = bottom = pos
                    elif pos > top:
                        top = pos
                    elif pos < bottom:
                        bottom = pos
            hi[k], lo[k] = top, bottom
        ahead, first = [0] * n, self.head + 1     # per chain index: just below the first position it delivers
        for k in range(n - 1, -1, -1):
            low = lo[k]
            if low is not None and low < first:
                first = low
            ahead[k] = first - 1
        # the highest position no later chain index delivers: the events off the chain are behind every cursor
        behind = max((p for p, k in zip(positions, last) if k < 0), default=None)
        places = []
        for k in range(n):
            places.append(ahead[k] if behind is None else behind)
            if hi[k] is not None:
                behind = hi[k] if behind is None else max(behind, hi[k])
        return last, places

    def _served(self, entry: _Entry) -> tuple[Event, ...]:
        """The events a page serves, built from the table unless the page has its own copies."""
        return entry.own if entry.own is not None else self.events.events(entry.rows)

    @property
    def pages(self) -> int:
        """How many cursors the provider answers."""
        return len(self._entries)

    def script(self) -> list[tuple[str, tuple[Event, ...], str, int]]:
        """Every page as ``(cursor, events, next_cursor, stuck)``: the chain in order, then the pages off it
        by cursor (what a scripted scenario of this provider lists)."""
        entries, index = self._entries, self._index
        order = sorted(entries, key=lambda c: (index.get(c, len(entries)), c))
        return [(c, self._served(entries[c]), entries[c].next_cursor, entries[c].stuck) for c in order]

    def disordered(self) -> frozenset[str]:
        """Ground truth, for the checker: the cursors whose page breaks the source order inside itself
        (:func:`~simkit.world.order.disordered`)."""
        if self._disordered is None:
            self._disordered = order.disordered(self._entries, self.events)
        return self._disordered

    def served_ranks(self, k: int) -> Sequence[int] | None:
        """Ground truth, for the checker: the ranks in position order of the events row ``k`` of the log
        served (invariants 1 and 5 read their outcomes by rank), where they are the rows of the event table
        (:meth:`~simkit.world.events.EventTable.rank_is_row`); else ``None``, and the checker reads ids."""
        log = self.log
        return log.columns[5].rows(k) if type(log) is ServedLog and self.events.rank_is_row() else None

    def late(self) -> frozenset[str]:
        """Ground truth, for the checker: the events that join
        the stream late (:func:`~simkit.world.order.late`)."""
        if self._late is None:
            self._late = order.late(self._entries, self._chain, self.events)
        return self._late

    def stuck_left(self) -> dict[str, int]:
        """For each stuck cursor fetched, how many of its ``stuck`` answers have been given (the only part of
        the fetch counts that can still change an answer)."""
        entries = self._entries
        return {c: min(n, entries[c].stuck) for c, n in self._fetches.items() if c in entries
                and entries[c].stuck}

    # -- what consumers see -------------------------------------------------------------------------
    def fetch(self, cursor: str, worker: int = 0) -> Page | None:
        """Answer ``fetch(cursor)``; ``None`` when the provider does not know the token."""
        entry = self._entries.get(cursor)
        if entry is None:
            self.log.add(self.clock.tick(), self.clock.now, worker, cursor, "", ())
            return None
        n = self._fetches.get(cursor, 0) + 1
        self._fetches[cursor] = n
        served: _Entry | tuple[str, ...]
        if n <= entry.stuck:
            page, served = Page(cursor, (), cursor), ()
        else:
            own = entry.own  # a scripted page's events are copied: the consumer gets its own
            events = (
                self._served(entry)
                if own is None
                else tuple(Event(e.id, e.position, e.behavior) for e in own)
            )
            page = Page(cursor, events, entry.next_cursor)
            # the log keeps the page, not its ids, unless it keeps rows as given (``simkit live``'s durable
            # one)
            served = entry if type(self.log) is ServedLog else tuple(e.id for e in page.events)
        self.log.add(self.clock.tick(), self.clock.now, worker, cursor, page.next_cursor, served)
        return page

    def response_lost(self) -> bool:
        """Seeded draw: is this fetch response lost on its way back (``[generate] lost_fetch``)?"""
        return self.lost_fetch > 0 and self._rng is not None and self._rng.random() < self.lost_fetch

    def draws_state(self):
        """The state of the seeded ``lost_fetch`` draws (``None`` while the rate is 0: nothing is drawn), for
        a fingerprint of what the provider's future answers depend on."""
        return self._rng.getstate() if self.lost_fetch > 0 and self._rng is not None else None

    # -- ground truth, for the checker and plots only --------------------------------------------------
    def deliverable(self, event_id: str, cursor: str) -> bool:
        """Can ``cursor`` (or the cursors that follow it) still deliver this event?"""
        return self.last_rank(event_id) >= self.cursor_rank(cursor)

    def cursor_rank(self, cursor: str) -> float:
        """``cursor``'s place on the page chain (``inf`` off it: it delivers nothing)."""
        k = self._index.get(cursor)
        return _INF if k is None else k

    def last_rank(self, event_id: str) -> float:
        """The last place on the chain whose page carries the event (``-inf``: none does, or no such event):
        a cursor delivers it while its :meth:`cursor_rank` is at most this."""
        i = self.events.row(event_id)
        if self._last is None:
            self._last = self._places(self._chain)[0]
        return -_INF if i is None or self._last[i] < 0 else self._last[i]

    def place(self, cursor: str | None) -> int:
        """Where in the stream ``cursor`` stands: the highest position it can no longer deliver."""
        k = None if cursor is None else self._index.get(cursor)
        return self.head if k is None else self._place[k]

    def at_end(self, cursor: str) -> bool:
        """Is ``cursor`` the stream's end page (empty, answering itself), whatever has been fetched?"""
        e = self._entries.get(cursor)
        return e is not None and not e.rows and e.next_cursor == cursor

    def is_end(self, cursor: str) -> bool:
        """Is ``cursor`` the end of the stream (empty page, same token, no stuck answers left)?"""
        e = self._entries.get(cursor)
        return (
            e is not None
            and not e.rows
            and e.next_cursor == cursor
            and self._fetches.get(cursor, 0) >= e.stuck
        )

    def keep_fetch_counts(self, counts) -> None:
        """Count fetches per cursor in ``counts``, a mutable mapping (``simkit live`` gives a durable one)."""
        self._fetches = counts

    def fetch_counts(self) -> dict[str, int]:
        """How many times each cursor was fetched."""
        return dict(self._fetches.items())


def _event(eid: str, position: int, specs: dict[int, EventSpec], default: str = "ok") -> Event:
    """The event, with the behaviour its ``[[events]]`` spec gives, else ``default``."""
    spec = specs.get(position) if specs else None
    return Event(eid, position, spec.behavior if spec else default)


def scripted(sc: Scenario) -> Provider:
    """The provider of a ``[[pages]]`` scenario."""
    return Provider(*_scripted_parts(sc))


@per_scenario(lambda sc: (sc.pages, sc.initial.resume_cursor, sc.initial.receipts, sc.events))
def _scripted_parts(sc: Scenario) -> tuple[dict[str, _Entry], str, EventTable]:
    """A scripted provider's pages, start and event table, which its runs only read (built once:
    :func:`~simkit.world.memo.per_scenario`)."""
    assert sc.pages is not None, "a scripted provider is built from its scenario's [[pages]]"
    pages = {}
    for p in sc.pages:
        events = tuple(_event(i, pos, sc.events) for i, pos in zip(p["ids"], p["positions"]))
        pages[p["cursor"]] = (events, p["next_cursor"], p["stuck"])
    start = sc.initial.resume_cursor or sc.pages[0]["cursor"]
    known = {e.position for events, _n, _s in pages.values() for e in events}
    extra = tuple(_event(default_id(pos), pos, sc.events) for pos in sc.initial.receipts if pos not in known)
    table = EventTable.of(_stream(pages, _chain({c: _Entry((), n) for c, (_e, n, _s) in pages.items()},
                                                start)[0],
                                  extra).values())
    row = cast("Callable[[str], int]", table.row)  # every id of these pages is in the table built from them
    entries = {c: _Entry(array("q", map(row, (e.id for e in events))), nxt, stuck, events)
               for c, (events, nxt, stuck) in pages.items()}
    return entries, start, table


def generated(sc: Scenario, seed: int) -> Provider:
    """The seeded provider of a ``[generate]`` scenario.

    Events arrive in an order that is not always their position order (backfills land behind positions
    already served); tokens are random strings whose order says nothing about positions.
    """
    g = sc.generate
    assert g is not None, "a generated provider is built from its scenario's [generate]"
    rng = random.Random(f"provider:{seed}")
    positions, behaviors, backfilled = arrival_order(g, rng, sc.events)
    pages, start = page_chain(g, rng, positions, backfilled)
    entries, start, table = _tabled(pages, positions, behaviors, start)
    rate = g["lost_fetch"]
    return Provider(entries, start, table, rate, random.Random(f"lost_fetch:{seed}") if rate > 0 else None)


def _tabled(
    pages, positions: array, behaviors: list[str], start: str
) -> tuple[dict[str, _Entry], str, EventTable]:
    """Pages of arrival indices as pages of event-table rows, the table in the order the pages carry them."""
    kind = "i" if len(positions) < 2**31 else "q"
    row_of = array(kind, [-1]) * len(positions)        # per arrival: its table row (-1: none yet)
    order = array(kind)                                 # per table row: its arrival
    entries = {}
    identity = True             # so far row = arrival for every arrival tabled (``row_of`` not kept yet)
    for token, arrivals, nxt, stuck in pages:
        n = len(order)
        if identity and type(arrivals) is range and arrivals.step == 1 and arrivals.start <= n:
            # consecutive arrivals from at most ``n`` on: the page is its own rows, the new ones tabled in one
            # extend, no call per event (a generated stream without backfills)
            rows = array(kind, arrivals)
            order.extend(range(n, max(n, arrivals.stop)))
        else:
            if identity:
                identity, row_of[:n] = False, order
            rows = array(kind)
            for a in arrivals:
                if row_of[a] < 0:
                    row_of[a] = len(order)
                    order.append(a)
                rows.append(row_of[a])
        entries[token] = _Entry(rows, nxt, stuck)
    table = EventTable(array("q", map(positions.__getitem__, order)),
                       _coded(list(map(behaviors.__getitem__, order))))
    return entries, start, table


def _coded(behaviors: list[str]) -> Codes:
    """An event table's behaviours column in one extend: each distinct behaviour coded first, in order of
    first appearance (the codes appending them one by one gives)."""
    column = Codes()
    code = {b: column.code(b) for b in dict.fromkeys(behaviors)}
    column.codes.extend(map(code.__getitem__, behaviors))
    return column


def build(sc: Scenario, seed: int) -> Provider:
    """The provider a scenario describes."""
    return scripted(sc) if sc.pages is not None else generated(sc, seed)
