"""The feed's own writes (feed-notes.md): "A mutation, its idempotency receipt and its journal entry commit
together; an identical command retry creates no second entry; rejected commands do not advance the journal."

The feed's write path is a memory mutation: :meth:`CheckpointService.mutate` in the model, ``POST
/_simkit/append`` over HTTP (an operator route). The HTTP tests lose a real reply (``X-Simkit-Fault:
lose-reply``: the connection closes mid-body) and retry the identical command.
"""
from __future__ import annotations

import httpx
import pytest

from simkit.service import DEV_SCOPE, DEV_TENANT, ServiceError, dev_service
from simkit.service.http import create_app, running

OTHER_SCOPE = {**DEV_SCOPE, "agent_id": "other-agent"}
CHANGES = "/api/v1/memory/changes"


def head(svc, scope=DEV_SCOPE):
    return svc.journals[(DEV_TENANT, tuple(scope.values()))].head


# -- the model -----------------------------------------------------------------------------------------------
def test_an_identical_retry_returns_the_original_entry_and_receipt_and_appends_nothing():
    svc = dev_service()
    first = svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    assert first["entry"]["cursor"]["sequence"] == 6 and set(first["receipt"]) == {
        "idempotency_key",
        "receipt_digest",
    }
    svc.clock.advance(5_000)
    # progress moves on
    svc.mutate(DEV_TENANT, DEV_SCOPE, "updated", "note-9", "writer", idempotency_key="m-2")
    retry = svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    assert retry == first                                         # the original, committed_at_millis included
    assert head(svc) == 7 and svc.records[(DEV_TENANT, tuple(DEV_SCOPE.values()))]["note-9"].revision == 2


@pytest.mark.parametrize("change", [{"record_id": "note-8"}, {"kind": "updated"}, {"private_to": "alice"}],
                         ids=repr)
def test_the_same_key_for_another_mutation_is_a_409_that_appends_nothing(change):
    svc = dev_service()
    svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    before = svc.state_digest()
    args = {"kind": "created", "record_id": "note-9", **change}
    with pytest.raises(ServiceError) as exc:
        svc.mutate(DEV_TENANT, DEV_SCOPE, args["kind"], args["record_id"], "writer", idempotency_key="m-1",
                   private_to=args.get("private_to"))
    assert (exc.value.status, exc.value.code) == (409, "idempotency_conflict")
    assert svc.state_digest() == before and head(svc) == 6


def test_without_a_key_every_mutation_is_a_new_entry():
    svc = dev_service()
    svc.append(DEV_TENANT, DEV_SCOPE, "created", "note-9")
    svc.append(DEV_TENANT, DEV_SCOPE, "created", "note-9")
    assert head(svc) == 7                                       # nothing to recognise a retry by


def test_keys_belong_to_one_author_and_namespace():
    svc = dev_service()
    a = svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "x", "writer", idempotency_key="k")
    b = svc.mutate(DEV_TENANT, OTHER_SCOPE, "created", "y", "writer", idempotency_key="k")
    c = svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "z", "another-writer", idempotency_key="k")
    assert [e["entry"]["cursor"]["sequence"] for e in (a, b, c)] == [6, 1, 7]


def test_a_restore_takes_back_the_entry_and_its_receipt_together():
    svc = dev_service()
    backup = svc.backup()
    svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    svc.restore(backup)
    assert head(svc) == 5 and not svc.mutations
    again = svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    assert again["entry"]["cursor"]["sequence"] == 6 and head(svc) == 6      # one entry, never two


def test_a_stored_mutation_receipt_that_no_longer_matches_its_digest_is_a_500():
    svc = dev_service()
    svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    (key, (fp, receipt)), = svc.mutations.items()
    svc.mutations[key] = (fp, {**receipt, "entry": {**receipt["entry"], "record_id": "note-0"}})
    with pytest.raises(ServiceError) as exc:
        svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "note-9", "writer", idempotency_key="m-1")
    assert (exc.value.status, exc.value.code) == (500, "integrity_failure") and head(svc) == 6


