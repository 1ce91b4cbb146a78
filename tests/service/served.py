"""A fresh service behind either transport, for the service's tests: a module that imports :func:`over`
imports :func:`shared_server` too, so that its HTTP cases share one server."""
import socket
import time
from contextlib import contextmanager

import pytest

from simkit.service import dev_service
from simkit.service.http import create_app, running
from simkit.service.transport import HttpTransport, ModelTransport


@pytest.fixture(scope="module")
def shared_server():
    """``(app, url)``: a server for the whole module, whose service each test swaps (as ``create_app``
    allows)."""
    app = create_app(dev_service())
    with running(app) as url:
        yield app, url


@contextmanager
def over(request, svc):
    """A transport to ``svc``: the model itself when ``request.param`` is ``"model"``, else HTTP, on the
    module's :func:`shared_server`, now serving ``svc``."""
    if request.param == "model":
        yield ModelTransport(svc)
        return
    app, url = request.getfixturevalue("shared_server")
    app.state.service = svc
    transport = HttpTransport(url)
    try:
        yield transport
    finally:
        transport.close()


def raw(port: int, data: bytes, wait: float = 5) -> tuple[bytes, float]:
    """Everything the server sends back for ``data``, sent as it is on a fresh connection, until it closes the
    connection, and how long that took (``<kept open>`` after ``wait`` seconds of silence: the failure, not a
    hang of the test)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except TimeoutError:
            out += b"<kept open>"
    return out, time.monotonic() - start
