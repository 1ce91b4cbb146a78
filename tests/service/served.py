"""A fresh service behind either transport, for the service's tests: a module that imports :func:`over`
imports :func:`shared_server` too, so that its HTTP cases share one server."""
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
