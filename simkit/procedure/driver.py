"""The driver protocol: one method per request of :mod:`simkit.ops`, found by the request's type.

A driver executes the requests a consumer yields (docs/vocabulary.md, "The procedure"). :class:`Driver`
says what each request does to the durable world, with no time, no fault and no report: the store's
transactions behind ``Commit``, ``Barrier`` and ``Overwrite``, seed 001's settlement in one transaction
or two (``split_validate_write``, docs/vocabulary.md, "Settlement") and step 7's caught-up test. Its
subclasses add the rest: the SimPy world (:class:`simkit.world.simulation.World`: latency, crash
points, faults, trace rows) and the live worker (:class:`simkit.live.worker.Driver`: real sleeps,
SQLite transactions, reports to its supervisor).

A subclass overrides a request's method to add its own; :attr:`Driver.dispatch` is rebuilt for every
subclass, once, from the methods it ends up with. In a driver with simulated time
(:attr:`Driver.simulated`, the world) the requests :mod:`simkit.requests` declares ``timed`` take
time: their methods are generator functions, run with ``yield from`` (:attr:`Driver.timed`), and
every other method is a plain function; in a driver without (the base, the live worker) every method
is a plain function. A class whose methods disagree with the declaration, or lack one, is a
``TypeError`` when it is created, not a request silently run on the wrong path. A part of a driver
(``class Part(Driver, part=True)``) is checked in the drivers it makes up. A subclass provides
``store``, ``sink``, ``provider``, ``service``, ``settlement`` (the policy's name),
:meth:`Driver.principal` and :meth:`Driver.finish`.
"""
from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace
from functools import partial
from inspect import isgeneratorfunction
from typing import Any, ClassVar, Protocol

from simkit.model import Checkpoint, Event, Page, Reply, Reservation, canonical_request, fingerprint, owned
from simkit.ops import (
    DECLARED,
    REQUESTS,
    Barrier,
    Call,
    Commit,
    Effect,
    Fetch,
    Halt,
    Handle,
    Load,
    Lookup,
    Overwrite,
    Reserve,
    Settle,
    Skip,
    Wait,
)

__all__ = ["REQUESTS", "SPLIT", "Driver", "Halted", "at_once", "tables"]

# REQUESTS (from simkit.ops): every request a consumer may yield; the driver method of each is its row's name.
#: The settlement policy that settles in two store transactions, a validation and then a write.
SPLIT = "split_validate_write"


class Halted(Exception):
    """The consumer halted (seed 000 step 3); ``args[0]`` is its reason."""


def at_once(steps: Generator) -> Any:
    """The result of a driver generator that has nothing to wait for (a driver without simulated time)."""
    try:
        steps.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("a driver without simulated time was asked to wait")


class Store(Protocol):
    """What a driver asks of its store (:mod:`simkit.store`: the memory store, the SQLite one)."""

    @property
    def operations(self) -> Any: ...     # the settlement ledger (:class:`simkit.store.settlement.Ledger`)
    @property
    def checkpoint(self) -> Checkpoint: ...     # the durable checkpoint, read without a logged Load
    def load(self, worker: int, /) -> Checkpoint: ...
    def lookup(self, events, /) -> Any: ...
    def commit_event(self, worker: int, event_id: str, position: int, outcome: str, applied_position: int,
                     effect=None, /) -> bool: ...
    def compare_and_swap(self, worker: int, cursor: str, version: int, new_cursor: str, new_version: int,
                         applied_position: int, /) -> bool: ...
    def overwrite(self, worker: int, new_cursor: str, new_version: int, applied_position: int, /) -> bool: ...


class Sink(Protocol):
    """What a driver asks of its sink (:class:`simkit.world.sink.Sink`)."""

    def record(self, worker: int, event_id: str, /) -> None: ...
    def decide(self, worker: int, event: Event, /) -> str: ...
    def effect(self, worker: int, event_id: str, /) -> Any: ...


class Provider(Protocol):
    """What a driver asks of its provider (:class:`simkit.world.provider.Provider`)."""

    def fetch(self, cursor: str, worker: int, /) -> Page | None: ...
    def is_end(self, cursor: str, /) -> bool: ...


class Service(Protocol):
    """What a driver asks of its external service (:class:`simkit.world.external.ExternalService`)."""

    def execute(self, worker: int, identity: Reservation, sent: float | None = None, /) -> Reply: ...


