"""The service, round 69 (a hostile client, concurrency, credentials). Found:

1. A request whose start line and headers pass the server's 16 KiB (a long credential, a large header: valid
   HTTP/1.1) was answered 400 ``malformed_request``, "the request is not valid HTTP/1.1", though it is: the
   answer was wrong and named neither the headers nor the bound. Now its 400 is ``request_header_too_large``
   and says the limit; garbage keeps ``malformed_request``.
2. ``POST /_simkit/append`` takes no body (every field optional), as docs/service.md says and the server does,
   but its OpenAPI document said the body was required (schemathesis: a schema-violating request accepted).
3. ``HEAD /docs`` and ``HEAD /redoc`` were a 405 where ``GET`` served the page (RFC 9110, 9.1: a server
   supports GET and HEAD).
4. A backup (``POST /_simkit/backup``) and a restore deep-copied every stored receipt under the lock that
   serves every request: 500,000 receipts kept the server deaf 9.7 s for the backup and 10.2 s for the
   restore. Stored receipts are never changed in place, so both now share them (0.02 s).
5. A request target in absolute form (``POST http://host/api/v1/memory/changes``), which a server must accept
   (RFC 9112, 3.2.2), was a 404 for every route: uvicorn took the whole URL for the path.
"""
from __future__ import annotations

import json
import socket

import httpx
import pytest
from served import raw

from simkit.service import DEV_SCOPE
from simkit.service.config import build_service
from simkit.service.http import create_app, running
from simkit.service.server import MAX_HEADER_BYTES

READ = "/api/v1/memory/checkpoints/read"


@pytest.fixture(scope="module")
def served():
    svc, _ = build_service()
    with running(create_app(svc)) as url:
        yield svc, int(url.rsplit(":", 1)[1])


def _half_sent(port: int, header: str) -> bytes:
    """What the server answers a request whose headers are still arriving past ``header``, more than the bound
    (all of it read by the server, so its close resets nothing), up to its close."""
    start = f"POST {READ} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{header}"
    with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
        s.sendall(start.encode())
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def _error(reply: bytes) -> tuple[int, dict, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)["error"], head.decode().lower()


@pytest.mark.parametrize("header", [f"Authorization: Bearer {'x' * 17_000}",
                                    f"X-Padding: {'a' * 17_000}"], ids=["long credential", "long header"])
def test_headers_past_the_bound_are_a_400_naming_it_not_invalid_http(served, header):
    svc, port = served
    before = svc.state_digest()
    status, error, head = _error(_half_sent(port, header))
    assert (status, error["code"]) == (400, "request_header_too_large"), error
    assert error["message"] == (f"the request line and headers exceed the limit of {MAX_HEADER_BYTES} bytes "
                                f"(16 KiB); send shorter headers")
    assert "cache-control: no-store" in head and "connection: close" in head
    assert svc.state_digest() == before
    status, error, _head = _error(raw(port, b"GARBAGE\r\n\r\n", 15)[0])     # garbage is still garbage
    assert (status, error["code"]) == (400, "malformed_request")


def test_the_append_body_the_openapi_document_calls_required_is_not_required():
    """``POST /_simkit/append`` without a body appends a ``created`` ``note`` to the dev journal (every field
    is optional, the body too), but the OpenAPI document said its body was required: schemathesis sent none as
    an invalid request and got a 200 (ST201)."""
    svc, _ = build_service(operator="ops")
    app = create_app(svc, admin=True)
    body = app.openapi()["paths"]["/_simkit/append"]["post"]["requestBody"]
    assert body["required"] is False
    with running(app) as url:
        r = httpx.post(f"{url}/_simkit/append", headers={"Authorization": "Bearer ops"})
    assert r.status_code == 200 and r.json()["entry"]["record_id"] == "note", r.text


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_api_doc_pages_answer_head_as_get(page):
    """``HEAD /docs`` and ``HEAD /redoc`` were a 405 ("use GET") where ``GET`` served the page and ``HEAD
    /openapi.json`` its headers: a server supports both methods (RFC 9110, 9.1)."""
    app = create_app(build_service()[0])
    with running(app) as url:
        got, head = httpx.get(url + page), httpx.head(url + page)
    assert (got.status_code, head.status_code) == (200, 200), head.text
    assert head.headers["content-type"] == got.headers["content-type"] and head.content == b""
    assert head.headers["cache-control"] == "no-store"


