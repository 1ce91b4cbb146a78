"""State fingerprints: what the future of a one-worker run depends on at
the moment of a crash, hashed, so that exploration can skip a schedule that
reaches a state already explored (docs/exploring.md, "Deduplication").

Each part of the world answers for its own state through its public methods, and this module only hashes the
answers: the world (:meth:`~simkit.world.simulation.World.state`: the workers, the halts, the progress guard,
the external service), the sink (:meth:`~simkit.world.sink.Sink.state`), the store (its checkpoint, its
receipts, which id holds the terminal receipt at each position, its ledger's
:meth:`~simkit.store.settlement.Ledger.state`), the provider
(:meth:`~simkit.world.provider.Provider.stuck_left`, its seeded draws) and the fault plan
(:meth:`~simkit.world.faults.FaultPlan.remaining`).
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping

from simkit.model import TERMINAL
from simkit.world.faults import FaultPlan
from simkit.world.provider import Provider
from simkit.world.simulation import World

__all__ = ["fingerprint"]


class _Opaque(Exception):
    """A part of the state has no stable value: do not deduplicate."""


def _freeze(x):
    """A hashable value of plain data, with a stable ``repr``: numbers, strings, sequences, mappings and sets
    (sorted), dataclasses (by their fields). Anything else has no stable value (:class:`_Opaque`)."""
    if x is None or isinstance(x, (bool, int, float, str, bytes)):
        return x
    if isinstance(x, (tuple, list)):
        return tuple(map(_freeze, x))
    if isinstance(x, Mapping):      # a dict, or a mapping that keeps its entries compactly (store receipts)
        return tuple(sorted((repr(_freeze(k)), _freeze(v)) for k, v in x.items()))
    if isinstance(x, (set, frozenset)):
        return tuple(sorted(repr(_freeze(v)) for v in x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__,) + tuple(_freeze(getattr(x, f.name)) for f in dataclasses.fields(x))
    raise _Opaque(type(x).__name__)


def _store(store) -> tuple:
    """The durable state of the store, as its port answers it: the same answers in memory and on SQLite, so
    that an exploration skips the same schedules on either (``--store sqlite`` once skipped none)."""
    receipts = dict(store.receipts.items())
    holders = {pos: store.id_at(pos) for out, pos in receipts.values() if out in TERMINAL}
    return store.checkpoint, receipts, holders, store.operations.state()


def _provider(provider: Provider) -> tuple:
    """What the provider's future answers depend on: the stuck answers given so far, and the state of its
    seeded ``[generate] lost_fetch`` draws."""
    return provider.stuck_left(), provider.draws_state()


def fingerprint(world: World, plan: FaultPlan | None = None) -> bytes | None:
    """What the future of a one-worker run depends on at the moment of a crash, hashed; ``None`` if unknown.

    Durable state only (a crash discards memory): the store, the sink, the provider, the world's own (see the
    module doc), the simulated time, and the faults still to come. Nothing else may be scheduled (a late reply
    on its way makes the fingerprint ``None``). Append-only logs are left out, and counters kept only as far
    as they can still change an answer (a stuck token's fetch count up to ``stuck``, a transient event's
    failures, the first sighting of a review or hold event). For the checker, the last handler decision per
    event and each worker's last read and response are included. A value with no stable form makes the
    fingerprint ``None``: no deduplication.
    """
    if world.late_replies:
        return None                     # something else is on its way (a late reply): not durable state
    store, provider = world.store, world.provider
    try:
        durable = _store(store)
        last_read = {r[2]: r[3] for r in store.reads}
        last_page = {r[2]: r[3:] for r in provider.log}
        frozen = _freeze((world.clock.now, world.state(), durable, world.sink.state(provider.events),
                          _provider(provider), last_read, last_page))
        scripted, counts = plan.remaining() if plan is not None else ((), {})
        if scripted:
            frozen += (_freeze(scripted), _freeze(counts))
    except _Opaque:
        return None
    return hashlib.sha256(repr(frozen).encode()).digest()
