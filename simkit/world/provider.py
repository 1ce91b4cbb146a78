"""The provider: ordered pages behind opaque continuation tokens (CONTRACT §1, §5).

A provider is a chain of pages, one per cursor. :class:`Provider` serves them and logs every response;
:meth:`Provider.deliverable`, :meth:`Provider.place` and :meth:`Provider.late_arrivals` answer, for the checker
and for plots only, which events a cursor can still deliver, where in the stream it stands and which events join
it late. No consumer ever calls them.
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass
from operator import attrgetter

from simkit.truth.clock import Clock
from simkit.model import Event, EventSpec, Page, Scenario


@dataclass(slots=True)
class _Entry:
    events: tuple[Event, ...]
    next_cursor: str
    stuck: int = 0          # the first `stuck` fetches answer an empty page with the same token


_position = attrgetter("position")


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


def _stream(entries: dict[str, _Entry], chain: list[str], extra: tuple[Event, ...]) -> dict[str, Event]:
    """Every event of the stream by id, in the order ids first appear in ``extra``, then in the chain's pages,
    then in the pages off the chain. An id's value is its last copy on the chain, else its first elsewhere."""
    events: dict[str, Event] = {e.id: e for e in extra}
    for c in chain:
        for e in entries[c].events:
            events[e.id] = e
    if len(chain) < len(entries):              # pages off the chain still belong to the stream
        for entry in entries.values():
            for e in entry.events:
                events.setdefault(e.id, e)
    return events


