"""Issue 20, hardening ``simkit serve``: the operator routes need an operator, a rejected caller's fault
header corrupts nothing, and input errors (nested JSON, a binary or nested config, a half-sent request) are
answered, not crashed on.

Principle: a request the service rejects changes no state. Every check reads state back through the seed's own
routes over a real HTTP connection, as a client would, and also compares the model's ``state_digest``.
"""
from __future__ import annotations

import copy
import json
import socket
import subprocess
import sys
import time

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from served import over, shared_server  # noqa: F401 -- the fixture over uses

from simkit.cli import main
from simkit.service import DEV_SCOPE, DEV_TENANT, dev_service
from simkit.service import server as service_server
from simkit.service.config import FaultSpec, build_service, has_operator, parse_fault
from simkit.service.contract import FAULT_KINDS, FAULT_OPS, MAX_JSON_DEPTH, MAX_REQUEST_BYTES
from simkit.service.http import create_app, running
from simkit.service.transport import HttpTransport, ReplyLost

CHANGES, READ, WRITE = (
    "/api/v1/memory/changes",
    "/api/v1/memory/checkpoints/read",
    "/api/v1/memory/checkpoints",
)
QUERY = "/api/v1/memory/query"
OP = {CHANGES: "changes", QUERY: "query", READ: "read", WRITE: "write"}
BACKUP, RESTORE, APPEND = "/_simkit/backup", "/_simkit/restore", "/_simkit/append"
OPS = {"Authorization": "Bearer ops"}


def bearer(token):
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def cursor(svc, seq):
    return svc.journals[(DEV_TENANT, tuple(DEV_SCOPE.values()))].cursor(seq, 1)


def write_body(svc, seq, expected, key, consumer="cc"):
    return {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": key,
                                            "consumer_id": consumer,
                                            "expected_revision": expected, "cursor": cursor(svc, seq)}}


def read_body(consumer="cc"):
    return {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": consumer}


def changes_body(limit=256):
    return {"contract_version": 1, "scope": DEV_SCOPE,
            "query": {"after": None, "through": None, "limit": limit}}


def assert_error(r, status, code=None):
    """The documented error reply: ``{"error": {status, code, message}}`` and ``Cache-Control: no-store``."""
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["cache-control"] == "no-store"
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"status", "code", "message"}, body
    assert body["error"]["status"] == status and isinstance(body["error"]["message"], str)
    if code is not None:
        assert body["error"]["code"] == code, body


# -- 1. the operator routes ----------------------------------------------------------------------------------
@pytest.fixture
def operated():
    """A server with the operator routes on and subject ``ops`` (credential ``ops``) the operator. Before the
    test: dev's checkpoint at sequence 2 (revision 1), backup 1, then dev's checkpoint at sequence 4 (revision
    2)."""
    svc = dev_service()
    svc.add_subject("ops", credentials=["ops"], roles=["operator"])
    svc.add_subject("admin", credentials=["admin"], tenant_admin=True)
    svc.grant("admin", DEV_SCOPE, ["tenant_admin"])
    svc.add_credential("ops-old", "ops")
    svc.revoke("ops-old")
    with running(create_app(svc, admin=True)) as url, httpx.Client(base_url=url, timeout=10) as c:
        dev = bearer("dev")
        assert c.post(WRITE, json=write_body(svc, 2, 0, "k1"), headers=dev).status_code == 200
        assert c.post(BACKUP, headers=OPS).json() == {"backup": 1}
        assert c.post(WRITE, json=write_body(svc, 4, 1, "k2"), headers=dev).status_code == 200
        yield svc, c


def observed(svc, c):
    """What the seed's routes show dev (its checkpoint, the whole journal), and the model's digest."""
    dev = bearer("dev")
    return (c.post(READ, json=read_body(), headers=dev).json(),
            c.post(CHANGES, json=changes_body(), headers=dev).json(), svc.state_digest())


OPERATOR_CALLS = [(BACKUP, None), (RESTORE, {"backup": 1}),
                  (APPEND, {"tenant": DEV_TENANT, "scope": DEV_SCOPE, "kind": "deleted",
                            "record_id": "note-1"})]


