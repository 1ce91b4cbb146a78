"""Issue 32, fifth round: what an error reply echoes of the request is bounded. An unknown route's 404 (and a
405's message) echoed the whole path, 60 KB of it, and the method whatever its length; the in-process call's
404 echoed 100 KB. Now the echo is the path's start and its length."""
from __future__ import annotations

import httpx
import pytest

from simkit.service.config import build_service
from simkit.service.http import create_app, running


@pytest.fixture(scope="module")
def served():
    svc, _ = build_service()
    with running(create_app(svc)) as url, httpx.Client(base_url=url, timeout=30) as c:
        yield svc, c


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_404_does_not_echo_a_60_kb_path(served, method):
    svc, c = served
    before = svc.state_digest()
    path = "/" + "a" * 60_000
    r = c.request(method, path, headers={"Authorization": "Bearer dev"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "route_not_found"
    message = r.json()["error"]["message"]
    assert len(r.content) < 1_000, len(r.content)
    assert f"no route {method} /{'a' * 99}… (60001 characters); the routes are POST " in message
    assert svc.state_digest() == before


def test_a_405_does_not_echo_a_long_method(served):
    svc, c = served
    r = c.request("FOOBAR" * 50, "/api/v1/memory/changes", headers={"Authorization": "Bearer dev"})
    assert r.status_code == 405 and len(r.content) < 500, r.text
    assert r.json()["error"]["message"].startswith(
        "FOOBARFOOBARFOOBARFO… (300 characters) /api/v1/memory/changes")


def test_control_characters_of_a_path_are_echoed_as_escapes(served):
    svc, c = served
    r = c.get("/x%1b[31mred")
    assert r.status_code == 404 and "\\x1b[31mred" in r.json()["error"]["message"]


def test_the_in_process_call_does_not_echo_a_100_kb_route():
    svc, _ = build_service()
    reply = svc.call("/" + "b" * 100_000, None, b"{}")
    assert reply.status == 404 and len(str(reply.body)) < 500
    assert reply.body["error"]["message"] == f"no route /{'b' * 99}… (100001 characters)"
