"""Facts derived from ground truth alone (:class:`~simkit.truth.ground.GroundTruth`), each defined once here
for the judge, the figures and the tools. Those the figures read (:func:`joined_at`, :func:`cursor_history`,
:func:`held_pages`) take a ``GroundTruth`` or anything :func:`~simkit.truth.ground.as_truth` reads (a World, a
Run).

Facts that need the judge's notion of an outcome (the durable prefix, when an event was at risk, when a loss
became final) are in :mod:`simkit.judge.facts`.
"""
from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, lt

from simkit.model import REQUEST_LOST

from . import passes
from .columns import evenly_spaced
from .ground import View, as_truth
from .trace import is_fetched

__all__ = ["ENDS", "Hold", "Stream", "breaks_order", "cursor_history", "disordered_pages", "effects_count",
           "first_late", "handled", "held_pages", "joined_at", "late_arrivals", "stream_index",
           "stream_order"]

_position = attrgetter("position")


def late_arrivals(truth) -> frozenset[str]:
    """The events that join the stream late (docs/verdict.md, invariant 2): their first page on the provider's
    chain comes after a page holding their position or a greater one (a backfill behind served positions, or a
    new id at a position already served: ``<=``), or no page on the chain carries them. An
    ``applied_position`` makes no claim about them; they are judged by receipts alone. Computed once per
    :class:`GroundTruth`: by the provider from its own table where it can (``ProviderTruth.late``), else from
    its script."""
    late = truth.memo.get("late_arrivals")
    if late is None:
        own = truth.provider.late
        late = truth.memo["late_arrivals"] = own() if own is not None else _late(truth.provider)
    return late


def first_late(chain: Iterable[Iterable[tuple]], seen) -> set:
    """:func:`late_arrivals`' rule over the pages of a chain, each as ``(key,
    position)`` pairs (an event's id, or its row in a table): the keys first served
    at or below a position an earlier page served. ``seen[key]`` is set to 1 for
    every key served (a ``bytearray`` by row, or a ``defaultdict(int)`` by id)."""
    late: set = set()
    highest = None
    for page in chain:
        top = highest
        for key, p in page:
            if not seen[key]:
                seen[key] = 1
                if highest is not None and p <= highest:
                    late.add(key)
            top = p if top is None or p > top else top
        highest = top
    return late


def _chain_of(provider):
    """The script's pages on the chain: from the start until an unknown or repeated cursor."""
    pages = {cursor: (events, nxt) for cursor, events, nxt, _stuck in provider.script()}
    walked: set[str] = set()
    cursor = provider.start
    while cursor in pages and cursor not in walked:
        walked.add(cursor)
        events, cursor = pages[cursor]
        yield [(e.id, e.position) for e in events]


def _late(provider) -> frozenset[str]:
    seen: defaultdict[str, int] = defaultdict(int)
    late = first_late(_chain_of(provider), seen)
    late.update(eid for eid in provider.events if not seen[eid])
    return frozenset(late)


def breaks_order(positions: Sequence[int]) -> bool:
    """Does a page break the source order inside itself: a position not above the one before it (a regression,
    or two ids at one position)?"""
    return not all(map(lt, positions, positions[1:]))


def disordered_pages(truth) -> frozenset[str]:
    """The cursors whose page :func:`breaks_order` (step 3): by the provider from its own table where it can
    (``ProviderTruth.disordered``), else from its script. Computed once per :class:`GroundTruth`."""
    found = truth.memo.get("disordered")
    if found is None:
        own = truth.provider.disordered
        found = truth.memo["disordered"] = own() if own is not None else frozenset(
            c for c, events, _n, _s in truth.provider.script() if breaks_order([e.position for e in events]))
    return found


