"""``simkit serve``: the seed 004 model over HTTP on 127.0.0.1 (FastAPI + uvicorn), with real time.

The routes are seed 004's; each reads the raw body and hands it to :meth:`CheckpointService.call`, so the
server answers exactly what the model answers. FastAPI publishes the OpenAPI document at ``/openapi.json``.

| route | body | answer | errors |
| --- | --- | --- | --- |
| ``POST /api/v1/memory/changes`` | ``{contract_version, scope, query: {after, through, limit}}`` | ``{contract_version, changes, next_cursor, high_watermark, complete}`` | 400 401 403 409 413 500 |
| ``POST /api/v1/memory/query`` | ``{contract_version, scope, filter: {limit, scan_limit, next_after}}`` | ``{contract_version, records, scanned, next_after, feed_cursor}`` | 400 401 403 413 |
| ``POST /api/v1/memory/checkpoints/read`` | ``{contract_version, scope, consumer_id}`` | ``{contract_version, scope, checkpoint}`` | 400 401 403 404 413 500 |
| ``POST /api/v1/memory/checkpoints`` | ``{scope, command}`` | ``{contract_version, receipt}`` | 400 401 403 409 413 500 |

The memory query is seed 004's initial reconciliation scan (:mod:`simkit.service.memory`): deleted records and
records private to another subject use up ``scan_limit`` unreturned, so a page can be empty with a ``next_after``;
the scan is complete when ``next_after`` is null; ``feed_cursor`` is the feed's high watermark as of the page (keep
the first page's).
Every reply carries ``Cache-Control: no-store``, and every error, an unknown route (404 ``route_not_found``) or
method (405 ``method_not_allowed``) and the operator routes' included, the body ``{"error": {"status", "code",
"message"}}`` of :meth:`simkit.service.contract.ServiceError.body` (:func:`_error`).

Faults, per request with the header ``X-Simkit-Fault: KIND[,KIND]`` or at start-up with ``--fault``
(:func:`simkit.service.config.parse_fault`), are injected by :meth:`CheckpointService.call` only into a request
that passed authentication and authorization, and the header only from a subject with the ``inject_faults`` role
(else 403): a request the service rejects changes no state.

- ``lose-reply``: the request takes effect, then the connection is closed mid-reply (the client sees a
  truncated response, exactly like a reply lost on the network);
- ``corrupt-checkpoint``: the caller's stored checkpoint is altered behind its digest before the call (500);
- ``corrupt-journal``: a journal entry in the requested range is altered behind its digest (500);
- ``crash-mid-write`` (checkpoint writes only): the server dies between writing the checkpoint and writing its
  receipt, then comes back with whatever it wrote; the reply is lost. With the seed's batched store
  (``--store batched``) the two are one write and nothing is lost but the reply; ``--store split`` loses the
  receipt (:meth:`simkit.service.checkpoints.CheckpointService._commit`).

The fault header is deliberately not in the OpenAPI document: fuzzers exercise the contract, not the faults.

The operator routes ``POST /_simkit/backup``, ``/_simkit/restore`` and ``/_simkit/append`` (not seed 004) exist
only when ``create_app(admin=True)`` (``simkit serve`` does so when some subject holds the ``operator`` role:
``--operator TOKEN`` or ``roles = ["operator"]`` in the config file). Each needs a bearer credential (401) whose
subject holds the ``operator`` role (403), then a valid body (400); they are in the OpenAPI document when on.
``/_simkit/append`` is the feed's write path, a memory mutation: with an ``idempotency_key`` an identical retry
returns the original entry and receipt and appends nothing, the key reused for another mutation is a 409
(feed-notes.md). An operator that also holds ``inject_faults`` may send ``X-Simkit-Fault: lose-reply`` to it.

A request must arrive whole within ``request_timeout`` seconds of its first byte (of the connection, for the
first): uvicorn's only timeout, keep-alive, runs between requests, so a half-sent request (headers or body)
would otherwise hold its connection forever. :class:`_DeadlineH11` closes such a connection.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time

import h11
from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import contract as C
from . import schema as S
from .checkpoints import ROUTES, CheckpointService
from .config import FaultSpec, ServiceConfigError, has_operator
from .contract import MAX_REQUEST_BYTES, NO_STORE, ServiceError, parse_body

FAULT_HEADER = "x-simkit-fault"
_LOST = "simkit.lose_reply"
#: Seconds a request may take to arrive whole (headers and body), from its first byte.
REQUEST_TIMEOUT = 10.0


class WallClock:
    """Real time for the server (the model itself never reads a clock)."""

    @property
    def now_millis(self) -> int:
        return int(time.time() * 1000)


class _NoStore:
    """Pure ASGI wrapper: ``Cache-Control: no-store`` on every reply, the ``lose-reply`` fault, and the service's
    500 error body instead of the framework's bare text should the app ever raise."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        held: list[dict] = []

        async def capture(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                message = {**message, "headers": headers + [(b"cache-control", NO_STORE["Cache-Control"].encode())]}
            held.append(message)

        try:
            await self.app(scope, receive, capture)
        except Exception:  # noqa: BLE001 - a bug, reported in the documented body, never a bare 500
            logging.getLogger("uvicorn.error").exception("simkit: unhandled error in %s %s", scope["method"], scope["path"])
            held.clear()                                  # nothing was sent yet: every message is held until here
            await _error(ServiceError(500, "internal_error", "the server failed to handle this request"))(
                scope, receive, capture)
        if scope.get(_LOST):
            # The request took effect; the client gets headers and part of the body, then the connection closes.
            start = held[0]
            await send(start)
            body = b"".join(m.get("body", b"") for m in held[1:])
            await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
            logging.getLogger("uvicorn.error").warning("simkit: lose-reply or crash-mid-write fault: dropped the reply "
                                                       "to %s %s", scope["method"], scope["path"])
            return
        for message in held:
            await send(message)


def _error(exc: ServiceError, headers: dict | None = None) -> JSONResponse:
    """The one error reply: ``exc.body()`` (seed 004's ``{"error": {status, code, message}}``), no-store."""
    return JSONResponse(exc.body(), exc.status, headers={**(headers or {}), **NO_STORE})


async def _read(request: Request) -> bytes:
    """The body, read no further than one chunk past the 64 KiB limit (enough for ``parse_body``'s 413); a
    client gone before its body was complete (closed, or cut off by the request deadline) is a 400 nobody reads."""
    raw = bytearray()
    try:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_REQUEST_BYTES:
                break
    except ClientDisconnect:
        raise ServiceError(400, "incomplete_request", "the connection closed before the body was complete") from None
    return bytes(raw)


class _QuietLostReply(logging.Filter):
    def filter(self, record):
        return "returned without completing response" not in record.getMessage()


def _scheduler(specs: list[FaultSpec]):
    """``scheduled(op)`` for :meth:`CheckpointService.call`: the start-up faults due for this authorized request
    (each spec counts the authorized requests on its route)."""
    counts: dict[int, int] = {}

    def scheduled(op: str) -> list[str]:
        kinds = []
        for i, spec in enumerate(specs):
            if spec.route in (None, op):
                counts[i] = counts.get(i, 0) + 1
                if spec.nth == 0 or counts[i] == spec.nth:
                    kinds.append(spec.kind)
        return kinds

    return scheduled


def _responses(ok_model, codes) -> dict:
    header = {"Cache-Control": {"description": "always no-store", "schema": {"type": "string", "enum": ["no-store"]}}}
    meaning = {400: "malformed identity, contract or bounds", 401: "missing, invalid or revoked credential",
               403: "missing capability or grant for the exact scope (operator routes: the operator role)",
               404: "absent progress",
               409: "stale revision, nonmonotonic/foreign/ahead cursor or idempotency conflict",
               413: "request above the 64 KiB limit", 500: "detected integrity failure"}
    out = {200: {"model": ok_model, "headers": header}}
    for code in codes:
        out[code] = {"model": S.Error, "description": meaning[code], "headers": header}
    return out


def _body(model, example: dict, required: bool = True) -> dict:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"required": required, "content": {"application/json": {
        "schema": schema, "examples": {"dev": {"summary": "the dev subject's scope on simkit serve", "value": example}}}}}}


