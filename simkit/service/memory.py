"""The memory records behind the change feed, and seed 004's
initial reconciliation scan (``POST /api/v1/memory/query``).

Seed 004, "Read or create progress": *"Use the change feed to obtain the cursor and complete initial
reconciliation when consuming existing records. During the initial memory query scan, set filter.scan_limit
independently of filter.limit to bound work even when many candidate records are unavailable. An empty query
page with next_after still requires continuation."* The seed names the request fields and no more; the rest is
simkit's, and said here.

**Records.** A namespace (tenant and exact scope) holds records, each ``{record_id, record_revision, kind,
author, updated_at_millis}``; a memory mutation changes one record and appends its journal entry
(:meth:`simkit.service.checkpoints.CheckpointService.mutate`). A record may predate its namespace's journal
(:meth:`~simkit.service.checkpoints.CheckpointService.import_record`): the feed cannot deliver such a record,
only the scan can. That is why a consumer *with existing records to consume* scans before it reads the feed.

**Candidates and unavailable records.** Every record of the namespace is a candidate, in ``record_id`` order
(code point order, which is also UTF-8 byte order). A candidate is *unavailable* to the querying subject when
it is deleted (a tombstone) or private to another subject (``private_to``: simkit's assumption; seed 004 does
not say why a record is unavailable). An unavailable candidate is examined, and so consumes ``scan_limit``,
but is not returned. The feed, by contrast, lists every change of the namespace, a private record's included:
its entries carry ids and revisions, not content.

**A page** examines at most ``filter.scan_limit`` candidates after ``filter.next_after`` (exclusive; null:
from the first) and returns at most ``filter.limit`` available ones, stopping at whichever bound it reaches
first. ``next_after`` in the reply is the last candidate examined when candidates remain after it, else null:
the scan is complete only when ``next_after`` is null. A page whose candidates were all unavailable is empty
and still carries ``next_after``: seed 000's step 7 ("Do not equate emptiness with end of stream") in another
API. The service keeps no scan session: ``next_after`` is a record id, and a record created or deleted during
a scan is seen or not by where its id sorts.

**The feed cursor** (``feed_cursor``): every page carries the change feed's high watermark as it was when the
page was read (version 2: with ``history_digest``), null before the journal is active. The consumer keeps the
``feed_cursor`` of the scan's *first* page, obtained before any record was read, and once ``next_after`` is
null reads the feed from it (as ``after``) and creates its checkpoint there. Why the first page's: the scan is
not a snapshot. A record changed during the scan, at an id the scan had already passed, is not in any later
page; its change is in the journal after the first page's cursor, so the feed delivers it. A cursor taken at
the end of the scan is past that change, and nothing would ever deliver it
(``test_a_cursor_taken_after_the_scan_misses_a_change`` shows it). The price of the early cursor is
redelivery: a change the scan also saw comes again from the feed, and the consumer applies it idempotently (by
``record_revision``), which seed 004's "at-least-once" procedure asks of it anyway.

Pure: no clock, no I/O.
"""
from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

__all__ = ["Order", "Record", "scan"]


@dataclass(frozen=True, slots=True)
class Record:
    """One memory record as it is now: its last change's kind, author and time, and who may see it."""

    record_id: str
    revision: int
    kind: str
    author: str
    updated_at_millis: int
    #: ``None``: every subject granted the scope may see it; else only this subject (simkit's assumption)
    private_to: str | None = None

    @property
    def deleted(self) -> bool:
        return self.kind == "deleted"

    def available_to(self, subject_id: str) -> bool:
        """Not deleted, and not private to another subject."""
        return not self.deleted and self.private_to in (None, subject_id)

    def as_dict(self) -> dict:
        return {"record_id": self.record_id, "record_revision": self.revision, "kind": self.kind,
                "author": self.author, "updated_at_millis": self.updated_at_millis}

    def content(self) -> dict:
        return {**self.as_dict(), "private_to": self.private_to}


class Order:
    """The record ids of each namespace in id order, kept as records are added: a page sorted every id of its
    namespace, so a scan of N records, ``scan_limit`` s a page, cost N²/s·log N. A namespace's records are
    never removed (a deletion is a tombstone) and a restore replaces their dict, so the ids added since the
    last page are the dict's last ones (it keeps insertion order). Many of them are sorted with the rest, not
    inserted one by one: each insertion moves the list, and 200,000 records added before a page cost that page
    4 s (k insertions into n ids: k·n), their 200,000 mutations 6 s."""

    def __init__(self):
        self._held: dict[tuple, tuple[dict, int, list[str]]] = {}

    def ids(self, ns: tuple, records: dict[str, Record]) -> list[str]:
        held = self._held.get(ns)
        n = len(records)        # sorted anew when records went, or came by more than an eighth of those held
        if held is None or held[0] is not records or not held[1] <= n <= held[1] + len(held[2]) // 8:
            order = sorted(records)
        else:
            order = held[2]
            for rid in itertools.islice(records, held[1], None):
                bisect.insort(order, rid)
        self._held[ns] = (records, len(records), order)
        return order


def scan(records: dict[str, Record], subject_id: str, after: str | None, limit: int,
         scan_limit: int, order: list[str] | None = None) -> tuple[list[Record], int, str | None]:
    """One query page over ``records`` (record id -> record): ``(found, scanned, next_after)``.

    Examines candidates in record id order after ``after`` until ``scan_limit`` were examined or ``limit``
    were found; ``next_after`` is the last one examined if any candidate remains after it, else ``None``.
    ``order``: the ids of ``records`` in order (:class:`Order`), else sorted here.
    """
    ids = sorted(records) if order is None else order
    start = 0 if after is None else bisect.bisect_right(ids, after)
    found: list[Record] = []
    scanned = 0
    for rid in itertools.islice(ids, start, None):
        if scanned == scan_limit or len(found) == limit:
            break
        scanned += 1
        if records[rid].available_to(subject_id):
            found.append(records[rid])
    more = start + scanned < len(ids)
    return found, scanned, (ids[start + scanned - 1] if scanned else after) if more else None