class Stream(Mapping):
    """The stream in position order (ties in the stream's order), read from the provider's event table:
    ``ids`` and ``positions`` by rank, and as a mapping each id's rank (``rank``: the table's own
    :meth:`~simkit.world.events.EventTable.rank`, which keeps no table by id string for default ids). Only a
    stream that names its ids (a scripted one, a few events) keeps a dictionary of them. A log's ranks are
    computed once (:meth:`ranks`)."""

    __slots__ = ("ids", "positions", "rank", "_named", "_grid", "_ranked")

    def __init__(self, ids: Sequence[str], positions: Sequence[int], rank=None):
        self.ids, self.positions = ids, positions
        self._named = rank is None
        #: ``eid`` -> its index in position order, or ``None``: "is this an event of the stream?"
        self.rank = dict(zip(ids, range(len(ids)))).get if self._named else rank
        self._grid = None if self._named else evenly_spaced(positions)
        self._ranked: dict[tuple, tuple] = {}       # a log's id codes (id, length) -> (them, their ranks)

    def ranks(self, log) -> array:
        """Per row of ``log`` (rows naming an event in field 3: receipts, effects), its event's rank, or -1 if
        the stream does not hold it. A log that keeps a default id as its position (:meth:`View.id_codes`) is
        ranked by position, no id string read."""
        codes = log.id_codes() if not self._named and isinstance(log, View) else None
        if codes is None:
            return array("q", (-1 if k is None else k for k in map(self.rank, (row[3] for row in log))))
        key = (id(codes), len(codes))               # the claims and the outcomes both ask: computed once
        kept = self._ranked.get(key)
        if kept is None or kept[0] is not codes:    # kept with its codes, whose id no other may take
            kept = self._ranked[key] = (codes, self._ranks(codes))
        return kept[1]

    def _ranks(self, codes: Sequence[int]) -> array:
        """The rank of each position of ``codes`` (-1: none), in one pass (:func:`~.passes.ranks`)."""
        return passes.ranks(codes, self.positions, self._grid)

    def flags(self, ids: Iterable[str]) -> bytearray:
        """By rank, 1 for each event of the stream among ``ids`` (any other id is left out), else 0."""
        marked = bytearray(len(self.positions))
        for eid in ids:
            k = self.rank(eid)
            if k is not None:
                marked[k] = 1
        return marked

    def get(self, eid, default=None):
        k = self.rank(eid)
        return default if k is None else k

    def __getitem__(self, eid) -> int:
        k = self.rank(eid)
        if k is None:
            raise KeyError(eid)
        return k

    def __contains__(self, eid) -> bool:
        return self.rank(eid) is not None

    def __iter__(self):
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.positions)


def stream_index(truth) -> Stream:
    """Each event id's place in :func:`stream_order`, as a read-only mapping: the stream in position order,
    built once per :class:`GroundTruth` from the provider's event table
    (:class:`~simkit.world.events.EventTable`: its own typed positions, ids built on read) or, from any other
    mapping of events, by sorting them."""
    found = truth.memo.get("stream")
    if found is None:
        events = truth.provider.events
        if hasattr(events, "by_position"):
            ids, positions = events.by_position()
            found = Stream(ids, positions, rank=events.rank if events.ids is None else None)
        else:
            ordered = sorted(events.values(), key=_position)
            found = Stream([e.id for e in ordered], [e.position for e in ordered])
        truth.memo["stream"] = found
    return found


def stream_order(truth) -> tuple[Sequence[str], Sequence[int]]:
    """The stream's event ids and their positions, in position order (ties in the stream's order)."""
    found = stream_index(truth)
    return found.ids, found.positions


def handled(truth) -> frozenset[str]:
    """The events whose handler decides, and logs its decisions: every one
    whose behaviour is not ``ok`` (docs/scenarios.md, ``[[events]]``). An
    ``ok`` event's handler always answers ``apply`` and logs nothing."""
    found = truth.memo.get("handled")
    if found is None:
        events = truth.provider.events
        if hasattr(events, "behaviors"):        # the event table: the rows not ok
            rows = compress(range(len(events)), map("ok".__ne__, events.behaviors))
            found = frozenset(map(events.id_at, rows))
        else:
            found = frozenset(e.id for e in events.values() if e.behavior != "ok")
        truth.memo["handled"] = found
    return found


