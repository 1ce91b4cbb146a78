"""The provider's pages against the source order, for the checker (docs/verdict.md: step 3's regressions and
invariant 2's late events), read from the event table's positions: no event is built for a page that carries
only table rows.

Each takes the provider's pages by cursor (``_Entry``: ``rows`` of the table, or a scripted page's ``own``
events) and the event table.
"""
from __future__ import annotations

from operator import lt

__all__ = ["disordered", "late"]


def _positions(entry, table) -> list[tuple[int | None, int]]:
    """(table row, position) of each event a page carries, in page order."""
    if entry.own is not None:
        return [(table.row(e.id), e.position) for e in entry.own]
    positions = table.positions
    return [(r, positions[r]) for r in entry.rows]


def disordered(entries: dict, table) -> frozenset[str]:
    """The cursors whose page breaks the source order inside itself: a position not above the one before it (a
    regression, or two ids at one position)."""
    out = set()
    for cursor, entry in entries.items():
        ps = [p for _r, p in _positions(entry, table)]
        if not all(map(lt, ps, ps[1:])):
            out.add(cursor)
    return frozenset(out)


def late(entries: dict, chain: list[str], table) -> frozenset[str]:
    """The events that join the stream late: their first page on the chain (``chain``: the cursors from the
    start) comes after a page holding their position or a greater one, or no page on the chain carries them."""
    seen = bytearray(len(table.positions))
    out: set[str] = set()
    highest = None
    for cursor in chain:
        top = highest
        for r, p in _positions(entries[cursor], table):
            if r is not None and not seen[r]:
                seen[r] = 1
                if highest is not None and p <= highest:
                    out.add(table.id_at(r))
            top = p if top is None else max(top, p)
        highest = top
    if seen.count(0):
        out.update(table.id_at(r) for r in range(len(seen)) if not seen[r])
    return frozenset(out)
