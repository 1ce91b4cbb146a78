"""The service, thirteenth round of hostile input (hostile round 32, a fresh tester): seed 004's service as
its clients meet it.

Found: ``HttpTransport.post`` read a reply dripped a byte at a time for as long as it dripped (its
``timeout`` bounded each read alone: 100 bytes at 0.5 s took 50 s under a 2 s timeout, headers dripped
likewise), and read a reply of any size; a reply that is not the service's (a proxy's HTML 502) was a
``JSONDecodeError``, and a JSON array a ``Response`` whose body was a list; a server not listening (stopped,
restarting) was httpx's ``ConnectError``. The ``correct`` client, version 2, crashing after it applied a page
and before it saved it, across a restore, left the effects of the dropped history unreconciled
(``restore_from_backup --contract-version 2 --explore --horizon 6``: 26 of 418 schedules NOT ok): its
restored checkpoint was consistent and no 409 came, though the feed served, at a (journal, sequence) its
ledger held, an entry of another history. The checker counted a duplicate acknowledgment across a restore: a
lost write the restore rolled back, its identical retry a 409, the page then saved with a new key
(``restore_reused_numbers --contract-version 2 --explore --max-crashes 2 --horizon 4``: 21 of 395 NOT ok,
``duplicate_acks`` 1). docs/service.md said the feed's cursors survive a restart, and not that ``simkit
serve`` keeps its state in memory: after a restart a version 2 cursor is ``divergent_history``.

Held: every explored schedule of the ``correct`` client on the five scenarios, versions 1 and 2, up to 869 a
scenario (``--max-crashes 2 --lost-responses 2 --horizon 4``): after the fixes version 2 is always ok, and
version 1 fails only at its documented limit (new writes reusing sequence numbers after a restore); the
documented tables and explore counts unchanged. Identical retries after a credential rotation (the receipt),
a revocation (401), a withdrawn grant (403, no state changed); one key for another consumer or contract
version (409). A fence kept while writes land (the page stops at it, ``complete``); a version 2 cursor with
the right sequence and another position's history (409). One ``HttpTransport`` shared by 8 threads.
Every route's replies, the operator's too, versions 1 and 2, validate against the OpenAPI document. ``service
--explore`` at ``--horizon 0`` and ``10**23`` (its budget ends it), ``--budget`` 1e-300, inf and nan.

Left alone: a compressed reply (the transport asks for ``identity``) is a ``BadReply``; ``HttpTransport``
takes a number of seconds or None, not an ``httpx.Timeout``, and sets its deadline by replacing httpx's pool
(httpx's transport takes no network backend); ``simkit serve`` stays in memory (documented, not made
durable); the wrong clients inherit the version 2 reconciliation (``reset_on_409``, ``restore_from_backup``
version 2: ``unreconciled`` 4 to 1, still NOT ok; undocumented numbers); entry names keep the journal_id's
last four digits (one journal in the service world).

Each test names the exception, or the status, the client must see, or the verdict it must earn.
"""
from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import pytest

from simkit.service import transport as T

CHANGES = "/api/v1/memory/changes"


@contextmanager
def replying(script):
    """``url`` of a one-connection server that reads a request and then runs ``script(conn)``; the
    thread is joined on the way out (the socket closed first, so a script still sending stops)."""
    lsock = socket.create_server(("127.0.0.1", 0))
    conns: list[socket.socket] = []

    def serve():
        try:
            conn, _ = lsock.accept()
        except OSError:
            return
        conns.append(conn)
        with conn:
            data = b""
            while not _whole(data):             # the request read whole: a close with bytes unread is a reset
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            try:
                script(conn)
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{lsock.getsockname()[1]}"
    finally:
        lsock.close()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        thread.join(30)


def _whole(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
              if line.lower().startswith(b"content-length:")]
    return bool(sep) and len(body) >= (length[0] if length else 0)


def _post(url: str, timeout: float = 1.0):
    transport = T.HttpTransport(url, timeout=timeout)
    try:
        return transport.post(CHANGES, {})
    finally:
        transport.close()


def _drip(conn: socket.socket, data: bytes, seconds: float) -> None:
    """``data`` a byte every 0.1 s for ``seconds``, then the rest at once: a whole, valid reply."""
    end = time.monotonic() + seconds
    i = 0
    while i < len(data) and time.monotonic() < end:
        conn.sendall(data[i:i + 1])
        i += 1
        time.sleep(0.1)
    conn.sendall(data[i:])


