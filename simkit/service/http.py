"""``simkit serve``: the seed 004 model over HTTP on 127.0.0.1 (FastAPI + uvicorn), with real time.

The routes are seed 004's; each reads the raw body and hands it to :meth:`CheckpointService.call`, so the
server answers exactly what the model answers. FastAPI publishes the OpenAPI document at ``/openapi.json``.
Every reply carries ``Cache-Control: no-store``, and every error, an unknown route (404 ``route_not_found``) or
method (405 ``method_not_allowed``) and the operator routes' included, the body ``{"error": {"status", "code",
"message"}}`` of :meth:`simkit.service.contract.ServiceError.body` (:func:`_error`).

Faults, per request with the header ``X-Simkit-Fault: KIND[,KIND]`` or at start-up with ``--fault``
(:func:`simkit.service.config.parse_fault`):

- ``lose-reply``: the request takes effect, then the connection is closed mid-reply (the client sees a
  truncated response, exactly like a reply lost on the network);
- ``corrupt-checkpoint``: the caller's stored checkpoint is altered behind its digest before the call (500);
- ``corrupt-journal``: a journal entry in the requested range is altered behind its digest (500).

The fault header is deliberately not in the OpenAPI document: fuzzers exercise the contract, not the faults.
"""
from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import schema as S
from .checkpoints import ROUTES, CheckpointService
from .config import FaultSpec, ServiceConfigError, parse_fault
from .contract import MAX_REQUEST_BYTES, NO_STORE, ServiceError, parse_body
from .transport import corrupt_for

FAULT_HEADER = "x-simkit-fault"
_LOST = "simkit.lose_reply"


class WallClock:
    """Real time for the server (the model itself never reads a clock)."""

    @property
    def now_millis(self) -> int:
        return int(time.time() * 1000)


class _NoStore:
    """Pure ASGI wrapper: ``Cache-Control: no-store`` on every reply, and the ``lose-reply`` fault."""

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

        await self.app(scope, receive, capture)
        if scope.get(_LOST):
            # The request took effect; the client gets headers and part of the body, then the connection closes.
            start = held[0]
            await send(start)
            body = b"".join(m.get("body", b"") for m in held[1:])
            await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
            logging.getLogger("uvicorn.error").warning("simkit: lose-reply fault: dropped the reply to %s %s",
                                                       scope["method"], scope["path"])
            return
        for message in held:
            await send(message)


def _error(exc: ServiceError, headers: dict | None = None) -> JSONResponse:
    """The one error reply: ``exc.body()`` (seed 004's ``{"error": {status, code, message}}``), no-store."""
    return JSONResponse(exc.body(), exc.status, headers={**(headers or {}), **NO_STORE})


async def _read(request: Request) -> bytes:
    """The body, read no further than one chunk past the 64 KiB limit (enough for ``parse_body``'s 413)."""
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_REQUEST_BYTES:
            break
    return bytes(raw)


class _QuietLostReply(logging.Filter):
    def filter(self, record):
        return "returned without completing response" not in record.getMessage()


def _faults_for(request: Request, route: str, specs: list[FaultSpec], counts: dict) -> list[str]:
    kinds = [parse_fault(k, f"header X-Simkit-Fault").kind for k in request.headers.get(FAULT_HEADER, "").split(",") if k.strip()]
    for i, spec in enumerate(specs):
        if spec.route in (None, route):
            counts[i] = counts.get(i, 0) + 1
            if spec.nth == 0 or counts[i] == spec.nth:
                kinds.append(spec.kind)
    return kinds


def _responses(ok_model, codes) -> dict:
    header = {"Cache-Control": {"description": "always no-store", "schema": {"type": "string", "enum": ["no-store"]}}}
    meaning = {400: "malformed identity, contract or bounds", 401: "missing, invalid or revoked credential",
               403: "missing capability or grant for the exact scope", 404: "absent progress",
               409: "stale revision, nonmonotonic/foreign/ahead cursor or idempotency conflict",
               413: "request above the 64 KiB limit", 500: "detected integrity failure"}
    out = {200: {"model": ok_model, "headers": header}}
    for code in codes:
        out[code] = {"model": S.Error, "description": meaning[code], "headers": header}
    return out


def _body(model, example: dict) -> dict:
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": schema, "examples": {"dev": {"summary": "the dev subject's scope on simkit serve", "value": example}}}}}}


def _examples() -> dict:
    """Request examples that work on a fresh ``simkit serve`` (the dev journal is the first one created)."""
    from .config import DEV_SCOPE
    cursor = {"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": 2}
    return {
        "changes": {"contract_version": 1, "scope": DEV_SCOPE, "query": {"after": None, "through": None, "limit": 2}},
        "read": {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "context-cache"},
        "write": {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": "context-cache-page-1",
                                                  "consumer_id": "context-cache", "expected_revision": 0,
                                                  "cursor": cursor}},
    }


