"""The HTTP plumbing every route group of ``simkit serve`` shares (docs/service.md, "simkit serve"): the
``Cache-Control: no-store`` and lost-reply wrapper (:class:`NoStore`), the one error reply, reading a body no
further than the 64 KiB limit, and the OpenAPI ``responses`` and ``requestBody`` of a route.
"""
from __future__ import annotations

import logging
import re
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect

from . import schema as S
from .contract import MAX_REQUEST_BYTES, NO_STORE, ServiceError, too_large

__all__ = ["FAULT_HEADER", "LOST", "AbsoluteForm", "EncodedSlashes", "NoStore", "asgi", "error", "joined",
           "read_body", "request_body", "responses"]

FAULT_HEADER = "x-simkit-fault"
#: The ASGI scope key a route sets to drop its reply (the ``lose-reply`` and ``crash-mid-write`` faults).
LOST = "simkit.lose_reply"


class NoStore:
    """Pure ASGI wrapper: ``Cache-Control: no-store`` on every reply, the ``lose-reply`` fault, and the
    service's 500 error body instead of the framework's bare text should the app ever raise."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        held: list[dict] = []

        async def capture(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control"]
                message = {**message, "headers": headers
                           + [(b"cache-control", NO_STORE["Cache-Control"].encode())]}
            held.append(message)

        try:
            await self.app(scope, receive, capture)
        except Exception:  # noqa: BLE001 - a bug, reported in the documented body, never a bare 500
            logging.getLogger("uvicorn.error").exception("simkit: unhandled error in %s %s", scope["method"],
                                                         scope["path"])
            held.clear()  # nothing was sent yet: every message is held until here
            await error(ServiceError(500, "internal_error", "the server failed to handle this request"))(
                scope, receive, capture)
        if scope.get(LOST):
            # The request took effect; the client gets headers and part of the body, then the connection
            # closes.
            start = held[0]
            await send(start)
            body = b"".join(m.get("body", b"") for m in held[1:])
            await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
            logging.getLogger("uvicorn.error").warning("simkit: lose-reply or crash-mid-write fault: dropped "
                                                       "the reply "
                                                       "to %s %s", scope["method"], scope["path"])
            return
        for message in held:
            await send(message)


class EncodedSlashes:
    """Pure ASGI wrapper: an encoded slash (``%2F``) in a request's path is a character of its segment, not a
    separator (RFC 3986, 2.2: a reserved character percent-encoded is data), so it names no route (404).
    uvicorn decodes it with the rest of the path, and ``POST /api/v1/memory/checkpoints%2Fread`` was served as
    the checkpoint read, ``/_simkit%2Fbackup`` as the backup: a path a proxy's rule by prefix does not see."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        raw = scope.get("raw_path") or b""
        if scope["type"] == "http" and b"%2f" in raw.lower():
            parts = re.split("%2[fF]", raw.decode("latin-1"))
            scope = {**scope, "path": "%2F".join(unquote(part) for part in parts)}
        return await self.app(scope, receive, send)


class AbsoluteForm:
    """Pure ASGI wrapper: a request target in absolute form (``POST http://127.0.0.1:8004/api/v1/memory/changes
    HTTP/1.1``), which a server must accept (RFC 9112, 3.2.2), names the path after its authority. uvicorn
    took the whole URL for the path, and every route was a 404 ``no route POST /http://...``."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        raw = scope.get("raw_path") or b""
        form = _ABSOLUTE.match(raw) if scope["type"] == "http" else None
        if form:
            rest = raw[form.end():] or b"/"
            scope = {**scope, "raw_path": rest, "path": unquote(rest.decode("ascii"))}
        return await self.app(scope, receive, send)


#: ``http://`` or ``https://`` (in any case) and an authority: the start of an absolute-form target.
_ABSOLUTE = re.compile(rb"(?i)https?://[^/]*")


def joined(request: Request, name: str) -> str | None:
    """Header ``name``, its lines joined by ", " as HTTP combines a repeated field (None when absent): the
    first of two ``Authorization`` or ``Content-Type`` lines was taken, the second ignored, so a request said
    two things and one was heard. Joined, two credentials are a 401 and two media types a 400."""
    values = request.headers.getlist(name)
    return ", ".join(values) if values else None


def error(exc: ServiceError, headers: dict | None = None) -> JSONResponse:
    """The one error reply: ``exc.body()`` (seed 004's ``{"error": {status, code, message}}``), no-store."""
    return JSONResponse(exc.body(), exc.status, headers={**(headers or {}), **NO_STORE})


async def read_body(request: Request) -> bytes:
    """The body, read no further than one chunk past the 64 KiB limit (enough
    for ``parse_body``'s 413); a client gone before its body was complete
    (closed, or cut off by the request deadline) is a 400 nobody reads.

    A ``Content-Length`` above the limit is the 413 at once, before a byte of the body is read (or a
    ``100 Continue`` invites it): the server waited for 64 KiB to arrive, and a client that sent the headers
    and waited for an answer before the body was dropped at the request deadline with no answer at all."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
        raise too_large()
    raw = bytearray()
    try:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_REQUEST_BYTES:
                break
    except ClientDisconnect:
        raise ServiceError(400, "incomplete_request",
                           "the connection closed before the body was complete") from None
    return bytes(raw)



def responses(ok_model, codes) -> dict:
    """A route's OpenAPI ``responses``: ``ok_model`` for 200, the error body for each of ``codes``."""
    header = {"Cache-Control": {"description": "always no-store",
                                "schema": {"type": "string", "enum": ["no-store"]}}}
    meaning = {400: "malformed identity, contract or bounds", 401: "missing, invalid or revoked credential",
               403: "missing capability or grant for the exact scope (operator routes: the operator role)",
               404: "absent progress",
               409: "stale revision, nonmonotonic/foreign/ahead cursor or idempotency conflict",
               413: "request above the 64 KiB limit", 500: "detected integrity failure"}
    out = {200: {"model": ok_model, "headers": header}}
    for code in codes:
        out[code] = {"model": S.Error, "description": meaning[code], "headers": header}
    return out


def request_body(model, example: dict, required: bool = True) -> dict:
    """A route's OpenAPI ``requestBody``: ``model``'s schema
    and ``example``, which works on a fresh server."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    examples = {"dev": {"summary": "the dev subject's scope on simkit serve", "value": example}}
    return {"requestBody": {"required": required, "content": {"application/json": {
        "schema": schema, "examples": examples}}}}


def asgi(app: FastAPI):
    """The ASGI application uvicorn serves: ``app`` behind the no-store and lost-reply wrapper, an
    absolute-form target read as its path, its paths' encoded slashes kept in their segments."""
    return NoStore(AbsoluteForm(EncodedSlashes(app)))

