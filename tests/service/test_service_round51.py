"""The service, round 51 of hostile input (a fresh tester): seed 004's checkpoint service as its clients
meet it.

Found: the OpenAPI document's ``filter.next_after`` (memory query) and the operator's ``/_simkit/append``
fields (``tenant``, ``record_id``, ``idempotency_key``, ``private_to``) kept the identity pattern of before
issue 32, whose ``\\S`` let one control character through and which let every format character and separator
through: ``"a\\x01"``, ``"\\x7f"`` or ``"x\\u200by"`` were valid by the published schema and a 400
``malformed_identity`` from the service (round 3 made the checkpoint routes' identities agree, not these).
The request schemas of the feed and the checkpoint write were one for both contract versions: a version 1
command with ``"expected_digest": null`` (what a generated client sends for an optional field it leaves
unset) or a version 1 cursor with ``history_digest``, a version 2 command without ``expected_digest``, a
version 2 cursor without ``history_digest``, and a version 2 ``expected_digest`` null past revision 0 (or a
digest at 0) were valid by the published schema and a 400 (``unknown_field``, ``missing_field``,
``malformed_revision``) from the service.
Every request example of the OpenAPI document (``/openapi.json``, the one ``/docs`` sends with "Try it out")
was a 400 ``missing_field`` on a fresh ``simkit serve``: FastAPI drops every null of the document, so each
example's ``"scope": {..., "mission_id": null}`` lost its ``mission_id``.

Each test names what the service must answer, or what its OpenAPI models must accept, for the input.
"""
from __future__ import annotations

import json
import unicodedata

import httpx
import pydantic
import pytest

from simkit.service import schema
from simkit.service.config import DEV_SCOPE, build_service
from simkit.service.contract import ServiceError, identity
from simkit.service.http import create_app, running

#: every character of the Basic Multilingual Plane the identity rule could refuse (controls, format
#: characters, separators, spaces), and a few it takes
_SUSPECTS = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF
             and unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Zs")] + ["é", "-", "😀"]


def _schema_takes(field: str, value: str) -> bool:
    try:
        if field == "filter.next_after":
            schema.QueryRequest.model_validate({"contract_version": 1, "scope": DEV_SCOPE,
                                                "filter": {"next_after": value}})
        else:
            schema.AppendRequest.model_validate({field: value})
    except pydantic.ValidationError:
        return False
    return True


def _service_takes(value: str) -> bool:
    try:
        identity(value, "field")
    except ServiceError:
        return False
    return True


@pytest.mark.parametrize("field", ["filter.next_after", "tenant", "record_id", "idempotency_key",
                                   "private_to"])
def test_the_schema_of_the_query_and_append_identities_agrees_with_the_service(field):
    disagree = [hex(ord(ch)) for ch in _SUSPECTS
                if _schema_takes(field, f"a{ch}b") != _service_takes(f"a{ch}b")]
    assert not disagree


_DIGEST = "sha256:" + "0" * 64


def _command(version: int, revision: int, **extra) -> dict:
    cursor = {"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": 2}
    if version == 2:
        cursor["history_digest"] = _DIGEST
    return {"contract_version": version, "idempotency_key": "r51", "consumer_id": "r51",
            "expected_revision": revision, "cursor": cursor, **extra}


def _drop(command: dict, *path: str) -> dict:
    out = {**command, "cursor": dict(command["cursor"])}
    del (out["cursor"] if path[0] == "cursor" else out)[path[-1]]
    return out


@pytest.mark.parametrize("command", [
    _command(1, 0, expected_digest=None),
    {**_command(1, 0), "cursor": {**_command(1, 0)["cursor"], "history_digest": _DIGEST}},
    _command(2, 0),
    _drop(_command(2, 0, expected_digest=None), "cursor", "history_digest"),
    _command(2, 1, expected_digest=None),
    _command(2, 0, expected_digest=_DIGEST),
], ids=["v1-expected_digest-null", "v1-history_digest", "v2-no-expected_digest", "v2-no-history_digest",
        "v2-null-digest-past-0", "v2-digest-at-0"])
def test_a_command_the_service_refuses_for_its_contract_version_is_invalid_by_the_schema(command):
    svc, _ = build_service()
    before = svc.state_digest()
    reply = svc.call("/api/v1/memory/checkpoints", "Bearer dev",
                     json.dumps({"scope": DEV_SCOPE, "command": command}).encode())
    assert reply.status == 400, reply.body
    assert svc.state_digest() == before
    with pytest.raises(pydantic.ValidationError):
        schema.WriteRequest.model_validate({"scope": DEV_SCOPE, "command": command})


def test_a_feed_cursor_of_the_other_contract_version_is_invalid_by_the_schema():
    v1 = {"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": 1}
    v2 = {**v1, "history_digest": _DIGEST}
    for version, cursor in ((1, {**v1, "history_digest": None}), (1, v2), (2, v1)):
        body = {"contract_version": version, "scope": DEV_SCOPE, "query": {"after": cursor}}
        svc, _ = build_service()
        assert svc.call("/api/v1/memory/changes", "Bearer dev", json.dumps(body).encode()).status == 400
        with pytest.raises(pydantic.ValidationError):
            schema.ChangesRequest.model_validate(body)
    for version, cursor in ((1, v1), (2, v2)):       # each version's own cursor is still valid
        schema.ChangesRequest.model_validate({"contract_version": version, "scope": DEV_SCOPE,
                                              "query": {"after": cursor, "through": cursor}})
    for command in (_command(1, 3), _command(2, 0, expected_digest=None),
                    _command(2, 3, expected_digest=_DIGEST)):              # and each version's own command
        schema.WriteRequest.model_validate({"scope": DEV_SCOPE, "command": command})


def test_every_request_example_of_the_openapi_document_works_on_a_fresh_server():
    svc, _ = build_service(operator="op-secret")
    with running(create_app(svc, admin=True)) as url, httpx.Client(base_url=url, timeout=30) as client:
        doc = client.get("/openapi.json").json()
        answered = {}
        for path, item in doc["paths"].items():
            example = item["post"]["requestBody"]["content"]["application/json"]["examples"]["dev"]["value"]
            token = "op-secret" if path.startswith("/_simkit/") else "dev"
            reply = client.post(path, json=example, headers={"Authorization": f"Bearer {token}"})
            answered[path] = (reply.status_code, reply.json().get("error", {}).get("code"))
    # the read asks for a checkpoint a fresh server does not have yet (seed 004: 404)
    assert answered.pop("/api/v1/memory/checkpoints/read") == (404, "checkpoint_not_found")
    assert set(answered.values()) == {(200, None)}, answered
