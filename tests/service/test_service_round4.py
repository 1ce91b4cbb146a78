"""Issue 32, the service's details over HTTP: a trailing slash is an unknown route (the service's 404 body,
not a bare 307 redirect), and a body whose ``Content-Type`` is not JSON is a 400 ``malformed_content_type``
that changes no state (docs/service.md, "Errors")."""
from __future__ import annotations

import json

import httpx
import pytest

from simkit.service import DEV_SCOPE, DEV_TENANT
from simkit.service.config import build_service, has_operator
from simkit.service.http import create_app, running

CHANGES, READ, WRITE = (
    "/api/v1/memory/changes",
    "/api/v1/memory/checkpoints/read",
    "/api/v1/memory/checkpoints",
)
QUERY, APPEND = "/api/v1/memory/query", "/_simkit/append"
ROUTES = [CHANGES, QUERY, READ, WRITE, APPEND]


def assert_error(r, status, code=None):
    """The documented error reply: ``{"error": {status, code, message}}`` and ``Cache-Control: no-store``."""
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["cache-control"] == "no-store"
    body = r.json()
    assert set(body) == {"error"} and body["error"]["status"] == status, body
    if code is not None:
        assert body["error"]["code"] == code, body


@pytest.fixture(scope="module")
def served():
    svc, _ = build_service(operator="ops")
    with (
        running(create_app(svc, admin=has_operator(svc))) as url,
        httpx.Client(base_url=url, timeout=10) as c,
    ):
        yield svc, c


def _body(svc, route) -> bytes:
    """A body the route accepts (a write that would take effect, a new record)."""
    cursor = svc.journals[(DEV_TENANT, tuple(DEV_SCOPE.values()))].cursor(2, 1)
    write = {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": "round4-key",
                                             "consumer_id": "cc", "expected_revision": 0, "cursor": cursor}}
    body = {CHANGES: {"contract_version": 1, "scope": DEV_SCOPE, "query": {"after": None, "through": None,
                                                                           "limit": 2}},
            READ: {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "cc"}, WRITE: write,
            QUERY: {"contract_version": 1, "scope": DEV_SCOPE,
                    "filter": {"limit": 2, "scan_limit": 2, "next_after": None}},
            APPEND: {"record_id": "round4", "idempotency_key": "round4-created"}}[route]
    return json.dumps(body).encode()


def _token(route):
    return {"Authorization": f"Bearer {'ops' if route == APPEND else 'dev'}"}


@pytest.mark.parametrize("route", ROUTES)
def test_a_trailing_slash_is_the_services_404_not_a_redirect(served, route):
    svc, c = served
    before = svc.state_digest()
    r = c.post(route + "/", content=_body(svc, route),
               headers={**_token(route), "Content-Type": "application/json"}, follow_redirects=False)
    assert_error(r, 404, "route_not_found")
    assert "location" not in r.headers
    assert svc.state_digest() == before


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/jsonx", "multipart/form-data; boundary=x"])
def test_a_body_that_is_not_sent_as_json_is_a_400_that_changes_nothing(served, route, content_type):
    svc, c = served
    before = svc.state_digest()
    headers = _token(route) if content_type is None else {**_token(route), "Content-Type": content_type}
    r = c.post(route, content=_body(svc, route), headers=headers)
    assert_error(r, 400, "malformed_content_type")
    assert ("missing" if content_type is None else content_type) in r.json()["error"]["message"]
    assert svc.state_digest() == before


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=utf-8",
                                          "application/merge-patch+json"])
def test_json_media_types_with_parameters_are_read(served, content_type):
    svc, c = served
    r = c.post(READ, content=_body(svc, READ), headers={**_token(READ), "Content-Type": content_type})
    assert r.status_code in (200, 404) and r.json().get("error", {}).get("code",
                                                                         "") != "malformed_content_type"


def test_the_credential_is_still_checked_first(served):
    svc, c = served
    r = c.post(READ, content=_body(svc, READ), headers={"Content-Type": "text/plain"})
    assert_error(r, 401)
