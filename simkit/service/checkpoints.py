"""The checkpoint service of seed 004 ("Durable consumer checkpoints") as a pure model with an explicit clock.

:class:`CheckpointService` holds subjects, credentials and grants, one change-feed journal per namespace
(tenant and exact scope), checkpoints per (subject, namespace, contract version, consumer id) and the
idempotency receipts. :meth:`CheckpointService.call` takes a route, the ``Authorization`` header and the raw
body and returns a :class:`Reply`; the HTTP server (``simkit serve``) is a thin adapter around it, and the
tests drive both through the same calls.

Order of checks on every call: size (413) → credential (401) → shape (400) → capability and grant for the
exact scope (403) → requested faults: the ``inject_faults`` role (403) and known kinds (400) → injected faults →
state (404 / 409 / 500). A rejected call changes no state: a fault is injected only into a call that passed every
check before it, and only a subject with the ``inject_faults`` role may ask for one.

Routes (:data:`ROUTES`; bodies in :mod:`simkit.service.contract`, their OpenAPI models in
:mod:`simkit.service.schema`):

| route | needs | answers | errors |
| --- | --- | --- | --- |
| ``POST /api/v1/memory/changes`` | ``memory_read`` | a feed page (feed-notes.md) | 400 401 403 409 413 500 |
| ``POST /api/v1/memory/query`` | ``memory_read`` | ``{contract_version, records, scanned, next_after, feed_cursor}`` | 400 401 403 413 |
| ``POST /api/v1/memory/checkpoints/read`` | ``memory_read`` + ``memory_checkpoint`` | ``{contract_version, scope, checkpoint}`` | 400 401 403 404 413 500 |
| ``POST /api/v1/memory/checkpoints`` | ``memory_read`` + ``memory_checkpoint`` | ``{contract_version, receipt}`` | 400 401 403 409 413 500 |

The memory query (seed 004's "initial memory query scan", :mod:`simkit.service.memory`) takes ``{contract_version,
scope, filter: {limit, scan_limit, next_after}}``; deleted records and records private to another subject use up
``scan_limit`` without being returned, so a page may be empty while ``next_after`` is not null; the scan is complete
when ``next_after`` is null. It has no 409: ``next_after`` is a record id, valid whatever the journal holds.

**Writes commit together.** A checkpoint command's checkpoint and its idempotency receipt are one synchronous batch
(seed 004: *"Checkpoint and receipt commit in one synchronous WAL batch in the memory store"*); a memory mutation's
record, journal entry and receipt likewise (feed-notes.md). :data:`STORES` names the batched store and, to show what
the batch prevents, two stores that split the checkpoint write in two, with a crash point between (the
``crash-mid-write`` fault; see :meth:`CheckpointService._commit`).

The model never reads the wall clock: ``clock.now_millis`` is whatever the owner says it is.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace

from . import contract as C
from . import memory
from .contract import ServiceError, conflict, digest
from .feed import Journal, inactive_page
from .memory import Record

ROUTES = {
    "/api/v1/memory/changes": "changes",
    "/api/v1/memory/query": "query",
    "/api/v1/memory/checkpoints/read": "read",
    "/api/v1/memory/checkpoints": "write",
}
NEEDS = {"changes": frozenset({C.MEMORY_READ}), "query": frozenset({C.MEMORY_READ}),
         "read": frozenset({C.MEMORY_READ, C.MEMORY_CHECKPOINT}),
         "write": frozenset({C.MEMORY_READ, C.MEMORY_CHECKPOINT})}
#: How a checkpoint command's two writes, the checkpoint and its idempotency receipt, reach the store:
#: ``batched`` in one synchronous batch (seed 004; the default), ``split`` the checkpoint and then the receipt,
#: ``split_receipt_first`` the receipt and then the checkpoint. A crash between the two writes of a split store
#: loses one of them (:meth:`CheckpointService._commit`).
STORES = ("batched", "split", "split_receipt_first")


class ServerCrash(Exception):
    """The service process died in the middle of a call (the ``crash-mid-write`` fault): whatever it had written
    stays, the rest of the call never happens, and the caller gets no reply."""


class ManualClock:
    """The model's only notion of time: milliseconds that advance when the owner says so."""

    def __init__(self, now_millis: int = 0):
        self.now_millis = now_millis

    def advance(self, millis: int) -> int:
        self.now_millis += millis
        return self.now_millis


