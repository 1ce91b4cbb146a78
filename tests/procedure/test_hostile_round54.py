"""Round 54: mutation testing of the plugin runtime, the code between a consumer and the world.

SCORE_PLACEHOLDER
"""
from __future__ import annotations

import pytest

from simkit.procedure import wire


@pytest.mark.parametrize("key", ["--5", "9" * 5000])
def test_a_receipts_position_that_int_refuses_is_a_wire_error(key):
    """Found: ``decode_result`` promises :class:`WireError`; a position key with two signs, or past int()'s
    4300 digits, was int()'s ``ValueError``."""
    message = {"type": "receipts", "value": {"outcomes": {}, "ids_at": {key: "e1"}}}
    with pytest.raises(wire.WireError, match="not a position"):
        wire.decode_result(message)
