"""Consumer ids and scope ids in Unicode normalization form C only (issue 32's leftovers).

``"caf\\u00e9"`` (NFC) and ``"cafe\\u0301"`` (NFD) print alike, and were two consumers with two checkpoints: a
client whose library normalized the id one day and not the next lost its progress, or two processes meant to
share one checkpoint each kept their own. simkit refuses a consumer id that is not NFC with a 400
``malformed_identity`` naming the field (docs/service.md, "Where seed 004 is silent"): clear, and the rejected
request changes no state. Over the model and over HTTP.
"""
from __future__ import annotations

import json
import unicodedata

import pytest
from served import over, shared_server  # noqa: F401 -- the fixture over uses

from simkit.service import DEV_SCOPE, DEV_TENANT, dev_service
from simkit.service.http import create_app

READ, WRITE = "/api/v1/memory/checkpoints/read", "/api/v1/memory/checkpoints"
NFC, NFD = "caf\u00e9", "cafe\u0301"


@pytest.fixture(params=["model", "http"])
def served(request):
    svc = dev_service()
    with over(request, svc) as transport:
        yield svc, transport


def command(svc, consumer, key="k1", seq=2):
    cursor = svc.journals[(DEV_TENANT, tuple(DEV_SCOPE.values()))].cursor(seq, 1)
    cmd = {"contract_version": 1, "idempotency_key": key, "consumer_id": consumer, "expected_revision": 0,
           "cursor": cursor}
    return {"scope": DEV_SCOPE, "command": cmd}


def read(consumer):
    return {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": consumer}


def test_the_two_forms_print_alike_and_differ():
    assert unicodedata.normalize("NFC", NFD) == NFC and NFD != NFC


@pytest.mark.parametrize("consumer", [NFD, "\u212b", "x\u0301\u0327y"], ids=["NFD e-acute", "angstrom sign",
                                                                             "marks out of order"])
def test_a_consumer_id_not_in_nfc_is_a_400_naming_the_field_that_changes_nothing(served, consumer):
    svc, t = served
    before = svc.state_digest()
    r = t.post(WRITE, command(svc, consumer))
    assert r.status == 400 and r["error"]["code"] == "malformed_identity"
    assert r["error"]["message"] == (
        f"command.consumer_id is not in Unicode normalization form NFC: {ascii(consumer)} is "
        f"{ascii(unicodedata.normalize('NFC', consumer))} in NFC")
    r = t.post(READ, read(consumer))
    assert r.status == 400 and r["error"]["code"] == "malformed_identity"
    assert r["error"]["message"].startswith("consumer_id is not in Unicode normalization form NFC: ")
    assert svc.state_digest() == before


def test_the_nfc_form_is_one_consumer_and_its_nfd_twin_cannot_fork_it(served):
    """The NFC id writes and reads its checkpoint; the same id in NFD, which once wrote a second checkpoint
    with the same idempotency key, is refused and leaves the first as it was."""
    svc, t = served
    assert t.post(WRITE, command(svc, NFC)).status == 200
    first = t.post(READ, read(NFC))
    assert first.status == 200 and first["checkpoint"]["consumer_id"] == NFC
    before = svc.state_digest()
    assert t.post(WRITE, command(svc, NFD, seq=3)).status == 400
    assert svc.state_digest() == before
    assert t.post(READ, read(NFC))["checkpoint"] == first["checkpoint"]


def test_a_consumer_id_in_nfc_past_ascii_is_accepted(served):
    svc, t = served
    for consumer in ["缓存", "\U0001f600", "Ä-\u00e9"]:
        assert t.post(WRITE, command(svc, consumer, key=f"k-{consumer}")).status == 200
        assert t.post(READ, read(consumer)).status == 200


def test_the_openapi_document_says_so():
    doc = create_app(dev_service()).openapi()
    text = json.dumps(doc)
    # the read's consumer id, each command's (version 1; version 2 creating and advancing), and the scope's
    # project, mission and agent ids
    assert text.count("in Unicode normalization form NFC") == 7


@pytest.mark.parametrize("key", ["project_id", "mission_id", "agent_id"])
def test_a_scope_id_not_in_nfc_is_a_400_naming_the_field_that_changes_nothing(served, key):
    """A scope's ids name a checkpoint as the consumer id does: two scopes that print alike were two
    checkpoints, so the same rule holds for them."""
    svc, t = served
    before = svc.state_digest()
    body = command(svc, NFC)
    body["scope"] = {**DEV_SCOPE, key: NFD}
    r = t.post(WRITE, body)
    assert r.status == 400 and r["error"]["code"] == "malformed_identity"
    assert r["error"]["message"] == (f"scope.{key} is not in Unicode normalization form NFC: {ascii(NFD)} is "
                                     f"{ascii(NFC)} in NFC")
    assert t.post(READ, {**read(NFC), "scope": {**DEV_SCOPE, key: NFD}}).status == 400
    assert svc.state_digest() == before
