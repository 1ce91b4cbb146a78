"""The service, round 51 of hostile input (a fresh tester): seed 004's checkpoint service as its clients meet it.

Found: the OpenAPI document's ``filter.next_after`` (memory query) and the operator's ``/_simkit/append``
fields (``tenant``, ``record_id``, ``idempotency_key``, ``private_to``) kept the identity pattern of before
issue 32, whose ``\\S`` let one control character through and which let every format character and separator
through: ``"a\\x01"``, ``"\\x7f"`` or ``"x\\u200by"`` were valid by the published schema and a 400
``malformed_identity`` from the service (round 3 made the checkpoint routes' identities agree, not these).

Each test names what the service must answer, or what its OpenAPI models must accept, for the input.
"""
from __future__ import annotations

import unicodedata

import pydantic
import pytest

from simkit.service import schema
from simkit.service.config import DEV_SCOPE
from simkit.service.contract import ServiceError, identity

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


@pytest.mark.parametrize("field", ["filter.next_after", "tenant", "record_id", "idempotency_key", "private_to"])
def test_the_schema_of_the_query_and_append_identities_agrees_with_the_service(field):
    disagree = [hex(ord(ch)) for ch in _SUSPECTS
                if _schema_takes(field, f"a{ch}b") != _service_takes(f"a{ch}b")]
    assert not disagree
