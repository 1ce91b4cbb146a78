"""The published OpenAPI document of ``simkit serve``, fuzzed with schemathesis (bounded and derandomized).

Checks on every generated request: no 500 except a detected integrity failure (fuzzing corrupts nothing, so
none), no crash, status codes, content types, response bodies and the ``Cache-Control`` header as
documented, and no state change from a rejected request. The operator routes, published only when they are on,
are fuzzed the same way with the operator's credential.
"""
from __future__ import annotations

import json

import httpx
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from simkit.service import contract, dev_service
from simkit.service.http import asgi, create_app

SERVICE = dev_service()
APP = create_app(SERVICE, admin=False)
schema = schemathesis.openapi.from_asgi("/openapi.json", asgi(APP))
OPS_SERVICE = dev_service()
OPS_SERVICE.add_subject("ops", credentials=["ops"], roles=["operator"])
OPS_APP = create_app(OPS_SERVICE, admin=True)
ops_schema = schemathesis.openapi.from_asgi("/openapi.json", asgi(OPS_APP)).include(path_regex="^/_simkit/")
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance]


def test_openapi_document_lists_exactly_the_seed_004_routes():
    doc = APP.openapi()
    assert set(doc["paths"]) == {"/api/v1/memory/changes", "/api/v1/memory/query",
                                 "/api/v1/memory/checkpoints/read", "/api/v1/memory/checkpoints"}
    assert all(set(item) == {"post"} for item in doc["paths"].values())
    ops = OPS_APP.openapi()
    assert set(ops["paths"]) - set(doc["paths"]) == {"/_simkit/backup", "/_simkit/restore", "/_simkit/append"}
    assert all(ops["paths"][p]["post"]["security"] == [{"HTTPBearer": []}] for p in ops["paths"])


def _reachable(case) -> None:
    """Harness set-up, outside the measured state change: grant ``dev`` the generated scope and give it an
    active journal, so that fuzzing reaches the state checks instead of stopping at 403."""
    body = case.body if isinstance(case.body, dict) else {}
    try:
        scope = contract.scope(body.get("scope"))
    except contract.ServiceError:
        return
    sc = contract.scope_dict(scope)
    SERVICE.grant("dev", sc, ["memory_read", "memory_checkpoint"])
    if SERVICE.journal_id("tenant", sc) is None:
        for i in range(3):
            SERVICE.append("tenant", sc, "created", f"note-{i}")


