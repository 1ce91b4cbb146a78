"""The durable state at time 0 (docs/scenarios.md, "Initial state") checked against the stream: ``[initial]``
must be a state some consumer can have reached (issue 32). Called by :func:`simkit.scenario.read.parse` once
the pages, or the generated stream, and the events are read."""
from __future__ import annotations

import reprlib
from collections.abc import Iterable, Iterator

from simkit.model import Scenario

from .checks import Checker

__all__ = ["check_start"]

_show = reprlib.Repr()
_show.maxstring = _show.maxother = 60


def check_start(c: Checker, sc: Scenario) -> None:
    """``[initial]`` of a generated stream (:func:`_check_generated_start`) or of a scripted one
    (:func:`_check_passed`, :func:`_check_reached`); without backfills, its ``applied_position`` against
    every event the provider serves in order (:func:`_check_applied`)."""
    if sc.generate is not None:
        _check_generated_start(c, sc, sc.generate)
        # regular events are 10, 20, ... served in that order; a backfill lands behind served positions
        top = min(sc.initial.applied_position, 10 * sc.generate["events"])
        in_order: Iterable[int] = range(10, top + 1, 10)
    else:
        assert sc.pages is not None, "a scenario has [[pages]] or [generate]"
        pages = {p["cursor"]: i for i, p in enumerate(sc.pages)}
        start = sc.initial.resume_cursor or sc.pages[0]["cursor"]
        _check_receipt_ids(c, sc, sc.pages)
        _check_passed(c, sc, sc.pages, pages)
        _check_reached(c, sc, sc.pages, pages, start)
        in_order = _served_in_order(sc.pages, pages, start)
    if not sc.backfills:
        _check_applied(c, sc, in_order)


def _check_receipt_ids(c: Checker, sc: Scenario, script: tuple[dict, ...]) -> None:
    """A receipt names a position; at a position the pages carry under two ids (a conflicting identity) it
    cannot say which event holds it, and the world gave it to one (the last id read): the other, passed by a
    ``resume_cursor`` that the position's receipt let through, was lost before time 0 (seed 000 step 1:
    receipts are keyed by event id)."""
    done = set(sc.initial.receipts)
    where: dict[int, dict[str, int]] = {}
    for i, page in enumerate(script):
        for eid, pos in zip(page["ids"], page["positions"]):
            if pos in done:
                where.setdefault(pos, {}).setdefault(eid, i)
    for pos, ids in where.items():
        if len(ids) > 1:
            shown = ", ".join(f"{_show.repr(eid)} (pages[{i}])" for eid, i in list(ids.items())[:4])
            c.fail("initial.receipts",
                   f"position {pos} is carried as {shown}: a receipt by position cannot say which event "
                   "holds it; give the position one id, or leave it out of [initial] receipts")


def _chain(script: tuple[dict, ...], pages: dict[str, int], cursor: str) -> Iterator[dict]:
    """The pages from ``cursor`` on, following ``next_cursor`` until a cursor repeats (the end page)."""
    seen: set[str] = set()
    while cursor in pages and cursor not in seen:
        seen.add(cursor)
        page = script[pages[cursor]]
        yield page
        cursor = page["next_cursor"]


def _served_in_order(script: tuple[dict, ...], pages: dict[str, int], start: str) -> Iterator[int]:
    """The positions of the events the chain from ``start`` first serves above every position an earlier
    page served: not late arrivals (:func:`simkit.truth.derived.first_late`, a backfill or a new id behind
    served positions), so a halt on one is no provider's breach."""
    seen: set[str] = set()
    highest = None
    for page in _chain(script, pages, start):
        top = highest
        for eid, pos in zip(page["ids"], page["positions"]):
            if eid not in seen:
                seen.add(eid)
                if highest is None or pos > highest:
                    yield pos
            top = pos if top is None or pos > top else top
        highest = top


def _check_reached(c: Checker, sc: Scenario, script: tuple[dict, ...], pages: dict[str, int],
                   start: str) -> None:
    """Every event of a page is served from where the run starts (``[initial] resume_cursor``, or the first
    page), or holds a receipt: an event of a page no ``next_cursor`` from there leads to is never served, and
    ground truth judged it lost (a correct consumer ``NOT ok``, ``completed: no`` at the time limit). Pages
    passed on the first page's chain are :func:`_check_passed`'s."""
    reached = {page["cursor"] for page in _chain(script, pages, start)}
    served = {eid for cursor in reached for eid in script[pages[cursor]]["ids"]}
    first = {page["cursor"] for page in _chain(script, pages, script[0]["cursor"])}
    done = set(sc.initial.receipts)
    for i, page in enumerate(script):
        left = [f"{_show.repr(eid)} at {pos}" for eid, pos in zip(page["ids"], page["positions"])
                if eid not in served and pos not in done]
        if not left:
            continue
        shown = ", ".join(left[:4]) + (", ..." if len(left) > 4 else "")
        if page["cursor"] in first:         # on the first page's chain, which the resume_cursor left
            c.fail("initial.resume_cursor",
                   f"{_show.repr(start)} is off the chain of pages from pages[0]: pages[{i}] "
                   f"({_show.repr(page['cursor'])}) holds {shown}, which no page from "
                   f"{_show.repr(start)} serves and no receipt covers: a durable state no consumer "
                   "reaches; resume on that chain, or list those positions in [initial] receipts")
        c.fail(f"pages[{i}].cursor",
               f"{_show.repr(page['cursor'])} is reached by no next_cursor from {_show.repr(start)}, where "
               f"the run starts: its {shown} would never be served, and no receipt covers them; link the "
               "page into the chain, or list those positions in [initial] receipts")


