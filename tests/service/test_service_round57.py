"""The checkpoint service, the lead's round 57 (stop 48): round 51's leftovers.

- ``--grant dev=memory_read,,memory_checkpoint`` (or a trailing comma) granted what was named and skipped the
  empty capability between the commas without a word: a typo in a grant went unseen. It is refused now, one
  line naming the flag, exit 2;
- every identity field of the OpenAPI document said ``maxLength: 128``, which counts characters, where the
  rule is 128 UTF-8 bytes: a generated client took 128 ``é`` (256 bytes) for valid, and got a 400. No JSON
  Schema keyword counts bytes, so each such field now says so in its description.
"""
from __future__ import annotations

import pytest

from simkit.cli import main
from simkit.service import dev_service
from simkit.service.http import create_app

GRANT_SHAPE = ("expected SUBJECT=CAP[,CAP...][@SCOPE_JSON] with CAP one of memory_read, memory_checkpoint, "
               "memory_write, tenant_admin")


@pytest.mark.parametrize("grant", ["dev=memory_read,,memory_checkpoint", "dev=memory_read,",
                                   "dev=,memory_read"])
def test_an_empty_capability_in_a_grant_is_refused_not_skipped(capsys, monkeypatch, grant):
    from simkit.service import http
    monkeypatch.setattr(http, "serve", lambda *args, **kwargs: pytest.fail("simkit serve started a server"))
    assert main(["serve", "--grant", grant, "--port", "0"]) == 2
    assert capsys.readouterr().err == f"simkit: --grant '{grant}': {GRANT_SHAPE}\n"


def _strings_of_128(node, where="", said=""):
    """``(where, description)`` of every string schema in ``node`` bounded by ``maxLength: 128``; an optional
    field's description is on the ``anyOf`` that holds it."""
    if isinstance(node, dict):
        said = node.get("description", said)
        if node.get("maxLength") == 128:
            yield where, said
        for key, value in node.items():
            yield from _strings_of_128(value, f"{where}/{key}", said if key == "anyOf" else "")
    elif isinstance(node, list):
        for k, value in enumerate(node):
            yield from _strings_of_128(value, f"{where}/{k}", said)


def test_every_identity_of_the_openapi_document_says_its_bound_is_in_utf8_bytes():
    identities = list(_strings_of_128(create_app(dev_service()).openapi()))
    assert len(identities) >= 10
    unsaid = [where for where, said in identities if "1-128 UTF-8 bytes" not in said]
    assert unsaid == []
