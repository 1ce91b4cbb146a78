"""The rules that join a scenario's tables (docs/scenarios.md, "Pages" and "Validation errors"): every cursor
names a page and the pages end in one self-loop, one id belongs to one position, and every ``[[events]]``
entry and fault names a position the stream carries and a worker of the run."""
from __future__ import annotations

from simkit.model import REPLY_FAULTS, Scenario, default_id

from .checks import MAX_EVENTS, Checker, show

#: Events times workers: each worker walks the whole stream (a run of 10**6 events takes about 20 s and 0.5
#: GB with one worker or two; 64 workers over one page of 10**6 passed 3 GB in five minutes, and 64 over 10**5
#: took 66 s), so :data:`MAX_EVENTS` bounds a run only with this.
MAX_WALKED = 2 * MAX_EVENTS

__all__ = ["MAX_WALKED", "carried_positions", "check_cursors", "check_targets", "check_walked",
           "missing_position"]


def check_cursors(c: Checker, sc: Scenario) -> None:
    """docs/scenarios.md, "Pages": every cursor a page or ``[initial]`` names is a page of the scenario, one
    id belongs to one position, and the only cycle of ``next_cursor`` is the last page's answer of its own
    token. A cursor naming no page was refused at run time as if the consumer were to blame (the verdict then
    blamed ``safe`` for lost events); one id at two positions was judged ok; a cycle ran until the time limit,
    or the progress guard."""
    assert sc.pages is not None, "a scripted scenario's cursors"
    pages = {p["cursor"]: i for i, p in enumerate(sc.pages)}
    start = sc.initial.resume_cursor
    if start is not None and start not in pages:
        c.fail("initial.resume_cursor", f"{show(start)} names no page{_known(pages)}")
    for i, p in enumerate(sc.pages):
        if p["next_cursor"] not in pages:
            c.fail(f"pages[{i}].next_cursor", f"{show(p['next_cursor'])} names no page{_known(pages)}")
    # 1: on the path being followed, 2: known to end in a self-loop
    state: dict[str, int] = {}
    for first in pages:
        path, cursor = [], first
        while state.get(cursor) is None:
            state[cursor] = 1
            path.append(cursor)
            cursor = sc.pages[pages[cursor]]["next_cursor"]
        if state[cursor] == 1 and cursor != path[-1]:
            loop = path[path.index(cursor):] + [cursor]
            shown = " -> ".join(show(x) for x in loop[:6]) + (" -> ..." if len(loop) > 6 else "")
            c.fail(f"pages[{pages[path[-1]]}].next_cursor",
                   f"cycle {shown}: the stream would never end (only its end page names itself)")
        for x in path:
            state[x] = 2
    where: dict[str, tuple[int, str]] = {}      # id -> (position, the key that first gave it)
    for i, p in enumerate(sc.pages):
        for eid, pos in zip(p["ids"], p["positions"]):
            first = where.setdefault(eid, (pos, f"pages[{i}]"))
            if first[0] != pos:
                c.fail(f"pages[{i}].ids", f"id {show(eid)} at position {pos} here and at position "
                                          f"{first[0]} in {first[1]}: one id belongs to one position")
    carried = {pos for pos, _key in where.values()}
    served = sum(len(p["positions"]) for p in sc.pages)
    if (added := sum(pos not in carried for pos in sc.initial.receipts)) and served + added > MAX_EVENTS:
        c.fail("initial.receipts", f"{added} positions no page carries, each an event of the stream, besides "
                                   f"the {served} the pages carry: a scenario's stream holds at most "
                                   f"{MAX_EVENTS} events")
    for pos in sc.initial.receipts:             # a receipt's event no page carries is e<position>
        first = where.get(default_id(pos)) if pos not in carried else None
        if first is not None and first[0] != pos:
            c.fail("initial.receipts", f"position {pos} is event {default_id(pos)}, which {first[1]} "
                                       f"carries at position {first[0]}: one id belongs to one position")


def _known(pages: dict) -> str:
    names = list(pages)
    shown = ", ".join(show(x) for x in names[:8]) + (", ..." if len(names) > 8 else "")
    return f" (pages: {shown})"


def check_targets(c: Checker, sc: Scenario) -> None:
    """Every ``[[events]]`` entry and fault names a position of the stream and a worker of the run: one that
    names neither would be accepted and never take effect. The carried positions are gathered once (a lookup
    per entry, not a scan of every page)."""
    carried = carried_positions(sc)
    for i, pos in enumerate(sc.events):
        if (problem := missing_position(sc, pos, carried)) is not None:
            c.fail(f"events[{i}].position", problem)
    for i, f in enumerate(sc.faults):
        if f.worker > sc.workers:
            c.fail(f"faults[{i}].worker", f"no worker {f.worker}: the scenario has workers = {sc.workers}")
        if f.position is not None and (problem := missing_position(sc, f.position, carried)) is not None:
            c.fail(f"faults[{i}].position", problem)
        if f.kind in REPLY_FAULTS and sc.sink == "transactional":
            c.fail(f"faults[{i}].kind", f"a {f.kind} strikes an external call's reply, and a transactional "
                                        'sink makes no call: set sink = "idempotent" or "unsafe"')


def carried_positions(sc: Scenario) -> frozenset[int] | None:
    """A scripted stream's positions: those its pages carry, plus ``[initial] receipts`` (the provider adds
    those events). ``None`` for a generated stream, whose positions :func:`missing_position` computes."""
    if sc.pages is None:
        return None
    return frozenset(sc.initial.receipts).union(x for p in sc.pages for x in p["positions"])


def missing_position(sc: Scenario, pos: int, carried: frozenset[int] | None = None) -> str | None:
    """Why no event of the stream can have position ``pos``, or ``None`` if one can.

    Scripted: :func:`carried_positions` (pass it as ``carried`` when asking about many positions).
    Generated: the i-th event has position 10·(i+1); backfills (only with ``backfill`` > 0) land between
    them, below the last one (see :func:`simkit.world.arrivals.arrival_order`), at positions that depend on
    the seed."""
    if sc.pages is not None:
        if pos in (carried if carried is not None else carried_positions(sc) or frozenset()):
            return None
        return f"no page carries position {pos}"
    assert sc.generate is not None, "a scenario has [[pages]] or [generate]"
    top = 10 * sc.generate["events"]
    if not 1 <= pos <= top:
        return (
            f"position {pos} is outside the generated stream (1..{top} for events = {sc.generate['events']})"
        )
    if pos % 10 and not sc.generate["backfill"]:
        return (f"position {pos} is not in the generated stream: with backfill = 0 its positions are "
                f"10, 20, ..., {top}")
    return None


def check_walked(c: Checker, sc: Scenario) -> None:
    """``workers`` times the stream's events (a generated stream's ``events``; the positions the pages carry,
    a position carried twice twice, and ``[initial] receipts`` no page carries) at most :data:`MAX_WALKED`."""
    if sc.generate is not None:
        events = sc.generate["events"]
    else:
        assert sc.pages is not None, "a scenario has [[pages]] or [generate]"
        carried = {x for p in sc.pages for x in p["positions"]}
        events = sum(len(p["positions"]) for p in sc.pages)
        events += sum(x not in carried for x in sc.initial.receipts)
    if sc.workers * events > MAX_WALKED:
        c.fail("workers", f"{sc.workers} workers over a stream of {events} events: each worker walks the "
                          f"whole stream, and a run walks at most {MAX_WALKED} events in all (workers times "
                          f"events); at most {max(1, MAX_WALKED // events)} workers here")