# -- over HTTP: POST /_simkit/append -------------------------------------------------------------------------
@pytest.fixture
def operated():
    """``simkit serve`` with the operator routes on: ``ops`` may also lose replies (inject_faults), ``plain``
    may not."""
    svc = dev_service()
    svc.add_subject("ops", credentials=["ops"], roles=["operator", "inject_faults"])
    svc.add_subject("plain", credentials=["plain"], roles=["operator"])
    with running(create_app(svc, admin=True)) as url, httpx.Client(base_url=url, timeout=10) as c:
        yield svc, c


def append(c, body, token="ops", lose=False):
    headers = {"Authorization": f"Bearer {token}"}
    if lose:
        headers["X-Simkit-Fault"] = "lose-reply"
    return c.post("/_simkit/append", json=body, headers=headers)


def feed(c):
    page = c.post(CHANGES, json={"contract_version": 1, "scope": DEV_SCOPE, "query": {"limit": 256}},
                  headers={"Authorization": "Bearer dev"}).json()
    return [(e["cursor"]["sequence"], e["kind"], e["record_id"]) for e in page["changes"]]


def test_over_http_a_feed_write_retried_after_a_lost_reply_returns_its_receipt_and_appends_once(operated):
    svc, c = operated
    command = {"kind": "created", "record_id": "note-9", "idempotency_key": "note-9-created"}
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        append(c, command, lose=True)                            # it committed; its reply was cut off
    assert head(svc) == 6
    retry = append(c, command)
    assert retry.status_code == 200 and retry.headers["cache-control"] == "no-store"
    body = retry.json()
    assert body["entry"]["cursor"]["sequence"] == 6 and body["entry"]["author"] == "operator"
    assert body["receipt"]["idempotency_key"] == "note-9-created"
    assert append(c, command).json() == body                     # and again: the same receipt, byte for byte
    assert feed(c)[5:] == [(6, "created", "note-9")]             # one entry, not two or three


def test_over_http_the_same_key_for_another_command_is_409_and_the_journal_does_not_move(operated):
    svc, c = operated
    assert append(c, {"record_id": "note-9", "idempotency_key": "k"}).status_code == 200
    before = svc.state_digest()
    r = append(c, {"record_id": "note-10", "idempotency_key": "k"})
    assert r.status_code == 409 and r.json()["error"]["code"] == "idempotency_conflict"
    assert r.headers["cache-control"] == "no-store"
    assert svc.state_digest() == before and len(feed(c)) == 6


@pytest.mark.parametrize("body, token, lose, status", [
    ({"record_id": "note-9", "idempotency_key": ""}, "ops", False, 400),
    ({"record_id": "note-9", "idempotency_key": "k\n"}, "ops", False, 400),
    ({"record_id": "note-9", "private_to": 7}, "ops", False, 400),
    ({"record_id": "note-9", "idempotency_key": "k"}, "plain", True, 403),   # no inject_faults role
    ({"record_id": "note-9", "idempotency_key": "k"}, "dev", False, 403),    # no operator role
    ({"record_id": "note-9", "idempotency_key": "k"}, "nope", False, 401),
])
def test_over_http_a_rejected_feed_write_does_not_advance_the_journal(operated, body, token, lose, status):
    svc, c = operated
    before = svc.state_digest()
    r = append(c, body, token, lose)
    assert r.status_code == status and "error" in r.json()
    assert svc.state_digest() == before and head(svc) == 5


def test_over_http_an_operator_route_takes_only_the_lose_reply_fault(operated):
    svc, c = operated
    r = c.post("/_simkit/append", json={}, headers={"Authorization": "Bearer ops",
                                                    "X-Simkit-Fault": "corrupt-journal"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_fault" and head(svc) == 5
    r = c.post("/_simkit/backup", headers={"Authorization": "Bearer ops", "X-Simkit-Fault": "lose-reply"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_fault"


def test_over_http_a_private_record_is_in_the_feed_but_not_in_the_query_of_another_subject(operated):
    """simkit's assumption: the feed lists every change of the namespace (entries carry ids, not content);
    only the query leaves out what the subject may not see."""
    svc, c = operated
    assert append(c, {"record_id": "secret", "private_to": "alice"}).status_code == 200
    assert feed(c)[-1] == (6, "created", "secret")
    page = c.post("/api/v1/memory/query", json={"contract_version": 1, "scope": DEV_SCOPE},
                  headers={"Authorization": "Bearer dev"}).json()
    assert "secret" not in [r["record_id"] for r in page["records"]]