class Driver:
    """Executes requests against ``store``, ``sink``,
    ``provider`` and ``service``; the base of every driver."""

    # what a subclass provides (the module docstring)
    store: Store
    sink: Sink
    provider: Provider
    service: Service
    #: the settlement policy's name (:data:`simkit.model.POLICIES`)
    settlement: str

    #: request type -> this class's function for it, called as ``function(driver, worker, request)``
    #: (functions, not bound methods: a table per class, built once, and no reference cycle through a driver)
    dispatch: ClassVar[dict[type, Callable]] = {}
    #: does this driver spend simulated time (the world)? Then :attr:`timed` holds the requests
    #: declared ``timed``.
    simulated: ClassVar[bool] = False
    #: the request types whose function in :attr:`dispatch` is a generator function (it takes time)
    timed: ClassVar[frozenset[type]] = frozenset()

    def __init_subclass__(cls, part: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        tables(cls, check=not part)

    def __init__(self) -> None:
        #: worker -> the cursor of its last fetch that reached the provider (step 7's caught-up test)
        self._fetched: dict[int, str] = {}

    # -- what a subclass provides ----------------------------------------------------------------------------
    def principal(self) -> str:
        """The authorization binding in force now (seed 001)."""
        raise NotImplementedError(f"{type(self).__name__} must say which binding is in force")

    def finish(self, worker: int, status: str) -> None:
        """``worker`` is done for now: ``caught_up`` at the end of the stream (step 7)."""
        raise NotImplementedError(f"{type(self).__name__} must say what a caught-up worker does")

    def between_transactions(self, worker: int, event, decision) -> Generator:
        """What happens between the validation and the write of ``split_validate_write``: nothing here."""
        return
        yield  # pragma: no cover - makes this a generator

    def record_effect(self, worker: int, event_id: str) -> None:
        """The effect of a transactional sink, inside a commit's transaction (invariant 4)."""
        self.sink.record(worker, event_id)

    # -- the requests ----------------------------------------------------------------------------------------
    def load(self, worker: int, op: Load):
        return self.store.load(worker)

    def fetch(self, worker: int, op: Fetch):
        page = self.provider.fetch(op.cursor, worker)
        self._fetched[worker] = op.cursor
        return page

    def lookup(self, worker: int, op: Lookup):
        return self.store.lookup(op.events)

    def skip(self, worker: int, op: Skip) -> None:
        return None

    def handle(self, worker: int, op: Handle) -> str:
        return self.sink.decide(worker, op.event)

    def effect(self, worker: int, op: Effect) -> bool:
        self.sink.effect(worker, op.event.id)
        return True

    def reserve(self, worker: int, op: Reserve):
        e = op.event
        record = self.store.operations.reserve(worker, e.id, fingerprint(canonical_request(e)),
                                               self.principal())
        # a copy, its reply too: the record stays the store's
        return replace(record, reservation=owned(record.reservation), result=owned(record.result))

    def call(self, worker: int, op: Call, sent: float | None = None):
        """The service executes the call, issued at ``sent`` (by default now: seed 001's binding in force)."""
        self.store.operations.record_of(op.reservation)     # one of a Reserve's, or the consumer's one line
        return self.service.execute(worker, op.reservation, sent)

    def settle(self, worker: int, op: Settle) -> str:
        return at_once(self.settlement_of(worker, op.event, op.reservation, op.observation))

    def commit(self, worker: int, op: Commit) -> bool:
        """Invariant 4: the receipt, ``applied_position`` and
        (``with_effect``) the effect in one transaction."""
        e = op.event
        effect = partial(self.record_effect, worker, e.id) if op.with_effect else None
        return self.store.commit_event(worker, e.id, e.position, op.outcome, op.applied_position, effect)

    def barrier(self, worker: int, op: Barrier) -> bool:
        return self.store.compare_and_swap(worker, op.cursor, op.version, op.next_cursor, op.next_version,
                                           op.applied_position)

    def overwrite(self, worker: int, op: Overwrite) -> bool:
        return self.store.overwrite(worker, op.next_cursor, op.next_version, op.applied_position)

    def wait(self, worker: int, op: Wait) -> None:
        """Step 7: a worker that backs off after its last fetch reached the end of the stream, where the
        durable ``resume_cursor`` is, is caught up, done for now, whichever reason it gives (one that said
        ``blocked`` there, with exactly ``safe``'s durable writes, ran to the time limit, incomplete). A page
        read ahead to the end is no end while its attempt's page is not done: one that said ``caught_up``
        there, blocked on its last page, ended the run with that page's events pending."""
        fetched = self._fetched.get(worker, "")
        if self.provider.is_end(fetched) and self.store.checkpoint.resume_cursor == fetched:
            self.finish(worker, "caught_up")

    def halt(self, worker: int, op: Halt):
        raise Halted(op.reason)

    # -- shared logic ----------------------------------------------------------------------------------------
    def settlement_of(self, worker: int, event, reservation, observation) -> Generator:
        """Seed 001 steps 3-6 under the run's policy: one store transaction, or under
        ``split_validate_write`` a validation and a write with
        :meth:`between_transactions` in between. Returns the record's state after."""
        ledger = self.store.operations
        if self.settlement != SPLIT:
            return ledger.settle(self.settlement, worker, reservation, observation)
        decision = ledger.validate(worker, reservation, observation)
        yield from self.between_transactions(worker, event, decision)
        return ledger.write(worker, decision)


def tables(cls: type[Driver], check: bool = True) -> None:
    """Build ``cls``'s :attr:`~Driver.dispatch` and :attr:`~Driver.timed` from the requests declared in
    :mod:`simkit.requests` (:data:`simkit.ops.DECLARED`, read now); with ``check``, refuse a class
    whose methods disagree with the declaration, or lack one (``TypeError``)."""
    dispatch, timed = {}, set()
    for t, r in DECLARED.items():
        f = getattr(cls, r.name, None)
        if not callable(f):
            raise TypeError(f"{cls.__qualname__} has no method {r.name}() for request {t.__name__} "
                            f"(declared in simkit/requests.py)")
        takes_time = cls.simulated and r.timed
        if check and isgeneratorfunction(f) != takes_time:
            raise TypeError(f"{cls.__qualname__}.{r.name} must be a {_MUST[cls.simulated, r.timed]}")
        dispatch[t] = f
        if takes_time:
            timed.add(t)
    cls.dispatch, cls.timed = dispatch, frozenset(timed)


_AT_ONCE = "plain function: a driver without simulated time (simulated = False) runs every request at once"
#: (a driver with simulated time, a request declared timed) -> what its method must be, and why
_MUST = {
    (True, True): "generator function, run with yield from: the request takes simulated time "
                  "(simkit/requests.py, timed=True)",
    (True, False): "plain function, run at once: the request takes no simulated time "
                   "(simkit/requests.py, timed=False; its crash points fall around it all the same)",
    (False, True): _AT_ONCE,
    (False, False): _AT_ONCE,
}


tables(Driver)
