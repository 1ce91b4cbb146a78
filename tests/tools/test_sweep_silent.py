"""``sweep --dask`` pointed at a listener that accepts and never answers (issue 32): it waited for ever,
because ``Client(address, timeout=...)`` bounds the connection, not the scheduler's answer."""
from __future__ import annotations

import socket
import time

import pytest

import simkit
from simkit.tools.sweep import sweep


def test_a_listener_that_never_answers_is_one_line_within_the_timeout():
    pytest.importorskip("distributed")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)                        # the kernel accepts connections; nobody ever reads them
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        began = time.monotonic()
        with pytest.raises(simkit.SimkitError,
                           match=rf"^dask_address {address}: cannot connect to the scheduler: "
                                 r"no answer within 2 s$"):
            sweep(simkit.load("default"), ("safe",), seeds=1, dask_address=address, dask_timeout=2)
        assert time.monotonic() - began < 20