def _examples() -> dict:
    """Request examples that work on a fresh ``simkit serve`` (the dev journal is the first one created)."""
    from .config import DEV_SCOPE
    cursor = {"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": 2}
    return {
        "changes": {"contract_version": 1, "scope": DEV_SCOPE, "query": {"after": None, "through": None, "limit": 2}},
        "query": {"contract_version": 1, "scope": DEV_SCOPE, "filter": {"limit": 2, "scan_limit": 2, "next_after": None}},
        "read": {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "context-cache"},
        "write": {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": "context-cache-page-1",
                                                  "consumer_id": "context-cache", "expected_revision": 0,
                                                  "cursor": cursor}},
    }


def create_app(svc: CheckpointService, faults: list[FaultSpec] = (), admin: bool = False) -> FastAPI:
    """The FastAPI app serving ``svc`` (``app.state.service``, which may be swapped between requests).

    ``admin`` adds the ``/_simkit/*`` operator routes (each needs a credential of a subject with the ``operator``
    role) and publishes them in the OpenAPI document; off by default.
    """
    app = FastAPI(title="simkit checkpoint service (seed 004)", version="1",
                  description="Durable consumer checkpoints and the change feed they refer to, as seed 004 and "
                              "feed-notes.md describe them. Every reply carries Cache-Control: no-store.")
    app.state.service = svc
    app.state.lock = threading.Lock()
    scheduled = _scheduler(list(faults))
    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <credential> (checked on every call)")
    common = (400, 401, 403, 409, 413, 500)

    def route(path: str, ok_model, request_model, codes, summary: str):
        op = ROUTES[path]

        async def handler(request: Request):
            try:
                raw = await _read(request)
            except ServiceError as exc:
                return _error(exc)
            authorization = request.headers.get("authorization")
            asked = ",".join(request.headers.getlist(FAULT_HEADER)).split(",")
            with app.state.lock:
                reply = app.state.service.call(path, authorization, raw, faults=asked, scheduled=scheduled)
            if reply.lost:
                request.scope[_LOST] = True
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

        handler.__name__ = op
        app.post(path, summary=summary, responses=_responses(ok_model, codes), openapi_extra=_body(request_model, _examples()[op]),
                 dependencies=[Depends(bearer)])(handler)

    route("/api/v1/memory/changes", S.ChangesPage, S.ChangesRequest, common, "Read one change-feed page")
    route("/api/v1/memory/query", S.QueryPage, S.QueryRequest, (400, 401, 403, 413),
          "Scan existing records (initial reconciliation): one page")
    route("/api/v1/memory/checkpoints/read", S.ReadResponse, S.ReadRequest, common[:3] + (404,) + common[3:],
          "Read a consumer's current checkpoint")
    route("/api/v1/memory/checkpoints", S.WriteResponse, S.WriteRequest, common, "Save progress (compare-and-set)")
    if admin:
        _admin_routes(app, bearer)
    _add_schemas(app)
    _route_errors(app)
    return app


