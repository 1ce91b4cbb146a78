"""Seed 004's "malformed identities and contracts are 400" (issue 32): a body naming one key twice (the last
won), and consumer ids holding zero-width, right-to-left-override, byte-order-mark or line-separator
characters (two ids printing alike were two consumers), are refused; the OpenAPI schema says what the
validator checks (its ``\\S`` let a control character through)."""
from __future__ import annotations

import pydantic
import pytest

from simkit.service import schema
from simkit.service.contract import ServiceError, identity, parse_body


@pytest.mark.parametrize("raw, key", [(b'{"a": 1, "a": 2}', "'a'"), (b'{"x": {"b": 1, "b": 1}}', "'b'")])
def test_a_key_named_twice_is_400(raw, key):
    with pytest.raises(ServiceError) as err:
        parse_body(raw)
    assert err.value.status == 400 and f"request body names {key} twice in one object" in str(err.value)


@pytest.mark.parametrize("ch", ["\u200b", "\u200d", "\u202e", "\u2066", "\ufeff", "\u2028", "\u2029", "\x01"])
def test_invisible_characters_in_an_identity_are_400(ch):
    with pytest.raises(ServiceError) as err:
        identity(f"con{ch}sumer", "consumer_id")
    assert err.value.status == 400


def test_the_schema_and_the_validator_agree_on_every_character_of_the_basic_plane():
    scope = {"project_id": "p", "mission_id": None, "agent_id": "a", "visibility": "shared"}
    disagree = []
    for code in range(0x10000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        value = f"a{chr(code)}b"
        try:
            schema.ReadRequest.model_validate({"contract_version": 1, "scope": scope, "consumer_id": value})
            by_schema = True
        except pydantic.ValidationError:
            by_schema = False
        try:
            identity(value, "consumer_id")
            by_validator = True
        except ServiceError:
            by_validator = False
        if by_schema != by_validator:
            disagree.append(hex(code))
    assert not disagree