BODY = b'{"contract_version": 1, "changes": [], "next_cursor": null, "high_watermark": null, "complete": 1}'
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)


# -- 1. the HTTP client's deadline ---------------------------------------------------------------------------
@pytest.mark.parametrize("dripped", ["body", "head"])
def test_a_reply_dripped_past_the_timeout_is_reply_lost(dripped):
    """A server that sends its reply a byte every 0.1 s (for 6 s, then the rest): ``HttpTransport(timeout=1)``
    read it all and answered 200, since httpx's timeout bounds each read alone (a drip of any length never
    ended). The transport's ``timeout`` is the call's: past it, ``ReplyLost``."""
    def script(conn):
        if dripped == "body":
            conn.sendall(HEAD)
            _drip(conn, BODY, 6)
        else:
            _drip(conn, HEAD + BODY, 6)

    with replying(script) as url:
        with pytest.raises(T.ReplyLost):
            _post(url)


def test_a_reply_within_the_timeout_is_read():
    """The deadline spares a reply that comes in time, dripped or not."""
    with replying(lambda conn: _drip(conn, HEAD + BODY, 0.3)) as url:
        r = _post(url, timeout=10)
    assert (r.status, r["complete"]) == (200, 1)


# -- 2. replies that are not the service's -------------------------------------------------------------------
def _reply(status: bytes, content_type: bytes, body: bytes):
    head = b"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (status, content_type,
                                                                                len(body))
    return lambda conn: conn.sendall(head + body)


@pytest.mark.parametrize("status,content_type,body,shown", [
    (b"502 Bad Gateway", b"text/html", b"<html><body>502 Bad Gateway</body></html>", "502 reply"),
    (b"200 OK", b"application/json", b"[1, 2]", "200 reply"),
    (b"200 OK", b"application/json", b"null", "200 reply"),
    (b"500 Internal Server Error", b"application/json", b"[" * 100_000 + b"]" * 100_000, "500 reply"),
], ids=["html-502", "array", "null", "nested"])
def test_a_reply_that_is_not_the_services_json_object_is_bad_reply(status, content_type, body, shown):
    """A proxy's HTML 502 was a ``JSONDecodeError`` out of ``HttpTransport.post`` (round 27 left it), a JSON
    array a ``Response`` whose ``body`` was a list (``r["error"]``: ``TypeError``), JSON nested past the
    stack a ``RecursionError``. Each is a ``BadReply`` (a ``ReplyLost``: the request may have taken effect,
    so the caller retries the identical command) naming the route, the status and what came."""
    with replying(_reply(status, content_type, body)) as url:
        with pytest.raises(T.BadReply) as err:
            _post(url)
    assert isinstance(err.value, T.ReplyLost)
    assert CHANGES in str(err.value) and shown in str(err.value), str(err.value)


