"""Two ways to call the service with the same code: in-process (the model) or over HTTP (``simkit serve``).

Both take a route path, a JSON body (or raw bytes), a bearer credential and optional fault kinds, and return
a :class:`Response`; a lost reply raises :class:`ReplyLost`. The tests run the same rule tests through both,
and a consumer can be pointed at either.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from .checkpoints import CheckpointService


class ReplyLost(Exception):
    """The reply never came: the request may or may not have taken effect."""


@dataclass(frozen=True)
class Response:
    status: int
    body: dict
    headers: dict

    def __getitem__(self, key):
        return self.body[key]


def _encode(body) -> bytes:
    return body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode("utf-8")


def _authorization(credential: str | None) -> str | None:
    if credential is None:
        return None
    return f"Bearer {credential}" if credential else "Bearer"


def corrupt_for(svc: CheckpointService, kinds, route: str, authorization: str | None, raw: bytes) -> None:
    """Apply ``corrupt-checkpoint`` / ``corrupt-journal`` to what this request will touch (valid callers only)."""
    from .checkpoints import ROUTES
    op = ROUTES.get(route)
    try:
        body = json.loads(raw)
        token = (authorization or "").partition(" ")[2].strip()
        subject = svc.subjects[svc.credentials[token]]
        scope = body["scope"]
        if "corrupt-checkpoint" in kinds and op in ("read", "write"):
            cmd = body if op == "read" else body["command"]
            svc.corrupt_checkpoint(subject.subject_id, scope, cmd["consumer_id"], cmd["contract_version"])
        if "corrupt-journal" in kinds and op == "changes":
            after = ((body.get("query") or {}).get("after") or {}).get("sequence", 0)
            journal = svc.journals.get(svc.namespace(subject.subject_id, scope))
            if journal is not None:
                svc.corrupt_journal(subject.tenant, scope, min(after + 1, journal.head))
    except (ValueError, KeyError, TypeError, AttributeError):
        pass


class ModelTransport:
    """Calls :meth:`CheckpointService.call` directly, with the same fault semantics as the server."""

    name = "model"

    def __init__(self, svc: CheckpointService):
        self.svc = svc

    def post(self, route: str, body, credential: str | None = "dev", faults=()) -> Response:
        raw, auth = _encode(body), _authorization(credential)
        if faults:
            corrupt_for(self.svc, faults, route, auth, raw)
        reply = self.svc.call(route, auth, raw)
        if "lose-reply" in faults:
            raise ReplyLost(route)
        return Response(reply.status, reply.body, {k.lower(): v for k, v in reply.headers.items()})


class HttpTransport:
    """Calls a running ``simkit serve`` over a real HTTP connection (httpx)."""

    name = "http"

    def __init__(self, base_url: str, timeout: float = 10.0):
        import socket

        import httpx
        self._httpx = httpx
        # TCP_NODELAY: headers and body leave in separate segments; without it Nagle and delayed ACKs add 40 ms.
        nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        self.client = httpx.Client(base_url=base_url, timeout=timeout, transport=nodelay)

    def post(self, route: str, body, credential: str | None = "dev", faults=()) -> Response:
        headers = {"Content-Type": "application/json"}
        if credential is not None:
            headers["Authorization"] = _authorization(credential)
        if faults:
            headers["X-Simkit-Fault"] = ",".join(faults)
        try:
            r = self.client.post(route, content=_encode(body), headers=headers)
        except (self._httpx.RemoteProtocolError, self._httpx.ReadError) as exc:
            raise ReplyLost(route) from exc
        return Response(r.status_code, r.json(), {k.lower(): v for k, v in r.headers.items()})

    def close(self) -> None:
        self.client.close()