def _route_errors(app: FastAPI) -> None:
    """An unknown route (404) or method (405) answers the service's error body ``{"error": {status, code,
    message}}``, not the framework's ``{"detail": ...}``; the ``Allow`` header of a 405 is kept."""
    posts = sorted(ROUTES)

    @app.exception_handler(StarletteHTTPException)
    async def route_error(request: Request, exc: StarletteHTTPException):
        where, headers = f"{request.method} {request.url.path}", dict(exc.headers or {})
        if exc.status_code == 404:
            code, message = "route_not_found", f"no route {where}; the routes are POST {', POST '.join(posts)}"
        elif exc.status_code == 405:
            code, message = "method_not_allowed", f"{where}: method not allowed; use {headers.get('Allow', 'POST')}"
        else:
            code, message = "http_error", str(exc.detail)
        return _error(ServiceError(exc.status_code, code, message), headers)


def _add_schemas(app: FastAPI) -> None:
    """Put the request models' nested definitions where the ``$ref``s of ``openapi_extra`` point."""
    original = app.openapi

    def openapi():
        if app.openapi_schema:
            return app.openapi_schema
        doc = original()
        comps = doc.setdefault("components", {}).setdefault("schemas", {})
        for model in (S.ChangesRequest, S.QueryRequest, S.ReadRequest, S.WriteRequest, S.AppendRequest):
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            for name, d in js.pop("$defs", {}).items():
                comps.setdefault(name, d)
        for item in doc["paths"].values():
            body = item["post"]["requestBody"]["content"]["application/json"]["schema"]
            body.pop("$defs", None)
        app.openapi_schema = doc
        return doc

    app.openapi = openapi


