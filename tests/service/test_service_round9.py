"""The service, ninth round of hostile input (issue 32, a fresh tester): escaped lone surrogates in every
string field, conflicting writes from many threads at once, an idempotency key reused with another body
while its first use is in flight, operator routes without their credential, and the in-process call's 404.
Each rejected request is the service's error body and changes no state."""
from __future__ import annotations

import json
import threading

import httpx
import pytest

from simkit.service import DEV_SCOPE
from simkit.service.config import build_service, has_operator
from simkit.service.http import create_app, running

CHANGES, QUERY = "/api/v1/memory/changes", "/api/v1/memory/query"
READ, WRITE = "/api/v1/memory/checkpoints/read", "/api/v1/memory/checkpoints"
APPEND, RESTORE, BACKUP = "/_simkit/append", "/_simkit/restore", "/_simkit/backup"
JOURNAL = "00000000-0000-4000-8000-000000000001"


@pytest.fixture(scope="module")
def served():
    svc, _ = build_service(operator="ops")
    with running(create_app(svc, admin=has_operator(svc))) as url, \
            httpx.Client(base_url=url, timeout=30) as c:
        yield svc, c


def _post(c, route, body, token="dev", **headers):
    """``body`` as JSON with every non-ASCII character escaped (``\\udcff`` stays a lone surrogate)."""
    return c.post(route, content=json.dumps(body, ensure_ascii=True).encode(),
                  headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers})


def _command(key, revision, sequence, consumer="r9", journal=JOURNAL):
    return {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": key,
                                            "consumer_id": consumer, "expected_revision": revision,
                                            "cursor": {"journal_id": journal, "sequence": sequence}}}


def _feed(**query):
    return {"contract_version": 1, "scope": DEV_SCOPE,
            "query": {"after": None, "through": None, "limit": 1, **query}}


LONE = "\udcff"
SURROGATES = [
    (CHANGES, {**_feed(), "scope": {**DEV_SCOPE, "project_id": LONE}}, "scope.project_id"),
    (CHANGES, _feed(after={"journal_id": LONE, "sequence": 1}), "query.after.journal_id"),
    (QUERY, {"contract_version": 1, "scope": DEV_SCOPE, "filter": {"next_after": LONE}}, "filter.next_after"),
    (READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": LONE}, "consumer_id"),
    (WRITE, _command(LONE, 0, 1), "command.idempotency_key"),
    (WRITE, _command("k", 0, 1, consumer=LONE), "command.consumer_id"),
    (WRITE, _command("k", 0, 1, journal=LONE), "command.cursor.journal_id"),
    (APPEND, {"record_id": LONE}, "record_id"),
    (APPEND, {"record_id": "x", "private_to": LONE}, "private_to"),
    (APPEND, {"record_id": "x", "idempotency_key": LONE}, "idempotency_key"),
    (APPEND, {"tenant": LONE}, "tenant"),
]


@pytest.mark.parametrize("route, body, field", SURROGATES, ids=[s[2] + "@" + s[0] for s in SURROGATES])
def test_an_escaped_lone_surrogate_in_any_string_field_is_a_400_naming_it(served, route, body, field):
    svc, c = served
    before = svc.state_digest()
    r = _post(c, route, body, token="ops" if route == APPEND else "dev")
    assert r.status_code == 400, r.text
    assert r.json()["error"] == {"status": 400, "code": "malformed_identity",
                                 "message": f"{field} is not valid UTF-8"}
    assert r.headers["cache-control"] == "no-store"
    assert svc.state_digest() == before


def test_conflicting_first_writes_from_twenty_threads_make_one_checkpoint(served):
    """Twenty writers create the same consumer's checkpoint at once, each with its own key: one wins, the
    others are 409 ``revision_conflict``, and the checkpoint is the winner's."""
    svc, c = served
    statuses: list[tuple[int, str]] = []

    def write(i):
        r = _post(c, WRITE, _command(f"race-{i}", 0, 1 + i % 5, consumer="racer"))
        statuses.append((r.status_code, r.json().get("error", {}).get("code", f"race-{i}")))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [key for status, key in statuses if status == 200]
    assert len(won) == 1 and sorted(s for s, _ in statuses) == [200] + [409] * 19
    assert {code for status, code in statuses if status == 409} == {"revision_conflict"}
    read = _post(c, READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "racer"}).json()
    assert read["checkpoint"]["revision"] == 1
    assert read["checkpoint"]["cursor"]["sequence"] == 1 + int(won[0].split("-")[1]) % 5


def test_one_key_with_two_bodies_at_once_answers_one_receipt(served):
    """Ten threads send one key with one body, ten with another, all at once: the body that committed is
    answered its one receipt every time, the other 409 ``idempotency_conflict``; one revision is written."""
    svc, c = served
    assert _post(c, WRITE, _command("base", 0, 1, consumer="twice")).status_code == 200
    replies: list[tuple[int, int, dict]] = []

    def write(i):
        r = _post(c, WRITE, _command("same", 1, 2 + i % 2, consumer="twice"))
        replies.append((i % 2, r.status_code, r.json()))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = [(body, reply) for body, status, reply in replies if status == 200]
    assert len({body for body, _ in ok}) == 1 and len(ok) == 10
    assert len({json.dumps(reply, sort_keys=True) for _, reply in ok}) == 1
    codes = {reply["error"]["code"] for _, status, reply in replies if status == 409}
    assert codes == {"idempotency_conflict"}
    read = _post(c, READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "twice"}).json()
    assert read["checkpoint"]["revision"] == 2


@pytest.mark.parametrize("token, status", [(None, 401), ("dev", 403), ("nobody", 401)])
@pytest.mark.parametrize("route, body", [(BACKUP, {}), (RESTORE, {"backup": 1}),
                                         (APPEND, {"record_id": "y"})])
def test_an_operator_route_without_the_operator_credential_changes_nothing(served, route, body, token,
                                                                           status):
    svc, c = served
    before = svc.state_digest()
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    r = c.post(route, content=json.dumps(body).encode(), headers=headers)
    assert r.status_code == status, r.text
    assert svc.state_digest() == before


@pytest.mark.parametrize("backup", [True, 1.0, -1, 0, 10**30, "1", LONE])
def test_a_restore_of_no_backup_number_is_a_400_that_changes_nothing(served, backup):
    svc, c = served
    assert _post(c, BACKUP, {}, token="ops").status_code == 200
    before = svc.state_digest()
    r = _post(c, RESTORE, {"backup": backup}, token="ops")
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_backup", r.text
    assert svc.state_digest() == before


def test_the_in_process_calls_unknown_route_has_the_code_http_answers(served):
    """``CheckpointService.call`` answered an unknown route 404 ``no_route``, a code docs/service.md's error
    table does not have; over HTTP the same route is ``route_not_found``."""
    svc, c = served
    over_http = c.post("/nope", headers={"Authorization": "Bearer dev"}).json()["error"]["code"]
    in_process = svc.call("/nope", "Bearer dev", b"{}").body["error"]["code"]
    assert over_http == in_process == "route_not_found"
