"""The service, seventh round of hostile input: what a fresh tester tried past rounds 1-6. Each rejected
request is the service's error body, with ``Cache-Control: no-store``, and changes no state."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from served import raw

from simkit.service import DEV_SCOPE
from simkit.service.config import ServiceConfigError, build_service, has_operator, load_config
from simkit.service.http import create_app, running
from simkit.service.options import parse_grant_flag

READ, APPEND = "/api/v1/memory/checkpoints/read", "/_simkit/append"
BODY = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "cc"}).encode()


@pytest.fixture(scope="module")
def served():
    svc, _ = build_service(operator="ops")
    with running(create_app(svc, admin=has_operator(svc))) as url:
        yield svc, int(url.rsplit(":", 1)[1])


def _raw(port: int, data: bytes) -> bytes:
    """What the server answers ``data``, sent as it is on a fresh connection, up to its close."""
    return raw(port, data, 15)[0]


def _request(route: str, *headers: str, body: bytes = BODY) -> bytes:
    lines = [f"POST {route} HTTP/1.1", "Host: x", "Connection: close", *headers,
             f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _error(reply: bytes) -> tuple[int, dict, str]:
    head, _, body = reply.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return status, json.loads(body)["error"], head.decode().lower()


@pytest.mark.parametrize("route", [READ, APPEND])
def test_two_authorization_headers_are_a_401_that_changes_nothing(served, route):
    """``Authorization: Bearer dev`` and ``Authorization: Bearer nope``: the first was heard, the second
    ignored; a proxy that takes the last would have authenticated another subject. Now the lines are joined as
    HTTP combines a repeated field, and two credentials are a 401."""
    svc, port = served
    before = svc.state_digest()
    token = "ops" if route == APPEND else "dev"
    status, error, head = _error(_raw(port, _request(route, f"Authorization: Bearer {token}",
                                                     "Authorization: Bearer nope",
                                                     "Content-Type: application/json")))
    assert (status, error["code"]) == (401, "unauthenticated") and "cache-control: no-store" in head
    assert error["message"] == "two credentials: send one Authorization: Bearer <token>"
    assert svc.state_digest() == before


def test_two_content_types_are_a_400_after_the_credential(served):
    svc, port = served
    before = svc.state_digest()
    status, error, _head = _error(_raw(port, _request(READ, "Authorization: Bearer dev",
                                                      "Content-Type: application/json",
                                                      "Content-Type: text/plain")))
    assert (status, error["code"]) == (400, "malformed_content_type")
    assert "'application/json, text/plain'" in error["message"]
    status, error, _head = _error(_raw(port, _request(READ, "Content-Type: application/json",
                                                      "Content-Type: text/plain")))
    assert status == 401                        # the credential is judged first, as ever
    assert svc.state_digest() == before


@pytest.mark.parametrize("request_bytes", [
    _request(READ, "Authorization: Bearer dev", "Content-Length: 3", "Content-Type: application/json"),
    b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GARBAGE\r\n\r\n",
], ids=["two content-lengths", "raw non-ASCII target", "not HTTP"])
def test_a_request_that_is_not_http_gets_the_services_error_body(served, request_bytes):
    """uvicorn answered these with a bare ``text/plain`` 400 and no ``Cache-Control``: every other reply of
    the service is its JSON error body, no-store."""
    svc, port = served
    before = svc.state_digest()
    status, error, head = _error(_raw(port, request_bytes))
    assert (status, error) == (400, {"status": 400, "code": "malformed_request",
                                     "message": "the request is not valid HTTP/1.1"})
    assert "content-type: application/json" in head and "cache-control: no-store" in head
    assert svc.state_digest() == before


def test_a_config_key_of_50000_dotted_parts_is_one_line_at_once(tmp_path, monkeypatch):
    """tomllib's time is quadratic in a key's parts: 50,000 took 70 s to be read. Now tomllib never sees the
    text, and the refusal takes this process under 10 s of CPU time (no clock on the wall: a loaded machine
    does not fail it)."""
    import tomllib

    def parsed(*args, **kwargs):
        raise AssertionError("tomllib parsed the text")
    monkeypatch.setattr(tomllib, "loads", parsed)
    cfg = tmp_path / "serve.toml"
    cfg.write_text("[[subjects]]\n" + "a" + ".a" * 50_000 + " = 1\n")
    began = time.process_time()
    with pytest.raises(ServiceConfigError, match=r"serve\.toml: line 2: a key of more than 8 dotted parts"):
        load_config(str(cfg))
    assert time.process_time() - began < 10


@pytest.mark.parametrize("scope, problem", [
    ('{"project_id":"p","mission_id":null,"agent_id":"a","visibility":"shared","project_id":"q"}',
     "scope names 'project_id' twice"),
    ('{"project_id":NaN,"mission_id":null,"agent_id":"a","visibility":"shared"}', "scope is not JSON"),
])
def test_a_grant_scope_naming_a_key_twice_or_nan_is_refused(scope, problem):
    """``--grant dev=memory_read@{...}`` took the last of two ``project_id`` (a request body naming a key
    twice is a 400) and read ``NaN``."""
    with pytest.raises(ServiceConfigError, match=problem):
        parse_grant_flag(f"dev=memory_read@{scope}")


def test_a_single_credential_is_heard_as_before(served):
    svc, port = served
    reply = _raw(port, _request(READ, "Authorization: Bearer dev", "Content-Type: application/json"))
    assert reply.startswith(b"HTTP/1.1 404") and b"checkpoint_not_found" in reply
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
        assert c.post(READ, content=BODY, headers={"Authorization": "Bearer dev",
                                                   "Content-Type": "application/json"}).status_code == 404


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.parametrize("argv", [["serve", "--port", "0", "--log-level", "warning"],
                                  ["service", "checkpoint_service", "--explore", "--horizon", "100000"]],
                         ids=["serve", "service --explore"])
def test_a_signal_ends_serve_and_service_with_one_line(argv, sig):
    """The two commands of seed 004 had no test of their signals: each ends with one line and 128 + the
    signal, and ``serve`` frees its port."""
    proc = subprocess.Popen([sys.executable, "-m", "simkit", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = proc.stdout.readline() if argv[0] == "serve" else ""      # serving, or exploring, by now
        time.sleep(1.0)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    name = "interrupted" if sig == signal.SIGINT else f"terminated by {sig.name}"
    assert (proc.returncode, err) == (128 + sig, f"simkit: {name}\n")
    if argv[0] == "serve":
        port = int(first.split("http://127.0.0.1:")[1].split()[0])
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))                 # free again