@pytest.mark.parametrize("route, body", OPERATOR_CALLS, ids=["backup", "restore", "append"])
@pytest.mark.parametrize("token, status, code", [
    (None, 401, "unauthenticated"), ("nope", 401, "invalid_credential"),
    ("ops-old", 401, "revoked_credential"), ("dev", 403, "forbidden"), ("admin", 403, "forbidden"),
], ids=["no-token", "invalid", "revoked-operator", "dev", "tenant-admin"])
def test_operator_route_refuses_a_caller_without_the_operator_role_and_changes_nothing(
    operated, route, body, token, status, code
):
    svc, c = operated
    before = observed(svc, c)
    assert before[0]["checkpoint"]["revision"] == 2 and before[1]["high_watermark"]["sequence"] == 5
    r = c.post(route, json=body, headers=bearer(token))
    assert_error(r, status, code)
    assert observed(svc, c) == before                                    # no rollback, no entry
    assert c.post(BACKUP, headers=OPS).json() == {"backup": 2}           # and no backup was taken


def test_operator_path_backs_up_appends_and_restores(operated):
    svc, c = operated
    dev = bearer("dev")
    entry = c.post(APPEND, json={"record_id": "note-9", "kind": "updated"}, headers=OPS)
    assert entry.status_code == 200 and entry.headers["cache-control"] == "no-store"
    assert entry.json()["entry"]["cursor"]["sequence"] == 6 and entry.json()["entry"]["author"] == "operator"
    assert c.post(CHANGES, json=changes_body(), headers=dev).json()["changes"][-1]["record_id"] == "note-9"
    assert c.post(RESTORE, json={"backup": 1}, headers=OPS).json() == {"restored": 1}
    assert c.post(READ, json=read_body(), headers=dev).json()["checkpoint"]["revision"] == 1  # rolled back
    assert c.post(CHANGES, json=changes_body(), headers=dev).json()["high_watermark"]["sequence"] == 5


@pytest.mark.parametrize("body, code", [
    ({"record_id": "x" * 129}, "malformed_identity"),                   # the identity rule: 1-128 UTF-8 bytes
    ({"record_id": "é" * 65}, "malformed_identity"),                    # 130 bytes
    ({"record_id": 7}, "malformed_identity"),                           # was appended as "7"
    ({"record_id": {"nested": True}}, "malformed_identity"),
    ({"record_id": "a\nb"}, "malformed_identity"),
    ({"record_id": " "}, "malformed_identity"),
    ({"tenant": ""}, "malformed_identity"),
    ({"scope": {"project_id": "p"}}, "missing_field"),
    ({"kind": "exploded"}, "malformed_kind"),
    ({"record": "typo"}, "unknown_field"),
], ids=lambda v: json.dumps(v)[:40] if isinstance(v, dict) else v)
def test_operator_append_checks_its_body_like_the_seeds_identities(operated, body, code):
    svc, c = operated
    before = observed(svc, c)
    assert_error(c.post(APPEND, json=body, headers=OPS), 400, code)
    assert observed(svc, c) == before


@pytest.mark.parametrize("body", [{"backup": True}, {"backup": "1"}, {"backup": 0}, {"backup": 2}, {},
                                  {"backup": 1, "also": 2}])
def test_operator_restore_needs_the_number_of_a_backup_taken(operated, body):
    """``{"backup": true}`` restored backup 1 (``isinstance(True, int)``)."""
    svc, c = operated
    before = observed(svc, c)
    assert_error(c.post(RESTORE, json=body, headers=OPS), 400)
    assert observed(svc, c) == before


def test_operator_routes_are_absent_unless_switched_on():
    """``create_app`` without ``admin`` (and ``simkit serve`` without an operator) has no /_simkit routes."""
    svc = dev_service()
    app = create_app(svc)
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        for route, body in OPERATOR_CALLS:
            assert_error(c.post(route, json=body, headers=bearer("dev")), 404, "route_not_found")
    assert not [p for p in app.openapi()["paths"] if p.startswith("/_simkit")]


