"""The service, tenth round of hostile input (a fresh tester): HTTP framing a proxy and the server may read
two ways. Each rejected request is the service's error body and changes no state."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from served import raw

from simkit.service import DEV_SCOPE
from simkit.service.config import build_service
from simkit.service.http import create_app, running

WRITE = "/api/v1/memory/checkpoints"
JOURNAL = "00000000-0000-4000-8000-000000000001"


@pytest.fixture(scope="module")
def served():
    svc, _ = build_service()
    with running(create_app(svc)) as url:
        yield svc, int(url.rsplit(":", 1)[1])


def _write(key: str, sequence: int) -> bytes:
    return json.dumps({"scope": DEV_SCOPE, "command": {
        "contract_version": 1, "idempotency_key": key, "consumer_id": "r10", "expected_revision": 0,
        "cursor": {"journal_id": JOURNAL, "sequence": sequence}}}).encode()


def _chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


HEAD = b"POST " + WRITE.encode() + b" HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev\r\n" \
       b"Content-Type: application/json\r\n"


def test_a_body_framed_both_by_length_and_by_chunks_is_a_400_that_closes_and_changes_nothing(served):
    """``Transfer-Encoding: chunked`` and ``Content-Length`` on one request: a proxy that frames by the length
    and this server, which framed by the chunks, disagree where the request ends (request smuggling: here the
    bytes after the length's 5 held a second request of the proxy's client). The server took the chunked
    write (200, a checkpoint made) and kept the connection open for what followed, where RFC 9112 (6.1)
    says it MUST close it, and two ``Content-Length`` lines, the same ambiguity, were already refused. Now it
    is the service's 400 ``malformed_request``, nothing is written, the connection closes and the request
    behind it is never read."""
    svc, port = served
    before = svc.state_digest()
    first = HEAD + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + _chunked(_write("r10-a", 1))
    second = HEAD + b"Content-Length: %d\r\n\r\n" % len(_write("r10-b", 2)) + _write("r10-b", 2)
    reply, _took = raw(port, first + second)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split()[1] == b"400", reply[:300]
    assert json.loads(body)["error"]["code"] == "malformed_request"
    assert reply.count(b"HTTP/1.1 ") == 1 and not reply.endswith(b"<kept open>")
    assert svc.state_digest() == before


# -- start-up flags whose part after '@' or '#' is empty (an unset shell variable) or no plain number ----
@pytest.mark.parametrize("text, problem", [
    ("lose-reply#", "occurrence after '#' must be a positive integer or '*'"),
    ("lose-reply#\uff12", "occurrence after '#' must be a positive integer or '*'"),
    ("lose-reply# 2", "occurrence after '#' must be a positive integer or '*'"),
    ("lose-reply#+2", "occurrence after '#' must be a positive integer or '*'"),
    ("lose-reply#1_0", "occurrence after '#' must be a positive integer or '*'"),
    ("lose-reply@", "no route after '@'"),
    ("lose-reply@#2", "no route after '@'"),
])
def test_a_fault_with_nothing_or_no_plain_number_after_its_sign_is_refused(text, problem):
    """``--fault "lose-reply#$N"`` with ``N`` unset struck the first request, and ``--fault
    "lose-reply@$ROUTE"`` every route, as if the sign had not been typed (``#`` with a full-width digit, a
    space or a sign was read as a number too): the grammar is ``KIND[@ROUTE][#N]``, as ``--crash``'s, which
    refuses ``POINT#``."""
    from simkit.service.config import ServiceConfigError
    from simkit.service.options import parse_fault
    with pytest.raises(ServiceConfigError, match=re.escape(problem)) as caught:
        parse_fault(text)
    assert caught.value.param == "faults" and "\n" not in str(caught.value)


def test_a_grant_with_nothing_after_its_at_sign_is_refused_not_given_the_dev_scope():
    """``--grant "alice=memory_read,memory_checkpoint@$SCOPE"`` with ``SCOPE`` unset granted alice the dev
    scope, the namespace of subject ``dev``: the scope given empty is refused, as an absent one is not."""
    from simkit.service.config import ServiceConfigError
    from simkit.service.options import parse_grant_flag
    with pytest.raises(ServiceConfigError, match="no scope after '@'") as caught:
        parse_grant_flag("alice=memory_read,memory_checkpoint@")
    assert caught.value.param == "grants"
    assert parse_grant_flag("alice=memory_read")[2] == DEV_SCOPE        # a guard: no '@', the dev scope


def test_serve_with_an_empty_grant_scope_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "-m", "simkit", "serve", "--port", "0", "--credential", "a=alice",
                           "--grant", "alice=memory_read@"], capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stdout) == (2, "") and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("simkit: --grant 'alice=memory_read@': no scope after '@'")
