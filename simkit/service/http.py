"""``simkit serve``: the seed 004 model over HTTP on 127.0.0.1 (FastAPI + uvicorn), with real time
(docs/service.md, "simkit serve").

The routes are seed 004's; each reads the raw body and hands it to :meth:`CheckpointService.call`, so the
server answers exactly what the model answers. FastAPI publishes the OpenAPI document at ``/openapi.json``.

- ``POST /api/v1/memory/changes``: ``{contract_version, scope, query: {after, through, limit}}`` →
  ``{contract_version, changes, next_cursor, high_watermark, complete}``; 400 401 403 409 413 500;
- ``POST /api/v1/memory/query``: ``{contract_version, scope, filter: {limit, scan_limit, next_after}}`` →
  ``{contract_version, records, scanned, next_after, feed_cursor}``; 400 401 403 413;
- ``POST /api/v1/memory/checkpoints/read``: ``{contract_version, scope, consumer_id}`` → ``{contract_version,
  scope, checkpoint}``; 400 401 403 404 413 500 (no 409);
- ``POST /api/v1/memory/checkpoints``: ``{scope, command}`` → ``{contract_version, receipt}``;
  400 401 403 409 413 500.

The memory query is seed 004's initial reconciliation scan (:mod:`simkit.service.memory`): deleted records and
records private to another subject use up ``scan_limit`` unreturned, so a page can be empty with a
``next_after``; the scan is complete when ``next_after`` is null; ``feed_cursor`` is the feed's high watermark
as of the page (keep the first page's).
Every reply carries ``Cache-Control: no-store``, and every error, an unknown route (404 ``route_not_found``)
or method (405 ``method_not_allowed``) and the operator routes' included, the body ``{"error": {"status",
"code", "message"}}`` of :meth:`simkit.service.contract.ServiceError.body` (:func:`simkit.service.web.error`).

Faults, per request with the header ``X-Simkit-Fault: KIND[,KIND]`` or at start-up with ``--fault``
(:func:`simkit.service.config.parse_fault`), are injected by :meth:`CheckpointService.call` only into a
request that passed authentication and authorization, and the header only from a subject with the
``inject_faults`` role (else 403): a request the service rejects changes no state. A fault the route cannot
honour (:data:`simkit.service.contract.FAULT_OPS`) is a 400 ``bad_fault`` from the header, and a start-up
fault counts only requests on routes that can honour it.

- ``lose-reply``: the request takes effect, then the connection is closed mid-reply (the client sees a
  truncated response, exactly like a reply lost on the network);
- ``corrupt-checkpoint`` (checkpoint reads and writes only): the caller's stored checkpoint is altered behind
  its digest as the call reads it (500); a write answered before it reads it (an identical retry's receipt, a
  409 ``idempotency_conflict`` or ``cursor_ahead``) alters nothing;
- ``corrupt-journal`` (feed pages only): a journal entry in the requested range is altered behind its digest
  (500);
- ``crash-mid-write`` (checkpoint writes only): the server dies between writing the checkpoint and writing its
  receipt, then comes back with whatever it wrote; the reply is lost. With the seed's batched store
  (``--store batched``) the two are one write and nothing is lost but the reply; ``--store split`` loses the
  receipt (:meth:`simkit.service.checkpoints.CheckpointService._commit`).

The fault header is deliberately not in the OpenAPI document: fuzzers exercise the contract, not the faults.
The operator routes ``POST /_simkit/backup``, ``/_simkit/restore`` and ``/_simkit/append`` (not seed 004;
:mod:`simkit.service.admin`) exist only when ``create_app(admin=True)`` (``simkit serve`` does so when some
subject holds the ``operator`` role: ``--operator TOKEN`` or ``roles = ["operator"]`` in the config file). An
operator that also holds ``inject_faults`` may send ``X-Simkit-Fault: lose-reply`` to ``/_simkit/append``.

The parts: :mod:`simkit.service.web` (the no-store and lost-reply wrapper, error replies, OpenAPI helpers),
:mod:`simkit.service.admin` (the operator routes) and :mod:`simkit.service.server` (uvicorn, the listening
socket, the request deadline); this module answers their public names too.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Sequence

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from simkit.errors import echoed

from . import schema as S
from .admin import add_operator_routes
from .apidocs import add_docs
from .checkpoints import COUNTED_WHERE_STRUCK, ROUTES, CheckpointService
from .config import DEV_SCOPE, FaultSpec, has_operator
from .contract import FAULT_OPS, ServiceError
from .server import REQUEST_TIMEOUT, DeadlineH11, WallClock, bind, running, uvicorn_server
from .web import FAULT_HEADER, LOST, asgi, error, joined, read_body, request_body, responses

__all__ = [
    "ANSWERS", "FAULT_HEADER", "REQUEST_TIMEOUT", "DeadlineH11", "WallClock", "asgi", "bind", "create_app",
    "running", "serve",
]

#: The error statuses each seed route can answer, as its OpenAPI ``responses`` list them (with 200). Only the
#: feed and the checkpoint write have a 409 (a cursor or revision conflict); only the checkpoint read a 404
#: (absent progress); the memory query no 500 (it reads no digest-checked data).
ANSWERS = {"changes": (400, 401, 403, 409, 413, 500), "query": (400, 401, 403, 413),
           "read": (400, 401, 403, 404, 413, 500), "write": (400, 401, 403, 409, 413, 500)}


def _scheduler(specs: list[FaultSpec]):
    """``scheduled(op)`` for :meth:`CheckpointService.call`: the start-up faults due for this authorized
    request (each spec counts the authorized requests on its route, or on every route that can honour its
    kind); ``scheduled(op, kind)``: whether one of kind ``kind`` (of
    :data:`~simkit.service.checkpoints.COUNTED_WHERE_STRUCK`) is due, asked only where it strikes: those count
    only the requests that reach it."""
    counts: dict[int, int] = {}

    def scheduled(op: str, kind: str | None = None) -> list[str]:
        kinds = []
        for i, spec in enumerate(specs):
            if (spec.route in (None, op) and op in FAULT_OPS[spec.kind]
                    and (spec.kind == kind if kind else spec.kind not in COUNTED_WHERE_STRUCK)):
                counts[i] = counts.get(i, 0) + 1
                if spec.nth == 0 or counts[i] == spec.nth:
                    kinds.append(spec.kind)
        return kinds

    return scheduled


def _examples() -> dict:
    """Request examples that work on a fresh ``simkit serve`` (the dev journal is the first one created)."""
    cursor = {"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": 2}
    return {
        "changes": {"contract_version": 1, "scope": DEV_SCOPE,
                    "query": {"after": None, "through": None, "limit": 2}},
        "query": {"contract_version": 1, "scope": DEV_SCOPE,
                  "filter": {"limit": 2, "scan_limit": 2, "next_after": None}},
        "read": {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "context-cache"},
        "write": {"scope": DEV_SCOPE, "command": {"contract_version": 1,
                                                  "idempotency_key": "context-cache-page-1",
                                                  "consumer_id": "context-cache", "expected_revision": 0,
                                                  "cursor": cursor}},
    }


def create_app(svc: CheckpointService, faults: Sequence[FaultSpec] = (), admin: bool = False) -> FastAPI:
    """The FastAPI app serving ``svc`` (``app.state.service``, which may be swapped between requests).

    ``admin`` adds the ``/_simkit/*`` operator routes (each needs a credential of a subject with the
    ``operator`` role) and publishes them in the OpenAPI document; off by default.
    """
    app = FastAPI(title="simkit checkpoint service (seed 004)", version="1",
                  description="Durable consumer checkpoints and the change feed they refer to, as seed 004 "
                              "and feed-notes.md describe them. Every reply carries Cache-Control: "
                              "no-store.",
                  docs_url=None, redoc_url=None,        # served offline instead (apidocs)
                  redirect_slashes=False)  # a trailing slash is an unknown route (404), not a 307
    add_docs(app)
    app.state.service = svc
    app.state.lock = threading.Lock()
    scheduled = _scheduler(list(faults))
    bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <credential> (checked on every "
                                                      "call)")

    def route(path: str, ok_model, request_model, summary: str):
        op = ROUTES[path]

        async def handler(request: Request):
            try:
                raw = await read_body(request)
            except ServiceError as exc:
                return error(exc)
            asked = ",".join(request.headers.getlist(FAULT_HEADER)).split(",")
            with app.state.lock:
                reply = app.state.service.call(path, joined(request, "authorization"), raw, faults=asked,
                                               scheduled=scheduled,
                                               content_type=joined(request, "content-type") or "",
                                               content_encoding=joined(request, "content-encoding"))
            if reply.lost:
                request.scope[LOST] = True
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

        handler.__name__ = op
        app.post(path, summary=summary, responses=responses(ok_model, ANSWERS[op]),
                 openapi_extra=request_body(request_model, _examples()[op]),
                 dependencies=[Depends(bearer)])(handler)

    route("/api/v1/memory/changes", S.ChangesPage, S.ChangesRequest, "Read one change-feed page")
    route("/api/v1/memory/query", S.QueryPage, S.QueryRequest,
          "Scan existing records (initial reconciliation): one page")
    route("/api/v1/memory/checkpoints/read", S.ReadResponse, S.ReadRequest,
          "Read a consumer's current checkpoint")
    route("/api/v1/memory/checkpoints", S.WriteResponse, S.WriteRequest, "Save progress (compare-and-set)")
    if admin:
        add_operator_routes(app, bearer)
    _add_schemas(app)
    _route_errors(app)
    return app


def _route_errors(app: FastAPI) -> None:
    """An unknown route (404) or method (405) answers the service's error body ``{"error": {status, code,
    message}}``, not the framework's ``{"detail": ...}``; the ``Allow`` header of a 405 is kept. The 404 lists
    every POST route the app has, the operator routes too when it has them (they were left out)."""
    posts = sorted((getattr(r, "path", "") for r in app.routes
                    if "POST" in (getattr(r, "methods", None) or ())),
                   key=lambda path: (path.startswith("/_simkit/"), path))        # the seed's routes first

    @app.exception_handler(StarletteHTTPException)
    async def route_error(request: Request, exc: StarletteHTTPException):
        # the method and path as they came, cut short: a 60 KB path is not echoed whole
        where, headers = f"{echoed(request.method, 20)} {echoed(request.url.path)}", dict(exc.headers or {})
        if exc.status_code == 404:
            code, message = (
                "route_not_found",
                f"no route {where}; the routes are POST {', POST '.join(posts)}",
            )
        elif exc.status_code == 405:
            code, message = (
                "method_not_allowed",
                f"{where}: method not allowed; use {headers.get('Allow', 'POST')}",
            )
        else:
            code, message = "http_error", str(exc.detail)
        return error(ServiceError(exc.status_code, code, message), headers)


def _add_schemas(app: FastAPI) -> None:
    """Put the request models' nested definitions where the ``$ref``s of ``openapi_extra`` point, and each
    route's ``requestBody`` back as :func:`~simkit.service.web.request_body` wrote it: FastAPI drops every
    null of the document, so each example's ``"mission_id": null`` went and the examples, which must work
    on a fresh server, were a 400 ``missing_field``."""
    original = app.openapi

    def openapi():
        if app.openapi_schema:
            return app.openapi_schema
        doc = original()
        for route in app.routes:
            body = (getattr(route, "openapi_extra", None) or {}).get("requestBody")
            if body is not None:
                doc["paths"][getattr(route, "path", "")]["post"]["requestBody"] = copy.deepcopy(body)
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

    app.openapi = openapi     # type: ignore[method-assign]  # FastAPI's documented way to replace the schema


def serve(svc: CheckpointService, faults: list[FaultSpec], port: int, log_level: str = "info",
          announce=None) -> None:
    """Serve until interrupted (``simkit serve``); the operator routes only if some subject is an operator."""
    admin = has_operator(svc)
    app = create_app(svc, faults, admin=admin)
    sock = bind(port)
    line = (
        f"simkit serve: http://127.0.0.1:{sock.getsockname()[1]}  (OpenAPI at /openapi.json; credential 'dev'"
    )
    line += "; operator routes /_simkit/* on)" if admin else ")"
    (announce or (lambda text: print(text, flush=True)))(line)
    uvicorn_server(app, log_level).run(sockets=[sock])
