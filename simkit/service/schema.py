"""The JSON bodies of seed 004's routes as pydantic models, for the published OpenAPI document only.

Requests are validated by :mod:`simkit.service.contract` (the same code the pure model runs), so that the
server and the model can never disagree; these models describe the wire format to clients and fuzzers.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from .contract import (
    DEFAULT_LIMIT,
    DEFAULT_SCAN_LIMIT,
    KINDS,
    MAX_LIMIT,
    MAX_SCAN_LIMIT,
    MAX_SEQUENCE,
    MIN_LIMIT,
    MIN_SCAN_LIMIT,
)

__all__ = [
    "DIGEST", "IDENTITY", "AppendRequest", "AppendResponse", "BackupRequest", "BackupResponse", "ChangesPage",
    "ChangesRequest", "ChangesRequestV1", "ChangesRequestV2", "Checkpoint", "CommandV1", "CommandV2",
    "CommandV2Create", "Cursor", "CursorV1", "CursorV2", "Entry", "Error", "ErrorDetail", "Filter",
    "MemoryRecord", "MutationReceipt", "QueryPage", "QueryRequest", "QueryV1", "QueryV2", "ReadRequest",
    "ReadResponse", "Receipt", "RestoreRequest", "RestoreResponse", "Scope", "WriteRequest", "WriteResponse",
]

#: What an identity may not hold, as contract.identity checks it (issue 32: the schema was looser): control
#: characters, and the format characters and separators of the Basic Multilingual Plane that hide themselves
#: or act as controls (zero-width spaces and joiners, bidirectional overrides, a byte order mark, line
#: separators).
_NOT_IN_IDENTITY = (
    r"\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    r"\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
_IDENTITY_PATTERN = rf"^[^{_NOT_IN_IDENTITY}]*[^\s{_NOT_IN_IDENTITY}][^{_NOT_IN_IDENTITY}]*$"
#: An id that names a checkpoint (a consumer id, a scope's ids) is an identity in Unicode normalization form
#: C as well (contract.consumer_id), which no pattern can say
_NFC = "an identity in Unicode normalization form NFC (any other form is a 400)"
#: ``maxLength`` counts characters; the rule counts UTF-8 bytes, which no JSON Schema keyword can say
_BYTES = "1-128 UTF-8 bytes (maxLength counts characters: 128 characters of more bytes are a 400)"


def _identity(default=..., nfc: bool = False):
    """An identity field (required unless given a ``default``), as contract.identity checks it; ``nfc``: one
    that names a checkpoint, NFC too. Every identity of the document is one of these: ``filter.next_after``
    and the operator's append fields kept the loose pattern of before issue 32, so the document called
    ``"a\\x01"`` or ``"x\\u200by"`` valid where the service answers 400."""
    return Field(default=default, min_length=1, max_length=128, pattern=_IDENTITY_PATTERN,
                 description=f"{_BYTES}; {_NFC}" if nfc else _BYTES)


IDENTITY = _identity()
CONSUMER_ID = _identity(nfc=True)
DIGEST = Field(pattern=r"^sha256:[0-9a-f]{64}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Scope(_Strict):
    project_id: str = CONSUMER_ID
    mission_id: str | None = CONSUMER_ID
    agent_id: str | None = CONSUMER_ID
    visibility: Literal["private", "shared"]


class Cursor(_Strict):
    """``{journal_id, sequence}``; version 2 (verified) cursors add ``history_digest``."""

    journal_id: str = IDENTITY
    sequence: int = Field(ge=0, le=MAX_SEQUENCE)
    history_digest: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")


class CursorV1(_Strict):
    """A version 1 cursor in a request: ``{journal_id, sequence}`` and nothing else (``history_digest``, even
    null, is a 400 ``unknown_field``)."""

    journal_id: str = IDENTITY
    sequence: int = Field(ge=0, le=MAX_SEQUENCE)


class CursorV2(CursorV1):
    """A version 2 (verified) cursor in a request: ``history_digest`` required, a digest."""

    history_digest: str = DIGEST


class QueryV1(_Strict):
    after: CursorV1 | None = None
    through: CursorV1 | None = None
    limit: int = Field(default=100, ge=MIN_LIMIT, le=MAX_LIMIT)


class QueryV2(QueryV1):
    after: CursorV2 | None = None          # the version 2 cursor
    through: CursorV2 | None = None


class ChangesRequestV1(_Strict):
    contract_version: Literal[1]
    scope: Scope
    query: QueryV1 | None = None


class ChangesRequestV2(_Strict):
    contract_version: Literal[2]
    scope: Scope
    query: QueryV2 | None = None


class ChangesRequest(RootModel[ChangesRequestV1 | ChangesRequestV2]):
    """A feed request; its cursors are of its ``contract_version`` (one schema for both said a version 1
    cursor could carry ``history_digest`` and a version 2 one could leave it out: each a 400)."""


class Entry(_Strict):
    schema_version: int
    cursor: Cursor
    kind: Literal[KINDS]  # type: ignore[valid-type]
    record_id: str
    record_revision: int
    author: str
    committed_at_millis: int
    change_digest: str = DIGEST


class ChangesPage(_Strict):
    contract_version: int
    changes: list[Entry]
    next_cursor: Cursor | None
    high_watermark: Cursor | None
    complete: bool


class Filter(_Strict):
    """The initial memory query scan's bounds: ``scan_limit`` bounds the
    candidates examined, available or not; ``limit`` the records returned;
    ``next_after`` continues after that record id (null: from the first)."""

    limit: int = Field(default=DEFAULT_LIMIT, ge=MIN_LIMIT, le=MAX_LIMIT)
    scan_limit: int = Field(default=DEFAULT_SCAN_LIMIT, ge=MIN_SCAN_LIMIT, le=MAX_SCAN_LIMIT)
    next_after: str | None = _identity(None)


class QueryRequest(_Strict):
    contract_version: Literal[1, 2]
    scope: Scope
    filter: Filter | None = None


class MemoryRecord(_Strict):
    record_id: str
    record_revision: int = Field(ge=1)
    kind: Literal[KINDS]  # type: ignore[valid-type]
    author: str
    updated_at_millis: int


class QueryPage(_Strict):
    """A page of the scan. ``records`` may be empty while ``next_after`` is not null:
    the scan is complete only when ``next_after`` is null. ``feed_cursor``: the feed's
    high watermark when this page was read (null before the journal is active); keep
    the first page's and read the feed from it once the scan is complete."""

    contract_version: int
    records: list[MemoryRecord]
    scanned: int = Field(ge=0,
                         description="candidates examined, available or not (at most filter.scan_limit)")
    next_after: str | None
    feed_cursor: Cursor | None


