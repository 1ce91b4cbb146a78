"""The change feed that seed 004's checkpoints refer to (docs/service.md, "The change feed"): one journal per
authorised namespace.

A journal has an opaque ``journal_id`` and entries numbered by an unsigned 64-bit ``sequence`` from 1;
sequence 0 is the cursor before the first entry, valid as soon as the journal is active. A page request
names ``after`` (exclusive), ``through`` (inclusive fence) and ``limit``; the answer is ``changes``,
``next_cursor``, ``high_watermark`` and ``complete``. Version 2 cursors add ``history_digest``, the
hash chain of every entry through that sequence: the "exact-history cursor" of seed 004's verified progress.

Pure: the time an entry is committed is passed in by the caller (the model's explicit clock).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .contract import KINDS, ServiceError, conflict, digest

__all__ = ["Entry", "Journal", "genesis", "inactive_page"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry, exactly the fields the feed documents (docs/service.md, "The change feed"), plus the
    history chain for version 2."""

    journal_id: str
    sequence: int
    kind: str
    record_id: str
    record_revision: int
    author: str
    committed_at_millis: int
    change_digest: str
    history_digest: str
    schema_version: int = 1

    def content(self) -> dict:
        return {"schema_version": self.schema_version, "journal_id": self.journal_id,
                "sequence": self.sequence,
                "kind": self.kind, "record_id": self.record_id, "record_revision": self.record_revision,
                "author": self.author, "committed_at_millis": self.committed_at_millis}

    def as_dict(self, version: int = 1) -> dict:
        cur = {"journal_id": self.journal_id, "sequence": self.sequence}
        if version == 2:
            cur["history_digest"] = self.history_digest
        return {"schema_version": self.schema_version, "cursor": cur, "kind": self.kind,
                "record_id": self.record_id, "record_revision": self.record_revision, "author": self.author,
                "committed_at_millis": self.committed_at_millis, "change_digest": self.change_digest}


def genesis(journal_id: str) -> str:
    """The history digest of sequence 0 of a journal."""
    return digest({"genesis": journal_id})


@dataclass
class Journal:
    """An active journal: ``entries[i]`` has sequence ``i + 1``."""

    journal_id: str
    entries: list[Entry] = field(default_factory=list)

    @property
    def head(self) -> int:
        return len(self.entries)

    def history_digest(self, sequence: int) -> str:
        return genesis(self.journal_id) if sequence == 0 else self.entries[sequence - 1].history_digest

    def cursor(self, sequence: int, version: int) -> dict:
        c = {"journal_id": self.journal_id, "sequence": sequence}
        if version == 2:
            c["history_digest"] = self.history_digest(sequence)
        return c

    def append(self, kind: str, record_id: str, author: str, now_millis: int,
               record_revision: int | None = None) -> Entry:
        """Commit one change: its digest over its content, its history digest chained to the previous one."""
        if kind not in KINDS:
            raise ValueError(f"unknown change kind {kind!r}; one of {', '.join(KINDS)}")
        seq = self.head + 1
        if record_revision is None:
            record_revision = 1 + sum(1 for e in self.entries if e.record_id == record_id)
        e = Entry(self.journal_id, seq, kind, record_id, record_revision, author, now_millis, "", "")
        change = digest(e.content())
        e = replace(e, change_digest=change, history_digest=digest([self.history_digest(seq - 1), change]))
        self.entries.append(e)
        return e

    def verify(self, after: int, through: int) -> None:
        """Integrity: every entry in (after, through] matches its digests and chains to the entry before it,
        or 500 with no partial page. A page verifies the entries it serves, at most ``limit``: verifying
        every entry up to its fence made each page cost the whole journal (1.5 s for a page of one entry of
        the 100,000 a config may hold, the server deaf meanwhile) and a catch-up quadratic."""
        prev = self.history_digest(after)
        for e in self.entries[after:through]:
            if digest(e.content()) != e.change_digest or digest([prev, e.change_digest]) != e.history_digest:
                raise ServiceError(500, "integrity_failure",
                                   f"journal {self.journal_id} entry {e.sequence} does not match its digest")
            prev = e.history_digest

    def locate(self, c: dict, where: str, version: int) -> int:
        """The sequence of a cursor of this journal, or 409: foreign journal, ahead of the journal's head, or
        (version 2) a history that diverged from this journal's."""
        if c["journal_id"] != self.journal_id:
            raise conflict("foreign_cursor",
                           f"{where} belongs to journal {c['journal_id']!r}, not the current "
                           f"journal {self.journal_id!r}")
        seq = c["sequence"]
        if seq > self.head:
            raise conflict("cursor_ahead", f"{where} sequence {seq} is ahead of the journal's high watermark "
                                           f"{self.head}; reconcile explicitly (restored from a backup?)")
        if version == 2 and c["history_digest"] != self.history_digest(seq):
            raise conflict("divergent_history", f"{where} sequence {seq} carries a history that this journal "
                                                f"does not have; reconcile explicitly")
        return seq

    def page(self, after: dict | None, through: dict | None, limit: int, version: int) -> dict:
        """One feed page (docs/service.md, "The change feed").
        ``complete`` means this request reached its fence."""
        start = 0 if after is None else self.locate(after, "query.after", version)
        fence = self.head if through is None else self.locate(through, "query.through", version)
        if start > fence:
            raise ServiceError(400, "malformed_bounds", "query.after is beyond query.through")
        chunk = self.entries[start:min(fence, start + limit)]
        self.verify(start, start + len(chunk))
        last = chunk[-1].sequence if chunk else start
        return {"contract_version": version, "changes": [e.as_dict(version) for e in chunk],
                "next_cursor": self.cursor(last, version), "high_watermark": self.cursor(fence, version),
                "complete": last == fence}


def inactive_page(version: int) -> dict:
    """The page of a namespace whose journal is not active yet: no cursor, no watermark, nothing to reach."""
    return {"contract_version": version, "changes": [], "next_cursor": None, "high_watermark": None,
            "complete": True}