def create_app(svc: CheckpointService, faults: list[FaultSpec] = (), admin: bool = True) -> FastAPI:
    """The FastAPI app serving ``svc`` (``app.state.service``, which may be swapped between requests).

    ``admin`` adds the unpublished ``/_simkit/*`` operator routes.
    """
    app = FastAPI(title="simkit checkpoint service (seed 004)", version="1",
                  description="Durable consumer checkpoints and the change feed they refer to, as seed 004 and "
                              "feed-notes.md describe them. Every reply carries Cache-Control: no-store.")
    app.state.service = svc
    app.state.lock = threading.Lock()
    specs, counts = list(faults), {}
    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <credential> (checked on every call)")
    common = (400, 401, 403, 409, 413, 500)

    def route(path: str, ok_model, request_model, codes, summary: str):
        op = ROUTES[path]

        async def handler(request: Request):
            raw = await _read(request)
            authorization = request.headers.get("authorization")
            try:
                kinds = _faults_for(request, op, specs, counts)
            except ServiceConfigError as exc:
                return _error(ServiceError(400, "bad_fault", str(exc)))
            with app.state.lock:
                svc = app.state.service
                if kinds:
                    corrupt_for(svc, kinds, path, authorization, raw)
                reply = svc.call(path, authorization, raw)
            if "lose-reply" in kinds:
                request.scope[_LOST] = True
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

        handler.__name__ = op
        app.post(path, summary=summary, responses=_responses(ok_model, codes), openapi_extra=_body(request_model, _examples()[op]),
                 dependencies=[Depends(bearer)])(handler)

    route("/api/v1/memory/changes", S.ChangesPage, S.ChangesRequest, common, "Read one change-feed page")
    route("/api/v1/memory/checkpoints/read", S.ReadResponse, S.ReadRequest, common[:3] + (404,) + common[3:],
          "Read a consumer's current checkpoint")
    route("/api/v1/memory/checkpoints", S.WriteResponse, S.WriteRequest, common, "Save progress (compare-and-set)")
    _add_schemas(app)
    _route_errors(app)
    if admin:
        _admin_routes(app)
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
        for model in (S.ChangesRequest, S.ReadRequest, S.WriteRequest):
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            for name, d in js.pop("$defs", {}).items():
                comps.setdefault(name, d)
        for item in doc["paths"].values():
            body = item["post"]["requestBody"]["content"]["application/json"]["schema"]
            body.pop("$defs", None)
        app.openapi_schema = doc
        return doc

    app.openapi = openapi


def _admin_routes(app: FastAPI) -> None:
    """Operator tools for workshops (not part of seed 004, not in the OpenAPI document)."""
    from .config import DEV_SCOPE, DEV_TENANT
    backups: list = []

    async def json_body(request: Request) -> dict:
        """The body as a JSON object (empty: ``{}``); else the contract's 413 or 400 (``contract.parse_body``)."""
        raw = await _read(request)
        return parse_body(raw) if raw else {}

    @app.post("/_simkit/append", include_in_schema=False)
    async def append(request: Request):
        try:
            body = await json_body(request)
        except ServiceError as exc:
            return _error(exc)
        with app.state.lock:
            try:
                entry = app.state.service.append(body.get("tenant", DEV_TENANT), body.get("scope", DEV_SCOPE),
                                   body.get("kind", "created"), str(body.get("record_id", "note")), "operator")
            except Exception as exc:  # noqa: BLE001 - operator input, reported as 400
                return _error(ServiceError(400, "bad_append", str(exc)))
        return {"entry": entry}

    @app.post("/_simkit/backup", include_in_schema=False)
    async def backup():
        with app.state.lock:
            backups.append(app.state.service.backup())
        return {"backup": len(backups)}

    @app.post("/_simkit/restore", include_in_schema=False)
    async def restore(request: Request):
        try:
            body = await json_body(request)
        except ServiceError as exc:
            return _error(exc)
        n = body.get("backup")
        if not isinstance(n, int) or not 1 <= n <= len(backups):
            return _error(ServiceError(400, "bad_backup", "unknown backup"))
        with app.state.lock:
            app.state.service.restore(backups[n - 1])
        return {"restored": n}


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


def _server(app: FastAPI, log_level: str):
    import uvicorn
    logging.getLogger("uvicorn.error").addFilter(_QuietLostReply())
    return uvicorn.Server(uvicorn.Config(asgi(app), log_level=log_level, lifespan="off"))


@contextlib.contextmanager
def running(app: FastAPI, port: int = 0, log_level: str = "warning"):
    """Serve ``app`` on 127.0.0.1 in a background thread; yields the base URL; always shuts down."""
    sock = bind(port)
    server = _server(app, log_level)
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
    """Serve until interrupted (``simkit serve``)."""
    app = create_app(svc, faults)
    sock = bind(port)
    line = f"simkit serve: http://127.0.0.1:{sock.getsockname()[1]}  (OpenAPI at /openapi.json; credential 'dev')"
    (announce or (lambda text: print(text, flush=True)))(line)
    _server(app, log_level).run(sockets=[sock])
