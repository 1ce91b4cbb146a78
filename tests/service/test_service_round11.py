"""The service, eleventh round of hostile input (hostile round 21, a fresh tester).

Found: a request pipelined behind one being answered, its body never sent, held its connection for ever
(uvicorn reads it once the reply before it is sent, where no deadline ran, and cancels its keep-alive timeout
there), as did a client that never reads its replies (``close`` waits for them to drain); a feed page verified
the whole journal up to its fence (1.5 s a page of a 100,000-change journal, the server deaf meanwhile), and a
memory query page sorted every record id of its namespace; ``%2F`` in a path was a separator
(``checkpoints%2Fread`` served as the read route, ``/_simkit%2Fbackup`` as the backup); a version 2 digest of
any 64 characters met a 409 where the OpenAPI pattern refuses it; ``Bearer dev`` followed by a no-break space
or NEL acted as ``dev``; a command without ``contract_version`` was ``got None``; a config's
``[subjects.grants]`` was told to be ``[[grants]]``, and a subject id or tenant with a control character or of
200 bytes was taken; a failing schedule printed by ``service --explore --json`` replayed without its faults
(lists never equal tuples) and was ok, and a hand-built ``ServiceScenario`` ran whatever it held (``limit=0``:
the correct client NOT ok; ``time_limit=inf``: no end).

Held: half-sent, trickled, oversized and chunked bodies (one chunk past 64 KiB, then 413); a chunked trailer
naming ``X-Simkit-Fault`` (ignored); a negative or doubled ``Content-Length``; ``Transfer-Encoding: gzip,
chunked``; 8,000 connections each holding half a request line (all cut at the deadline, a request meanwhile
answered at once); two spaces after ``Bearer``, ``bearer``/``BEARER``, ``Bearer DEV``, ``Basic``, a trailing
comma, two credentials joined; dot segments, doubled slashes, ``;params``, ``%00``, ``%5F`` (an unreserved
character: the same path) and absolute-form targets; traversal out of ``/_docs``; a ``Content-Type`` charset
other than UTF-8 (the body is read as UTF-8, RFC 8259); every ``simkit serve`` and ``simkit service`` flag
past its bounds and 20 malformed config files (one line, exit 2).

Left alone: a declared ``Content-Length`` over 64 KiB is answered 413 only once 64 KiB has come (or the
connection dropped at the deadline), and ``Expect: 100-continue`` is answered 100 first; ``Content-Encoding``
is ignored (a gzip body is a 400 "not JSON"); the operator's backups are kept without a bound; a correct
client given a ``time_limit`` too short to catch up is NOT ok (``completed`` false).

Each test names the status, or the line, the request must earn; a rejected request changes no state.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from served import raw

from simkit.service import DEV_SCOPE
from simkit.service.config import build_service
from simkit.service.contract import digest
from simkit.service.http import create_app, running

READ, WRITE = "/api/v1/memory/checkpoints/read", "/api/v1/memory/checkpoints"
CHANGES = "/api/v1/memory/changes"
JOURNAL = "00000000-0000-4000-8000-000000000001"


@pytest.fixture(scope="module")
def served():
    """``(svc, port)``: a server whose request deadline is 1 s."""
    svc, _ = build_service()
    with running(create_app(svc), request_timeout=1) as url:
        yield svc, int(url.rsplit(":", 1)[1])


def _request(path: str, body: bytes, length: int | None = None) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev\r\n"
            f"Content-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body


def _write(key: str, sequence: int) -> bytes:
    return json.dumps({"scope": DEV_SCOPE, "command": {
        "contract_version": 1, "idempotency_key": key, "consumer_id": "r21", "expected_revision": 0,
        "cursor": {"journal_id": JOURNAL, "sequence": sequence}}}).encode()


# -- 1. a pipelined request whose body never comes ----------------------------------------------------------
def test_a_pipelined_request_whose_body_never_comes_is_cut_off_at_the_deadline_and_changes_nothing(served):
    """A whole request, and behind it on the same connection a write whose body stops part way: the first is
    answered, the second is cut off at the deadline (1 s here), as a request sent alone is, and writes
    nothing. The connection was held for ever: the server reads a pipelined request only once the reply before
    it is sent, where no deadline ran, and uvicorn cancels its keep-alive timeout there."""
    svc, port = served
    before = svc.state_digest()
    read = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "r21"}).encode()
    body = _write("r21-pipelined", 1)
    reply, took = raw(port, _request(READ, read) + _request(WRITE, body[:20], len(body)))
    assert not reply.endswith(b"<kept open>") and took < 4, (took, reply[-80:])
    assert reply.count(b"HTTP/1.1 ") == 1 and b"checkpoint_not_found" in reply
    assert svc.state_digest() == before


def test_pipelined_requests_that_arrive_whole_are_all_answered(served):
    """The deadline of a pipelined request ends when it arrives whole: three reads on one connection, the last
    asking to close it, get three replies."""
    _svc, port = served
    read = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "r21"}).encode()
    last = _request(READ, read).replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
    reply, _took = raw(port, _request(READ, read) * 2 + last)
    assert reply.count(b"HTTP/1.1 404 ") == 3 and not reply.endswith(b"<kept open>")



def test_a_client_that_does_not_read_its_replies_is_dropped_at_the_deadline():
    """Pipelined feed pages of 80 KB each, none of their replies read: the server's writes back up, and once
    they have for the deadline (1 s here) the connection is dropped. It was held for ever, replies waiting
    to be sent (a ``close`` waits for them to drain)."""
    svc, _ = build_service()
    for i in range(256):
        svc.append("tenant", DEV_SCOPE, "updated", f"note-{i}")
    body = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "query": {"limit": 256}}).encode()
    with running(create_app(svc), request_timeout=1) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            s.settimeout(0.5)
            try:
                for _ in range(2000):
                    s.sendall(_request(CHANGES, body))
            except TimeoutError:
                pass                                    # the server stopped reading: its replies backed up
            time.sleep(2.5)
            s.settimeout(2)
            read, ended = 0, "kept open"
            try:
                while (chunk := s.recv(1 << 20)) and read < 50 << 20:
                    read += len(chunk)
                ended = "closed" if not chunk else "kept sending"
            except ConnectionResetError:
                ended = "closed"
            except TimeoutError:
                pass
    assert ended == "closed", (ended, read)

# -- 2. a feed page's cost ---------------------------------------------------------------------------------
def test_a_feed_page_verifies_the_entries_it_serves_not_the_journal_behind_it(monkeypatch):
    """A page of one entry from a journal of 2,000 computes a few digests, not two per entry up to the fence:
    each page verified the whole journal, so a page of the 100,000 changes a config may hold took 1.5 s with
    the server deaf to everyone else, and reading the feed through was quadratic. A corrupt entry still
    answers 500, with no partial page, on the page that would serve it."""
    import simkit.service.feed as feed
    svc, _ = build_service()
    for i in range(2000):
        svc.append("tenant", DEV_SCOPE, "updated", f"note-{i % 7}")
    calls = []
    monkeypatch.setattr(feed, "digest", lambda value: calls.append(1) or digest(value))
    body = json.dumps({"contract_version": 2, "scope": DEV_SCOPE, "query": {"limit": 1}}).encode()
    reply = svc.call(CHANGES, "Bearer dev", body)
    assert reply.status == 200 and len(reply.body["changes"]) == 1 and reply.body["complete"] is False
    assert len(calls) <= 4, len(calls)
    svc.corrupt_journal("tenant", DEV_SCOPE, 1)
    reply = svc.call(CHANGES, "Bearer dev", body)
    assert reply.status == 500 and reply.body["error"]["code"] == "integrity_failure"



def test_a_memory_query_page_does_not_sort_the_namespace_again(monkeypatch):
    """A scan of 2,000 records one candidate a page sorts their ids once, not once a page (a page cost the
    whole namespace, and the scan N²·log N), and records added between pages still come in id order; the
    pages are the same as before."""
    import simkit.service.memory as memory
    svc, _ = build_service()
    for i in range(2000):
        svc.append("tenant", DEV_SCOPE, "created", f"rec-{(i * 7919) % 2000:04d}")
    sorts = []
    monkeypatch.setattr(memory, "sorted", lambda items: sorts.append(1) or sorted(items), raising=False)
    seen, after = [], None
    while True:
        body = {"contract_version": 1, "scope": DEV_SCOPE, "filter": {"scan_limit": 1, "next_after": after}}
        page = svc.call("/api/v1/memory/query", "Bearer dev", json.dumps(body).encode()).body
        seen += [r["record_id"] for r in page["records"]]
        if len(seen) == 1000:
            svc.append("tenant", DEV_SCOPE, "created", "rec-0999~")     # sorts after the page just read
            svc.append("tenant", DEV_SCOPE, "created", "rec-0000~")     # sorts before it: never seen
        if page["next_after"] is None:
            break
        after = page["next_after"]
    assert len(sorts) <= 2, len(sorts)
    expected = sorted(rid for rid, r in svc.records[("tenant", tuple(DEV_SCOPE.values()))].items()
                      if r.available_to("dev") and rid != "rec-0000~")
    assert seen == expected

# -- 3. an encoded slash in the path ---------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/v1/memory/checkpoints%2Fread", "/api/v1/memory/checkpoints%2fread",
                                  "/api%2Fv1%2Fmemory%2Fchanges"])
def test_an_encoded_slash_is_no_route_404(served, path):
    """``%2F`` is data, not a separator (RFC 3986, 2.2): ``POST /api/v1/memory/checkpoints%2Fread`` is the
    service's 404 ``route_not_found``, naming the path as sent. It was served as the checkpoint read (uvicorn
    decodes the whole path), a route a proxy's rule by path prefix would not have recognised."""
    _svc, port = served
    read = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "r21"}).encode()
    closing = _request(path, read).replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
    reply, _took = raw(port, closing)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split()[1] == b"404", reply[:300]
    error = json.loads(body)["error"]
    assert error["code"] == "route_not_found" and "%2F" in error["message"], error