class Provider:
    """Serves pages by cursor; knows its whole stream (ground truth)."""

    def __init__(self, entries: dict[str, _Entry], start: str, extra: tuple[Event, ...] = (), lost_fetch: float = 0.0,
                 rng: random.Random | None = None):
        self._entries = entries
        self.start = start
        self._fetches: dict[str, int] = {}
        self.lost_fetch = lost_fetch
        self._rng = rng or random.Random(0)
        self.clock = Clock()
        #: Ground truth: every response served, as (seq, time, worker, cursor, next_cursor, event ids).
        self.log: list[tuple[int, float, int, str, str, tuple[str, ...]]] = []
        chain, self._index = _chain(entries, start)
        self.events = _stream(entries, chain, extra)
        self.head = max((e.position for e in self.events.values()), default=0)
        #: per chain index, the place; event id -> the last chain index whose page carries it (absent: none does),
        #: dropped once built: only :meth:`deliverable` needs it, in a run that leaves events unaccounted for
        self._chain = chain
        self._last, self._place = None, self._places(chain)[1]

    def _places(self, chain: list[str]) -> tuple[dict[str, int], list[int]]:
        """Each event's last chain index, and per chain index the highest position behind the cursor, or just
        below the first it still delivers."""
        entries, events, n = self._entries, self.events, len(chain)
        last: dict[str, int] = {}
        hi: list[int | None] = [None] * n       # per chain index: the highest and lowest position of the events
        lo: list[int | None] = [None] * n       # whose last chain index it is (None: no such event)
        for k in range(n - 1, -1, -1):
            top = bottom = None
            for e in reversed(entries[chain[k]].events):
                # Walking the chain backwards, the first copy of an id met is the one ``events`` holds.
                if e.id not in last:
                    last[e.id] = k
                    pos = e.position
                    if top is None:
                        top = bottom = pos
                    elif pos > top:
                        top = pos
                    elif pos < bottom:
                        bottom = pos
            hi[k], lo[k] = top, bottom
        ahead, first = [0] * n, self.head + 1     # per chain index: just below the first position it delivers
        for k in range(n - 1, -1, -1):
            if lo[k] is not None and lo[k] < first:
                first = lo[k]
            ahead[k] = first - 1
        behind = None                           # the highest position no later chain index delivers
        if len(last) < len(events):             # events off the chain: behind every cursor
            behind = max(e.position for eid, e in events.items() if eid not in last)
        places = []
        for k in range(n):
            places.append(ahead[k] if behind is None else behind)
            if hi[k] is not None:
                behind = hi[k] if behind is None else max(behind, hi[k])
        return last, places

    @property
    def pages(self) -> int:
        """How many cursors the provider answers."""
        return len(self._entries)

    def script(self) -> list[tuple[str, tuple[Event, ...], str, int]]:
        """Every page as ``(cursor, events, next_cursor, stuck)``: the chain in order, then the pages off it by
        cursor (what a scripted scenario of this provider lists)."""
        entries, index = self._entries, self._index
        order = sorted(entries, key=lambda c: (index.get(c, len(entries)), c))
        return [(c, entries[c].events, entries[c].next_cursor, entries[c].stuck) for c in order]

    def stuck_left(self) -> dict[str, int]:
        """For each stuck cursor fetched, how many of its ``stuck`` answers have been given (the only part of
        the fetch counts that can still change an answer)."""
        entries = self._entries
        return {c: min(n, entries[c].stuck) for c, n in self._fetches.items() if c in entries and entries[c].stuck}

    # -- what consumers see -------------------------------------------------------------------------
    def fetch(self, cursor: str, worker: int = 0) -> Page | None:
        """Answer ``fetch(cursor)``; ``None`` when the provider does not know the token."""
        entry = self._entries.get(cursor)
        if entry is None:
            self.log.append((self.clock.tick(), self.clock.now, worker, cursor, "", ()))
            return None
        n = self._fetches.get(cursor, 0) + 1
        self._fetches[cursor] = n
        if n <= entry.stuck:
            page = Page(cursor, (), cursor)
        else:
            page = Page(cursor, entry.events, entry.next_cursor)
        self.log.append((self.clock.tick(), self.clock.now, worker, cursor, page.next_cursor,
                         tuple(e.id for e in page.events)))
        return page

    def response_lost(self) -> bool:
        """Seeded draw: is this fetch response lost on its way back (``[generate] lost_fetch``)?"""
        return self.lost_fetch > 0 and self._rng.random() < self.lost_fetch

    # -- ground truth, for the checker and plots only --------------------------------------------------
    def deliverable(self, event_id: str, cursor: str) -> bool:
        """Can ``cursor`` (or the cursors that follow it) still deliver this event?"""
        k = self._index.get(cursor)
        if k is None:
            return False
        if self._last is None:
            self._last = self._places(self._chain)[0]
        return self._last.get(event_id, -1) >= k

    def place(self, cursor: str | None) -> int:
        """Where in the stream ``cursor`` stands: the highest position it can no longer deliver."""
        k = self._index.get(cursor)
        return self.head if k is None else self._place[k]

    def late_arrivals(self) -> set[str]:
        """Events that join the stream late: their first page on the chain comes after a page holding their
        position or a greater one (a backfill, or a conflicting identity at a position already served), or no
        chain page carries them."""
        late: set[str] = set()
        seen: set[str] = set()
        highest = None
        for cursor in self._chain:
            top = highest
            for e in self._entries[cursor].events:
                if e.id not in seen:
                    seen.add(e.id)
                    if highest is not None and e.position <= highest:
                        late.add(e.id)
                top = e.position if top is None else max(top, e.position)
            highest = top
        late.update(eid for eid in self.events if eid not in seen)
        return late

    def at_end(self, cursor: str) -> bool:
        """Is ``cursor`` the stream's end page (empty, answering itself), whatever has been fetched?"""
        e = self._entries.get(cursor)
        return e is not None and not e.events and e.next_cursor == cursor

    def is_end(self, cursor: str) -> bool:
        """Is ``cursor`` the end of the stream (empty page, same token, no stuck answers left)?"""
        e = self._entries.get(cursor)
        return e is not None and not e.events and e.next_cursor == cursor and self._fetches.get(cursor, 0) >= e.stuck

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
    entries = {}
    for p in sc.pages:
        events = tuple(_event(i, pos, sc.events) for i, pos in zip(p["ids"], p["positions"]))
        entries[p["cursor"]] = _Entry(events, p["next_cursor"], p["stuck"])
    start = sc.initial.resume_cursor or sc.pages[0]["cursor"]
    known = {e.position for entry in entries.values() for e in entry.events}
    extra = tuple(_event(f"e{pos}", pos, sc.events) for pos in sc.initial.receipts if pos not in known)
    return Provider(entries, start, extra)


