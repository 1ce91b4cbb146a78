"""The provider's pages against the source order, for the checker (docs/verdict.md: step 3's regressions and
invariant 2's late events), read from the event table's positions: no event is built for a page that carries
only table rows.

Each takes the provider's pages by cursor (``_Entry``: ``rows`` of the table, or a scripted page's ``own``
events) and the event table.
"""
from __future__ import annotations

from simkit.truth.derived import breaks_order, first_late

__all__ = ["disordered", "late"]


def _positions(entry, table):
    """(table row, position) of each event a page carries, in page order."""
    if entry.own is not None:
        return [(table.row(e.id), e.position) for e in entry.own]
    return zip(entry.rows, map(table.positions.__getitem__, entry.rows))


def disordered(entries: dict, table) -> frozenset[str]:
    """The cursors whose page :func:`~simkit.truth.derived.breaks_order`."""
    return frozenset(c for c, entry in entries.items()
                     if breaks_order([p for _r, p in _positions(entry, table)]))


def late(entries: dict, chain: list[str], table) -> frozenset[str]:
    """:func:`~simkit.truth.derived.late_arrivals` by table row (``chain``: the cursors from the start)."""
    seen = bytearray(len(table.positions))
    rows = first_late((_positions(entries[c], table) for c in chain), seen)
    if seen.count(0):
        rows.update(r for r in range(len(seen)) if not seen[r])
    return frozenset(map(table.id_at, rows))