def test_operator_routes_are_in_the_openapi_document_with_their_credential():
    doc = create_app(dev_service(), admin=True).openapi()
    for path in (BACKUP, RESTORE, APPEND):
        op = doc["paths"][path]["post"]
        assert op["security"] == [{"HTTPBearer": []}] and "operator role" in op["description"]
        assert {"200", "400", "401", "403", "413"} <= set(op["responses"])
    body = doc["paths"][APPEND]["post"]["requestBody"]["content"]["application/json"]["schema"]
    record = body["properties"]["record_id"]
    assert (record["minLength"], record["maxLength"]) == (1, 128)


def _serve(*flags):
    proc = subprocess.Popen([sys.executable, "-m", "simkit", "serve", "--port", "0", "--log-level", "warning",
                             *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, line


@pytest.mark.parametrize("flags", [[], ["--operator", "ops-secret"]], ids=["default", "--operator"])
def test_simkit_serve_has_operator_routes_only_with_operator(flags):
    proc, line = _serve(*flags)
    try:
        assert line.startswith("simkit serve: http://127.0.0.1:"), \
            (line, proc.stderr.read() if proc.poll() is not None else "")
        assert ("operator routes /_simkit/* on" in line) == bool(flags)
        with httpx.Client(base_url=line.split()[2], timeout=10) as c:
            no_token = c.post(BACKUP)
            if not flags:
                assert_error(no_token, 404, "route_not_found")
                assert_error(c.post(BACKUP, headers=bearer("dev")), 404, "route_not_found")
                return
            assert_error(no_token, 401, "unauthenticated")
            assert_error(c.post(BACKUP, headers=bearer("dev")), 403, "forbidden")
            assert c.post(BACKUP, headers=bearer("ops-secret")).json() == {"backup": 1}
            assert BACKUP in c.get("/openapi.json").json()["paths"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def test_config_file_roles_make_an_operator(tmp_path):
    from simkit.service.config import build_service, has_operator
    cfg = tmp_path / "serve.toml"
    cfg.write_text('[[subjects]]\nid = "ops"\ncredentials = ["ops"]\nroles = ["operator"]\n')
    assert not has_operator(build_service()[0])
    svc, _ = build_service(config=str(cfg))
    assert has_operator(svc) and svc.subjects["ops"].roles == {"operator"}
    assert svc.subjects["dev"].roles == {"inject_faults"}
    assert main(["serve", "--port", "0", "--operator", "dev"]) == 2        # dev's credential is dev's


# -- 2. a fault header from a caller the service rejects -----------------------------------------------------
@pytest.fixture(params=["model", "http"])
def transport(request):
    """The owner ``dev`` with a checkpoint; ``bob`` with a checkpoint and no
    grant any more; ``eve`` in the same tenant without any grant; ``alice``
    granted but without the ``inject_faults`` role; ``dev-old`` revoked."""
    svc = dev_service()
    svc.add_credential("dev-old", "dev")
    svc.revoke("dev-old")
    svc.add_subject("eve", credentials=["eve"])
    for sid in ("alice", "bob"):
        svc.add_subject(sid, credentials=[sid])
        svc.grant(sid, DEV_SCOPE, ["memory_read", "memory_checkpoint"])
    with over(request, svc) as t:
        yield svc, t


@pytest.mark.parametrize("credential, status", [(None, 401), ("nope", 401), ("dev-old", 401), ("eve", 403),
                                                 ("bob", 403), ("alice", 403)])
@pytest.mark.parametrize("fault", ["corrupt-checkpoint", "corrupt-journal", "lose-reply",
                                   "corrupt-checkpoint,nope"])
def test_a_rejected_callers_fault_header_changes_nothing(transport, credential, status, fault):
    svc, t = transport
    for sid in ("dev", "alice", "bob"):
        assert t.post(WRITE, write_body(svc, 2, 0, f"{sid}-1"), sid).status == 200
    svc.ungrant("bob", DEV_SCOPE)                          # bob's checkpoint stays; his grant is gone
    before = svc.state_digest()
    faults = tuple(fault.split(","))
    for route, body in ((READ, read_body()), (WRITE, write_body(svc, 3, 1, "x")), (CHANGES, changes_body())):
        r = t.post(route, body, credential, faults)        # never ReplyLost: a rejected reply is not dropped
        assert r.status == status, r.body
        assert r.body["error"]["code"] in ("unauthenticated", "invalid_credential", "revoked_credential",
                                           "forbidden")
    assert svc.state_digest() == before
    for owner in ("dev", "alice"):
        assert t.post(READ, read_body(), owner).status == 200
    assert t.post(CHANGES, changes_body(), "dev").status == 200
    svc.grant("bob", DEV_SCOPE, ["memory_read", "memory_checkpoint"])
    assert t.post(READ, read_body(), "bob").status == 200


def test_the_fault_role_lets_dev_still_inject_faults(transport):
    svc, t = transport
    assert t.post(WRITE, write_body(svc, 2, 0, "k1"), "dev").status == 200
    bad = t.post(READ, read_body(), "dev", ("explode",))
    assert bad.status == 400 and bad.body["error"]["code"] == "bad_fault"
    assert t.post(READ, read_body(), "dev").status == 200                 # the 400 changed nothing
    r = t.post(READ, read_body(), "dev", ("corrupt-checkpoint",))
    assert r.status == 500 and r.body["error"]["code"] == "integrity_failure"


def test_a_start_up_fault_counts_only_authorized_requests():
    """``--fault corrupt-checkpoint@read#1``: a rejected read neither gets the fault nor uses it up."""
    svc = dev_service()
    with running(create_app(svc, [FaultSpec("corrupt-checkpoint", "read", 1)])) as url:
        t = HttpTransport(url)
        try:
            assert t.post(WRITE, write_body(svc, 2, 0, "k1")).status == 200
            before = svc.state_digest()
            assert t.post(READ, read_body(), None).status == 401
            assert t.post(READ, read_body(), "nope").status == 401
            assert svc.state_digest() == before
            assert t.post(READ, read_body()).status == 500                # the first authorized read
            assert svc.state_digest() != before
        finally:
            t.close()


def query_body():
    return {"contract_version": 1, "scope": DEV_SCOPE,
            "filter": {"limit": 2, "scan_limit": 2, "next_after": None}}


@pytest.mark.parametrize("route, fault", [
    (QUERY, "corrupt-checkpoint"), (QUERY, "corrupt-journal"), (QUERY, "crash-mid-write"),
    (CHANGES, "corrupt-checkpoint"), (CHANGES, "crash-mid-write"), (READ, "corrupt-journal"),
    (READ, "crash-mid-write"),
    (WRITE, "corrupt-journal"), (QUERY, "lose-reply,corrupt-journal"),
    (CHANGES, "corrupt-journal,corrupt-checkpoint"),
])
def test_a_fault_the_route_cannot_honour_is_a_400_bad_fault_that_changes_nothing(transport, route, fault):
    """``corrupt-checkpoint`` or ``corrupt-journal`` to the memory query (or ``corrupt-checkpoint`` to the
    feed) got a 200 with nothing injected, while ``crash-mid-write`` to a wrong route got 400 ``bad_fault``:
    now every fault a route cannot honour is the 400, after authentication and authorization as before."""
    svc, t = transport
    assert t.post(WRITE, write_body(svc, 2, 0, "k1"), "dev").status == 200
    body = {CHANGES: changes_body(), QUERY: query_body(), READ: read_body(),
            WRITE: write_body(svc, 3, 1, "k2")}[route]
    before = svc.state_digest()
    faults = tuple(fault.split(","))
    r = t.post(route, body, "dev", faults)                             # never ReplyLost: the 400 is heard
    assert r.status == 400 and r.body["error"]["code"] == "bad_fault", r.body
    assert r.headers["cache-control"] == "no-store" and "applies to POST " in r.body["error"]["message"]
    # as before: 401/403 first
    for caller, status in ((None, 401), ("nope", 401), ("eve", 403), ("alice", 403)):
        assert t.post(route, body, caller, faults).status == status
    assert svc.state_digest() == before
    assert t.post(route, body, "dev").status == 200                    # the same request without the header


@pytest.mark.parametrize("route, fault", [(r, k) for r, op in OP.items() for k in FAULT_KINDS
                                          if op in FAULT_OPS[k]])
def test_a_fault_the_route_can_honour_is_injected(transport, route, fault):
    svc, t = transport
    assert t.post(WRITE, write_body(svc, 2, 0, "k1"), "dev").status == 200
    body = {CHANGES: changes_body(), QUERY: query_body(), READ: read_body(),
            WRITE: write_body(svc, 3, 1, "k2")}[route]
    try:
        r = t.post(route, body, "dev", (fault,))
    except ReplyLost:
        assert fault in ("lose-reply", "crash-mid-write")
        return
    assert fault.startswith("corrupt-") and r.status == 500 and r.body["error"]["code"] == "integrity_failure"


def test_a_start_up_fault_without_a_route_counts_only_the_routes_that_can_honour_it():
    """``--fault corrupt-checkpoint#2`` was the 2nd authorized request of any route: a feed page took it and
    it was never injected. Now it is the 2nd checkpoint read or write that reads a stored checkpoint (the
    first write stores one: nothing to corrupt); ``corrupt-journal`` is the feed's."""
    assert parse_fault("corrupt-journal#2") == FaultSpec("corrupt-journal", "changes", 2)
    svc = dev_service()
    with running(create_app(svc, [parse_fault("corrupt-checkpoint#2")])) as url:
        t = HttpTransport(url)
        try:
            assert t.post(WRITE, write_body(svc, 2, 0, "k1")).status == 200          # nothing stored before
            assert t.post(CHANGES, changes_body()).status == 200                     # not counted
            assert t.post(READ, read_body()).status == 200                           # 1st to read one
            assert t.post(QUERY, query_body()).status == 200                         # not counted
            r = t.post(READ, read_body())                                            # 2nd
            assert r.status == 500 and r.body["error"]["code"] == "integrity_failure"
        finally:
            t.close()


# -- 3. input errors -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server():
    """What ``simkit serve --operator ops`` serves (:func:`simkit.service.http.serve`), plus subject ``root``:
    an operator that may also inject faults. Yields the service, a client and the app."""
    svc, _ = build_service(operator="ops")
    svc.add_subject("root", credentials=["root"], roles=["operator", "inject_faults"])
    app = create_app(svc, admin=has_operator(svc))
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        yield svc, c, app


def nested(depth: int, opener: str = "[") -> bytes:
    if opener == "[":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("route, token", [(CHANGES, "dev"), (READ, "dev"), (WRITE, "dev"), (APPEND, "ops"),
                                          (RESTORE, "ops"), (BACKUP, "ops")])
@pytest.mark.parametrize("make", [
    lambda: nested(30_000),                                          # beyond the JSON parser's stack
    lambda: nested(10_000, "{"),                                     # 60 001 bytes: under the 64 KiB limit
    lambda: b'{"scope": ' + nested(2_000) + b"}",
    # parses; too deep all the same
    lambda: b'{"contract_version": ' + nested(MAX_JSON_DEPTH) + b', "scope": {}}',
], ids=["array-30000", "object-10000", "scope-2000", "depth-33"])
def test_deeply_nested_json_is_a_400_with_the_error_body(server, route, token, make):
    svc, c, _ = server
    before = svc.state_digest()
    r = c.post(route, content=make(), headers={**bearer(token), "Content-Type": "application/json"})
    assert_error(r, 400, "malformed_json")
    assert "nests arrays or objects more than 32 levels" in r.json()["error"]["message"]
    assert svc.state_digest() == before


def test_json_nested_within_the_limit_is_judged_by_the_contract(server):
    svc, c, _ = server
    body = b'{"contract_version": ' + nested(MAX_JSON_DEPTH - 1) + b', "scope": 1, "consumer_id": "c"}'
    r = c.post(READ, content=body, headers={**bearer("dev"), "Content-Type": "application/json"})
    assert_error(r, 400, "unsupported_contract")
    assert len(r.json()["error"]["message"]) < 200                   # the value is shown cut short


def test_an_error_echoing_a_huge_field_name_stays_short(server):
    svc, c, _ = server
    r = c.post(READ, json={**read_body(), "k" * 60_000: 1}, headers=bearer("dev"))
    assert_error(r, 400, "unknown_field")
    assert len(r.json()["error"]["message"]) < 200


@pytest.mark.parametrize("content, problem", [
    (b"\x00\xff\xfe\x89PNG binary", "not a UTF-8 text file (byte 1 is 0xff)"),
    (b"a = " + b"[" * 3000 + b"]" * 3000 + b"\n", "arrays or inline tables nested too deeply to read"),
    (b"a = " + b"{b = " * 3000 + b"1" + b"}" * 3000 + b"\n",
     "arrays or inline tables nested too deeply to read"),
    (b"a = \x00\n", "not valid TOML: "),
    (b"faults = " + b"[" * 100 + b"]" * 100 + b"\n",
     'faults: expected an array of strings like "lose-reply@write#2", got [[[[...]]]]'),
    (b'[[subjects]]\nid = "a"\ncredentials = ["' + b"x" * 5000 + b'", 1]\n',
     "subjects[0].credentials: expected an array"),
])
def test_a_bad_config_file_is_one_line_naming_file_and_problem_and_exit_2(tmp_path, capsys, content, problem):
    cfg = tmp_path / "serve.toml"
    cfg.write_bytes(content)
    assert main(["serve", "--config", str(cfg), "--port", "0"]) == 2
    captured = capsys.readouterr()
    assert (
        captured.out == "" and captured.err.startswith(f"simkit: {cfg}: ") and captured.err.count("\n") == 1
    )
    assert problem in captured.err and len(captured.err) < 300, captured.err


def _refused(*flags, stdin=None) -> str:
    """``simkit serve --port 0 FLAGS`` in a process held
    to 1 GiB of memory and 30 s: its one line (exit 2)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-m", "simkit", "serve", "--port", "0", "--log-level", "warning",
                           *flags],
                          capture_output=True, text=True, timeout=30, preexec_fn=limit, stdin=stdin)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr[-500:]
    return done.stderr


@pytest.mark.parametrize("path, kind", [("/dev/zero", "a character device"), ("fifo", "a FIFO"),
                                        (".", "a directory")])
def test_a_config_that_is_not_a_regular_file_is_refused_before_it_is_read(tmp_path, path, kind):
    """``--config /dev/zero`` read without end (3 GB in 10 s), and a FIFO hung waiting for a writer."""
    import os
    if path == "fifo":
        path = str(tmp_path / "serve.fifo")
        os.mkfifo(path)
    elif path == ".":
        path = str(tmp_path)
    assert _refused("--config",
                    path) == f"simkit: {path}: is {kind}, not a regular file; a config is a TOML file\n"


def test_a_config_file_larger_than_the_limit_is_refused(tmp_path):
    from simkit.service.config import MAX_CONFIG_BYTES
    cfg = tmp_path / "serve.toml"
    # valid TOML, just too much
    cfg.write_text("# a comment\n" * (MAX_CONFIG_BYTES // 12 + 1))
    assert _refused("--config", str(cfg)) == (f"simkit: {cfg}: larger than {MAX_CONFIG_BYTES} bytes (1 MiB), "
                                              f"the limit of a config file\n")
    cfg.write_text("# a comment\n" * (MAX_CONFIG_BYTES // 12 - 1))                    # under it: loads
    assert build_service(config=str(cfg))[0].subjects.keys() == {"dev"}


@pytest.mark.parametrize("route, token", [(CHANGES, "dev"), (QUERY, "dev"), (READ, "dev"), (WRITE, "dev"),
                                          (APPEND, "ops"), (BACKUP, "ops")])
@pytest.mark.parametrize("size", [MAX_REQUEST_BYTES + 1, 200_001, 2_000_000])
def test_the_413_says_the_limit_and_that_the_body_exceeds_it(server, route, token, size):
    """A 200,001-byte body was told "request body is 98304 bytes": the server had stopped reading there."""
    svc, c, _ = server
    before = svc.state_digest()
    r = c.post(route, content=b"{" + b" " * (size - 2) + b"}", headers=bearer(token))
    assert_error(r, 413, "request_too_large")
    assert (
        r.json()["error"]["message"]
        == f"request body exceeds the limit of {MAX_REQUEST_BYTES} bytes (64 KiB)"
    )
    assert svc.state_digest() == before


# -- 3b. a half-sent request is not held for ever ------------------------------------------------------------
@pytest.fixture
def quick_deadline(monkeypatch):
    monkeypatch.setattr(service_server, "REQUEST_TIMEOUT", 0.5)
    svc = dev_service()
    with running(create_app(svc)) as url:
        yield svc, int(url.rsplit(":", 1)[1])


def _closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closed ``sock`` (whatever it sent first); fails if it stays open."""
    sock.settimeout(seconds)
    start = time.monotonic()
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        pytest.fail(f"the connection was still open after {seconds}s")
    except ConnectionResetError:
        pass
    return time.monotonic() - start


@pytest.mark.parametrize("sent", [
    b"",  # connects, says nothing
    b"POST /api/v1/memory/checkpoints HTTP/1.1\r\nHost: x\r\nAuthoriz",                    # half the headers
    b"POST /api/v1/memory/checkpoints HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev\r\n"
    b"Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"scope\": ",              # half the body
], ids=["nothing", "half-headers", "half-body"])
def test_a_half_sent_request_is_cut_off_and_changes_nothing(quick_deadline, sent):
    svc, port = quick_deadline
    before = svc.state_digest()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(sent)
        assert _closed_within(sock, 5.0) < 3.0
    assert svc.state_digest() == before
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:  # and the server still serves
        assert c.post(CHANGES, json=changes_body(), headers=bearer("dev")).status_code == 200


def _reply(sock: socket.socket) -> tuple[bytes, bytes]:
    """One HTTP/1.1 reply with a Content-Length: (status line and headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or pytest.fail(f"closed mid-reply: {data!r}")
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536) or pytest.fail("closed mid-body")
    return head, body


def test_a_slow_request_that_arrives_within_the_deadline_is_served(quick_deadline):
    svc, port = quick_deadline
    body = json.dumps(changes_body(2)).encode()
    head = (f"POST {CHANGES} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev\r\nContent-Type: "
            f"application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for _ in range(2):                                          # twice on one keep-alive connection
            sock.sendall(head)
            time.sleep(0.2)
            sock.sendall(body)
            sock.settimeout(5)
            status, reply = _reply(sock)
            assert status.startswith(b"HTTP/1.1 200 ") and json.loads(reply)["complete"] is False, status
            time.sleep(0.3)  # idle between requests: not a half-sent one


# -- 4. random requests: a documented answer, never a 500; a rejected one changes nothing --------------------
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70)
                    | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=20), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)
ROUTES = [CHANGES, QUERY, READ, WRITE, BACKUP, RESTORE, APPEND]
#: ``X-Simkit-Fault`` values: mostly none, then known kinds, lists of them, unknown or blank ones
FAULT_HEADERS = st.one_of(
    st.none(), st.none(), st.none(), st.sampled_from(FAULT_KINDS),
    st.lists(st.sampled_from(FAULT_KINDS + ("nope", " ", "")), min_size=1, max_size=3).map(",".join),
    st.text("abcdefghijklmnopqrstuvwxyz-, ", max_size=16))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))


def _valid(draw, route) -> dict:
    """A valid body for ``route`` on the dev service (it may still meet a 404 or 409)."""
    n = draw(st.integers(0, 6))
    if route == CHANGES:
        return changes_body(draw(st.integers(1, 5)))
    if route == QUERY:
        return {
            "contract_version": draw(st.sampled_from([1, 2])),
            "scope": DEV_SCOPE,
            "filter": {
                "limit": draw(st.integers(1, 3)),
                "scan_limit": draw(st.integers(1, 4)),
                "next_after": draw(st.sampled_from([None, "archive-1", "archive-2", "note-1", "zzz"])),
            },
        }
    if route == READ:
        return read_body()
    if route == WRITE:
        return {
            "scope": DEV_SCOPE,
            "command": {
                "contract_version": 1,
                "consumer_id": "cc",
                "idempotency_key": f"k{n}",
                "expected_revision": draw(st.integers(0, 3)),
                "cursor": {"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": n},
            },
        }
    if route == APPEND:
        return {"record_id": f"note-{n}", "kind": draw(st.sampled_from(["created", "updated", "deleted"])),
                "idempotency_key": f"a{draw(st.integers(0, 3))}"}
    return {"backup": draw(st.integers(0, 3))} if route == RESTORE else {}


@st.composite
def requests(draw):
    """A route (the seed's four and the operator's three) and a raw body: arbitrary JSON, a valid body as is
    or with one value replaced, removed or added, or arrays/objects nested up to far past the limit."""
    route = draw(st.sampled_from(ROUTES))
    shape = draw(st.sampled_from(["random", "valid", "valid", "mutated", "mutated", "nested"]))
    if shape == "random":
        return route, json.dumps(draw(JSON)).encode()
    if shape == "nested":
        return route, nested(draw(st.integers(1, 40_000)), draw(st.sampled_from("[{")))
    body = copy.deepcopy(_valid(draw, route))
    path = draw(st.sampled_from(list(_paths(body)))) if shape == "mutated" else ()
    if path:
        parent = body
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(JSON)
        elif action == "remove":
            del parent[path[-1]]
        else:
            target = parent[path[-1]] if isinstance(parent[path[-1]], dict) else parent
            target[draw(st.text(max_size=12))] = draw(JSON)
    return route, json.dumps(body).encode()


def _honoured(route: str, kinds: list[str]) -> bool:
    """Whether ``route`` can honour every fault asked for: a seed route :data:`FAULT_OPS`'s, an operator route
    only ``lose-reply`` on ``/_simkit/append``."""
    if route in OP:
        return all(k in FAULT_KINDS and OP[route] in FAULT_OPS[k] for k in kinds)
    return route == APPEND and set(kinds) == {"lose-reply"}


DOCUMENTED = {path: {int(code) for code in item["post"]["responses"]}
              for path, item in create_app(dev_service(), admin=True).openapi()["paths"].items()}


@given(request=requests(), credential=st.sampled_from(["dev", "dev", "dev", None, "nope", "ops", "root"]),
       fault=FAULT_HEADERS)
@settings(max_examples=1000, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_random_requests_get_a_documented_answer_and_a_rejected_one_changes_nothing(
    server, request, credential, fault
):
    """Every route, the operator's included (with ``--operator``'s credential, dev's,
    root's: an operator that may inject faults), with and without ``X-Simkit-Fault``: the
    answer is a status the OpenAPI document lists for the route, a 500 only for a corruption
    asked for and a lost reply only when one was asked for, and never a 2xx for a fault the
    route cannot honour. A rejected request changes nothing (nor takes a backup)."""
    svc, c, app = server
    route, raw = request
    kinds = [] if fault is None else [k.strip() for k in fault.split(",") if k.strip()]
    corrupting = any(k.startswith("corrupt-") for k in kinds)
    before, backups, snapshot = (
        svc.state_digest(),
        len(app.state.backups),
        svc.backup() if corrupting else None,
    )
    headers = {**bearer(credential), "Content-Type": "application/json"}
    if fault is not None:
        headers["X-Simkit-Fault"] = fault.strip()  # a header value cannot start or end with a space
    try:
        try:
            r = c.post(route, content=raw, headers=headers)
        except (httpx.RemoteProtocolError, httpx.ReadError):
            assert {"lose-reply", "crash-mid-write"} & set(kinds) and _honoured(route, kinds), (route, fault)
            event(f"{route}: reply lost")
            return                                                 # it took effect; nobody heard
        event(f"{route}: {r.status_code}{' (fault asked)' if kinds else ''}")  # --hypothesis-show-statistics
        _check_answer(svc, app, route, kinds, r, before, backups)
    finally:
        if corrupting:
            svc.restore(snapshot)                                  # undo any corruption for the next example


def _check_answer(svc, app, route, kinds, r, before, backups) -> None:
    assert r.headers["cache-control"] == "no-store"
    assert r.status_code == 200 or r.status_code in DOCUMENTED[route] - {200}, (
        route,
        r.status_code,
        r.text[:300],
    )
    if kinds and not _honoured(route, kinds):
        assert 400 <= r.status_code < 500, (route, kinds, r.status_code, r.text[:300])
    injected = _honoured(route, kinds) and any(k.startswith("corrupt-") for k in kinds)
    if r.status_code == 500:
        assert_error(r, 500, "integrity_failure")
        assert injected, (route, kinds)
    elif r.status_code >= 400:
        assert_error(r, r.status_code)
        if injected and r.status_code in (404, 409):
            return  # the corruption came first, as asked (storage corrupted before the call), then this
        assert svc.state_digest() == before and len(app.state.backups) == backups, (
            r.status_code,
            r.text[:300],
        )
