"""Parts of a world built once per scenario: what no run changes, kept while the scenario stays the same.

Exploration and the audit build one scenario's world tens of thousands of times; building its fixed parts (a
scripted stream's pages and event table) was a third of a small world's construction. A scenario is a mutable
dataclass, so a part is kept with a copy of what it was built from, and built again when a scenario edited in
place no longer equals that copy.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

__all__ = ["KEPT", "per_scenario"]

#: Scenarios kept per function: the last ones built (an audit goes through them one at a time)
KEPT = 8

T = TypeVar("T")


def per_scenario(inputs: Callable[[Any], tuple]) -> Callable[[Callable[[Any], T]], Callable[[Any], T]]:
    """A decorator: ``build(scenario)`` computed once per scenario object while ``inputs(scenario)`` (all
    it reads) equals a copy taken when it was built. What ``build`` returns is shared: runs only read it."""
    def decorate(build: Callable[[Any], T]) -> Callable[[Any], T]:
        kept: dict[int, tuple[Any, tuple, T]] = {}

        @wraps(build)
        def cached(sc) -> T:
            found = kept.get(id(sc))
            if found is None or found[0] is not sc or found[1] != inputs(sc):
                if len(kept) >= KEPT:
                    del kept[next(iter(kept))]
                built = build(sc)       # first: a scenario ``build`` refuses is not copied (nor kept)
                found = kept[id(sc)] = (sc, copy.deepcopy(inputs(sc)), built)
            return found[2]
        cached.kept = kept              # type: ignore[attr-defined]  # (for tests)
        return cached
    return decorate
