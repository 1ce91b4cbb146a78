"""The durable state at time 0 (docs/scenarios.md, "Initial state") checked against the stream: ``[initial]``
must be a state some consumer can have reached (issue 32). Called by :func:`simkit.scenario.read.parse` once
the pages, or the generated stream, and the events are read."""
from __future__ import annotations

import reprlib

from simkit.model import Scenario

from .checks import Checker

__all__ = ["check_start"]

_show = reprlib.Repr()
_show.maxstring = _show.maxother = 60


def check_start(c: Checker, sc: Scenario) -> None:
    """``[initial]`` of a generated stream (:func:`_check_generated_start`) or of a scripted one
    (:func:`_check_passed`)."""
    if sc.generate is not None:
        _check_generated_start(c, sc, sc.generate)
        size = min(sc.generate["page_size"], sc.generate["events"])
        first = [10 * (i + 1) for i in range(size) if 10 * (i + 1) <= sc.initial.applied_position]
    else:
        assert sc.pages is not None, "a scenario has [[pages]] or [generate]"
        pages = {p["cursor"]: i for i, p in enumerate(sc.pages)}
        _check_passed(c, sc, sc.pages, pages)
        first = _first_served(sc.pages, pages, sc.initial.resume_cursor or sc.pages[0]["cursor"])
    if not sc.backfills:
        _check_applied(c, sc, first)


def _first_served(script: tuple[dict, ...], pages: dict[str, int], cursor: str) -> list[int]:
    """The positions of the first page from ``cursor`` on that serves any (zero-item pages passed over)."""
    seen: set[str] = set()
    while cursor in pages and cursor not in seen:
        seen.add(cursor)
        page = script[pages[cursor]]
        if page["positions"]:
            return list(page["positions"])
        cursor = page["next_cursor"]
    return []


def _check_applied(c: Checker, sc: Scenario, first: list[int]) -> None:
    """Without backfills, an event the first page serves at or below ``[initial] applied_position`` (0 by
    default: an event at position 0 too) with no receipt is a gap to step 3, before anything was served that
    it could slip behind: the consumer halts, the halt is judged unjustified and the run incomplete, which
    blames a correct consumer for a durable state no consumer reaches (invariant 2: the applied prefix never
    passes an event without a durable outcome). The file is what is wrong."""
    ap, done = sc.initial.applied_position, set(sc.initial.receipts)
    behind = sorted({pos for pos in first if pos <= ap and pos not in done})
    if behind:
        shown = ", ".join(map(str, behind[:4])) + (", ..." if len(behind) > 4 else "")
        c.fail("initial.applied_position",
               f"{ap} covers position {shown}, which the first page serves and no receipt covers: without "
               "backfills a gap at the first fetch, a state no consumer reaches (invariant 2); list those "
               "positions in [initial] receipts" + (", or start positions at 1" if ap == 0 else ""))


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