def test_a_reply_past_the_bound_is_bad_reply():
    """A reply of any size was read whole into memory (a stream that never ends, for ever); past
    ``T.MAX_REPLY_BYTES`` it is a ``BadReply``, read no further."""
    def script(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                     % (4 * T.MAX_REPLY_BYTES))
        block = b" " * 65536
        for _ in range(4 * T.MAX_REPLY_BYTES // len(block)):
            conn.sendall(block)

    with replying(script) as url:
        with pytest.raises(T.BadReply) as err:
            _post(url, timeout=30)
    assert f"more than {T.MAX_REPLY_BYTES} bytes" in str(err.value)


# -- 3. the correct client, judged ---------------------------------------------------------------------------
def test_a_v2_client_that_crashed_before_saving_reconciles_effects_a_restore_dropped():
    """``restore_from_backup``, version 2, worker 1 crashing before its 6th checkpoint write: it had applied
    entries 10-13, read before the restore, and the restore (backup at 14 s) dropped them. Restarted, it read
    its restored checkpoint (sequence 9, consistent: no 409) and went on, its ledger's effects of the dropped
    history unreconciled (``unreconciled`` 0001:10-13, NOT ok). Seed 004: *"Restoring an older backup can put
    the server behind external consumer effects ... Reconcile those effects explicitly"*; version 2's
    exact-history cursor shows it: the feed serves, at (journal, 10), an entry of another history than the
    ledger's. The client reconciles there."""
    from simkit.service import run_service_scenario
    run = run_service_scenario("restore_from_backup", "correct", 2, crashes=[[1, "before_write", 6]])
    v = run.verdict
    assert (v.ok, v.unreconciled, v.lost) == (True, [], []), v
    assert [len(gone) for *_x, gone in run.world.reconciled] == [4]


def test_a_v1_client_keeps_its_documented_limit():
    """Version 1 keys an effect by (journal_id, sequence) alone: the same crash is its documented limit
    (docs/service.md: "version 1 cannot tell"), NOT ok as before."""
    from simkit.service import run_service_scenario
    v = run_service_scenario("restore_from_backup", "correct", 1, crashes=[[1, "before_write", 6]]).verdict
    assert not v.ok and v.unreconciled


def test_an_acknowledgment_a_restore_rolled_back_is_not_acknowledged_twice():
    """``restore_reused_numbers``, version 2, two crashes delaying the checkpoint's creation past the backup
    (14 s) and the reply to the write of cursor 9 lost: the restore (30 s) rolled that write back, receipt
    and all; the identical retry met a 409 (no checkpoint), the client reread (404) and created its checkpoint
    at cursor 9 with a new key. The checker counted that as the page acknowledged twice (``duplicate_acks`` 1,
    NOT ok), where ``broken_receipts`` and ``regressions`` already forget what a restore rolled back."""
    from simkit.service import run_service_scenario
    run = run_service_scenario("restore_reused_numbers", "correct", 2, lost_writes=[[1, 3]],
                               crashes=[[1, "after_apply", 1], [1, "after_apply", 3]])
    nines = [c.seq for *_x, c in run.world.calls if c is not None and c.after["cursor"]["sequence"] == 9]
    (restore, _at), = run.world.svc.restores
    assert len(nines) == 2 and nines[0] < restore < nines[1]          # saved, rolled back, saved again
    assert (run.verdict.ok, run.verdict.duplicate_acks) == (True, 0), run.verdict


def test_a_page_acknowledged_twice_without_a_restore_is_still_counted():
    """``new_key_retry``'s duplicate acknowledgments stay counted (docs/service.md: ``dup acks`` 2)."""
    from simkit.service import run_service_scenario
    assert run_service_scenario("checkpoint_service", "new_key_retry").verdict.duplicate_acks == 2


# -- 4. a client across a restart of simkit serve (docs/service.md, "Restarting it") ----------------------
def test_a_restart_is_a_new_service_v1_cursors_pass_v2_cursors_diverge():
    """``simkit serve`` holds its state in memory; docs/service.md said only that "cursors survive a restart"
    (of the feed it models), and a client's version 2 cursor met a 409 it was not told of. Two starts, as two
    ``build_service(WallClock())``: a version 1 cursor of the start-up journal is taken, a version 2 one is
    ``divergent_history`` (the entries' commit times are the new start's), as the docs now say."""
    from simkit.service import DEV_SCOPE
    from simkit.service.config import build_service
    from simkit.service.server import WallClock
    from simkit.service.transport import ModelTransport

    def page(svc, version):
        return ModelTransport(svc).post(CHANGES, {"contract_version": version, "scope": DEV_SCOPE,
                                                  "query": {"limit": 2}})

    first, _ = build_service(WallClock())
    v1, v2 = page(first, 1)["next_cursor"], page(first, 2)["next_cursor"]
    time.sleep(0.01)                                       # the next start's wall clock has moved
    second, _ = build_service(WallClock())
    assert page(second, 1).status == 200
    after = {"contract_version": 1, "scope": DEV_SCOPE, "query": {"after": v1}}
    assert ModelTransport(second).post(CHANGES, after).status == 200
    after = {"contract_version": 2, "scope": DEV_SCOPE, "query": {"after": v2}}
    r = ModelTransport(second).post(CHANGES, after)
    assert (r.status, r.body["error"]["code"]) == (409, "divergent_history"), r.body


def test_a_server_not_listening_is_reply_lost():
    """A client retrying across a restart of ``simkit serve`` meets a port nobody listens on: httpx's
    ``ConnectError`` came out of ``HttpTransport.post``, an exception no caller of a transport expects (round
    27 mapped ``ReadTimeout`` for the same reason). It is ``ReplyLost``, saying why: the caller's identical
    retry is right."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]                       # closed on leaving: nothing listens there
    with pytest.raises(T.ReplyLost) as err:
        _post(f"http://127.0.0.1:{port}")
    assert str(err.value).startswith(f"POST {CHANGES}: ConnectError: "), str(err.value)


def test_no_timeout_is_still_no_timeout():
    """``HttpTransport(url, timeout=None)`` is httpx's "no timeout"; the call's deadline keeps it so."""
    with replying(lambda conn: conn.sendall(HEAD + BODY)) as url:
        assert _post(url, timeout=None).status == 200
