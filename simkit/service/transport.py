"""Two ways to call the service with the same code: in-process (the model) or over HTTP (``simkit serve``).

Both take a route path, a JSON body (or raw bytes), a bearer credential and optional fault kinds, and return
a :class:`Response`; a lost reply raises :class:`ReplyLost`. Faults are the service's to honour
(:meth:`CheckpointService.call`): only for an authenticated, authorized caller with the ``inject_faults`` role
(``lose-reply``, or ``crash-mid-write``: the server dies during a checkpoint write, so no reply either);
a rejected call's reply is never lost and its faults change nothing. The tests run the same rule tests through
both, and a consumer can be pointed at either.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from .checkpoints import CheckpointService

__all__ = ["HttpTransport", "ModelTransport", "ReplyLost", "Response"]


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
    if isinstance(body, bytes):
        return body
    if isinstance(body, bytearray):
        return bytes(body)
    return json.dumps(body).encode("utf-8")


def _bearer(credential: str) -> str:
    return f"Bearer {credential}" if credential else "Bearer"


def _authorization(credential: str | None) -> str | None:
    return None if credential is None else _bearer(credential)


class ModelTransport:
    """Calls :meth:`CheckpointService.call` directly, with the same fault semantics as the server."""

    name = "model"

    def __init__(self, svc: CheckpointService):
        self.svc = svc

    def post(self, route: str, body, credential: str | None = "dev", faults=()) -> Response:
        reply = self.svc.call(route, _authorization(credential), _encode(body), faults=faults)
        if reply.lost:                                   # lose-reply, or the server died mid-write
            raise ReplyLost(route)
        return Response(reply.status, reply.body, {k.lower(): v for k, v in reply.headers.items()})


class HttpTransport:
    """Calls a running ``simkit serve`` over a real HTTP connection (httpx)."""

    name = "http"

    def __init__(self, base_url: str, timeout: float = 10.0):
        import socket

        import httpx
        self._httpx = httpx
        # TCP_NODELAY: headers and body leave in separate segments; without it Nagle and delayed ACKs add 40
        # ms.
        nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        self.client = httpx.Client(base_url=base_url, timeout=timeout, transport=nodelay)

    def post(self, route: str, body, credential: str | None = "dev", faults=()) -> Response:
        headers = {"Content-Type": "application/json"}
        if credential is not None:
            headers["Authorization"] = _bearer(credential)
        if faults:
            headers["X-Simkit-Fault"] = ",".join(faults)
        x = self._httpx
        try:
            r = self.client.post(route, content=_encode(body), headers=headers)
        except (x.RemoteProtocolError, x.ReadError, x.WriteError, x.ReadTimeout, x.WriteTimeout) as exc:
            # sent, or partly: it may have taken effect. A reply that never came within the timeout raised
            # httpx's ReadTimeout, which no caller of a transport expects, where it is what ReplyLost means.
            raise ReplyLost(route) from exc
        return Response(r.status_code, r.json(), {k.lower(): v for k, v in r.headers.items()})

    def close(self) -> None:
        self.client.close()