def test_an_encoded_slash_reaches_no_operator_route_and_changes_nothing():
    """``POST /_simkit%2Fbackup`` with the operator's credential is a 404 and takes no backup (it took one);
    ``/%5Fsimkit/backup``, an unreserved character encoded, is the same path as ``/_simkit/backup`` (RFC 3986,
    6.2.2.2) and is served."""
    svc, _ = build_service(operator="op-secret")
    app = create_app(svc, admin=True)
    with running(app) as url:
        port = int(url.rsplit(":", 1)[1])
        head = b"Host: x\r\nAuthorization: Bearer op-secret\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        reply, _took = raw(port, b"POST /_simkit%2Fbackup HTTP/1.1\r\n" + head)
        assert reply.split()[1] == b"404" and b"route_not_found" in reply and app.state.backups == []
        reply, _took = raw(port, b"POST /%5Fsimkit/backup HTTP/1.1\r\n" + head)
        assert reply.split()[1] == b"200" and len(app.state.backups) == 1


# -- 4. a digest the OpenAPI document refuses ------------------------------------------------------------
def _v2(svc, body: dict, route: str = WRITE):
    return svc.call(route, "Bearer dev", json.dumps(body).encode())


@pytest.mark.parametrize("spoil", [lambda d: d[:7] + d[7:].upper(), lambda d: "sha256:" + "\u00e9" * 64,
                                   lambda d: "sha256:" + "g" * 64], ids=["upper-case", "e-acute", "not-hex"])