def joined_at(truth) -> dict[str, float]:
    """When each event joined the stream a consumer can know: from the start (0.0), except a late event
    (:func:`late_arrivals`) that a response served, which joins when the first one did. One that no response
    served (an initial receipt's event off the pages, a page never fetched) counts from the start as well."""
    truth = as_truth(truth)
    late = late_arrivals(truth)
    joined = dict.fromkeys(truth.provider.events, 0.0)
    if late:
        first: dict[str, float] = {}
        for _seq, time, _w, _cursor, _next, ids in truth.provider.log:
            for eid in ids:
                if eid in late and eid not in first:
                    first[eid] = time
        joined.update(first)
    return joined


def effects_count(effects: Iterable) -> int:
    """The effects that ran during the run (``effects`` in the ``--json`` object, docs/verdict.md): every row
    of a sink's effect log but the initial state's (sequence number 0)."""
    return sum(1 for row in effects if row[0] > 0)


def cursor_history(truth) -> list[tuple[float, str, str]]:
    """The durable ``resume_cursor`` as ``(from time, cursor,
    the write's kind)``, from the store's log of writes."""
    truth = as_truth(truth)
    history = None
    for _seq, time, _w, kind, before, after in truth.store.writes.states():
        if history is None:
            history = [(0.0, before[0], "initial")]
        if after[0] != history[-1][1]:
            history.append((time, after[0], kind))
    if history is None:
        history = [(0.0, truth.store.checkpoint.resume_cursor, "initial")]
    return history


@dataclass(frozen=True, slots=True)
class Hold:
    """A page one worker held in memory (seed 000, step 2): from the fetch that
    returned it to the step that ended the attempt (``ended_by``: the worker's next
    ``fetch``, ``load``, ``crash``, ``halt`` or ``restart``, or ``end of run``).
    ``row``/``end_row`` index the trace (``end_row`` is ``None`` at the run's end)."""

    worker: int
    start: float
    end: float
    cursor: str
    next_cursor: str
    ids: tuple[str, ...]
    row: int
    end_row: int | None
    ended_by: str


#: The steps after which a worker no longer holds the page it fetched.
ENDS = frozenset({"fetch", "load", "crash", "halt", "restart"})


def held_pages(truth) -> list[Hold]:
    """Every page a worker received, with the ``next_cursor`` it then held, in the order they were fetched.

    The provider's log says what each response carried; the trace says which responses reached their worker (a
    lost reply or a refused cursor leaves nothing in memory) and when the attempt ended.
    """
    truth = as_truth(truth)
    trace = truth.trace
    served: dict[int, list] = {}
    for _seq, _t, worker, cursor, next_cursor, ids in truth.provider.log:
        served.setdefault(worker, []).append((cursor, next_cursor, ids))
    taken: dict[int, int] = {}
    holding: dict[int, tuple] = {}  # worker -> (start, cursor, next_cursor, ids, row) of the page it holds
    holds = []
    for i, (t, w, step, outcome) in enumerate(zip(trace.time, trace.worker, trace.step, trace.outcome)):
        if step in ENDS and w in holding:
            start, cursor, next_cursor, ids, row = holding.pop(w)
            holds.append(Hold(w, start, t, cursor, next_cursor, ids, row, i, step))
        if step == "fetch" and outcome != REQUEST_LOST:     # a request lost on its way left no log entry
            k = taken.get(w, 0)
            if k < len(served.get(w, ())):
                taken[w] = k + 1
                cursor, next_cursor, ids = served[w][k]
                if is_fetched(step, outcome):               # not a lost reply, not a refused cursor
                    holding[w] = (t, cursor, next_cursor, tuple(ids), i)
    end = trace.time[-1] if len(trace) else 0.0
    holds += [Hold(w, start, end, cursor, next_cursor, ids, row, None, "end of run")
              for w, (start, cursor, next_cursor, ids, row) in holding.items()]
    return sorted(holds, key=lambda h: h.row)
