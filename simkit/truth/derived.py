"""Facts derived from ground truth alone (:class:`~simkit.truth.ground.GroundTruth`), each defined once here for
the judge, the figures and the tools. Those the figures read (:func:`joined_at`, :func:`cursor_history`,
:func:`held_pages`) take a ``GroundTruth`` or anything :func:`~simkit.truth.ground.as_truth` reads (a World, a Run).

Facts that need the judge's notion of an outcome (the durable prefix, when an event was at risk, when a loss
became final) are in :mod:`simkit.judge.facts`.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from simkit.model import REQUEST_LOST

from .ground import as_truth
from .trace import is_fetched

__all__ = ["ENDS", "Hold", "cursor_history", "effects_count", "handled", "held_pages", "joined_at", "late_arrivals",
           "stream_index", "stream_order"]

_position = attrgetter("position")


def late_arrivals(truth) -> frozenset[str]:
    """The events that join the stream late (docs/verdict.md, invariant 2): their first page on the provider's
    chain comes after a page holding their position or a greater one (a backfill behind served positions, or a
    new id at a position already served: ``<=``), or no page on the chain carries them. An ``applied_position``
    makes no claim about them; they are judged by receipts alone. Computed once per :class:`GroundTruth`."""
    late = truth.memo.get("late_arrivals")
    if late is None:
        late = truth.memo["late_arrivals"] = _late(truth.provider)
    return late


def _late(provider) -> frozenset[str]:
    pages = {cursor: (events, nxt) for cursor, events, nxt, _stuck in provider.script()}
    late: set[str] = set()
    seen: set[str] = set()
    walked: set[str] = set()
    highest = None
    cursor = provider.start
    while cursor in pages and cursor not in walked:     # the chain: from the start until an unknown or repeated cursor
        walked.add(cursor)
        events, cursor = pages[cursor]
        top = highest
        for e in events:
            if e.id not in seen:
                seen.add(e.id)
                if highest is not None and e.position <= highest:
                    late.add(e.id)
            top = e.position if top is None else max(top, e.position)
        highest = top
    late.update(eid for eid in provider.events if eid not in seen)
    return frozenset(late)


def stream_order(truth) -> tuple[list[str], list[int]]:
    """The stream's event ids and their positions, in position order (ties in the stream's order)."""
    return _columns(truth)[:2]


def stream_index(truth) -> dict[str, int]:
    """Each event id's place in :func:`stream_order`: the one table by id the check keeps (and its fastest
    answer to "is this an event of the stream?")."""
    index = truth.memo.get("stream_index")
    if index is None:
        ids = stream_order(truth)[0]
        index = truth.memo["stream_index"] = dict(zip(ids, range(len(ids))))
    return index


def handled(truth) -> frozenset[str]:
    """The events whose handler decides, and logs its decisions: every one whose behaviour is not ``ok``
    (docs/scenarios.md, ``[[events]]``). An ``ok`` event's handler always answers ``apply`` and logs nothing."""
    return _columns(truth)[2]


def _columns(truth) -> tuple[list[str], list[int], frozenset[str]]:
    columns = truth.memo.get("columns")
    if columns is None:
        # lists of references to the events' own objects, not a tuple per event: the check's peak stays low
        by_position = sorted(truth.provider.events.values(), key=_position)
        columns = truth.memo["columns"] = ([e.id for e in by_position], [e.position for e in by_position],
                                           frozenset(e.id for e in by_position if e.behavior != "ok"))
    return columns


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
    """The effects that ran during the run (``effects`` in the ``--json`` object, docs/verdict.md): every row of a
    sink's effect log but the initial state's (sequence number 0)."""
    return sum(1 for row in effects if row[0] > 0)


def cursor_history(truth) -> list[tuple[float, str, str]]:
    """The durable ``resume_cursor`` as ``(from time, cursor, the write's kind)``, from the store's log of writes."""
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
    """A page one worker held in memory (seed 000, step 2): from the fetch that returned it to the step that ended
    the attempt (``ended_by``: the worker's next ``fetch``, ``load``, ``crash``, ``halt`` or ``restart``, or
    ``end of run``). ``row``/``end_row`` index the trace (``end_row`` is ``None`` at the run's end)."""

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
    holding: dict[int, tuple] = {}         # worker -> (start, cursor, next_cursor, ids, row) of the page it holds
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
