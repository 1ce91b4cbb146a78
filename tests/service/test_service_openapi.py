"""The published OpenAPI document of ``simkit serve``, fuzzed with schemathesis (bounded and derandomized).

Checks on every generated request: no 500 except a detected integrity failure (fuzzing corrupts nothing, so
none), no crash, status codes, content types, response bodies and the ``Cache-Control`` header as
documented, and no state change from a rejected request. The operator routes, published only when they are on,
are fuzzed the same way with the operator's credential.
"""
from __future__ import annotations

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
    assert set(doc["paths"]) == {"/api/v1/memory/changes", "/api/v1/memory/query", "/api/v1/memory/checkpoints/read",
                                 "/api/v1/memory/checkpoints"}
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
