"""The operator routes of ``simkit serve`` (not seed 004; docs/service.md, "simkit serve"): ``POST
/_simkit/backup``, ``/_simkit/restore`` and ``/_simkit/append``, added by
:func:`simkit.service.http.create_app` with ``admin=True``.

Each answers 413 (body over 64 KiB) → 401 (no valid credential) → 403 (the subject lacks the ``operator``
role) → 400 (malformed body) before it touches anything, and is in the OpenAPI document. ``/_simkit/append``
is the feed's write path, a memory mutation (:meth:`simkit.service.maintenance.Maintenance.mutate`): with an
``idempotency_key`` an identical retry returns the original entry and receipt and appends nothing.
"""
from __future__ import annotations

from functools import partial

from fastapi import Depends, FastAPI, Request

from . import contract as C
from . import schema as S
from .config import DEV_SCOPE, DEV_TENANT
from .contract import MAX_REQUEST_BYTES, ServiceError, parse_body
from .web import FAULT_HEADER, LOST, error, joined, read_body, request_body, responses

__all__ = ["MAX_BACKUPS", "MAX_BACKUP_VALUES", "add_operator_routes"]

#: The backups ``simkit serve`` keeps (each a copy of the stored data, in memory; none on disk): at most this
#: many, holding at most :data:`MAX_BACKUP_VALUES` stored values together. Past either, a backup is a 409
#: ``backup_limit`` that copies nothing (``app.state.max_backups`` and ``app.state.max_backup_values`` hold
#: them, for tests).
MAX_BACKUPS = 32
MAX_BACKUP_VALUES = 1_000_000

_ROLE = (
    "Needs a bearer credential whose subject holds the operator role (401 without one, 403 without the role)."
)
_APPEND = (
    "A memory mutation (author 'operator'): the record, its journal entry and, with an idempotency_key, its "
    "receipt commit together, activating the journal if needed; tenant, scope, kind and record_id default "
    "to the dev namespace, 'created' and 'note'. An identical retry (same idempotency_key, kind, record_id "
    "and private_to) returns the original entry and receipt and appends nothing; the key reused for another "
    "mutation is a 409 idempotency_conflict that appends nothing. private_to: a new record visible to that "
    "subject only. tenant, record_id, idempotency_key and private_to follow the identity rule (1-128 UTF-8 "
    "bytes, no control characters, "
    "not blank). " + _ROLE)


async def _operator_body(app: FastAPI, request: Request, faults: bool) -> tuple[dict, bool]:
    """The body as a JSON object (empty: ``{}``) of a caller with the ``operator`` role; else
    the service's 413, 401, 403 or 400, in that order
    (:func:`simkit.service.contract.parse_body` for the body). Then ``X-Simkit-Fault``: only
    ``lose-reply``, only where ``faults``, and only from a subject with the ``inject_faults``
    role (403, else 400). Returns the body and whether the caller asked to lose the reply."""
    raw = await read_body(request)
    if len(raw) > MAX_REQUEST_BYTES:
        parse_body(raw)                                   # raises 413
    svc = app.state.service
    subject = svc.authenticate(joined(request, "authorization"))
    svc.require_role(subject, C.OPERATOR)
    C.json_media_type(joined(request, "content-type") or "", raw, joined(request, "content-encoding"))
    body = parse_body(raw) if raw.strip() else {}
    asked = [k.strip() for k in ",".join(request.headers.getlist(FAULT_HEADER)).split(",") if k.strip()]
    if asked:
        svc.require_role(subject, C.INJECT_FAULTS)
        if not faults or set(asked) != {"lose-reply"}:
            raise C.bad("bad_fault", "X-Simkit-Fault: an operator route takes only lose-reply, on "
                                     "/_simkit/append")
    return body, bool(asked)


def _op_route(app: FastAPI, bearer, path: str, ok_model, request_model, example: dict, summary: str,
              description: str, required=True, faults=False, codes=(400, 401, 403, 413)):
    """Register ``fn(body)``; with ``faults``, ``fn(body, lose)`` calls ``lose()`` once the body is valid, to
    drop the reply (as the seed routes inject a fault only into a call that passed its checks)."""
    def register(fn):
        async def endpoint(request: Request):
            try:
                body, asked = await _operator_body(app, request, faults)
                with app.state.lock:
                    if not faults:
                        return fn(body)
                    return fn(body, lambda: request.scope.__setitem__(LOST, True) if asked else None)
            except ServiceError as exc:
                return error(exc)
        endpoint.__name__ = fn.__name__
        app.post(path, summary=summary, description=description, tags=["operator"],
                 responses=responses(ok_model, codes),
                 openapi_extra=request_body(request_model, example, required),
                 dependencies=[Depends(bearer)])(endpoint)
        return fn
    return register


def add_operator_routes(app: FastAPI, bearer) -> None:
    """Operator tools for workshops: back up the stored data, restore a backup, append a journal entry to any
    namespace. The backups are kept in ``app.state.backups``, numbered from 1, at most
    ``app.state.max_backups`` of them holding ``app.state.max_backup_values`` stored values together: every
    backup was kept, and an operator's loop of them filled the server's memory with copies."""
    backups: list = []
    sizes: list[int] = []
    app.state.backups = backups
    app.state.max_backups, app.state.max_backup_values = MAX_BACKUPS, MAX_BACKUP_VALUES
    op_route = partial(_op_route, app, bearer)

    @op_route("/_simkit/backup", S.BackupResponse, S.BackupRequest, {}, "Operator: back up the stored data",
              "Snapshots journals, checkpoints and receipts (not identities or grants) and answers its "
              "number. "
              + _ROLE + f" At most {MAX_BACKUPS} backups, of {MAX_BACKUP_VALUES:,} stored values together, "
              "are kept (in memory): past that, 409 backup_limit.", required=False,
              codes=(400, 401, 403, 409, 413))
    def backup(body: dict) -> dict:
        C.backup_request(body)
        svc, most, room = app.state.service, app.state.max_backups, app.state.max_backup_values
        size = svc.stored_values()
        if len(backups) >= most or sum(sizes) + size > room:
            raise C.conflict("backup_limit", f"the server keeps at most {most} backups of {room:,} stored "
                                             f"values together ({len(backups)} taken, {sum(sizes):,} values; "
                                             f"this one would add {size:,}); none is ever dropped: restart "
                                             f"the server for more")
        backups.append(svc.backup())
        sizes.append(size)
        return {"backup": len(backups)}

    @op_route("/_simkit/restore", S.RestoreResponse, S.RestoreRequest, {"backup": 1},
              "Operator: restore a backup", "Puts journals, checkpoints and receipts back as backup N held "
                                            "them "
              "(seed 004, 'Recovery and limits'): consumers may then be ahead of the journal. " + _ROLE)
    def restore(body: dict) -> dict:
        n = C.restore_request(body, len(backups))
        app.state.service.restore(backups[n - 1])
        return {"restored": n}

    @op_route("/_simkit/append", S.AppendResponse, S.AppendRequest,
              {"tenant": DEV_TENANT, "scope": DEV_SCOPE, "kind": "created", "record_id": "note-9",
               "idempotency_key": "note-9-created"},
              "Operator: append a change to a namespace's journal", _APPEND, faults=True,
              required=False, codes=(400, 401, 403, 409, 413))   # every field optional: no body is {}
    def append(body: dict, lose) -> dict:
        mutation = C.append_request(body, DEV_TENANT, DEV_SCOPE)
        lose()
        return app.state.service.mutate(**mutation, author="operator")
