"""The writer's and the operator's side of the checkpoint service: journal activation, memory mutations with
their receipts (docs/service.md, "Identical retries of feed writes"), records from before the journal, backup
and restore, a digest of the stored state, and the integrity faults that corrupt stored data.

:class:`Maintenance` is a part of :class:`simkit.service.checkpoints.CheckpointService`; it works on the
stored data the service holds (``journals``, ``checkpoints``, ``receipts``, ``records``, ``mutations``).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Protocol

from . import contract as C
from .contract import ServiceError, conflict, digest
from .feed import Journal
from .memory import Record
from .stored import Backup, Stored, mutation_digest

__all__ = ["Maintenance", "MillisClock"]


def _journals(journals: dict[tuple, Journal]) -> dict[tuple, Journal]:
    """``journals`` copied for a backup or a restore: new lists of the same frozen entries (nothing changes an
    entry in place; :meth:`Maintenance.corrupt_journal` replaces one in its journal's own list)."""
    return {ns: Journal(j.journal_id, list(j.entries)) for ns, j in journals.items()}


class MillisClock(Protocol):
    """What the service reads of a clock: :class:`~simkit.service.checkpoints.ManualClock` in the model, the
    server's wall clock under ``simkit serve``."""

    @property
    def now_millis(self) -> int: ...


class Maintenance:
    """Journals, memory mutations, backup and restore, integrity faults."""

    journals: dict[tuple, Journal]
    checkpoints: dict[tuple, Stored]
    receipts: dict[tuple, tuple[str, dict]]
    records: dict[tuple, dict[str, Record]]
    mutations: dict[tuple, tuple[str, dict]]
    restores: list[tuple[int, int]]
    _seq: int
    _journal_count: int
    clock: MillisClock

    if TYPE_CHECKING:                    # provided by Access, the other part of CheckpointService
        def namespace(self, subject_id: str, scope: dict | tuple) -> tuple: ...

    def journal_id(self, tenant: str, scope: dict) -> str | None:
        j = self.journals.get((tenant, C.scope(scope)))
        return None if j is None else j.journal_id

    # -- the change feed's writer side --------------------------------------------------------------------
    def activate_journal(self, tenant: str, scope: dict) -> str:
        """Activate the namespace's journal (idempotent); returns its opaque ``journal_id``."""
        ns = (tenant, C.scope(scope))
        if ns not in self.journals:
            self._journal_count += 1
            self.journals[ns] = Journal(f"00000000-0000-4000-8000-{self._journal_count:012d}")
        return self.journals[ns].journal_id

    def append(self, tenant: str, scope: dict, kind: str, record_id: str, author: str = "writer") -> dict:
        """A memory mutation's journal entry (activating the journal if needed). Not a checkpoint route."""
        return self.mutate(tenant, scope, kind, record_id, author)["entry"]

    def mutate(self, tenant: str, scope: dict, kind: str, record_id: str, author: str = "writer",
               idempotency_key: str | None = None, private_to: str | None = None) -> dict:
        """A memory mutation (activating the journal if needed): ``{"entry": ...}``, plus ``"receipt":
        {idempotency_key, receipt_digest}`` when it carries an idempotency key.

        docs/service.md, "Identical retries of feed writes": *"A mutation, its idempotency receipt and its
        journal entry commit together; an identical command retry creates no second entry; rejected commands
        do not advance the journal."* The record, the
        journal entry and the receipt are written together, with nothing that can fail between them. Keys are
        scoped to the author and namespace; the command is ``(kind, record_id, private_to)``. An identical
        retry returns the original entry and receipt, even after later mutations; the same key for another
        command is a 409 ``idempotency_conflict`` that changes nothing. ``private_to`` makes a new record
        visible to that subject only (:mod:`simkit.service.memory`); a change to an existing record keeps its
        owner.
        """
        if kind not in C.KINDS:
            raise ValueError(f"unknown change kind {kind!r}; one of {', '.join(C.KINDS)}")
        ns = (tenant, C.scope(scope))
        fingerprint = digest({"kind": kind, "record_id": record_id, "private_to": private_to})
        rkey = None if idempotency_key is None else (author, ns, idempotency_key)
        if rkey is not None and rkey in self.mutations:
            stored_fp, receipt = self.mutations[rkey]
            if mutation_digest(receipt) != receipt["receipt_digest"]:
                raise ServiceError(500, "integrity_failure",
                                   "stored mutation receipt does not match its receipt_digest")
            if stored_fp != fingerprint:
                raise conflict("idempotency_conflict", "idempotency_key was used for another mutation (kind, "
                                                       "record_id or private_to); use a new key")
            return {"entry": copy.deepcopy(receipt["entry"]),
                    "receipt": {"idempotency_key": idempotency_key,
                                "receipt_digest": receipt["receipt_digest"]}}
        self.activate_journal(tenant, scope)
        records = self.records.setdefault(ns, {})
        prev = records.get(record_id)
        now = self.clock.now_millis
        record = Record(record_id, (prev.revision if prev else 0) + 1, kind, author, now,
                        prev.private_to if prev else private_to)
        entry = self.journals[ns].append(kind, record_id, author, now, record.revision).as_dict(2)
        records[record_id] = record
        out = {"entry": entry}
        if rkey is not None:
            receipt = {"idempotency_key": idempotency_key, "entry": copy.deepcopy(entry)}
            receipt["receipt_digest"] = mutation_digest(receipt)
            self.mutations[rkey] = (fingerprint, receipt)
            out["receipt"] = {"idempotency_key": idempotency_key, "receipt_digest": receipt["receipt_digest"]}
        return out

    def import_record(self, tenant: str, scope: dict, record_id: str, author: str = "importer",
                      private_to: str | None = None, deleted: bool = False) -> Record:
        """A record from before the namespace's journal was activated: no journal entry, so the feed never
        delivers it and only the initial reconciliation scan finds it. ``deleted``: a tombstone (created, then
        deleted). Only before activation (``ValueError`` after)."""
        ns = (tenant, C.scope(scope))
        if ns in self.journals:
            raise ValueError("the namespace's journal is active: a record now comes with its journal entry "
                             "(mutate)")
        record = Record(record_id, 2 if deleted else 1, "deleted" if deleted else "created", author,
                        self.clock.now_millis, private_to)
        self.records.setdefault(ns, {})[record_id] = record
        return record

    def replace_journal(self, tenant: str, scope: dict) -> str:
        """Give the namespace a new journal identity (as a restore from another lineage would)."""
        ns = (tenant, C.scope(scope))
        self.journals.pop(ns, None)
        return self.activate_journal(tenant, scope)

    # -- backup, restore, integrity faults -------------------------------------------------------------------
    def backup(self) -> Backup:
        """A copy of the stored data. Journal entries are frozen values, shared with the copy (each journal's
        list is copied): a deep copy of a 100,000-entry journal took the server 2.7 s, deaf to every other
        client, and 100 MB a backup; a restore as much again. Receipts too: a stored receipt is never changed
        in place (a call answers a deep copy of it), so the copy shares them, and the 1,000,000 values the
        backups may hold cost a dict of references, not 20 s of deep copy under the lock."""
        return Backup(_journals(self.journals), dict(self.checkpoints), dict(self.receipts),
                      self.clock.now_millis, {ns: dict(r) for ns, r in self.records.items()},
                      dict(self.mutations))

    def stored_values(self) -> int:
        """How many values a backup copies: journal entries, checkpoints, receipts, records, mutation
        receipts (what bounds the operator's backups: :data:`simkit.service.admin.MAX_BACKUP_VALUES`)."""
        return (sum(len(j.entries) for j in self.journals.values()) + len(self.checkpoints)
                + len(self.receipts) + sum(len(r) for r in self.records.values()) + len(self.mutations))

    def restore(self, backup: Backup) -> None:
        """Put the stored data back as it was when ``backup`` was taken (seed 004 "Recovery and limits")."""
        self.journals = _journals(backup.journals)
        self.checkpoints = dict(backup.checkpoints)
        self.receipts = dict(backup.receipts)
        self.records = {ns: dict(r) for ns, r in backup.records.items()}
        self.mutations = dict(backup.mutations)
        self._seq += 1
        self.restores.append((self._seq, self.clock.now_millis))

    def state_digest(self) -> str:
        """A digest of every stored value: equal before and after a rejected call."""
        return digest({
            "journals": sorted([repr(ns), j.journal_id, [e.as_dict(2) for e in j.entries]]
                               for ns, j in self.journals.items()),
            "checkpoints": sorted([repr(k), v.digest_input(), v.checkpoint_digest]
                                  for k, v in self.checkpoints.items()),
            "receipts": sorted([repr(k), fp, r] for k, (fp, r) in self.receipts.items()),
            "records": sorted([repr(ns), rid, r.content()] for ns, rs in self.records.items()
                              for rid, r in rs.items()),
            "mutations": sorted([repr(k), fp, r] for k, (fp, r) in self.mutations.items()),
        })

    def corrupt_checkpoint(self, subject_id: str, scope: dict, consumer_id: str, version: int = 1) -> bool:
        """Change a stored checkpoint behind its digest's back (simulated storage corruption)."""
        return self.corrupt_stored((subject_id, self.namespace(subject_id, scope), version, consumer_id))

    def corrupt_stored(self, key: tuple) -> bool:
        """:meth:`corrupt_checkpoint` by the checkpoint's key ``(subject_id, namespace, version,
        consumer_id)``."""
        rec = self.checkpoints.get(key)
        if rec is None:
            return False
        moved = {**rec.cursor, "sequence": rec.cursor["sequence"] + 1}
        self.checkpoints[key] = Stored(**{**rec.__dict__, "cursor": moved})
        return True

    def corrupt_journal(self, tenant: str, scope: dict, sequence: int = 1) -> bool:
        """Change a journal entry behind its digest's back."""
        journal = self.journals.get((tenant, C.scope(scope)))
        if journal is None or not 1 <= sequence <= journal.head:
            return False
        e = journal.entries[sequence - 1]
        fields = {s: getattr(e, s) for s in e.__slots__}
        journal.entries[sequence - 1] = type(e)(**{**fields, "record_id": e.record_id + "~"})
        return True