def _admin_routes(app: FastAPI, bearer) -> None:
    """Operator tools for workshops (not part of seed 004): back up the stored data, restore a backup, append a
    journal entry to any namespace. Each answers 413 (body over 64 KiB) → 401 (no valid credential) → 403 (the
    subject lacks the ``operator`` role) → 400 (malformed body) before it touches anything; in the OpenAPI
    document."""
    from .config import DEV_SCOPE, DEV_TENANT
    backups: list = []
    app.state.backups = backups

    async def operator_body(request: Request, faults: bool) -> tuple[dict, bool]:
        """The body as a JSON object (empty: ``{}``) of a caller with the ``operator`` role; else the service's
        413, 401, 403 or 400, in that order (:func:`contract.parse_body` for the body). Then ``X-Simkit-Fault``:
        only ``lose-reply``, only where ``faults``, and only from a subject with the ``inject_faults`` role (403,
        else 400). Returns the body and whether the caller asked to lose the reply."""
        raw = await _read(request)
        if len(raw) > MAX_REQUEST_BYTES:
            parse_body(raw)                                   # raises 413
        svc = app.state.service
        subject = svc.authenticate(request.headers.get("authorization"))
        svc.require_role(subject, C.OPERATOR)
        body = parse_body(raw) if raw.strip() else {}
        asked = [k.strip() for k in ",".join(request.headers.getlist(FAULT_HEADER)).split(",") if k.strip()]
        if asked:
            svc.require_role(subject, C.INJECT_FAULTS)
            if not faults or set(asked) != {"lose-reply"}:
                raise C.bad("bad_fault", "X-Simkit-Fault: an operator route takes only lose-reply, on /_simkit/append")
        return body, bool(asked)

    def op_route(path: str, ok_model, request_model, example: dict, summary: str, description: str, required=True,
                 faults=False, codes=(400, 401, 403, 413)):
        """Register ``fn(body)``; with ``faults``, ``fn(body, lose)`` calls ``lose()`` once the body is valid, to
        drop the reply (as the seed routes inject a fault only into a call that passed its checks)."""
        def register(fn):
            async def endpoint(request: Request):
                try:
                    body, asked = await operator_body(request, faults)
                    with app.state.lock:
                        if not faults:
                            return fn(body)
                        return fn(body, lambda: request.scope.__setitem__(_LOST, True) if asked else None)
                except ServiceError as exc:
                    return _error(exc)
            endpoint.__name__ = fn.__name__
            app.post(path, summary=summary, description=description, tags=["operator"],
                     responses=_responses(ok_model, codes),
                     openapi_extra=_body(request_model, example, required), dependencies=[Depends(bearer)])(endpoint)
            return fn
        return register

    role = "Needs a bearer credential whose subject holds the operator role (401 without one, 403 without the role)."

    @op_route("/_simkit/backup", S.BackupResponse, S.BackupRequest, {}, "Operator: back up the stored data",
              "Snapshots journals, checkpoints and receipts (not identities or grants) and answers its number. "
              + role, required=False)
    def backup(body: dict) -> dict:
        C.backup_request(body)
        backups.append(app.state.service.backup())
        return {"backup": len(backups)}

    @op_route("/_simkit/restore", S.RestoreResponse, S.RestoreRequest, {"backup": 1},
              "Operator: restore a backup", "Puts journals, checkpoints and receipts back as backup N held them "
              "(seed 004, 'Recovery and limits'): consumers may then be ahead of the journal. " + role)
    def restore(body: dict) -> dict:
        n = C.restore_request(body, len(backups))
        app.state.service.restore(backups[n - 1])
        return {"restored": n}

    @op_route("/_simkit/append", S.AppendResponse, S.AppendRequest,
              {"tenant": DEV_TENANT, "scope": DEV_SCOPE, "kind": "created", "record_id": "note-9",
               "idempotency_key": "note-9-created"},
              "Operator: append a change to a namespace's journal",
              "A memory mutation (author 'operator'): the record, its journal entry and, with an idempotency_key, "
              "its receipt commit together, activating the journal if needed; tenant, scope, kind and record_id "
              "default to the dev namespace, 'created' and 'note'. An identical retry (same idempotency_key, kind, "
              "record_id and private_to) returns the original entry and receipt and appends nothing; the key reused "
              "for another mutation is a 409 idempotency_conflict that appends nothing. private_to: a new record "
              "visible to that subject only. tenant, record_id, idempotency_key and private_to follow the identity "
              "rule (1-128 UTF-8 bytes, no control characters, not blank). " + role, faults=True,
              codes=(400, 401, 403, 409, 413))
    def append(body: dict, lose) -> dict:
        mutation = C.append_request(body, DEV_TENANT, DEV_SCOPE)
        lose()
        return app.state.service.mutate(**mutation, author="operator")


