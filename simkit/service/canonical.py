"""How the service's contract writes values down (seed 004): canonical JSON and its digest, and a caller's
value cut short for an error message. Pure, with no import of the rest of the service."""
from __future__ import annotations

import hashlib
import json
import reprlib

__all__ = ["canonical", "digest", "show"]


class _Short(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        """An integer Python can print (up to 4,300 digits; it raises ValueError past them), else its size."""
        if x.bit_length() > 14_000:
            return f"<an integer of {x.bit_length()} bits>"
        return reprlib.Repr.repr_int(self, x, level)


_SHORT = _Short()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlist, _SHORT.maxdict = 3, 60, 60, 6, 4


def show(value) -> str:
    """``repr(value)`` cut short: at most three levels and 60 characters a string (for error messages)."""
    return _SHORT.repr(value)


# -- digests -------------------------------------------------------------------------------------------------
def canonical(value) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8. Digests are computed over this."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def digest(value) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``. Detects inconsistency; it is not a signature."""
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()
