"""The service, twelfth round of hostile input (hostile round 27, a fresh tester).

Found: a ``Content-Length`` over 64 KiB was answered only once 64 KiB came (a client waiting for an answer
before sending was dropped at the deadline, answered nothing); a gzip body was "not JSON: 'utf-8' codec can't
decode byte 0x8b"; the operator's backups were kept without bound, each a deep copy (2.7 s and ~100 MB for a
100,000-entry journal, the server deaf meanwhile); the 404 left out the operator routes; ``expected_revision``
2**64 was "must be a non-negative integer"; an empty body was "Expecting value: line 1 column 1"; a half-sent
request held a stopping server up for the whole deadline; a flag put a credential the config file revoked back
in service; subject ids, tenants and ``private_to`` in NFD printed as others (a record private to nobody);
``HttpTransport`` raised httpx's ``ReadTimeout`` for a reply that never came; a body opening with a byte order
mark was told to "decode using utf-8-sig".

Held: twenty threads appending with one key and two bodies (one entry, the rest 409); forged, foreign, stale
and huge cursors (409 or 400, never a reset), version 1 and 2 cursors crossed; ``expected_revision`` and
sequences at 2**64-1; HEAD, OPTIONS, ``BREW``, ``OPTIONS *``, the HTTP/2 preface; 3,000 headers, a 100 KB
header, 100 fault headers, two ``Host`` lines, ``Transfer-Encoding: identity``, upgrade requests; 3,000 byte
ranges on a docs asset; percent-encoded route parts; ``--explore`` at its bounds (its budget ends it).

Left alone: an absolute-form target is a 404 (RFC 9112 asks servers to accept it; routing by its path would
let a proxy's prefix rule miss ``/_simkit``); obs-fold header lines are unfolded (RFC 9112 allows it); a
restore's receipts are still deep-copied (they can be corrupted in place); a non-JSON reply (a proxy's 502) is
a ``JSONDecodeError`` from ``HttpTransport``; idempotency and record ids are not held to NFC.

Each test names the status, or the line, the request must earn; a rejected request changes no state (the
service's ``state_digest`` before and after).
"""
from __future__ import annotations

import gzip
import json
import socket
import time

import pytest

from simkit.service import DEV_SCOPE
from simkit.service.config import build_service
from simkit.service.http import create_app, running

READ, WRITE = "/api/v1/memory/checkpoints/read", "/api/v1/memory/checkpoints"
CHANGES, QUERY = "/api/v1/memory/changes", "/api/v1/memory/query"
BACKUP, RESTORE, APPEND = "/_simkit/backup", "/_simkit/restore", "/_simkit/append"
JOURNAL = "00000000-0000-4000-8000-000000000001"


def _write(key: str, sequence: int, consumer: str = "r27", revision: int = 0) -> dict:
    return {"scope": DEV_SCOPE, "command": {
        "contract_version": 1, "idempotency_key": key, "consumer_id": consumer, "expected_revision": revision,
        "cursor": {"journal_id": JOURNAL, "sequence": sequence}}}


@pytest.fixture(scope="module")
def served():
    """``(svc, port)``: a server with operator ``ops`` whose request deadline is 3 s (a hang of the old code
    shows as a reply missing after 2 s of waiting, not as a slow test)."""
    svc, _ = build_service(operator="ops")
    with running(create_app(svc, admin=True), request_timeout=3) as url:
        yield svc, int(url.rsplit(":", 1)[1])