def test_a_digest_that_is_not_lower_case_hex_is_a_400_as_the_openapi_document_says(spoil):
    """A version 2 ``history_digest`` or ``expected_digest`` of ``sha256:`` and 64 characters that are not
    lower-case hex digits (the right digest upper-cased, 64 ``é``) is a 400 naming the field, as the OpenAPI
    pattern ``^sha256:[0-9a-f]{64}$`` says; it is refused by that document and was accepted, to meet a 409
    ``divergent_history`` or ``digest_conflict``: a client told its history diverged reconciles for nothing.
    Nothing changes."""
    from simkit.service import schema as S
    svc, _ = build_service()
    page = _v2(svc, {"contract_version": 2, "scope": DEV_SCOPE, "query": {"limit": 2}}, CHANGES)
    at = page.body["next_cursor"]
    command = {"contract_version": 2, "idempotency_key": "r21-a", "consumer_id": "r21",
               "expected_revision": 0, "expected_digest": None, "cursor": at}
    made = _v2(svc, {"scope": DEV_SCOPE, "command": command})
    assert made.status == 200
    before = svc.state_digest()
    bad_cursor = {**at, "history_digest": spoil(at["history_digest"])}
    with pytest.raises(ValueError):
        S.Cursor.model_validate(bad_cursor)
    reply = _v2(svc, {"contract_version": 2, "scope": DEV_SCOPE, "query": {"after": bad_cursor}}, CHANGES)
    assert (reply.status, reply.body["error"]["code"]) == (400, "malformed_cursor"), reply.body
    assert "query.after.history_digest" in reply.body["error"]["message"]
    digest_now = made.body["receipt"]["checkpoint"]["checkpoint_digest"]
    advance = {**command, "expected_revision": 1, "expected_digest": digest_now}
    reply = _v2(svc, {"scope": DEV_SCOPE, "command": {**advance, "idempotency_key": "r21-b",
                                                      "cursor": bad_cursor}})
    assert (reply.status, reply.body["error"]["code"]) == (400, "malformed_cursor"), reply.body
    spoilt = {**advance, "idempotency_key": "r21-c", "expected_digest": spoil(digest_now)}
    reply = _v2(svc, {"scope": DEV_SCOPE, "command": spoilt})
    assert (reply.status, reply.body["error"]["code"]) == (400, "malformed_revision"), reply.body
    assert "command.expected_digest" in reply.body["error"]["message"]
    assert svc.state_digest() == before


