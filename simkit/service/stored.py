"""What the checkpoint service stores, as values: a checkpoint with its digest (:class:`Stored`), the
ground-truth record of a committed checkpoint command (:class:`WriteRecord`), a backup (:class:`Backup`), and
the digests that bind a receipt to what it answers (docs/service.md, "Writes commit together").
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .contract import digest

__all__ = ["Backup", "Stored", "WriteRecord", "mutation_digest", "receipt_digest"]


@dataclass(frozen=True)
class Stored:
    """A stored checkpoint and the digest that binds it to its owner, its revision and its predecessor."""

    version: int
    subject_id: str
    namespace: tuple
    consumer_id: str
    cursor: dict
    revision: int
    updated_at_millis: int
    previous_digest: str | None
    checkpoint_digest: str = ""

    def digest_input(self) -> dict:
        return {"contract_version": self.version, "subject": self.subject_id,
                "namespace": list(self.namespace[1]),
                "tenant": self.namespace[0], "consumer_id": self.consumer_id, "cursor": self.cursor,
                "revision": self.revision, "updated_at_millis": self.updated_at_millis,
                "previous_digest": self.previous_digest}

    def public(self) -> dict:
        return {"consumer_id": self.consumer_id, "cursor": dict(self.cursor), "revision": self.revision,
                "updated_at_millis": self.updated_at_millis, "checkpoint_digest": self.checkpoint_digest}


@dataclass(frozen=True)
class WriteRecord:
    """Ground truth: one committed checkpoint command (an identical retry commits nothing and is not here)."""

    seq: int
    millis: int
    subject_id: str
    namespace: tuple
    version: int
    consumer_id: str
    idempotency_key: str
    before: dict | None
    after: dict


@dataclass
class Backup:
    """A snapshot of the stored data (journals, checkpoints, receipts, records, mutation receipts). Identities
    and grants are not data."""

    journals: dict
    checkpoints: dict
    receipts: dict
    taken_at_millis: int
    records: dict = field(default_factory=dict)
    mutations: dict = field(default_factory=dict)



def receipt_digest(receipt: dict) -> str:
    """The ``receipt_digest`` of a checkpoint command's receipt."""
    return digest({k: receipt[k] for k in ("contract_version", "idempotency_key", "checkpoint")})


def mutation_digest(receipt: dict) -> str:
    """The ``receipt_digest`` of a memory mutation's receipt."""
    return digest({k: receipt[k] for k in ("idempotency_key", "entry")})
