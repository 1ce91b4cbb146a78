"""The checkpoint service of seed 004 ("Durable consumer checkpoints") as a pure model with an explicit clock.

:class:`CheckpointService` holds subjects, credentials and grants, one change-feed journal per namespace
(tenant and exact scope), checkpoints per (subject, namespace, contract version, consumer id) and the
idempotency receipts. :meth:`CheckpointService.call` takes a route, the ``Authorization`` header and the raw
body and returns a :class:`Reply`; the HTTP server (``simkit serve``) is a thin adapter around it, and the
tests drive both through the same calls.

Order of checks on every call: size (413) → credential (401) → shape (400) → capability and grant for the
exact scope (403) → requested faults: the ``inject_faults`` role (403) and known kinds this route can honour
(400, :data:`~simkit.service.contract.FAULT_OPS`) → injected faults → state (404 / 409 / 500). A rejected call
changes no state: a fault is injected only into a call that passed every check before it, and only a subject
with the ``inject_faults`` role may ask for one.

Routes (:data:`ROUTES`; bodies in :mod:`simkit.service.contract`, their OpenAPI models in
:mod:`simkit.service.schema`):

- ``POST /api/v1/memory/changes`` needs ``memory_read``; a feed page (:mod:`simkit.service.feed`);
  400 401 403 409 413 500;
- ``POST /api/v1/memory/query`` needs ``memory_read``; ``{contract_version, records, scanned, next_after,
  feed_cursor}``; 400 401 403 413;
- ``POST /api/v1/memory/checkpoints/read`` needs ``memory_read`` and ``memory_checkpoint``;
  ``{contract_version, scope, checkpoint}``; 400 401 403 404 413 500;
- ``POST /api/v1/memory/checkpoints`` needs ``memory_read`` and ``memory_checkpoint``; ``{contract_version,
  receipt}``; 400 401 403 409 413 500.

The memory query (seed 004's "initial memory query scan", :mod:`simkit.service.memory`) takes
``{contract_version, scope, filter: {limit, scan_limit, next_after}}``; deleted records and records private to
another subject use up ``scan_limit`` without being returned, so a page may be empty while ``next_after`` is
not null; the scan is complete when ``next_after`` is null. It has no 409: ``next_after`` is a record id,
valid whatever the journal holds.

**Writes commit together.** A checkpoint command's checkpoint and its idempotency receipt are one synchronous
batch (seed 004: *"Checkpoint and receipt commit in one synchronous WAL batch in the memory store"*); a memory
mutation's record, journal entry and receipt likewise (docs/service.md, "Writes commit together").
:data:`STORES` names the batched store and, to show what the batch prevents, two stores that split the
checkpoint write in two, with a crash point between (the ``crash-mid-write`` fault; see
:meth:`CheckpointService._commit`).

The model never reads the wall clock: ``clock.now_millis`` is whatever the owner says it is.

The service is assembled from parts: :class:`~simkit.service.access.Access` (subjects, credentials, grants,
roles; the 401 and 403 checks) and :class:`~simkit.service.maintenance.Maintenance` (journals, memory
mutations, imported records, backup and restore, integrity faults); this module holds the calls and the
checkpoint reads and writes.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from simkit.errors import echoed

from . import contract as C
from . import memory
from .access import NEEDS, Access, Subject
from .contract import ServiceError, conflict, digest
from .feed import Journal, inactive_page
from .maintenance import Maintenance, MillisClock
from .memory import Record
from .stored import Backup, Stored, WriteRecord, receipt_digest

__all__ = [
    "COUNTED_WHERE_STRUCK", "NEEDS", "ROUTES", "STORES", "Backup", "CheckpointService", "ManualClock",
    "Reply", "ServerCrash", "Stored", "Subject", "WriteRecord",
]

ROUTES = {
    "/api/v1/memory/changes": "changes",
    "/api/v1/memory/query": "query",
    "/api/v1/memory/checkpoints/read": "read",
    "/api/v1/memory/checkpoints": "write",
}
#: How a checkpoint command's two writes, the checkpoint and its idempotency receipt, reach the store:
#: ``batched`` in one synchronous batch (seed 004; the default), ``split`` the checkpoint and then the
#: receipt, ``split_receipt_first`` the receipt and then the checkpoint. A crash between the two writes of a
#: split store loses one of them (:meth:`CheckpointService._commit`).
STORES = ("batched", "split", "split_receipt_first")
#: The faults that strike only a request that reaches what they alter: a start-up one's ``#N`` counts only
#: those requests (``scheduled(op, kind)``, asked there): ``crash-mid-write`` a checkpoint write at its
#: commit, ``corrupt-checkpoint`` a stored checkpoint the request reads, ``corrupt-journal`` a feed page with
#: entries. ``crash-mid-write#2`` counted a write answered from its receipt (or a 409), lost its reply and
#: spared the write after it; ``corrupt-journal#2`` an empty page, ``corrupt-checkpoint#2`` a read of none.
COUNTED_WHERE_STRUCK = ("crash-mid-write", "corrupt-checkpoint", "corrupt-journal")


class ServerCrash(Exception):
    """The service process died in the middle of a call (the ``crash-mid-write`` fault): whatever it had
    written stays, the rest of the call never happens, and the caller gets no reply."""


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
        """The caller never hears this reply (a fault of
        :data:`simkit.service.contract.LOST_REPLY_FAULTS`)."""
        return any(f in C.LOST_REPLY_FAULTS for f in self.faults)


class CheckpointService(Access, Maintenance):
    """Seed 004's service: change feed, memory records and their query, checkpoint read and write, backup and
    restore. ``store`` is one of :data:`STORES` (default ``batched``, the seed's)."""

    def __init__(self, clock: MillisClock | None = None, store: str = "batched"):
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
        self._order = memory.Order()          # each namespace's record ids in order, for the query's pages

    @property
    def seq(self) -> int:
        """The service's write sequence number: the ``seq`` of
        the last checkpoint write or restore (0 before any)."""
        return self._seq

    # -- calls --------------------------------------------------------------------------------------------
    def call(self, route: str, authorization: str | None, raw: bytes, faults=(), scheduled=None,
             content_type: str | None = None, content_encoding: str | None = None) -> Reply:
        """One request: ``route`` is a path of :data:`ROUTES`; ``raw`` the body bytes. Never raises a
        :class:`ServiceError` (it is the reply).

        ``faults`` are the fault kinds the caller asks for (``X-Simkit-Fault``); ``scheduled(op)`` returns the
        start-up faults (``--fault``) due for this request, ``scheduled(op, kind)`` whether one of
        :data:`COUNTED_WHERE_STRUCK` is, asked only where it strikes. Both are consulted only
        once the call has passed every check up to its grant, so a rejected call neither injects a fault nor
        counts towards ``#N``;
        asking for a fault needs the ``inject_faults`` role (403) and known kinds (400). ``content_type`` is
        the HTTP header ("" when absent; None, the default, without HTTP): a body that is not
        ``application/json`` is a 400 ``malformed_content_type``, judged after the credential, where the body
        is parsed; ``content_encoding`` (the header; None when absent) other than ``identity`` a 400
        ``malformed_content_encoding`` there too.
        """
        op = ROUTES.get(route)
        if op is None:
            # the code HTTP answers (and docs/service.md lists): the in-process call said "no_route"
            return Reply(404, ServiceError(404, "route_not_found", f"no route {echoed(route)}").body())
        injected: list[str] = []
        try:
            body = self._handle(op, authorization, raw, faults, scheduled, injected, content_type,
                                content_encoding)
        except ServiceError as exc:
            return Reply(exc.status, exc.body(), faults=tuple(injected))
        except ServerCrash as crash:                      # nobody hears this reply (Reply.lost)
            return Reply(500, ServiceError(500, "server_crashed", str(crash)).body(), faults=tuple(injected))
        return Reply(200, body, faults=tuple(injected))

    def _handle(self, op: str, authorization: str | None, raw: bytes, faults, scheduled, injected: list,
                content_type: str | None = None, content_encoding: str | None = None) -> dict:
        if len(raw) > C.MAX_REQUEST_BYTES:
            C.parse_body(raw)                       # raises 413
        subject = self._authenticate(authorization)
        C.json_media_type(content_type, raw, content_encoding)
        body = C.parse_body(raw)
        if op == "changes":
            version, sc, after, through, limit = C.changes_request(body)
            ns = self._authorize(subject, sc, op)
            injected += self._faults(subject, op, faults, scheduled)
            page = self._changes(ns, version, after, through, limit)
            if page["changes"] and self._due(op, scheduled, injected, "corrupt-journal"):
                # an entry of the page it answers (500), once the feed has taken the read: a refused one
                # (409 cursor_ahead, say) corrupted the journal's last entry, an empty page one it never read
                self.corrupt_journal(ns[0], C.scope_dict(sc), page["changes"][0]["cursor"]["sequence"])
                return self._changes(ns, version, after, through, limit)
            return page
        if op == "query":
            version, sc, limit, scan_limit, after_id = C.query_request(body)
            ns = self._authorize(subject, sc, op)
            injected += self._faults(subject, op, faults, scheduled)
            return self._query(subject, ns, version, limit, scan_limit, after_id)
        if op == "read":
            version, sc, consumer_id = C.read_request(body)
        else:
            sc, cmd = C.write_request(body)
            version, consumer_id = cmd["contract_version"], cmd["consumer_id"]
        ns = self._authorize(subject, sc, op)
        injected += self._faults(subject, op, faults, scheduled)
        if op == "read":
            key = (subject.subject_id, ns, version, consumer_id)
            if key in self.checkpoints and self._due(op, scheduled, injected, "corrupt-checkpoint"):
                self.corrupt_stored(key)
            return self._read(subject, ns, sc, version, consumer_id)
        due = self._due
        return self._write(subject, ns, cmd, crash=lambda: due(op, scheduled, injected, "crash-mid-write"),
                           corrupt=lambda: due(op, scheduled, injected, "corrupt-checkpoint"))

    @staticmethod
    def _due(op: str, scheduled, injected: list, kind: str) -> bool:
        """Whether ``kind`` (of :data:`COUNTED_WHERE_STRUCK`) strikes the request now where it can: asked for,
        or a start-up one now due (counted only here, by the requests that reach this point)."""
        injected += [k for k in (scheduled(op, kind) if scheduled else ()) if k not in injected]
        return kind in injected

    def _faults(self, subject: Subject, op: str, requested, scheduled) -> list[str]:
        """The faults to inject into an authorized call: the
        ones asked for, then the start-up ones now due."""
        kinds = [k.strip() for k in requested if k.strip()]
        if kinds:
            if C.INJECT_FAULTS not in subject.roles:
                raise ServiceError(403, "forbidden",
                                   f"subject lacks the {C.INJECT_FAULTS} role needed to send "
                                   f"X-Simkit-Fault")
            unknown = [k for k in kinds if k not in C.FAULT_KINDS]
            if unknown:
                raise C.bad("bad_fault", f"X-Simkit-Fault: unknown fault {C.show(unknown[0])}; one of "
                                         f"{', '.join(C.FAULT_KINDS)}")
            for kind in kinds:  # a fault this route cannot honour is refused, never ignored
                if op not in C.FAULT_OPS[kind]:
                    routes = [f"POST {path}" for path, o in ROUTES.items() if o in C.FAULT_OPS[kind]]
                    raise C.bad("bad_fault", f"X-Simkit-Fault: {kind} applies to {' or '.join(routes)} only")
        return kinds + list(scheduled(op) if scheduled else ())

    def _changes(self, ns, version, after, through, limit) -> dict:
        journal = self.journals.get(ns)
        if journal is None:
            if after is not None or through is not None:
                raise conflict("journal_not_active",
                               "this namespace has no active journal; the cursor is foreign")
            return inactive_page(version)
        return journal.page(after, through, limit, version)

    def _query(self, subject: Subject, ns: tuple, version: int, limit: int, scan_limit: int,
               after: str | None) -> dict:
        """One page of the initial memory query scan (:mod:`simkit.service.memory`), with the feed's high
        watermark as of this page (``feed_cursor``; null before the journal is active)."""
        records = self.records.get(ns, {})
        found, scanned, nxt = memory.scan(records, subject.subject_id, after, limit, scan_limit,
                                          self._order.ids(ns, records))
        journal = self.journals.get(ns)
        return {"contract_version": version, "records": [r.as_dict() for r in found], "scanned": scanned,
                "next_after": nxt, "feed_cursor": None if journal is None
                else journal.cursor(journal.head, version)}

    def _stored(self, key) -> Stored | None:
        rec = self.checkpoints.get(key)
        if rec is not None and digest(rec.digest_input()) != rec.checkpoint_digest:
            raise ServiceError(500, "integrity_failure",
                               f"stored checkpoint of consumer {key[3]!r} does not match its digest")
        return rec

    def _read(self, subject, ns, sc, version, consumer_id) -> dict:
        rec = self._stored((subject.subject_id, ns, version, consumer_id))
        if rec is None:
            raise ServiceError(
                404,
                "checkpoint_not_found",
                f"no version {version} checkpoint for consumer "
                f"{consumer_id!r}; run the feed's initial "
                f"reconciliation",
            )
        return {"contract_version": version, "scope": C.scope_dict(sc), "checkpoint": rec.public()}

    def _write(self, subject: Subject, ns: tuple, cmd: dict, crash: Callable[[], bool] = lambda: False,
               corrupt: Callable[[], bool] = lambda: False) -> dict:
        """A checkpoint command; ``crash()``, asked at its commit: the server dies in it; ``corrupt()``, asked
        as the write reads its stored checkpoint: it is altered (500), unless answered first (a receipt, a 409
        ``idempotency_conflict`` or ``cursor_ahead``; docs/service.md: a rejected request changes nothing)."""
        version = cmd["contract_version"]
        fingerprint = digest({k: v for k, v in cmd.items() if k != "idempotency_key"})
        rkey = (subject.subject_id, ns, cmd["idempotency_key"])
        if rkey in self.receipts:
            stored_fp, receipt = self.receipts[rkey]
            if receipt_digest(receipt) != receipt["receipt_digest"]:
                raise ServiceError(500, "integrity_failure",
                                   "stored receipt does not match its receipt_digest")
            if stored_fp != fingerprint:
                raise conflict("idempotency_conflict",
                               "idempotency_key was used for another command (cursor, "
                               "consumer or expected revision); use a new key")
            return {"contract_version": version, "receipt": copy.deepcopy(receipt)}
        journal = self.journals.get(ns)
        if journal is None:
            raise conflict("journal_not_active", "no checkpoint can be created before journal activation")
        seq = journal.locate(cmd["cursor"], "command.cursor", version)
        key = (subject.subject_id, ns, version, cmd["consumer_id"])
        if key in self.checkpoints and corrupt():
            self.corrupt_stored(key)
        rec = self._stored(key)
        expected = cmd["expected_revision"]
        if rec is None:
            if expected != 0:
                raise conflict("revision_conflict",
                               f"expected revision {expected} but the checkpoint does not "
                               f"exist; create it with expected_revision 0")
        else:
            if expected != rec.revision:
                raise conflict("revision_conflict",
                               f"expected revision {expected} but the current revision is "
                               f"{rec.revision}; reread and reconcile")
            if version == 2 and cmd["expected_digest"] != rec.checkpoint_digest:
                raise conflict("digest_conflict", f"revision {expected} has another checkpoint_digest: the "
                                                  f"progress diverged; reread and reconcile")
            if cmd["cursor"]["journal_id"] != rec.cursor["journal_id"]:
                raise conflict("journal_switch",
                               "existing progress cannot switch journal identities; use a new "
                               "consumer identity after reconciliation")
            if seq < rec.cursor["sequence"]:
                raise conflict("cursor_backward", f"cursor sequence {seq} is behind the checkpoint's "
                                                  f"{rec.cursor['sequence']}; progress cannot move backward")
        new = Stored(version, subject.subject_id, ns, cmd["consumer_id"], dict(cmd["cursor"]),
                     (rec.revision if rec else 0) + 1, self.clock.now_millis, rec.checkpoint_digest if rec
                     else None)
        new = Stored(**{**new.__dict__, "checkpoint_digest": digest(new.digest_input())})
        receipt = {"contract_version": version, "idempotency_key": cmd["idempotency_key"],
                   "checkpoint": new.public()}
        receipt["receipt_digest"] = receipt_digest(receipt)
        # No journal entry: checkpoint writes cannot create a feedback loop in the feed.
        self._commit(key, new, rkey, (fingerprint, receipt),
                     WriteRecord(0, self.clock.now_millis, subject.subject_id, ns, version,
                                 cmd["consumer_id"], cmd["idempotency_key"], rec.public() if rec else None,
                                 new.public()), crash())
        return {"contract_version": version, "receipt": copy.deepcopy(receipt)}

    def _commit(self, key, new: Stored, rkey, receipt_row, record: WriteRecord, crash: bool) -> None:
        """Write a checkpoint command's checkpoint and idempotency receipt as :attr:`store` says; ``crash``:
        the process dies between the two writes (:class:`ServerCrash`). Ground truth (:attr:`writes`) records
        the checkpoint write.

        - ``batched`` (seed 004): one synchronous batch, so there is no point between the two: a crash lands
          before the batch (nothing written, as if the request had been lost) or after it; simkit puts it
          after, the case in which the identical retry must be answered from the receipt. It is.
        - ``split``: the checkpoint, then the receipt. A crash between loses the receipt: the checkpoint has
          advanced, and the identical retry, the one recovery seed 004 gives a client whose reply was lost,
          finds no receipt, is judged as a new command, and meets its own commit: 409 ``revision_conflict``
          instead of *"its original receipt"*, and that receipt can never be had again.
        - ``split_receipt_first``: the receipt, then the checkpoint. A crash between loses the checkpoint,
          which is worse and harder to see: the identical retry gets a 200 with a receipt for progress the
          service never stored, and only a later read (or a 409) shows it.

        Either order loses something; ``split`` is the order a store that saves progress and then remembers
        the answer would use, and the retry itself exposes its loss, so it is the split store the simulation
        and the command line show beside the batch.
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
                raise ServerCrash("crash-mid-write: the server died after its one checkpoint-and-receipt "
                                  "batch")
            return
        first, second = (checkpoint, receipt) if self.store == "split" else (receipt, checkpoint)
        first()
        if crash:
            raise ServerCrash(f"crash-mid-write: the server died after writing the {first.__name__} and "
                              f"before writing the {second.__name__}")
        second()