@schema.parametrize()
@settings(max_examples=15, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_fuzzed_requests_never_crash_and_rejected_requests_change_nothing(case):
    _reachable(case)
    before = SERVICE.state_digest()
    response = case.call(headers={"Authorization": "Bearer dev"})
    if response.status_code == 500:
        assert response.json()["error"]["code"] == "integrity_failure"
    else:
        case.validate_response(response, checks=CHECKS, headers={"Authorization": "Bearer dev"})
    if response.status_code >= 400:
        assert SERVICE.state_digest() == before, (response.status_code, response.text)


@ops_schema.parametrize()
@settings(max_examples=15, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
def test_fuzzed_operator_requests_never_crash_and_rejected_ones_change_nothing(case):
    before = OPS_SERVICE.state_digest()
    response = case.call(headers={"Authorization": "Bearer ops"})
    case.validate_response(response, checks=CHECKS, headers={"Authorization": "Bearer ops"})
    if response.status_code >= 400:
        assert OPS_SERVICE.state_digest() == before, (response.status_code, response.text)


#: What each route can answer besides 200, from the model (docs/service.md): the feed and the checkpoint write
#: have a 409, the checkpoint read a 404 and no 409, the memory query neither nor a 500; the operator routes'
#: in admin.py.
ANSWERS = {
    "/api/v1/memory/changes": {400, 401, 403, 409, 413, 500},
    "/api/v1/memory/query": {400, 401, 403, 413},
    "/api/v1/memory/checkpoints/read": {400, 401, 403, 404, 413, 500},
    "/api/v1/memory/checkpoints": {400, 401, 403, 409, 413, 500},
    "/_simkit/backup": {400, 401, 403, 409, 413},
    "/_simkit/restore": {400, 401, 403, 413},
    "/_simkit/append": {400, 401, 403, 409, 413},
}


def _witnesses(svc) -> dict:
    """For each route and status, a request (body, credential, fault header) a fresh dev service with operator
    ``ops`` answers with that status; run in this order (the 409s and 500s need a checkpoint first)."""
    from simkit.service import DEV_SCOPE
    scope = {"contract_version": 1, "scope": DEV_SCOPE}
    elsewhere = {**DEV_SCOPE, "project_id": "other"}                    # a scope dev holds no grant on
    other = {"contract_version": 1, "scope": elsewhere}
    cursor = svc.journals[("tenant", tuple(DEV_SCOPE.values()))].cursor(2, 1)
    foreign = {**cursor, "journal_id": "00000000-0000-4000-8000-000000000009"}

    def write(key, expected, consumer="cc"):
        return {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": key,
                                                "consumer_id": consumer, "expected_revision": expected,
                                                "cursor": cursor}}

    first = svc.call("/api/v1/memory/checkpoints", "Bearer dev", json.dumps(write("k0", 0, "cc2")).encode())
    assert first.status == 200  # cc2's checkpoint, for the write's 500

    big = {"record_id": "x" * contract.MAX_REQUEST_BYTES}
    read = {**scope, "consumer_id": "cc"}
    return {
        "/api/v1/memory/checkpoints": {200: (write("k1", 0), "dev", None), 400: ({}, "dev", None),
                                       401: (write("k2", 1), None, None),
                                       403: ({**write("k2", 1), "scope": elsewhere}, "dev", None),
                                       409: (write("k2", 5), "dev", None), 413: (big, "dev", None),
                                       500: (write("k3", 1, "cc2"), "dev", "corrupt-checkpoint")},
        "/api/v1/memory/changes": {200: (scope, "dev", None), 400: ({}, "dev", None),
                                   401: (scope, None, None),
                                   403: (other, "dev", None), 413: (big, "dev", None),
                                   409: ({**scope, "query": {"after": foreign}}, "dev", None),
                                   500: (scope, "dev", "corrupt-journal")},
        "/api/v1/memory/query": {200: (scope, "dev", None), 400: ({}, "dev", None), 401: (scope, None, None),
                                 403: (other, "dev", None), 413: (big, "dev", None)},
        "/api/v1/memory/checkpoints/read": {200: (read, "dev", None), 400: ({}, "dev", None),
                                            401: (read, None, None),
                                            403: ({**read, **other}, "dev", None), 413: (big, "dev", None),
                                            404: ({**read, "consumer_id": "nobody"}, "dev", None),
                                            500: (read, "dev", "corrupt-checkpoint")},
        "/_simkit/backup": {200: ({}, "ops", None), 400: ({"x": 1}, "ops", None), 401: ({}, None, None),
                            403: ({}, "dev", None), 413: (big, "ops", None),
                            409: ({}, "ops", None)},       # past app.state.max_backups, 1 here
        "/_simkit/restore": {200: ({"backup": 1}, "ops", None), 400: ({"backup": 9}, "ops", None),
                             401: ({"backup": 1}, None, None), 403: ({"backup": 1}, "dev", None),
                             413: (big, "ops", None)},
        "/_simkit/append": {200: ({"record_id": "n", "idempotency_key": "a"}, "ops", None),
                            409: ({"record_id": "m", "idempotency_key": "a"}, "ops", None),
                            400: ({"kind": "x"}, "ops", None), 401: ({}, None, None), 403: ({}, "dev", None),
                            413: (big, "ops", None)},
    }


def test_each_route_documents_exactly_the_statuses_it_can_answer():
    """The OpenAPI document listed a 409 for ``checkpoints/read``, which the model never answers (the read
    route's codes were the others' with a 404 spliced in). Now each route lists what it can answer: the table
    above, each status shown answered by a real request over HTTP, and the fuzzers'
    ``status_code_conformance`` checks that nothing else is."""
    from simkit.service.http import running
    svc = dev_service()
    svc.add_subject("ops", credentials=["ops"], roles=["operator"])
    app = create_app(svc, admin=True)
    app.state.max_backups = 1                     # the backup's 409: a second backup
    documented = {path: {int(code) for code in item["post"]["responses"]}
                  for path, item in app.openapi()["paths"].items()}
    assert documented == {path: codes | {200} for path, codes in ANSWERS.items()}
    with running(app) as url, httpx.Client(base_url=url, timeout=10) as c:
        for path, cases in _witnesses(svc).items():
            for status, (body, credential, fault) in cases.items():
                headers = {"Content-Type": "application/json"}
                if credential:
                    headers["Authorization"] = f"Bearer {credential}"
                if fault:
                    headers["X-Simkit-Fault"] = fault
                r = c.post(path, content=json.dumps(body).encode(), headers=headers)
                assert r.status_code == status, (path, status, r.text[:300])
            assert set(cases) == documented[path], path