@dataclass(frozen=True)
class Reply:
    """One answer: status, JSON body and headers (``Cache-Control: no-store`` on every reply)."""

    status: int
    body: dict
    headers: dict = field(default_factory=lambda: dict(C.NO_STORE))
    #: the fault kinds injected into this call (``lose-reply``, ``crash-mid-write``: the caller gets no reply)
    faults: tuple = ()

    @property
    def lost(self) -> bool:
        """The caller never hears this reply (a fault of :data:`simkit.service.contract.LOST_REPLY_FAULTS`)."""
        return any(f in C.LOST_REPLY_FAULTS for f in self.faults)


@dataclass
class Subject:
    subject_id: str
    tenant: str
    #: exact scope tuple -> capabilities
    grants: dict[tuple, frozenset] = field(default_factory=dict)
    tenant_admin: bool = False
    #: service-wide roles (:data:`simkit.service.contract.ROLES`), held apart from the scoped grants
    roles: frozenset = frozenset()


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
        return {"contract_version": self.version, "subject": self.subject_id, "namespace": list(self.namespace[1]),
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
    """A snapshot of the stored data (journals, checkpoints, receipts, records, mutation receipts). Identities and
    grants are not data."""

    journals: dict
    checkpoints: dict
    receipts: dict
    taken_at_millis: int
    records: dict = field(default_factory=dict)
    mutations: dict = field(default_factory=dict)


def _receipt_digest(receipt: dict) -> str:
    return digest({k: receipt[k] for k in ("contract_version", "idempotency_key", "checkpoint")})


def _mutation_digest(receipt: dict) -> str:
    return digest({k: receipt[k] for k in ("idempotency_key", "entry")})


class CheckpointService:
    """Seed 004's service: change feed, memory records and their query, checkpoint read and write, backup and
    restore. ``store`` is one of :data:`STORES` (default ``batched``, the seed's)."""

    def __init__(self, clock: ManualClock | None = None, store: str = "batched"):
        if store not in STORES:
            raise ValueError(f"unknown store {store!r}; one of {', '.join(STORES)}")
        self.clock = clock or ManualClock()
        self.store = store
        self.subjects: dict[str, Subject] = {}
        self.credentials: dict[str, str] = {}
        self.revoked: set[str] = set()
        self.journals: dict[tuple, Journal] = {}
        self.checkpoints: dict[tuple, Stored] = {}
        #: (subject, namespace, idempotency key) -> (command fingerprint, receipt)
        self.receipts: dict[tuple, tuple[str, dict]] = {}
        #: namespace -> record id -> record (:mod:`simkit.service.memory`)
        self.records: dict[tuple, dict[str, Record]] = {}
        #: (author, namespace, idempotency key) -> (mutation fingerprint, receipt)
        self.mutations: dict[tuple, tuple[str, dict]] = {}
        #: ground truth for checkers: committed commands, restores
        self.writes: list[WriteRecord] = []
        self.restores: list[tuple[int, int]] = []
        self._seq = 0
        self._journal_count = 0

    # -- identities and grants ----------------------------------------------------------------------------
    def add_subject(self, subject_id: str, tenant: str = "tenant", credentials=(), tenant_admin: bool = False,
                    roles=()) -> Subject:
        s = self.subjects.setdefault(subject_id, Subject(subject_id, tenant, tenant_admin=tenant_admin))
        for token in credentials:
            self.add_credential(token, subject_id)
        for role in roles:
            self.give_role(subject_id, role)
        return s

    def give_role(self, subject_id: str, role: str) -> None:
        """A service-wide role: ``operator`` (the ``/_simkit/*`` routes) or ``inject_faults`` (``X-Simkit-Fault``)."""
        if role not in C.ROLES:
            raise ValueError(f"unknown role {role!r}; one of {', '.join(C.ROLES)}")
        s = self.subjects[subject_id]
        s.roles = s.roles | {role}

    def add_credential(self, token: str, subject_id: str) -> None:
        """Issue (or rotate in) a credential; rotation within one subject preserves its checkpoints."""
        if subject_id not in self.subjects:
            raise KeyError(f"unknown subject {subject_id!r}")
        self.credentials[token] = subject_id
        self.revoked.discard(token)

    def revoke(self, token: str) -> None:
        self.revoked.add(token)

    def grant(self, subject_id: str, scope: dict, capabilities) -> None:
        caps = frozenset(capabilities)
        unknown = caps - set(C.CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown capability {sorted(unknown)[0]!r}; one of {', '.join(C.CAPABILITIES)}")
        s = self.subjects[subject_id]
        key = C.scope(scope)
        s.grants[key] = s.grants.get(key, frozenset()) | caps

    def ungrant(self, subject_id: str, scope: dict) -> None:
        """Withdraw every capability the subject holds on this exact scope."""
        self.subjects[subject_id].grants.pop(C.scope(scope), None)

    def journal_id(self, tenant: str, scope: dict) -> str | None:
        j = self.journals.get((tenant, C.scope(scope)))
        return None if j is None else j.journal_id

    def namespace(self, subject_id: str, scope: dict | tuple) -> tuple:
        sc = scope if isinstance(scope, tuple) else C.scope(scope)
        return (self.subjects[subject_id].tenant, sc)

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

        feed-notes.md: *"A mutation, its idempotency receipt and its journal entry commit together; an identical
        command retry creates no second entry; rejected commands do not advance the journal."* The record, the
        journal entry and the receipt are written together, with nothing that can fail between them. Keys are
        scoped to the author and namespace; the command is ``(kind, record_id, private_to)``. An identical retry
        returns the original entry and receipt, even after later mutations; the same key for another command is a
        409 ``idempotency_conflict`` that changes nothing. ``private_to`` makes a new record visible to that subject
        only (:mod:`simkit.service.memory`); a change to an existing record keeps its owner.
        """
        if kind not in C.KINDS:
            raise ValueError(f"unknown change kind {kind!r}; one of {', '.join(C.KINDS)}")
        ns = (tenant, C.scope(scope))
        fingerprint = digest({"kind": kind, "record_id": record_id, "private_to": private_to})
        rkey = None if idempotency_key is None else (author, ns, idempotency_key)
        if rkey is not None and rkey in self.mutations:
            stored_fp, receipt = self.mutations[rkey]
            if _mutation_digest(receipt) != receipt["receipt_digest"]:
                raise ServiceError(500, "integrity_failure", "stored mutation receipt does not match its receipt_digest")
            if stored_fp != fingerprint:
                raise conflict("idempotency_conflict", "idempotency_key was used for another mutation (kind, "
                                                       "record_id or private_to); use a new key")
            return {"entry": copy.deepcopy(receipt["entry"]),
                    "receipt": {"idempotency_key": idempotency_key, "receipt_digest": receipt["receipt_digest"]}}
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
            receipt["receipt_digest"] = _mutation_digest(receipt)
            self.mutations[rkey] = (fingerprint, receipt)
            out["receipt"] = {"idempotency_key": idempotency_key, "receipt_digest": receipt["receipt_digest"]}
        return out

    def import_record(self, tenant: str, scope: dict, record_id: str, author: str = "importer",
                      private_to: str | None = None, deleted: bool = False) -> Record:
        """A record from before the namespace's journal was activated: no journal entry, so the feed never delivers
        it and only the initial reconciliation scan finds it. ``deleted``: a tombstone (created, then deleted).
        Only before activation (``ValueError`` after)."""
        ns = (tenant, C.scope(scope))
        if ns in self.journals:
            raise ValueError("the namespace's journal is active: a record now comes with its journal entry (mutate)")
        record = Record(record_id, 2 if deleted else 1, "deleted" if deleted else "created", author,
                        self.clock.now_millis, private_to)
        self.records.setdefault(ns, {})[record_id] = record
        return record

    def replace_journal(self, tenant: str, scope: dict) -> str:
        """Give the namespace a new journal identity (as a restore from another lineage would)."""
        ns = (tenant, C.scope(scope))
        self.journals.pop(ns, None)
        return self.activate_journal(tenant, scope)

    # -- calls --------------------------------------------------------------------------------------------
    def call(self, route: str, authorization: str | None, raw: bytes, faults=(), scheduled=None) -> Reply:
        """One request: ``route`` is a path of :data:`ROUTES`; ``raw`` the body bytes. Never raises a
        :class:`ServiceError` (it is the reply).

        ``faults`` are the fault kinds the caller asks for (``X-Simkit-Fault``); ``scheduled(op)`` returns the
        start-up faults (``--fault``) due for this request. Both are consulted only once the call has passed
        every check up to its grant, so a rejected call neither injects a fault nor counts towards ``#N``; asking
        for a fault needs the ``inject_faults`` role (403) and known kinds (400).
        """
        op = ROUTES.get(route)
        if op is None:
            return Reply(404, ServiceError(404, "no_route", f"no route {route}").body())
        injected: list[str] = []
        try:
            body = self._handle(op, authorization, raw, faults, scheduled, injected)
        except ServiceError as exc:
            return Reply(exc.status, exc.body(), faults=tuple(injected))
        except ServerCrash as crash:                      # nobody hears this reply (Reply.lost)
            return Reply(500, ServiceError(500, "server_crashed", str(crash)).body(), faults=tuple(injected))
        return Reply(200, body, faults=tuple(injected))

    def _handle(self, op: str, authorization: str | None, raw: bytes, faults, scheduled, injected: list) -> dict:
        if len(raw) > C.MAX_REQUEST_BYTES:
            C.parse_body(raw)                       # raises 413
        subject = self._authenticate(authorization)
        body = C.parse_body(raw)
        if op == "changes":
            version, sc, after, through, limit = C.changes_request(body)
            ns = self._authorize(subject, sc, op)
            injected += self._faults(subject, op, faults, scheduled)
            if "corrupt-journal" in injected:
                journal = self.journals.get(ns)
                if journal is not None and journal.head:
                    self.corrupt_journal(ns[0], C.scope_dict(sc), min((after or {}).get("sequence", 0) + 1, journal.head))
            return self._changes(ns, version, after, through, limit)
        if op == "query":
            version, sc, limit, scan_limit, after = C.query_request(body)
            ns = self._authorize(subject, sc, op)
            injected += self._faults(subject, op, faults, scheduled)
            return self._query(subject, ns, version, limit, scan_limit, after)
        if op == "read":
            version, sc, consumer_id = C.read_request(body)
        else:
            sc, cmd = C.write_request(body)
            version, consumer_id = cmd["contract_version"], cmd["consumer_id"]
        ns = self._authorize(subject, sc, op)
        injected += self._faults(subject, op, faults, scheduled)
        if "corrupt-checkpoint" in injected:
            self.corrupt_checkpoint(subject.subject_id, C.scope_dict(sc), consumer_id, version)
        if op == "read":
            return self._read(subject, ns, sc, version, consumer_id)
        return self._write(subject, ns, cmd, crash="crash-mid-write" in injected)

    def _faults(self, subject: Subject, op: str, requested, scheduled) -> list[str]:
        """The faults to inject into an authorized call: the ones asked for, then the start-up ones now due."""
        kinds = [k.strip() for k in requested if k.strip()]
        if kinds:
            if C.INJECT_FAULTS not in subject.roles:
                raise ServiceError(403, "forbidden", f"subject lacks the {C.INJECT_FAULTS} role needed to send "
                                                     f"X-Simkit-Fault")
            unknown = [k for k in kinds if k not in C.FAULT_KINDS]
            if unknown:
                raise C.bad("bad_fault", f"X-Simkit-Fault: unknown fault {C.show(unknown[0])}; one of "
                                         f"{', '.join(C.FAULT_KINDS)}")
            if "crash-mid-write" in kinds and op != "write":
                raise C.bad("bad_fault", "X-Simkit-Fault: crash-mid-write applies to POST /api/v1/memory/checkpoints "
                                         "only (a crash between its checkpoint write and its receipt write)")
        return kinds + list(scheduled(op) if scheduled else ())

    def authenticate(self, authorization: str | None) -> Subject:
        """The subject of an ``Authorization: Bearer`` header, or 401 (for routes outside :data:`ROUTES`)."""
        return self._authenticate(authorization)

    def require_role(self, subject: Subject, role: str) -> None:
        """403 unless ``subject`` holds the service-wide ``role``."""
        if role not in subject.roles:
            raise ServiceError(403, "forbidden", f"subject lacks the {role} role")

    def _authenticate(self, authorization: str | None) -> Subject:
        """Checked on every call, retries included: unknown or revoked credentials are 401."""
        token = C.bearer(authorization)
        if token in self.revoked:
            raise ServiceError(401, "revoked_credential", "the credential has been revoked")
        subject_id = self.credentials.get(token)
        if subject_id is None:
            raise ServiceError(401, "invalid_credential", "the credential is not valid")
        return self.subjects[subject_id]

    def _authorize(self, subject: Subject, sc: tuple, op: str) -> tuple:
        """Capabilities for the exact scope; tenant administration alone grants nothing (403)."""
        missing = NEEDS[op] - subject.grants.get(sc, frozenset())
        if missing:
            raise ServiceError(403, "forbidden", f"subject lacks {', '.join(sorted(missing))} on this exact scope")
        return (subject.tenant, sc)

    def _changes(self, ns, version, after, through, limit) -> dict:
        journal = self.journals.get(ns)
        if journal is None:
            if after is not None or through is not None:
                raise conflict("journal_not_active", "this namespace has no active journal; the cursor is foreign")
            return inactive_page(version)
        return journal.page(after, through, limit, version)

    def _query(self, subject: Subject, ns: tuple, version: int, limit: int, scan_limit: int, after: str | None) -> dict:
        """One page of the initial memory query scan (:mod:`simkit.service.memory`), with the feed's high watermark
        as of this page (``feed_cursor``; null before the journal is active)."""
        found, scanned, nxt = memory.scan(self.records.get(ns, {}), subject.subject_id, after, limit, scan_limit)
        journal = self.journals.get(ns)
        return {"contract_version": version, "records": [r.as_dict() for r in found], "scanned": scanned,
                "next_after": nxt, "feed_cursor": None if journal is None else journal.cursor(journal.head, version)}

    def _stored(self, key) -> Stored | None:
        rec = self.checkpoints.get(key)
        if rec is not None and digest(rec.digest_input()) != rec.checkpoint_digest:
            raise ServiceError(500, "integrity_failure", f"stored checkpoint of consumer {key[3]!r} does not match its digest")
        return rec

    def _read(self, subject, ns, sc, version, consumer_id) -> dict:
        rec = self._stored((subject.subject_id, ns, version, consumer_id))
        if rec is None:
            raise ServiceError(404, "checkpoint_not_found", f"no version {version} checkpoint for consumer "
                                                            f"{consumer_id!r}; run the feed's initial reconciliation")
        return {"contract_version": version, "scope": C.scope_dict(sc), "checkpoint": rec.public()}

    def _write(self, subject: Subject, ns: tuple, cmd: dict, crash: bool = False) -> dict:
        version = cmd["contract_version"]
        fingerprint = digest({k: v for k, v in cmd.items() if k != "idempotency_key"})
        rkey = (subject.subject_id, ns, cmd["idempotency_key"])
        if rkey in self.receipts:
            stored_fp, receipt = self.receipts[rkey]
            if _receipt_digest(receipt) != receipt["receipt_digest"]:
                raise ServiceError(500, "integrity_failure", "stored receipt does not match its receipt_digest")
            if stored_fp != fingerprint:
                raise conflict("idempotency_conflict", "idempotency_key was used for another command (cursor, "
                                                       "consumer or expected revision); use a new key")
            return {"contract_version": version, "receipt": copy.deepcopy(receipt)}
        journal = self.journals.get(ns)
        if journal is None:
            raise conflict("journal_not_active", "no checkpoint can be created before journal activation")
        seq = journal.locate(cmd["cursor"], "command.cursor", version)
        key = (subject.subject_id, ns, version, cmd["consumer_id"])
        rec = self._stored(key)
        expected = cmd["expected_revision"]
        if rec is None:
            if expected != 0:
                raise conflict("revision_conflict", f"expected revision {expected} but the checkpoint does not "
                                                    f"exist; create it with expected_revision 0")
        else:
            if expected != rec.revision:
                raise conflict("revision_conflict", f"expected revision {expected} but the current revision is "
                                                    f"{rec.revision}; reread and reconcile")
            if version == 2 and cmd["expected_digest"] != rec.checkpoint_digest:
                raise conflict("digest_conflict", f"revision {expected} has another checkpoint_digest: the "
                                                  f"progress diverged; reread and reconcile")
            if cmd["cursor"]["journal_id"] != rec.cursor["journal_id"]:
                raise conflict("journal_switch", "existing progress cannot switch journal identities; use a new "
                                                 "consumer identity after reconciliation")
            if seq < rec.cursor["sequence"]:
                raise conflict("cursor_backward", f"cursor sequence {seq} is behind the checkpoint's "
                                                  f"{rec.cursor['sequence']}; progress cannot move backward")
        new = Stored(version, subject.subject_id, ns, cmd["consumer_id"], dict(cmd["cursor"]),
                     (rec.revision if rec else 0) + 1, self.clock.now_millis, rec.checkpoint_digest if rec else None)
        new = Stored(**{**new.__dict__, "checkpoint_digest": digest(new.digest_input())})
        receipt = {"contract_version": version, "idempotency_key": cmd["idempotency_key"], "checkpoint": new.public()}
        receipt["receipt_digest"] = _receipt_digest(receipt)
        # No journal entry: checkpoint writes cannot create a feedback loop in the feed.
        self._commit(key, new, rkey, (fingerprint, receipt),
                     WriteRecord(0, self.clock.now_millis, subject.subject_id, ns, version, cmd["consumer_id"],
                                 cmd["idempotency_key"], rec.public() if rec else None, new.public()), crash)
        return {"contract_version": version, "receipt": copy.deepcopy(receipt)}

    def _commit(self, key, new: Stored, rkey, receipt_row, record: WriteRecord, crash: bool) -> None:
        """Write a checkpoint command's checkpoint and idempotency receipt as :attr:`store` says; ``crash``: the
        process dies between the two writes (:class:`ServerCrash`). Ground truth (:attr:`writes`) records the
        checkpoint write.

        - ``batched`` (seed 004): one synchronous batch, so there is no point between the two: a crash lands before
          the batch (nothing written, as if the request had been lost) or after it; simkit puts it after, the case
          in which the identical retry must be answered from the receipt. It is.
        - ``split``: the checkpoint, then the receipt. A crash between loses the receipt: the checkpoint has
          advanced, and the identical retry, the one recovery seed 004 gives a client whose reply was lost, finds
          no receipt, is judged as a new command, and meets its own commit: 409 ``revision_conflict`` instead of
          *"its original receipt"*, and that receipt can never be had again.
        - ``split_receipt_first``: the receipt, then the checkpoint. A crash between loses the checkpoint, which is
          worse and harder to see: the identical retry gets a 200 with a receipt for progress the service never
          stored, and only a later read (or a 409) shows it.

        Either order loses something; ``split`` is the order a store that saves progress and then remembers the
        answer would use, and the retry itself exposes its loss, so it is the split store the simulation and the
        command line show beside the batch.
        """
        def checkpoint():
            self.checkpoints[key] = new
            self._seq += 1
            self.writes.append(replace(record, seq=self._seq))

        def receipt():
            self.receipts[rkey] = receipt_row

        if self.store == "batched":
            checkpoint()
            receipt()
            if crash:
                raise ServerCrash("crash-mid-write: the server died after its one checkpoint-and-receipt batch")
            return
        first, second = (checkpoint, receipt) if self.store == "split" else (receipt, checkpoint)
        first()
        if crash:
            raise ServerCrash(f"crash-mid-write: the server died after writing the {first.__name__} and before "
                              f"writing the {second.__name__}")
        second()

    # -- backup, restore, integrity faults --------------------------------------------------------------------
    def backup(self) -> Backup:
        return Backup(copy.deepcopy(self.journals), dict(self.checkpoints), copy.deepcopy(self.receipts),
                      self.clock.now_millis, {ns: dict(r) for ns, r in self.records.items()},
                      copy.deepcopy(self.mutations))

    def restore(self, backup: Backup) -> None:
        """Put the stored data back as it was when ``backup`` was taken (seed 004 "Recovery and limits")."""
        self.journals = copy.deepcopy(backup.journals)
        self.checkpoints = dict(backup.checkpoints)
        self.receipts = copy.deepcopy(backup.receipts)
        self.records = {ns: dict(r) for ns, r in backup.records.items()}
        self.mutations = copy.deepcopy(backup.mutations)
        self._seq += 1
        self.restores.append((self._seq, self.clock.now_millis))

    def state_digest(self) -> str:
        """A digest of every stored value: equal before and after a rejected call."""
        return digest({
            "journals": sorted([repr(ns), j.journal_id, [e.as_dict(2) for e in j.entries]] for ns, j in self.journals.items()),
            "checkpoints": sorted([repr(k), v.digest_input(), v.checkpoint_digest] for k, v in self.checkpoints.items()),
            "receipts": sorted([repr(k), fp, r] for k, (fp, r) in self.receipts.items()),
            "records": sorted([repr(ns), rid, r.content()] for ns, rs in self.records.items() for rid, r in rs.items()),
            "mutations": sorted([repr(k), fp, r] for k, (fp, r) in self.mutations.items()),
        })

    def corrupt_checkpoint(self, subject_id: str, scope: dict, consumer_id: str, version: int = 1) -> bool:
        """Change a stored checkpoint behind its digest's back (simulated storage corruption)."""
        key = (subject_id, self.namespace(subject_id, scope), version, consumer_id)
        rec = self.checkpoints.get(key)
        if rec is None:
            return False
        self.checkpoints[key] = Stored(**{**rec.__dict__, "cursor": {**rec.cursor, "sequence": rec.cursor["sequence"] + 1}})
        return True

    def corrupt_journal(self, tenant: str, scope: dict, sequence: int = 1) -> bool:
        """Change a journal entry behind its digest's back."""
        journal = self.journals.get((tenant, C.scope(scope)))
        if journal is None or not 1 <= sequence <= journal.head:
            return False
        e = journal.entries[sequence - 1]
        journal.entries[sequence - 1] = type(e)(**{**{s: getattr(e, s) for s in e.__slots__}, "record_id": e.record_id + "~"})
        return True
