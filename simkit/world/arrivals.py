"""The seeded stream of a ``[generate]`` scenario before it is tabled: its events in arrival order (backfills
land behind positions already served) and the chain of pages over them behind random tokens, whose order says
nothing about positions (:func:`simkit.world.provider.generated` builds the provider from them)."""
from __future__ import annotations

import random
import string
from array import array

from simkit.model import EventSpec

__all__ = ["arrival_order", "page_chain"]

_ALPHANUMERIC = string.ascii_letters + string.digits


def _token(rng: random.Random, used: set[str]) -> str:
    """A fresh random token of 10 letters and digits."""
    while True:
        t = "".join(rng.choices(_ALPHANUMERIC, k=10))
        if t not in used:
            used.add(t)
            return t


def arrival_order(g: dict, rng: random.Random, specs: dict[int, EventSpec]) -> tuple[array, list[str], bool]:
    """The events' positions and behaviours in arrival order, and whether any is a backfill (if not, their
    positions increase).

    The i-th event has position 10·(i+1) and a behaviour drawn from the ``[generate]`` rates; from the
    second page's worth on, it may be followed by a backfill: an ``ok`` event between ``page_size`` and twice
    that many events back, at a position not a multiple of 10 and not taken by an earlier backfill. An
    ``[[events]]`` spec overrides the behaviour of the event at its position.
    """
    size, backfill = g["page_size"], g["backfill"]
    rates = [(kind, g[kind]) for kind in ("poison", "transient", "review", "hold") if g[kind]]
    positions, behaviors = array("q"), []
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
        positions.append(pos)
        behaviors.append(specs[pos].behavior if pos in specs else behavior)
        if i >= size and rng.random() < backfill:
            back = 10 * (i + 1 - rng.randint(size, 2 * size)) + rng.randint(1, 9)
            if back > 0 and back not in backs:
                backs.add(back)
                positions.append(back)
                behaviors.append(specs[back].behavior if back in specs else "ok")
    return positions, behaviors, bool(backs)


def page_chain(g: dict, rng: random.Random, positions: array,
               backfilled: bool) -> tuple[list[tuple[str, range | list[int], str, int]], str]:
    """The chain of pages over the arrivals (each page a range or list of arrival indices), by token, and its
    first token.

    Each page takes the next ``page_size`` arrivals in position order (``backfilled``: they may need
    sorting), or is empty, or starts up to half a page back (overlap); some answer ``stuck`` times first.
    The last token answers an empty page and itself.
    """
    size, n = g["page_size"], len(positions)
    used: set[str] = set()
    pages: list[tuple[str, range | list[int], str, int]] = []
    start = token = _token(rng, used)
    offset = 0
    while offset < n:
        nxt = _token(rng, used)
        stuck = rng.randint(1, 2) if rng.random() < g["stuck"] else 0
        if rng.random() < g["empty_pages"]:
            pages.append((token, range(0), nxt, stuck))
        else:
            begin = offset
            if offset and rng.random() < g["overlap"]:
                begin = max(0, offset - rng.randint(1, max(1, size // 2)))
            end = max(offset + 1, begin + size)
            page = range(begin, min(end, n))
            pages.append((token, sorted(page, key=positions.__getitem__) if backfilled else page, nxt, stuck))
            offset = end
        token = nxt
    pages.append((token, range(0), token, 0))
    return pages, start