_ALPHANUMERIC = string.ascii_letters + string.digits


def _token(rng: random.Random, used: set[str]) -> str:
    """A fresh random token of 10 letters and digits."""
    while True:
        t = "".join(rng.choices(_ALPHANUMERIC, k=10))
        if t not in used:
            used.add(t)
            return t


def generated(sc: Scenario, seed: int) -> Provider:
    """The seeded provider of a ``[generate]`` scenario.

    Events arrive in an order that is not always their position order (backfills land behind positions
    already served); tokens are random strings whose order says nothing about positions.
    """
    g = sc.generate
    rng = random.Random(f"provider:{seed}")
    arrivals, backfilled = _arrivals(g, rng)
    if sc.events:
        arrivals = [_event(e.id, e.position, sc.events, e.behavior) if e.position in sc.events else e
                    for e in arrivals]
    entries, start = _pages(g, rng, arrivals, backfilled)
    return Provider(entries, start, (), g["lost_fetch"], random.Random(f"lost_fetch:{seed}"))


def _arrivals(g: dict, rng: random.Random) -> tuple[list[Event], bool]:
    """The events in arrival order, and whether any is a backfill (if not, their positions increase).

    The i-th event has position 10·(i+1) and a behaviour drawn from the ``[generate]`` rates; from the
    second page's worth on, it may be followed by a backfill: an ``ok`` event between ``page_size`` and twice
    that many events back, at a position not a multiple of 10 and not taken by an earlier backfill.
    """
    size, backfill = g["page_size"], g["backfill"]
    rates = [(kind, g[kind]) for kind in ("poison", "transient", "review", "hold") if g[kind]]
    arrivals: list[Event] = []
    backs: set[int] = set()        # backfill positions (never a multiple of 10, so never a regular one)
    for i in range(g["events"]):
        pos = 10 * (i + 1)
        behavior = "ok"
        r = rng.random()
        for kind, rate in rates:
            if r < rate:
                behavior = kind
                break
            r -= rate
        arrivals.append(Event(f"e{pos}", pos, behavior))
        if i >= size and rng.random() < backfill:
            back = 10 * (i + 1 - rng.randint(size, 2 * size)) + rng.randint(1, 9)
            if back > 0 and back not in backs:
                backs.add(back)
                arrivals.append(Event(f"e{back}", back))
    return arrivals, bool(backs)


def _pages(g: dict, rng: random.Random, arrivals: list[Event], backfilled: bool) -> tuple[dict[str, _Entry], str]:
    """The chain of pages over ``arrivals`` by token, and its first token.

    Each page takes the next ``page_size`` arrivals in position order (``backfilled``: they may need
    sorting), or is empty, or starts up to half a page back (overlap); some answer ``stuck`` times first.
    The last token answers an empty page and itself.
    """
    size = g["page_size"]
    used: set[str] = set()
    entries: dict[str, _Entry] = {}
    start = token = _token(rng, used)
    offset = 0
    while offset < len(arrivals):
        nxt = _token(rng, used)
        stuck = rng.randint(1, 2) if rng.random() < g["stuck"] else 0
        if rng.random() < g["empty_pages"]:
            entries[token] = _Entry((), nxt, stuck)
        else:
            begin = offset
            if offset and rng.random() < g["overlap"]:
                begin = max(0, offset - rng.randint(1, max(1, size // 2)))
            end = max(offset + 1, begin + size)
            page = arrivals[begin:end]
            if backfilled:
                page.sort(key=_position)
            entries[token] = _Entry(tuple(page), nxt, stuck)
            offset = end
        token = nxt
    entries[token] = _Entry((), token)
    return entries, start


def build(sc: Scenario, seed: int) -> Provider:
    """The provider a scenario describes."""
    return scripted(sc) if sc.pages is not None else generated(sc, seed)
