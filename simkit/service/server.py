"""Serving an app on 127.0.0.1 with uvicorn (docs/service.md, "simkit serve"): the listening socket, a
background server for tests and notebooks (:func:`running`), and a deadline for each request to arrive whole.

A request must arrive whole within ``request_timeout`` seconds of its first byte (of the connection, for the
first): uvicorn's only timeout, keep-alive, runs between requests, so a half-sent request (headers or body)
would otherwise hold its connection forever. :class:`DeadlineH11` closes such a connection, and one whose
client reads its replies so slowly that the server's writes back up for as long.
"""
from __future__ import annotations

import contextlib
import json
import logging
import signal
import socket
import threading
import time

import h11
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

from .config import ServiceConfigError
from .contract import NO_STORE, ServiceError
from .web import asgi

__all__ = ["MAX_HEADER_BYTES", "REQUEST_TIMEOUT", "DeadlineH11", "WallClock", "bind", "running",
           "uvicorn_server"]

#: Seconds a request may take to arrive whole (headers and body), from its first byte.
REQUEST_TIMEOUT = 10.0
#: The most of a request's start line and headers the server reads (uvicorn's
#: ``h11_max_incomplete_event_size``, h11's default); past it, a 400 ``request_header_too_large``.
MAX_HEADER_BYTES = 16 * 1024


class WallClock:
    """Real time for the server (the model itself never reads a clock)."""

    @property
    def now_millis(self) -> int:
        return int(time.time() * 1000)



class _QuietLostReply(logging.Filter):
    """Drops uvicorn's complaint about a reply the lost-reply fault cut short on purpose."""

    def filter(self, record):
        return "returned without completing response" not in record.getMessage()



class _OneFraming(h11.Connection):
    """h11's connection, refusing a request framed both by ``Transfer-Encoding`` and by ``Content-Length``.

    h11 reads the chunks and ignores the length (RFC 9112, 6.1), and kept the connection open; a proxy that
    frames by the length would see another request in the same bytes (request smuggling), the ambiguity two
    ``Content-Length`` lines are refused for. The :class:`h11.RemoteProtocolError` makes uvicorn answer
    :meth:`DeadlineH11.send_400_response` and close: the request never reaches the service."""

    #: the request's start line and headers outgrew h11's buffer (:meth:`DeadlineH11.send_400_response`)
    headers_too_large = False

    def next_event(self):
        reading_headers = self.their_state is h11.IDLE
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as exc:
            self.headers_too_large = reading_headers and exc.error_status_hint == 431
            raise
        if isinstance(event, h11.Request):
            names = {name for name, _ in event.headers}     # h11 gives them in lower case
            if b"transfer-encoding" in names and b"content-length" in names:
                raise h11.RemoteProtocolError("both Transfer-Encoding and Content-Length")
        return event


class DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline for receiving each request whole, and one for reading a reply.

    The deadline starts with the connection and again with the first byte of each later request (for a request
    pipelined behind one being answered: when the server starts reading it, once that reply is sent), and ends
    once the request's body is complete (``their_state`` DONE); then the app runs, however long it takes.
    Between requests uvicorn's keep-alive timeout closes an idle connection. A deadline that passes closes the
    connection: the half-sent request never reaches the service, or the app sees a disconnect mid-body (400,
    changing nothing). A reply the client does not read, so that the server's writes back up, gets as long;
    then the connection is dropped with what was left unsent.
    """

    request_timeout = REQUEST_TIMEOUT
    _deadline = None
    _unread = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.conn.__class__ = _OneFraming       # uvicorn made it; one connection object serves every request
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()           # uvicorn has just read the request pipelined behind the one answered, if any

    def _track(self) -> None:
        """Arm the deadline while a request is being read part-way, disarm it once the request is whole.

        A pipelined request is read from :meth:`on_response_complete`, where uvicorn also cancels its
        keep-alive timeout: one whose body never came held its connection for ever."""
        state, (buffered, _closed) = self.conn.their_state, self.conn.trailing_data
        if not self.transport.is_closing() and (state is h11.SEND_BODY or (state is h11.IDLE and buffered)):
            if self._deadline is None:
                self._arm()                 # a request's first byte, or the server's first look at it
        else:
            self._disarm()          # the request is whole, the connection over, or idle: uvicorn's keep-alive

    def pause_writing(self) -> None:
        """The client does not read its replies as fast as they come: it has one deadline to catch up."""
        super().pause_writing()
        if self._unread is None:
            self._unread = self.loop.call_later(self.request_timeout, self._drop, "did not read its reply")

    def resume_writing(self) -> None:
        super().resume_writing()
        self._read_up()

    def connection_lost(self, exc) -> None:
        self._disarm()
        self._read_up()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """The server is stopping (``SIGTERM``, ``SIGINT``): a request still arriving is dropped now, as at
        its deadline; it never reached the service whole, so nothing changes. uvicorn waited for its body,
        and a client that sent half a request held ``simkit serve`` up for the whole deadline after the
        signal."""
        cycle = self.cycle
        if self.conn.their_state is h11.SEND_BODY and cycle is not None and not cycle.response_complete:
            self._disarm()
            self._drop("was still sending its request when the server stopped", timed=False)
            return
        super().shutdown()

    def send_400_response(self, msg: str) -> None:
        """A request that is not HTTP/1.1 at all (two ``Content-Length`` lines, or one and
        ``Transfer-Encoding``, raw non-ASCII bytes in its target, garbage): the service's error body with
        ``Cache-Control: no-store``, as every other reply, not uvicorn's bare ``text/plain``; the connection
        closes. A start line and headers past the server's 16 KiB (a long credential, say) are valid HTTP,
        and were told "not valid HTTP/1.1": their 400 is ``request_header_too_large``, naming the bound (a
        400, as every route's OpenAPI answers list, not a 431 none of them does)."""
        message = "the request is not valid HTTP/1.1"
        code = "request_header_too_large" if getattr(self.conn, "headers_too_large", False) else ""
        if code:
            message = (f"the request line and headers exceed the limit of {MAX_HEADER_BYTES} bytes (16 KiB); "
                       f"send shorter headers")
        body = json.dumps(ServiceError(400, code or "malformed_request", message).body(),
                          separators=(",", ":")).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"cache-control", NO_STORE["Cache-Control"].encode()), (b"connection", b"close")]
        reply = h11.Response(status_code=400, headers=headers, reason=b"Bad Request")
        for event in (reply, h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _arm(self) -> None:
        self._deadline = self.loop.call_later(self.request_timeout, self._drop,
                                              "did not send its request whole")

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _read_up(self) -> None:
        """The client has read its replies (or is gone): no deadline for them."""
        if self._unread is not None:
            self._unread.cancel()
            self._unread = None

    def _drop(self, why: str, timed: bool = True) -> None:
        """Close the connection now: ``abort``, since ``close`` waits for unsent replies to drain, for ever if
        the client reads nothing."""
        self._deadline = self._unread = None
        self.logger.warning("simkit: dropped a connection whose client %s%s", why,
                            f" within {self.request_timeout:g}s" if timed else "")
        self.transport.abort()


def bind(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free port), or one clear error."""
    # proto IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted connections only then (no 40 ms Nagle stalls).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServiceConfigError(f"port {port}: cannot listen on {host}:{port}: {exc.strerror}",
                                 param="port") from None
    sock.listen(128)
    return sock


def uvicorn_server(app: FastAPI, log_level: str, request_timeout: float | None = None):
    """A uvicorn server for ``app`` behind :func:`simkit.service.web.asgi`, with the request deadline."""
    import uvicorn
    logging.getLogger("uvicorn.error").addFilter(_QuietLostReply())
    protocol = type("DeadlineH11", (DeadlineH11,), {"request_timeout": request_timeout or REQUEST_TIMEOUT})
    server = uvicorn.Server(uvicorn.Config(asgi(app), log_level=log_level, lifespan="off", http=protocol,
                                          h11_max_incomplete_event_size=MAX_HEADER_BYTES))
    # A signal ignored when simkit started (SIGINT, in a job a shell started in the background) stays
    # ignored, as in every other command: uvicorn handles it anyway, and shut down with exit status 0.
    ignored = {s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) is signal.SIG_IGN}
    if ignored:
        handle = server.handle_exit
        # (the handler uvicorn installs is this instance's attribute: read when it starts serving)
        server.handle_exit = (  # type: ignore[method-assign]
            lambda sig, frame: None if sig in ignored else handle(sig, frame))
    return server


@contextlib.contextmanager
def running(app: FastAPI, port: int = 0, log_level: str = "warning", request_timeout: float | None = None):
    """Serve ``app`` on 127.0.0.1 in a background thread; yields the base URL; always shuts down."""
    sock = bind(port)
    server = uvicorn_server(app, log_level, request_timeout)
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