def _check_applied(c: Checker, sc: Scenario, in_order: Iterable[int]) -> None:
    """Without backfills, an event the provider serves in order (:func:`_served_in_order`) at or below
    ``[initial] applied_position`` (0 by default: an event at position 0 too) with no receipt is a gap to
    step 3 the provider never made: the consumer halts, the halt is judged unjustified and the run incomplete,
    which blames a correct consumer for a durable state no consumer reaches (invariant 2: the applied prefix
    never passes an event without a durable outcome). The first page was checked; a later one (a generated
    stream of pages of one event, ``applied_position = 1000``) was not. The file is what is wrong."""
    ap, done = sc.initial.applied_position, set(sc.initial.receipts)
    behind: list[int] = []
    for pos in in_order:
        if pos <= ap and pos not in done:
            behind.append(pos)
            if len(behind) > 4:
                break
    if behind:
        shown = ", ".join(map(str, sorted(behind)[:4])) + (", ..." if len(behind) > 4 else "")
        c.fail("initial.applied_position",
               f"{ap} covers position {shown}, which the provider serves in order and no receipt covers: "
               "without backfills a gap it never made, a state no consumer reaches (invariant 2); list "
               "those positions in [initial] receipts" + (", or start positions at 1" if ap == 0 else ""))


def _check_generated_start(c: Checker, sc: Scenario, generate: dict) -> None:
    """``[initial]`` of a ``[generate]`` stream: its tokens are random strings drawn from the run's seed
    (which ``--seed`` changes), so no ``resume_cursor`` names a page of it (the run halted on the provider's
    refusal, judged unjustified and incomplete); its receipts name its regular events, 10, 20, ... (a backfill
    lands where the seed puts it: a receipt for one was a KeyError)."""
    if sc.initial.resume_cursor is not None:
        c.fail("initial.resume_cursor", "a generated stream's tokens are random strings drawn from the "
                                        "run's seed: no cursor can name one of its pages (leave it out to "
                                        "start at the first)")
    top = 10 * generate["events"]
    for pos in sc.initial.receipts:
        if pos % 10 or not 10 <= pos <= top:
            c.fail("initial.receipts", f"position {pos} is not an event of the generated stream: its "
                                       f"positions are 10, 20, ..., {top} (backfills land where the seed "
                                        "puts them)")


def _check_passed(c: Checker, sc: Scenario, script: tuple[dict, ...], pages: dict[str, int]) -> None:
    """An ``[initial] resume_cursor`` past pages of the chain (from the first page) is a durable state that
    claims their events done: each needs a receipt in ``[initial] receipts`` (invariant 1: a token stays
    pending until every event of its page is durably classified), unless a page from the cursor on serves it
    again. Without one no run ever serves the event: it was judged ok with nothing applied, and is now judged
    lost, which blames the consumer for a state it never made (a watermark alone is no terminal outcome in
    ground truth). The file is what is wrong."""
    start = sc.initial.resume_cursor
    if start is None or start == script[0]["cursor"]:
        return
    chain, cursor = [], script[0]["cursor"]
    while cursor != start and cursor not in chain:
        chain.append(cursor)
        nxt = script[pages[cursor]]["next_cursor"]
        if nxt == cursor:  # the end of the stream without meeting the cursor: off the chain
            return
        cursor = nxt
    if cursor != start:
        return
    ahead, cursor = set(), start                # ids served from the cursor on
    while cursor not in ahead:
        ahead.add(cursor)
        cursor = script[pages[cursor]]["next_cursor"]
    served = {eid for cur in ahead for eid in script[pages[cur]]["ids"]}
    done = set(sc.initial.receipts)
    for cur in chain:
        i = pages[cur]
        left = [f"{_show.repr(eid)} at {pos}" for eid, pos in zip(script[i]["ids"], script[i]["positions"])
                if eid not in served and pos not in done]
        if left:
            shown = ", ".join(left[:4]) + (", ..." if len(left) > 4 else "")
            c.fail("initial.resume_cursor",
                   f"{_show.repr(start)} is past pages[{i}] ({_show.repr(cur)}), whose {shown} no later "
                    "page serves and no receipt covers: a durable state no consumer reaches (invariant 1); "
                    "list those positions in [initial] receipts")