class _DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for receiving each request whole.

    The deadline starts with the connection and again with the first byte of each later request, and ends once
    the request's body is complete (``their_state`` DONE); then the app runs, however long it takes. Between
    requests uvicorn's keep-alive timeout closes an idle connection. A deadline that passes closes the
    connection: the half-sent request never reaches the service, or the app sees a disconnect mid-body (400,
    changing nothing).
    """

    request_timeout = REQUEST_TIMEOUT
    _deadline = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            if self._deadline is None:
                self._arm()                             # the first byte of a request
        else:
            self._disarm()                              # the request arrived whole, or the connection is over

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.request_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.logger.warning("simkit: closed a connection whose request did not arrive whole within %gs",
                                self.request_timeout)
            self.transport.close()


def asgi(app: FastAPI):
    """The ASGI application uvicorn serves: ``app`` behind the no-store and lost-reply wrapper."""
    return _NoStore(app)


def bind(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free port), or one clear error."""
    # proto IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted connections only then (no 40 ms Nagle stalls).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServiceConfigError(f"--port {port}: cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    return sock


def _server(app: FastAPI, log_level: str, request_timeout: float | None = None):
    import uvicorn
    logging.getLogger("uvicorn.error").addFilter(_QuietLostReply())
    protocol = type("DeadlineH11", (_DeadlineH11,), {"request_timeout": request_timeout or REQUEST_TIMEOUT})
    return uvicorn.Server(uvicorn.Config(asgi(app), log_level=log_level, lifespan="off", http=protocol))


@contextlib.contextmanager
def running(app: FastAPI, port: int = 0, log_level: str = "warning", request_timeout: float | None = None):
    """Serve ``app`` on 127.0.0.1 in a background thread; yields the base URL; always shuts down."""
    sock = bind(port)
    server = _server(app, log_level, request_timeout)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the server thread stopped before it started")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def serve(svc: CheckpointService, faults: list[FaultSpec], port: int, log_level: str = "info", announce=None) -> None:
    """Serve until interrupted (``simkit serve``); the operator routes only if some subject is an operator."""
    admin = has_operator(svc)
    app = create_app(svc, faults, admin=admin)
    sock = bind(port)
    line = f"simkit serve: http://127.0.0.1:{sock.getsockname()[1]}  (OpenAPI at /openapi.json; credential 'dev'"
    line += "; operator routes /_simkit/* on)" if admin else ")"
    (announce or (lambda text: print(text, flush=True)))(line)
    _server(app, log_level).run(sockets=[sock])