def test_a_backup_and_a_restore_share_the_stored_receipts_instead_of_copying_them():
    """A backup deep-copied every checkpoint receipt and memory-mutation receipt, under the lock that serves
    every request, and a restore did it again: about 20 µs a receipt (500,000: 9.7 s to back up, 10.2 s to
    restore), the server deaf meanwhile. A stored receipt is never changed in place (every call answers a
    deep copy), so both now cost a dict of references (measured in memory here, 8,000 receipts of
    each kind: far below the 20 MB the deep copies took)."""
    import copy
    import tracemalloc

    from simkit.service import DEV_SCOPE
    svc, _ = build_service()
    cursor = svc.journals[("tenant", tuple(DEV_SCOPE.values()))].cursor(1, 1)
    write = {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": "k",
                                             "consumer_id": "cc", "expected_revision": 0, "cursor": cursor}}
    assert svc.call("/api/v1/memory/checkpoints", "Bearer dev", json.dumps(write).encode()).status == 200
    svc.mutate("tenant", DEV_SCOPE, "created", "n", idempotency_key="m")
    (rkey, row), (mkey, mrow) = next(iter(svc.receipts.items())), next(iter(svc.mutations.items()))
    for i in range(8_000):       # as many written receipts would hold, without 8,000 calls' time
        svc.receipts[rkey[:2] + (f"k{i}",)] = copy.deepcopy(row)
        svc.mutations[mkey[:2] + (f"m{i}",)] = copy.deepcopy(mrow)
    before = svc.state_digest()
    tracemalloc.start()
    try:
        backup = svc.backup()
        svc.mutate("tenant", DEV_SCOPE, "created", "after-the-backup", idempotency_key="later")
        svc.restore(backup)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000, peak
    assert svc.state_digest() == before          # the restore put back exactly what the backup held
    again = svc.call("/api/v1/memory/checkpoints", "Bearer dev", json.dumps(write).encode())
    assert again.status == 200 and again.body["receipt"] == row[1]      # the identical retry: its receipt
    again.body["receipt"]["checkpoint"]["revision"] = 99          # a caller's copy, not the stored one
    assert svc.state_digest() == before and svc.restore(backup) is None and svc.state_digest() == before


def _read(target: str) -> bytes:
    body = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "cc"}).encode()
    return (f"POST {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer dev\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


@pytest.mark.parametrize("target", ["http://127.0.0.1:8004/api/v1/memory/checkpoints/read",
                                    "HTTPS://user@example/api/v1/memory/checkpoints/read?x=1"])
def test_a_target_in_absolute_form_names_its_path(served, target):
    """A server must accept a request target in absolute form (RFC 9112, 3.2.2); uvicorn took the whole URL
    for the path, and ``POST http://127.0.0.1:8004/api/v1/memory/checkpoints/read`` was a 404 ``no route POST
    /http://127.0.0.1:8004/...``."""
    svc, port = served
    before = svc.state_digest()
    status, error, _head = _error(raw(port, _read(target), 15)[0])
    assert (status, error["code"]) == (404, "checkpoint_not_found"), error      # the route: absent progress
    status, error, _head = _error(raw(port, _read("http://x/api/v1/memory/checkpoints%2Fread"), 15)[0])
    assert (status, error["code"]) == (404, "route_not_found")      # an encoded slash still separates nothing
    assert svc.state_digest() == before
