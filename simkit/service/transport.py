"""Two ways to call the service with the same code: in-process (the model) or over HTTP (``simkit serve``).

Both take a route path, a JSON body (or raw bytes), a bearer credential and optional fault kinds, and return
a :class:`Response`; a lost reply raises :class:`ReplyLost`. Faults are the service's to honour
(:meth:`CheckpointService.call`): only for an authenticated, authorized caller with the ``inject_faults`` role
(``lose-reply``, or ``crash-mid-write``: the server dies during a checkpoint write, so no reply either);
a rejected call's reply is never lost and its faults change nothing. The tests run the same rule tests through
both, and a consumer can be pointed at either.

Over HTTP, a reply that is not the service's (a proxy's HTML 502, JSON that is no object, one past
:data:`MAX_REPLY_BYTES`) raises :class:`BadReply`, and one that has not come whole within the transport's
``timeout`` of the request's start (a server that never answers, or drips its reply a byte at a time), or
whose connection failed (a server stopped or restarting), :class:`ReplyLost`: the call ends in bounded time
and memory whatever the other end sends, with a :class:`Response` or one of these.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

from simkit.errors import echoed

from .checkpoints import CheckpointService

__all__ = ["MAX_REPLY_BYTES", "BadReply", "HttpTransport", "ModelTransport", "ReplyLost", "Response"]

#: The most of a reply :class:`HttpTransport` reads: the service's largest, a feed page of 256 version 2
#: entries, is about 150 KB.
MAX_REPLY_BYTES = 8 * 1024 * 1024


class ReplyLost(Exception):
    """The reply never came: the request may or may not have taken effect."""


class BadReply(ReplyLost):
    """A reply that is not the service's (a proxy's error page, JSON that is no object, one too large): to
    the caller no reply at all, so the request may or may not have taken effect (retry the identical
    command). It was a ``JSONDecodeError``, or a ``Response`` whose body was a list."""


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


class _Deadline:
    """httpcore's network backend with one deadline for a whole call (:meth:`HttpTransport.post` sets
    :attr:`at`, per thread): every read and write of the call waits at most until then. httpx's ``timeout``
    bounds each read alone, so a reply dripped a byte every few seconds, headers included, never ended."""

    def __init__(self, httpcore):
        self._httpcore, self._backend, self._calls = httpcore, httpcore.SyncBackend(), threading.local()

    @property
    def at(self) -> float:
        return getattr(self._calls, "at", float("inf"))

    @at.setter
    def at(self, when: float) -> None:
        self._calls.at = when

    def left(self, timeout: float | None, step: str) -> float | None:
        """The seconds ``step`` (``Connect``, ``Read`` or ``Write``) may wait: ``timeout``, or what is left to
        the deadline if less; past it, httpcore's timeout of that step (httpx's, to the caller)."""
        now, at = time.monotonic(), self.at
        if at == float("inf"):                             # no deadline (timeout None): the step's own
            return timeout
        if now >= at:
            raise getattr(self._httpcore, f"{step}Timeout")("the call's deadline passed")
        return at - now if timeout is None else min(timeout, at - now)

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        left = self.left(timeout, "Connect")
        return _DeadlineStream(self, self._backend.connect_tcp(host, port, left, local_address,
                                                               socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        left = self.left(timeout, "Connect")
        return _DeadlineStream(self, self._backend.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _DeadlineStream:
    """A connection whose reads and writes end by its :class:`_Deadline`."""

    def __init__(self, deadline: _Deadline, stream):
        self._deadline, self._stream = deadline, stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.left(timeout, "Read"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout, "Write"))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _DeadlineStream(self._deadline, self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str):
        return self._stream.get_extra_info(info)


class HttpTransport:
    """Calls a running ``simkit serve`` over a real HTTP connection (httpx). ``timeout``: the seconds a
    call may take in all, from its start to the last byte of its reply (:class:`ReplyLost` past them; None:
    no bound, as httpx's)."""

    name = "http"

    def __init__(self, base_url: str, timeout: float | None = 10.0):
        import socket

        import httpcore
        import httpx
        self._httpx, self.timeout = httpx, timeout
        # TCP_NODELAY: headers and body leave in separate segments; without it Nagle and delayed ACKs add 40
        # ms.
        options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        nodelay = httpx.HTTPTransport(socket_options=options)
        self._deadline = _Deadline(httpcore)
        # httpx's transport takes no network backend: its pool is replaced by one that has the deadline's,
        # with httpx's default limits
        nodelay._pool = httpcore.ConnectionPool(network_backend=self._deadline,   # type: ignore[arg-type]
                                                socket_options=options, max_connections=100,
                                                max_keepalive_connections=20, keepalive_expiry=5.0)
        self.client = httpx.Client(base_url=base_url, timeout=timeout, transport=nodelay)

    def post(self, route: str, body, credential: str | None = "dev", faults=()) -> Response:
        # identity: the service compresses nothing, and a reply is read raw (a compressed one is a BadReply)
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if credential is not None:
            headers["Authorization"] = _bearer(credential)
        if faults:
            headers["X-Simkit-Fault"] = ",".join(faults)
        x = self._httpx
        self._deadline.at = float("inf") if self.timeout is None else time.monotonic() + self.timeout
        try:
            with self.client.stream("POST", route, content=_encode(body), headers=headers) as r:
                raw = bytearray()
                for chunk in r.iter_raw():
                    raw += chunk
                    if len(raw) > MAX_REPLY_BYTES:
                        raise BadReply(f"POST {echoed(route)}: a {r.status_code} reply of more than "
                                       f"{MAX_REPLY_BYTES} bytes is not the service's")
        except (x.RemoteProtocolError, x.NetworkError, x.TimeoutException) as exc:
            # sent, or partly: it may have taken effect. A reply that never came within the timeout raised
            # httpx's ReadTimeout, which no caller of a transport expects, where it is what ReplyLost means; a
            # server not listening (stopped, restarting) httpx's ConnectError: nothing was sent, and the
            # identical retry the caller makes of a lost reply is right there too.
            raise ReplyLost(f"POST {echoed(route)}: {type(exc).__name__}: {exc}") from exc
        finally:
            self._deadline.at = float("inf")
        body = _reply_body(route, r.status_code, r.headers.get("content-type"), bytes(raw))
        return Response(r.status_code, body, {k.lower(): v for k, v in r.headers.items()})

    def close(self) -> None:
        self.client.close()


def _reply_body(route: str, status: int, content_type: str | None, raw: bytes) -> dict:
    """The JSON object of a reply, or :class:`BadReply` naming the route, the status and what came."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):        # RecursionError: nested past the stack
        body = None
    if not isinstance(body, dict):
        shown = echoed(raw[:200].decode("utf-8", "replace"), 60)
        raise BadReply(f"POST {echoed(route)}: the {status} reply is not the service's JSON object "
                       f"({echoed(content_type or 'no Content-Type', 40)}: {shown})")
    return body