class ReadRequest(_Strict):
    contract_version: Literal[1, 2]
    scope: Scope
    consumer_id: str = CONSUMER_ID


class Checkpoint(_Strict):
    consumer_id: str
    cursor: Cursor
    revision: int = Field(ge=1)
    updated_at_millis: int
    checkpoint_digest: str = DIGEST


class ReadResponse(_Strict):
    contract_version: int
    scope: Scope
    checkpoint: Checkpoint


class CommandV1(_Strict):
    """A version 1 command: no ``expected_digest`` (even null: a 400 ``unknown_field``)."""

    contract_version: Literal[1]
    idempotency_key: str = IDENTITY
    consumer_id: str = CONSUMER_ID
    expected_revision: int = Field(ge=0, le=MAX_SEQUENCE)
    cursor: CursorV1


class CommandV2(CommandV1):
    """A version 2 command that advances progress: ``expected_revision`` from 1 and ``expected_digest``, the
    current ``checkpoint_digest``, required."""

    contract_version: Literal[2]                        # type: ignore[assignment]
    expected_revision: int = Field(ge=1, le=MAX_SEQUENCE)
    cursor: CursorV2
    expected_digest: str = DIGEST


class CommandV2Create(CommandV1):
    """A version 2 command that creates progress: ``expected_revision`` 0 and ``expected_digest`` null."""

    contract_version: Literal[2]                        # type: ignore[assignment]
    expected_revision: Literal[0]
    cursor: CursorV2
    expected_digest: None


class WriteRequest(_Strict):
    """A command of its ``contract_version``: one schema for both took either's fields, and a version 2
    ``expected_digest`` whatever the revision (each a 400)."""

    scope: Scope
    command: CommandV1 | CommandV2Create | CommandV2


class Receipt(_Strict):
    contract_version: int
    idempotency_key: str
    checkpoint: Checkpoint
    receipt_digest: str = DIGEST


class WriteResponse(_Strict):
    contract_version: int
    receipt: Receipt


class ErrorDetail(_Strict):
    status: int
    code: str
    message: str


class Error(_Strict):
    error: ErrorDetail


# -- the operator routes of ``simkit serve`` (not seed 004; published only when they are on) -----------------
def _dev_scope() -> Scope:
    from .config import DEV_SCOPE
    return Scope.model_validate(DEV_SCOPE)


class AppendRequest(_Strict):
    """A memory mutation's journal entry, written as ``author: "operator"``; every field optional. With an
    ``idempotency_key``, an identical retry returns the original entry and receipt and appends nothing; the
    same key for another mutation is a 409. ``private_to``: a new record visible to that subject only."""

    tenant: str = _identity("tenant", nfc=True)
    scope: Scope = Field(default_factory=_dev_scope, json_schema_extra={"default": {
        "project_id": "project", "mission_id": None, "agent_id": "agent", "visibility": "shared"}})
    kind: Literal[KINDS] = "created"  # type: ignore[valid-type]
    record_id: str = _identity("note")
    idempotency_key: str | None = _identity(None)
    private_to: str | None = _identity(None, nfc=True)


class MutationReceipt(_Strict):
    idempotency_key: str
    receipt_digest: str = DIGEST


class AppendResponse(_Strict):
    """``receipt`` only when the request carried an ``idempotency_key``."""

    entry: Entry
    receipt: MutationReceipt | None = None


class BackupRequest(_Strict):
    """No fields: the body is empty or ``{}``."""


class BackupResponse(_Strict):
    backup: int = Field(ge=1, description="this backup's number, for POST /_simkit/restore")


class RestoreRequest(_Strict):
    backup: int = Field(ge=1, description="the number POST /_simkit/backup answered")


class RestoreResponse(_Strict):
    restored: int = Field(ge=1)
