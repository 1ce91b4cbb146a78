"""State fingerprints: what the future of a one-worker run depends on at the moment of a crash, hashed, so that
exploration can skip a schedule that reaches a state already explored (docs/exploring.md, "Deduplication")."""
from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Mapping

from simkit.world.faults import FaultPlan
from simkit.world.simulation import World

__all__ = ["fingerprint"]


class _Opaque(Exception):
    """A part of the state has no stable value: do not deduplicate."""


def _freeze(x, refs: dict, stack: tuple = ()):
    """A hashable value of ``x``. Objects of ``refs`` stand for themselves by name; any other object is its
    attributes, recursively, so state added to the world later is included without anyone listing it."""
    if x is None or isinstance(x, (bool, int, float, str, bytes)):
        return x
    if id(x) in refs:
        return ("ref", refs[id(x)])
    if id(x) in stack or len(stack) > 12:
        raise _Opaque("cycle")
    inner = stack + (id(x),)
    if isinstance(x, (tuple, list)):
        return tuple(_freeze(v, refs, inner) for v in x)
    if isinstance(x, Mapping):      # a dict, or a mapping that keeps its entries compactly (store receipts)
        return tuple(sorted((repr(_freeze(k, refs, inner)), _freeze(v, refs, inner)) for k, v in x.items()))
    if isinstance(x, (set, frozenset)):
        return tuple(sorted(repr(_freeze(v, refs, inner)) for v in x))
    if isinstance(x, random.Random):
        return x.getstate()
    if isinstance(x, type) or callable(x):
        raise _Opaque(type(x).__name__)
    if dataclasses.is_dataclass(x):
        return (type(x).__name__,) + tuple(_freeze(getattr(x, f.name), refs, inner) for f in dataclasses.fields(x))
    return (type(x).__name__, _state(x, (), refs, inner))


def _state(obj, skip, refs: dict, stack: tuple = ()) -> tuple:
    """Every attribute of ``obj`` except those named in ``skip``."""
    names = list(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in ("__dict__", "__weakref__")]
    if not names and not hasattr(obj, "__dict__"):
        raise _Opaque(type(obj).__name__)
    return tuple((k, _freeze(getattr(obj, k, None), refs, stack)) for k in sorted(set(names)) if k not in skip)


#: History (append-only logs the future never reads) and constants of the run, left out of fingerprints;
#: the parts of them that can still matter are added back, normalised, by :func:`fingerprint`.
_SKIP = {
    "world": {"scenario", "strategy", "seed", "env", "clock", "timing", "provider", "sink", "store", "faults",
              "contract", "trace", "crashes", "_processes", "_instant", "_timed", "_done"},
    "store": {"writes", "receipt_log", "reads", "clock"},
    "sink": {"effects", "decisions", "clock", "_specs", "_calls", "_first_seen"},
    "provider": {"log", "clock", "events", "_entries", "_index", "_chain", "_last", "_place", "head", "start",
                 "lost_fetch", "_fetches"},
}


def fingerprint(world: World, plan: FaultPlan | None = None) -> bytes | None:
    """What the future of a one-worker run depends on at the moment of a crash, hashed; ``None`` if unknown.

    Durable state only (a crash discards memory): the store, the sink, the provider, any other object the
    world holds (attribute by attribute), the simulated time, and the faults still to come. Nothing else may
    be scheduled (a late reply on its way makes the fingerprint ``None``). Append-only logs
    are left out, and counters kept only as far as they can still change an answer (a stuck token's fetch
    count up to ``stuck``, a transient event's failures, the first sighting of a review or hold event). For
    the checker, the last handler decision per event and each worker's last read and response are included.
    A value with no stable form (an open connection, say) makes the fingerprint ``None``: no deduplication.
    """
    try:
        provider, sink, store = world.provider, world.sink, world.store
        roots = {"world": world, "store": store, "sink": sink, "provider": provider}
        refs = {id(v): k for k, v in roots.items()}
        refs.update({id(world.env): "env", id(world.clock): "clock"})
        fetches = provider.stuck_left()
        calls, seen = sink.handler_state(provider.events)
        decided = {rec[3]: rec[4] for rec in sink.decisions}
        last_read = {r[2]: r[3] for r in store.reads}
        last_page = {r[2]: r[3:] for r in provider.log}
        if world.late_replies:
            return None                     # something else is on its way (a late reply): not durable state
        parts = (world.clock.now, *(_state(v, _SKIP[k], refs) for k, v in roots.items()), sink.effect_count,
                 fetches, calls, seen, decided, last_read, last_page)
        frozen = _freeze(parts, refs)
        scripted, counts = plan.remaining() if plan is not None else ((), {})
        if scripted:
            frozen += (_freeze(scripted, refs), _freeze(counts, refs))
    except (_Opaque, AttributeError, KeyError):
        return None
    return hashlib.sha256(repr(frozen).encode()).digest()