# -- 5. a credential with a character HTTP does not call whitespace ---------------------------------------
@pytest.mark.parametrize("header", [b"Bearer dev\xa0", b"Bearer \xa0dev", b"Bearer dev\x85"],
                         ids=["no-break-space-after", "no-break-space-before", "next-line"])
def test_a_token_with_a_no_break_space_or_nel_is_401_invalid_credential_and_changes_nothing(served, header):
    """``Authorization: Bearer dev<NBSP>``: a header carries the byte 0xA0 (or 0x85) as a character, not as
    whitespace, so the token is not ``dev`` and no credential has it: 401 ``invalid_credential``. Python's
    ``str.strip()`` dropped it and the write was made as subject ``dev``. Spaces and tabs around the token are
    still HTTP's whitespace (``Bearer  dev`` is ``dev``)."""
    svc, port = served
    before = svc.state_digest()
    body = _write("r21-nbsp", 1)
    request = _request(WRITE, body).replace(b"Bearer dev", header).replace(b"Host: x\r\n",
                                                                          b"Host: x\r\nConnection: close\r\n")
    reply, _took = raw(port, request)
    head, _, answer = reply.partition(b"\r\n\r\n")
    assert head.split()[1] == b"401" and json.loads(answer)["error"]["code"] == "invalid_credential", reply
    assert svc.state_digest() == before
    read = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "r21"}).encode()
    request = _request(READ, read)
    reply, _took = raw(port, request.replace(b"Bearer dev", b"Bearer  dev\t").replace(
        b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n"))
    assert reply.split()[1] == b"404"


# -- 6. a command without its contract version -------------------------------------------------------------
def test_a_command_without_contract_version_is_400_missing_field_naming_it():
    """A checkpoint command with no ``contract_version`` is a 400 ``missing_field``, "command: missing field
    'contract_version'", as every other missing field is; it was ``unsupported_contract``, "... got None", a
    null the client never sent. A null one is still ``unsupported_contract``."""
    svc, _ = build_service()
    command = json.loads(_write("r21-v", 1))
    del command["command"]["contract_version"]
    reply = svc.call(WRITE, "Bearer dev", json.dumps(command).encode())
    assert reply.status == 400 and reply.body["error"]["code"] == "missing_field"
    assert reply.body["error"]["message"] == "command: missing field 'contract_version'"
    command["command"]["contract_version"] = None
    reply = svc.call(WRITE, "Bearer dev", json.dumps(command).encode())
    assert reply.body["error"]["code"] == "unsupported_contract" and reply.status == 400


# -- 7. a config's grants written as one table -----------------------------------------------------------
def test_a_grant_written_as_one_table_names_the_header_it_belongs_under(tmp_path):
    """``[subjects.grants]`` (one table) where ``[[subjects.grants]]`` is meant: one line, exit 2, whose fix
    is the header the file needs. It said ``([[grants]])``, a top-level key the config refuses."""
    path = tmp_path / "serve.toml"
    path.write_text('[[subjects]]\nid = "alice"\ncredentials = ["alice-token"]\n'
                    '[subjects.grants]\nscope = {project_id = "p"}\ncapabilities = ["memory_read"]\n')
    run = subprocess.run([sys.executable, "-m", "simkit", "serve", "--port", "0", "--config", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == "", run
    assert run.stderr.count("\n") == 1 and "([[subjects.grants]])" in run.stderr, run.stderr
    assert f"{path}: subjects[0]: grants: expected an array of tables" in run.stderr


# -- 8. a schedule replayed in the library ---------------------------------------------------------------
def test_the_failing_schedule_explore_prints_replays_as_printed_and_fails():
    """``simkit service --explore --json`` prints its first failing schedule in lists (``"lost_writes": [[1,
    2]]``); given as printed to :func:`run_service_scenario`, the schedule ran without its faults (a list
    never equals the tuple the world looks for) and the wrong client was judged ok. It is NOT ok, as it is
    with tuples."""
    from simkit.service.sim import run_service_scenario
    run = subprocess.run([sys.executable, "-m", "simkit", "service", "checkpoint_service", "--client",
                          "new_key_retry", "--explore", "--max-crashes", "0", "--json"],
                         capture_output=True, text=True, timeout=120)
    failing = json.loads(run.stdout)["explore"][0]["first_failing"]
    assert failing["lost_writes"] == [[1, 2]] and failing["ok"] is False
    replayed = run_service_scenario("checkpoint_service", "new_key_retry", lost_writes=failing["lost_writes"],
                                    crashes=failing["crashes"])
    assert replayed.verdict.ok is False and replayed.verdict.duplicate_acks == failing["duplicate_acks"]


@pytest.mark.parametrize("given, line", [
    ({"crashes": [(1, "after_effect", 1)]}, "crashes[0] (1, 'after_effect', 1): expected (worker, point, n)"),
    ({"crashes": [(3, "after_apply", 1)]},
     "crashes[0] (3, 'after_apply', 1): expected (worker, point, n) with worker 1-2"),
    ({"lost_writes": [(1, 0)]}, "lost_writes[0] (1, 0): expected (worker, n) with worker 1-2 and n a whole "
                                "number from 1"),
    ({"lost_writes": [2]}, "lost_writes[0] 2: expected (worker, n)"),
    ({"lost_writes": 2}, "lost_writes 2: a list of (worker, n)"),
    ({"version": True}, "version True: the contract versions are 1 and 2"),
    ({"version": 1.0}, "version 1.0: the contract versions are 1 and 2"),
], ids=["no-such-point", "no-such-worker", "zeroth-write", "not-a-pair", "not-a-list", "bool", "float"])
def test_a_fault_or_version_the_world_cannot_have_is_one_error_naming_the_parameter(given, line):
    """A crash at a point the world has not (``after_effect``), of a worker it has not, a lost reply to a
    0th write, or ``version=True``: one :class:`ServiceConfigError` naming the parameter. The faults were
    dropped without a word (the correct client ok, as if it survived them), ``lost_writes=2`` was a
    ``TypeError``, and ``version=True`` or ``1.0`` judged the correct client NOT ok."""
    from simkit.service.config import ServiceConfigError
    from simkit.service.sim import run_service_scenario
    with pytest.raises(ServiceConfigError) as raised:
        run_service_scenario("checkpoint_service", "correct", **given)
    assert str(raised.value).startswith(line) and raised.value.param == next(iter(given))


# -- 9. a scenario the world cannot run ------------------------------------------------------------------
@pytest.mark.parametrize("field, value, line", [
    ("limit", 0, "limit 0: a whole number 1-256"),
    ("version", 3, "version 3: the contract versions are 1 and 2"),
    ("workers", (), "workers (): a tuple of None (the client under test) or correct"),
    ("scan_limit", 0, "scan_limit 0: a whole number 1-4,096"),
    ("time_limit", float("inf"), "time_limit inf: simulated seconds, a finite number above 0"),
    ("append_every", 0, "append_every 0: simulated seconds, a finite number above 0"),
    ("call_latency", -1, "call_latency -1: simulated seconds, a finite number above 0"),
    ("time_limit", 10**6, "time_limit 1000000: at most 10,000 calls' time"),
    ("initial_changes", 10**7, "initial_changes 10000000: a whole number 0-2,000"),
    ("restore_at", 3.0, "backup_at None: simulated seconds, a finite number from 0"),
    ("server_crashes", ((1, "x"),), "server_crashes[0] (1, 'x'): expected (worker, n)"),
], ids=lambda v: str(v)[:20])
def test_a_scenario_the_world_cannot_run_is_one_error_naming_the_field(field, value, line):
    """A :class:`ServiceScenario` built with a field the world cannot honour is one
    :class:`ServiceConfigError` naming the field, before anything runs. ``limit=0`` and ``version=3`` halted
    the correct client on the service's own 400 (NOT ok); ``time_limit=inf`` and ``append_every=0`` never
    ended, a ``time_limit`` of a million calls nor 10 million ``initial_changes`` soon; a negative latency
    or a ``restore_at`` without ``backup_at`` was a bare ``ValueError`` or ``TypeError`` from SimPy; a
    malformed server crash was dropped."""
    from dataclasses import replace

    from simkit.service.config import ServiceConfigError
    from simkit.service.sim import SCENARIOS, run_service_scenario
    start = time.monotonic()
    with pytest.raises(ServiceConfigError) as raised:
        run_service_scenario(replace(SCENARIOS["checkpoint_service"], **{field: value}), "correct")
    assert str(raised.value).startswith(line), str(raised.value)
    assert raised.value.param == ("backup_at" if field == "restore_at" else field)
    assert time.monotonic() - start < 2


def test_every_bundled_scenario_passes_the_check_unchanged():
    """The check refuses nothing a bundled scenario holds, and changes nothing in it but lists to tuples."""
    from simkit.service.scenario_check import checked
    from simkit.service.sim import SCENARIOS
    for sc in SCENARIOS.values():
        assert checked(sc) == sc


# -- 10. a subject or tenant no request could name -------------------------------------------------------
@pytest.mark.parametrize("config, line", [
    ('[[subjects]]\nid = "a\\u0000b"\ncredentials = ["t"]\n', "subjects[0].id contains a control character"),
    ('[[subjects]]\nid = "a"\ntenant = "\\u0007"\ncredentials = ["t"]\n',
     "subjects[0].tenant contains a control character"),
    ('[[journals]]\ntenant = "  "\nscope = {project_id = "p"}\n', "journals[0].tenant is blank"),
    (f'[[subjects]]\nid = "{"s" * 129}"\ncredentials = ["t"]\n',
     "subjects[0].id must be 1-128 UTF-8 bytes, got 129"),
], ids=["nul-in-id", "bell-in-tenant", "blank-tenant", "long-id"])
def test_a_config_subject_or_tenant_no_request_could_name_is_one_line_and_exit_2(tmp_path, config, line):
    """A subject id or a tenant of the config (or ``--credential TOKEN=SUBJECT``) is held to the identity rule
    a request's ``private_to`` and ``tenant`` are (1-128 UTF-8 bytes, no control characters, not blank): one
    line naming the file and key, exit 2. It was taken, a subject or namespace no operator request could
    name."""
    from simkit.service.config import ServiceConfigError, build_service
    path = tmp_path / "serve.toml"
    path.write_text(config)
    with pytest.raises(ServiceConfigError) as raised:
        build_service(config=str(path))
    assert str(raised.value) == f"{path}: {line}"


def test_a_credential_flag_for_a_subject_no_request_could_name_is_refused():
    """``--credential tok=a<SOH>b``: one line naming the flag, exit 2, before it listens (it served)."""
    argv = [sys.executable, "-m", "simkit", "serve", "--port", "0", "--credential", "tok=a\x01b"]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == "simkit: --credential 'tok=a\\x01b': subject contains a control character\n"