def _replies(port: int, data: bytes, count: int = 1, wait: float = 2) -> bytes:
    """What the server sends for ``data`` on a fresh connection until ``count`` whole JSON replies came (or
    ``wait`` seconds passed with nothing more: ``<no reply>``); the connection is then closed by us."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        out = b""
        try:
            while out.count(b"HTTP/1.1 ") < count or not out.endswith(b"}"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except TimeoutError:
            out += b"<no reply>"
    return out


def _head(path: str, token: str, length: int, *extra: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: x", f"Authorization: Bearer {token}",
             "Content-Type: application/json", f"Content-Length: {length}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# -- 1. a Content-Length over the bound is refused from the header ----------------------------------------
@pytest.mark.parametrize("path,token", [(READ, "dev"), (WRITE, "dev"), (BACKUP, "ops"), (APPEND, "ops")])
@pytest.mark.parametrize("extra", [(), ("Expect: 100-continue",)])
def test_a_declared_length_over_64_kib_is_a_413_before_the_body_is_read(served, path, token, extra):
    """Headers declaring 10 GB, the body not (yet) sent: the 413 comes at once, from the header, and changes
    nothing. The server waited for 64 KiB of body first, and a client that waits for an answer before it
    sends (``Expect: 100-continue`` is how it says so) got none: it was dropped at the request deadline."""
    svc, port = served
    before = svc.state_digest()
    out = _replies(port, _head(path, token, 10_000_000_000, *extra))
    assert out.startswith(b"HTTP/1.1 413 "), out[-300:]
    assert b'"code":"request_too_large"' in out and b"65536 bytes" in out
    assert b"100 Continue" not in out
    assert svc.state_digest() == before


def test_after_an_early_413_the_declared_body_is_skipped_and_the_connection_serves_the_next_request(served):
    """The 413 answered before the body leaves the body on the wire; the server skips it (within the request
    deadline) and reads the request after it on the same connection, as it did when it read the body first."""
    svc, port = served
    body = b"x" * 100_000
    nxt = b"POST /nope HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
    out = _replies(port, _head(CHANGES, "dev", len(body)) + body + nxt, count=2)
    assert out.startswith(b"HTTP/1.1 413 ") and b"HTTP/1.1 404 " in out, out[-300:]


# -- 2. the 404 names the operator routes the server has --------------------------------------------------
def test_the_404_of_a_server_with_operator_routes_names_them_too(served):
    """``POST /_simkit/backups`` (a typo) on a server with operator routes: the 404 listed only the four seed
    routes, as if ``/_simkit/backup`` did not exist; it now lists every POST route the server has."""
    svc, port = served
    out = _replies(port, _head("/_simkit/backups", "ops", 0))
    assert out.startswith(b"HTTP/1.1 404 "), out[-300:]
    message = json.loads(out.split(b"\r\n\r\n", 1)[1])["error"]["message"]
    for route in (BACKUP, RESTORE, APPEND, READ, WRITE, CHANGES, QUERY):
        assert f"POST {route}" in message, message


def test_the_404_of_a_server_without_operator_routes_does_not_name_them():
    """Without an operator the routes do not exist (docs/service.md), and the 404 does not offer them."""
    svc, _ = build_service()
    with running(create_app(svc)) as url:
        out = _replies(int(url.rsplit(":", 1)[1]), _head("/nope", "dev", 0))
    assert out.startswith(b"HTTP/1.1 404 ") and b"/_simkit" not in out and READ.encode() in out, out[-300:]


# -- 3. a body with a Content-Encoding ----------------------------------------------------------------------
@pytest.mark.parametrize("path,token,body", [(WRITE, "dev", _write("gz", 1)),
                                             (APPEND, "ops", {"record_id": "gz"}), (BACKUP, "ops", {})])
@pytest.mark.parametrize("coding", ["gzip", "br", "identity, gzip"])
def test_a_body_with_a_content_encoding_is_a_400_naming_the_header_and_changes_nothing(served, path, token,
                                                                                        body, coding):
    """A gzip body (or any coding the service does not decode) was answered "request body is not JSON:
    'utf-8' codec can't decode byte 0x8b", which names neither the header nor the fix; now the 400
    ``malformed_content_encoding`` names ``Content-Encoding`` and asks for the body unencoded, and changes
    nothing (judged after the credential, as the ``Content-Type`` is)."""
    svc, port = served
    before = svc.state_digest()
    data = gzip.compress(json.dumps(body).encode())
    out = _replies(port, _head(path, token, len(data), f"Content-Encoding: {coding}") + data)
    assert out.startswith(b"HTTP/1.1 400 "), out[-300:]
    error = json.loads(out.split(b"\r\n\r\n", 1)[1])["error"]
    assert error["code"] == "malformed_content_encoding" and "Content-Encoding" in error["message"], error
    assert svc.state_digest() == before
    wrong = _replies(port, _head(path, "nope", len(data), f"Content-Encoding: {coding}") + data)
    assert wrong.startswith(b"HTTP/1.1 401 "), wrong[-300:]


def test_an_identity_content_encoding_is_read_as_plain_json(served):
    """``Content-Encoding: identity`` is no coding at all (RFC 9110, 8.4.1): the body is read."""
    svc, port = served
    data = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "nobody"}).encode()
    out = _replies(port, _head(READ, "dev", len(data), "Content-Encoding: identity") + data)
    assert out.startswith(b"HTTP/1.1 404 ") and b"checkpoint_not_found" in out, out[-300:]


# -- 4. the operator's backups are bounded ----------------------------------------------------------------
def test_backups_past_the_count_bound_are_a_409_that_copies_nothing():
    """Every ``POST /_simkit/backup`` kept another copy of the stored data in memory, without bound: a loop
    of them filled the server's memory. Past ``MAX_BACKUPS`` (here lowered to 3) the backup is a 409
    ``backup_limit`` saying the bound, the stored data and the backups unchanged, and a backup still
    restores."""
    import httpx

    from simkit.service.admin import MAX_BACKUPS
    svc, _ = build_service(operator="ops")
    app = create_app(svc, admin=True)
    assert app.state.max_backups == MAX_BACKUPS == 32
    app.state.max_backups = 3
    auth = {"Authorization": "Bearer ops"}
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        assert [c.post(BACKUP, headers=auth).json() for _ in range(3)] == [{"backup": n} for n in (1, 2, 3)]
        before = svc.state_digest()
        r = c.post(BACKUP, headers=auth)
        assert r.status_code == 409 and r.json()["error"]["code"] == "backup_limit", r.text
        assert "at most 3 backups" in r.json()["error"]["message"]
        assert svc.state_digest() == before and len(app.state.backups) == 3
        assert c.post(RESTORE, headers=auth, json={"backup": 3}).status_code == 200


def test_a_backup_that_would_pass_the_bound_on_stored_values_is_a_409():
    """The count alone does not bound memory (a backup is as large as the stored data): the backups hold at
    most ``MAX_BACKUP_VALUES`` stored values together; the dev data holds 11 (5 journal entries and 6
    records)."""
    import httpx
    svc, _ = build_service(operator="ops")
    app = create_app(svc, admin=True)
    assert svc.stored_values() == 11
    app.state.max_backup_values = 30
    auth = {"Authorization": "Bearer ops"}
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        assert c.post(BACKUP, headers=auth).status_code == 200
        assert c.post(BACKUP, headers=auth).status_code == 200
        r = c.post(BACKUP, headers=auth)
        assert r.status_code == 409 and "22 values" in r.json()["error"]["message"], r.text
        assert len(app.state.backups) == 2


def test_a_backup_and_a_restore_of_a_long_journal_do_not_copy_its_entries():
    """A backup deep-copied every journal entry, under the lock that serves every request: 2.7 s and about
    100 MB for a 100,000-entry journal (the config's bound), the server deaf meanwhile, and a restore as much
    again. Entries are frozen values: the copies share them, and both cost a list of references (measured in
    memory here, 8,000 entries: far below the 6 MB the deep copies took)."""
    import tracemalloc

    from simkit.service import DEV_SCOPE
    svc, _ = build_service()
    for i in range(8_000):
        svc.append("tenant", DEV_SCOPE, "created", f"n{i % 100}")
    before = svc.state_digest()
    tracemalloc.start()
    try:
        backup = svc.backup()
        svc.append("tenant", DEV_SCOPE, "created", "after-the-backup")
        svc.restore(backup)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak
    assert svc.state_digest() == before          # the restore put back exactly what the backup held
    svc.corrupt_journal("tenant", DEV_SCOPE, 3)  # corrupting the live journal leaves the backup whole
    svc.restore(backup)
    assert svc.state_digest() == before


# -- 6. a revision past its bound is told the bound -------------------------------------------------------
@pytest.mark.parametrize("revision", [2**64, 10**30, -1, 1.0, True, "1"])
def test_an_expected_revision_out_of_range_is_a_400_that_says_the_range(revision):
    """``expected_revision`` 2**64 was refused as "must be a non-negative integer", which it is: the line
    did not say the bound it broke (an unsigned 64-bit integer, the OpenAPI document's ``maximum``)."""
    svc, _ = build_service()
    before = svc.state_digest()
    r = svc.call(WRITE, "Bearer dev", json.dumps(_write("rev", 1, revision=revision)).encode())
    assert r.status == 400 and r.body["error"]["code"] == "malformed_revision", r.body
    assert r.body["error"]["message"] == ("command.expected_revision must be an integer "
                                          "0-18446744073709551615 (unsigned 64-bit)")
    assert svc.state_digest() == before


# -- 7. an empty body says so -----------------------------------------------------------------------------
@pytest.mark.parametrize("version", [b"HTTP/1.1", b"HTTP/1.0"])
def test_an_empty_body_is_a_400_that_says_it_is_empty(served, version):
    """A POST with no body (``curl -X POST`` without ``-d``; HTTP/1.0 without a ``Content-Length``) was
    "request body is not JSON: Expecting value: line 1 column 1 (char 0)"; it now says the body is empty."""
    svc, port = served
    before = svc.state_digest()
    head = b"POST " + READ.encode() + b" " + version + b"\r\nHost: x\r\nAuthorization: Bearer dev\r\n"
    out = _replies(port, head + b"Content-Type: application/json\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 400 "), out[-300:]
    assert json.loads(out.split(b"\r\n\r\n", 1)[1])["error"] == {
        "status": 400, "code": "malformed_json", "message": "request body is empty; send a JSON object"}
    assert svc.state_digest() == before


# -- 8. the server's own shutdown -------------------------------------------------------------------------
def test_stopping_the_server_drops_a_half_sent_request_at_once_and_changes_nothing():
    """A write whose body is half sent when the server is told to stop (as ``SIGTERM`` does to ``simkit
    serve``): uvicorn waited for the body, so the server stayed up for the whole request deadline (60 s
    here; 10 s by default) after the signal. The connection is dropped at once now, and the write, which never
    arrived whole, changes nothing. (The 20 s timeout bounds a hang; the server stops in well under one.)"""
    svc, _ = build_service()
    before = svc.state_digest()
    body = json.dumps(_write("half", 1)).encode()
    with running(create_app(svc), request_timeout=60) as url:
        conn = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=20)
        conn.sendall(_head(WRITE, "dev", len(body)) + body[:20])
        time.sleep(0.2)                             # the server has read the headers and waits for the body
    try:
        assert conn.recv(65536) == b""              # closed by the server, no reply: the request never came
    except ConnectionResetError:
        pass                                        # aborted: as good
    except TimeoutError:
        pytest.fail("the connection is still open 20 s after the server was told to stop")
    finally:
        conn.close()
    assert svc.state_digest() == before


# -- 9. a credential the config file revoked ----------------------------------------------------------------
@pytest.mark.parametrize("flags,line", [
    (["--credential", "old=alice"], "--credential 'old=alice': credential 'old' is revoked in the config "
                                    "file (subject 'alice'); a credential is issued or revoked, not both"),
    (["--operator", "old"], "--operator 'old': credential 'old' is revoked in the config file (subject "
                            "'alice'); a credential is issued or revoked, not both"),
], ids=["credential", "operator"])
def test_a_flag_cannot_put_back_a_credential_the_config_file_revoked(tmp_path, flags, line):
    """``revoked = ["old"]`` in the file, then ``--credential old=alice``: the flag took the credential out of
    the revoked set, silently, and ``old`` authenticated again. ``simkit serve`` now refuses, one line naming
    the flag, exit 2, before it listens."""
    import subprocess
    import sys
    config = tmp_path / "serve.toml"
    config.write_text('[[subjects]]\nid = "alice"\ncredentials = ["new"]\nrevoked = ["old"]\n')
    done = subprocess.run([sys.executable, "-m", "simkit", "serve", "--port", "0", "--config", str(config),
                           *flags], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"simkit: {line}\n")


# -- 10. a subject or tenant that prints like another -------------------------------------------------------
NFD, NFC = "jose\u0301", "jos\u00e9"


def test_an_append_private_to_or_for_a_tenant_not_in_nfc_is_a_400_that_changes_nothing(served):
    """``private_to: "jose\\u0301"`` when the subject is ``"jos\\u00e9"``: the record was made private to a
    subject that does not exist, so visible to nobody, with a 200. Subject ids and tenants are held to NFC,
    as consumer ids are (they name checkpoints too): a 400 ``malformed_identity`` naming both forms."""
    import httpx
    svc, port = served
    ops = {"Authorization": "Bearer ops"}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
        for body, field in (({"record_id": "r", "private_to": NFD}, "private_to"),
                            ({"tenant": NFD}, "tenant")):
            before = svc.state_digest()
            error = c.post(APPEND, json=body, headers=ops).json()["error"]
            assert (error["status"], error["code"]) == (400, "malformed_identity"), error
            assert error["message"].startswith(f"{field} is not in Unicode normalization form NFC"), error
            assert svc.state_digest() == before
            assert c.post(APPEND, json={**body, field: NFC}, headers=ops).status_code == 200   # NFC: taken


@pytest.mark.parametrize("config,key", [
    (f'[[subjects]]\nid = "{NFD}"\ncredentials = ["j"]\n', "subjects[0].id"),
    (f'[[subjects]]\nid = "j"\ntenant = "{NFD}"\ncredentials = ["j"]\n', "subjects[0].tenant"),
])
def test_a_config_subject_or_tenant_not_in_nfc_is_refused(tmp_path, config, key):
    """A config subject ``"jose\\u0301"`` beside ``"jos\\u00e9"`` was a second subject printing as the first,
    with checkpoints of its own; now one line naming the file and key, as a consumer id would be."""
    from simkit.service.config import ServiceConfigError
    path = tmp_path / "serve.toml"
    path.write_text(config, encoding="utf-8")
    with pytest.raises(ServiceConfigError) as err:
        build_service(config=str(path))
    assert f"{key} is not in Unicode normalization form NFC" in str(err.value)


def test_a_credential_flag_for_a_subject_not_in_nfc_is_refused():
    """``--credential t=jose\\u0301``: refused with the subject's two forms, as the config file's subject."""
    from simkit.service.config import ServiceConfigError
    with pytest.raises(ServiceConfigError) as err:
        build_service(credentials=[f"t={NFD}"])
    assert "is not in Unicode normalization form NFC" in str(err.value)


# -- 11. the Python client's transport --------------------------------------------------------------------
def test_a_reply_that_never_comes_is_reply_lost_over_http():
    """A server that takes the request and never answers: ``HttpTransport.post`` raised httpx's
    ``ReadTimeout``, where the transport promises ``ReplyLost`` for a reply that never came (the request may
    have taken effect: the caller retries the identical command)."""
    from simkit.service.transport import HttpTransport, ReplyLost
    with socket.socket() as deaf:
        deaf.bind(("127.0.0.1", 0))
        deaf.listen(1)
        transport = HttpTransport(f"http://127.0.0.1:{deaf.getsockname()[1]}", timeout=0.5)
        try:
            with pytest.raises(ReplyLost):
                transport.post(WRITE, _write("deaf", 1))
        finally:
            transport.close()


# -- 12. a byte order mark ----------------------------------------------------------------------------------
def test_a_body_opening_with_a_byte_order_mark_is_read():
    """A body opening with a UTF-8 byte order mark was a 400 "Unexpected UTF-8 BOM (decode using
    utf-8-sig)", advice for Python, not for the caller; RFC 8259 (8.1) lets a parser ignore it, and the
    service's config file was already read so: the body is read."""
    from simkit.service import DEV_SCOPE
    svc, _ = build_service()
    body = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "nobody"}).encode()
    r = svc.call(READ, "Bearer dev", b"\xef\xbb\xbf" + body, content_type="application/json")
    assert (r.status, r.body["error"]["code"]) == (404, "checkpoint_not_found"), r.body
