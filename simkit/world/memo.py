"""Parts of a world built once per scenario: what no run changes, kept while the scenario stays the same.

Exploration and the audit build one scenario's world tens of thousands of times; building its fixed parts (a
scripted stream's pages and event table) was a third of a small world's construction. A scenario is a mutable
dataclass, so a part is kept with a copy of what it was built from, and built again when a scenario edited in
place no longer equals that copy (or, for a check of what the scenario says, no longer equals it type for
type: :func:`same`).
"""
from __future__ import annotations

import copy
import dataclasses
import operator
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

__all__ = ["KEPT", "per_scenario", "same"]

#: Scenarios kept per function: the last ones built (an audit goes through them one at a time)
KEPT = 8

T = TypeVar("T")


_ATOMS = frozenset((str, int, float, bool, type(None)))
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def same(a: Any, b: Any) -> bool:
    """``a == b`` with every value of the same type as its counterpart, through tuples, lists, dicts (in
    order) and dataclasses: ``==`` alone holds ``True``, ``1`` and ``1.0`` equal, and a Scenario edited
    from ``workers = 1`` to ``True`` or a position from ``106`` to ``106.0`` (what no scenario file may say)
    was taken for the one checked before."""
    t = type(a)
    if t is not type(b):
        return False
    if t in _ATOMS:
        return a == b
    if t is tuple or t is list:
        return len(a) == len(b) and all(map(same, a, b))
    if t is dict:
        return len(a) == len(b) and all(map(same, a, b)) and all(map(same, a.values(), b.values()))
    if t not in _FIELDS:
        _FIELDS[t] = tuple(f.name for f in dataclasses.fields(t)) if dataclasses.is_dataclass(t) else None
    names = _FIELDS[t]
    if names is None:
        return a == b
    return all(same(getattr(a, n), getattr(b, n)) for n in names)


def per_scenario(inputs: Callable[[Any], tuple], strict: bool = False) \
        -> Callable[[Callable[[Any], T]], Callable[[Any], T]]:
    """A decorator: ``build(scenario)`` computed once per scenario object while ``inputs(scenario)`` (all
    it reads) equals a copy taken when it was built; ``strict``: equals it type for type too (:func:`same`),
    for a ``build`` that checks what the scenario says. What ``build`` returns is shared: runs only read
    it."""
    unchanged = same if strict else operator.eq

    def decorate(build: Callable[[Any], T]) -> Callable[[Any], T]:
        kept: dict[int, tuple[Any, tuple, T]] = {}

        @wraps(build)
        def cached(sc) -> T:
            found = kept.get(id(sc))
            if found is None or found[0] is not sc or not unchanged(found[1], inputs(sc)):
                if len(kept) >= KEPT:
                    del kept[next(iter(kept))]
                built = build(sc)       # first: a scenario ``build`` refuses is not copied (nor kept)
                found = kept[id(sc)] = (sc, copy.deepcopy(inputs(sc)), built)
            return found[2]
        cached.kept = kept              # type: ignore[attr-defined]  # (for tests)
        return cached
    return decorate
