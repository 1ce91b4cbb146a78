"""The worker side of ``simkit live``: seed 000's consumer driven synchronously against SQLite files.

A :class:`Harness` binds the simulation's own provider, sink and external service to durable containers
(:mod:`simkit.store.durable`) in the run folder, next to the :class:`~simkit.store.sqlite.SQLiteStore`; a
:class:`Driver` (a :class:`simkit.procedure.driver.Driver`, as the SimPy world is) executes the requests the
very same consumer classes yield, one transaction each, and reports to the supervisor
(:mod:`simkit.live.supervisor`) on a pipe: ``ready``, ``page`` after each page barrier, ``at POINT`` when it
reaches the crash point it was told to die at, ``caught_up``, ``stopped`` or ``halt REASON`` at the end
(docs/live.md).
"""
from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from simkit.errors import ConsumerError, told
from simkit.model import Reservation, Scenario
from simkit.ops import DECLARED, WELL_FORMED, Reserve, crash_points
from simkit.procedure import driver
from simkit.procedure.consumer import Consumer, Contract
from simkit.procedure.strategies import MALFORMED_SIGNS, RAISED, consumer_error, refuse_malformed
from simkit.store.durable import DurableDict, DurableList, DurableSet, pack, transaction, unpack
from simkit.store.sqlite import SQLiteStore, connect
from simkit.truth.log import DecisionRow, EffectRow, ServedRow
from simkit.world import provider as providers
from simkit.world.external import ExternalService, Request, principal_at
from simkit.world.sink import Sink

__all__ = ["FILES", "TIME_SCALE", "Driver", "Harness", "LiveClock", "said", "heard", "worker_main"]

#: Simulated time units per real second: ``backoff = 5.0`` waits 5 ms, ``resolve_after = 30.0`` lasts 30 ms.
TIME_SCALE = 1000.0
#: The run folder's databases.
FILES = ("store.db", "provider.db", "sink.db")
#: The longest a worker sleeps for one latency, in seconds, and a live run's longest timeout
#: (:data:`simkit.live.run.MAX_SECONDS` is this)
LONGEST_SLEEP = 10**6


class LiveClock:
    """Real time since the run began, in simulated units; sequence numbers from the system-wide monotonic
    clock, so that the logs of all processes and all files merge in real order."""

    __slots__ = ("t0", "last", "held")

    def __init__(self, t0: float):
        self.t0, self.last = t0, 0
        #: the instant :meth:`hold` stopped the clock at, while it does
        self.held: float | None = None

    @property
    def now(self) -> float:
        return self.held if self.held is not None else (time.monotonic() - self.t0) * TIME_SCALE

    @contextmanager
    def hold(self) -> Iterator[float]:
        """One instant for what the simulation does at one instant (a reservation's binding, its record)."""
        self.held = self.now
        try:
            yield self.held
        finally:
            self.held = None

    def tick(self) -> int:
        self.last = max(time.monotonic_ns(), self.last + 1)
        return self.last


# -- the durable world of a run ------------------------------------------------------------------------------
def _swap(obj, name: str, container):
    """Replace a public container of a simulation object by
    a durable one (loudly, if the attribute has gone)."""
    if not hasattr(obj, name):
        raise AttributeError(f"{type(obj).__name__} has no {name}: simkit.live.supervisor needs updating")
    setattr(obj, name, container)


def _request(r: Request) -> tuple:
    return (r.seq, r.time, r.worker, pack([r.identity.operation_id, r.identity.fingerprint,
                                           r.identity.binding, r.identity.generation]), r.fate, r.sent)


def _key(item) -> str:
    """A set member (a tuple, or a dataclass such as a Reservation) as JSON."""
    return pack(dataclasses.astuple(item) if dataclasses.is_dataclass(item) and not isinstance(item, type)
                else item)


class Harness:
    """The store, provider, sink and external service of a live run, bound to the files in ``folder``."""

    def __init__(self, folder: Path, scenario: Scenario, provider: providers.Provider, clock,
                 store: SQLiteStore):
        self.scenario, self.clock, self.store = scenario, clock, store
        # The provider and the sink stand for remote systems with their own durability: WAL with synchronous =
        # NORMAL survives any SIGKILL (only a power cut could lose their last commits); the store keeps FULL.
        self.pdb, self.sdb = connect(folder / "provider.db", "NORMAL"), connect(folder / "sink.db", "NORMAL")
        self.provider = provider
        provider.clock = clock
        provider.keep_fetch_counts(DurableDict(self.pdb, "fetches"))
        _swap(provider, "log", DurableList(self.pdb, "served",
                                           ("seq", "time", "worker", "cursor", "next_cursor",
                                              "event_ids"),
                                           lambda r: (*r[:5], pack(r[5])),
                                           lambda r: ServedRow(r[0], r[1], r[2], r[3], r[4], unpack(r[5]))))
        self.sink = sink = Sink(scenario.sink, scenario.events, clock, provider.events)
        sink.keep_handler_state(DurableDict(self.sdb, "handler_calls"),
                                DurableDict(self.sdb, "handler_first_seen"))
        _swap(sink, "decisions", DurableList(self.sdb, "decisions",
                                             ("seq", "time", "worker", "event_id", "decision"),
                                             decode=lambda r: DecisionRow(*r)))
        if sink.external:  # a transactional sink's effects are the store's (SQLiteStore.record_effect)
            _swap(sink, "effects", DurableList(self.sdb, "effects", ("seq", "time", "worker", "event_id"),
                                               decode=lambda r: EffectRow(*r)))
            _swap(sink, "effect_count", DurableDict(self.sdb, "effect_count"))
        self.service = ExternalService(sink, clock)
        _swap(self.service, "requests", DurableList(
            self.sdb, "service_requests", ("seq", "time", "worker", "identity", "fate", "sent"), _request,
            lambda r: Request(r[0], r[1], r[2], Reservation(*unpack(r[3])), r[4], r[5])))
        # the service's memory of what it ran: only ever added to and asked about, whatever its keys are
        self.service.keep_ran(DurableSet(self.sdb, "service_ran", _key))

    @classmethod
    def create(cls, folder: Path, scenario: Scenario, provider: providers.Provider, clock) -> Harness:
        """Fresh databases holding the scenario's durable state at time 0 (as the SimPy world's)."""
        start, receipts = scenario.initial.durable(provider.events.values(), provider.start)
        h = cls(folder, scenario, provider, clock, SQLiteStore(start, receipts, clock, folder / "store.db"))
        with h.store.transaction(), transaction(h.sdb):
            for eid in receipts:            # their effects happened before time 0
                if h.sink.external:
                    h.sink.record_initial(eid)
                else:
                    h.store.record_initial_effect(eid)
        return h

    def ground_truth(self) -> tuple[providers.Provider, Sink, ExternalService]:
        """Provider, sink and service with their logs read back into plain lists, for the checker."""
        p, s, svc = self.provider, self.sink, self.service
        _swap(p, "log", list(p.log))
        p.keep_fetch_counts(p.fetch_counts())
        _swap(s, "effects", list(s.effects) if s.external else self.store.effects)
        s.effect_count = dict(Counter(e[3] for e in s.effects))
        _swap(s, "decisions", list(s.decisions))
        svc.requests = list(svc.requests)
        return p, s, svc

    def close(self) -> None:
        for db in (self.pdb, self.sdb):
            db.close()
        self.store.close()


# -- the worker ---------------------------------------------------------------------------------------------
class _Done(Exception):
    pass


class Driver(driver.Driver):
    """Executes a consumer's requests synchronously against the harness; reports to the supervisor on ``fd``.
    Each request's method adds real time (the scenario's latencies, :data:`TIME_SCALE`) and the transaction of
    the database it writes to what :class:`simkit.procedure.driver.Driver` does.

    ``target`` = (point, occurrence): at that pass of that crash point, report it and wait to be killed.
    """

    store: SQLiteStore                  # the harness's, narrower than what the base driver asks of a store

    def __init__(self, h: Harness, strategy: type[Consumer], worker: int, fd: int, target=None):
        super().__init__()
        self.h, self.strategy, self.worker, self.fd, self.target = h, strategy, worker, fd, target
        self.store, self.sink, self.provider, self.service = h.store, h.sink, h.provider, h.service
        self.contract = Contract(backfills=h.scenario.backfills, external_sink=h.sink.external)
        self.settlement = h.scenario.settlement
        self.timing = h.scenario.timing
        self._passes: Counter = Counter()
        #: when the result of its last request that took simulated time was ready, and so when the one in
        #: flight was issued (docs/live.md)
        self.answered: float = h.clock.now
        self.issued: float = self.answered

    def say(self, line: str) -> None:
        said(self.fd, line)

    def run(self) -> str:
        """Until caught up (``caught_up``), halted (``halt REASON``) or stopped (``run()`` returned); a
        malformed request (:data:`simkit.ops.WELL_FORMED`) is the consumer's one line, never executed."""
        try:
            gen = self.strategy(self.contract).run()
        except RAISED as exc:
            raise consumer_error(self.strategy, exc) from exc
        result = None
        try:
            while True:
                try:
                    op = gen.send(result)
                except StopIteration:        # step 7's "stop", as in the simulation: the worker is done
                    return "stopped"
                except RAISED as exc:        # the consumer's own code: one line, as in the simulation
                    raise consumer_error(self.strategy, exc) from exc
                if (ok := WELL_FORMED.get(type(op))) is not None and not ok(op):
                    refuse_malformed(self.strategy, op, self.worker)  # before its crash points, as simulated
                before, after = crash_points(op)
                if before:
                    self._point(before)
                result = self.execute(op)
                if after:
                    self._point(after)
        except driver.Halted as halt:
            return f"halt {halt.args[0]}"
        except _Done as done:
            return str(done)

    def execute(self, op):
        """One request, by its type (:attr:`~simkit.procedure.driver.Driver.dispatch`); a request about one
        event with the event where the stream holds it, as in the simulation (``EventTable.placed``)."""
        run = self.dispatch.get(t := type(op))
        if run is None:
            raise consumer_error(self.strategy, None, op)
        if DECLARED[t].per_event:
            op = self.provider.events.placed(op)
        # a simulated worker issues this request when it has the result of its last one that took time
        self.issued = self.answered
        with self._one_instant() if t is Reserve else nullcontext():
            try:
                result = run(self, self.worker, op)
            except MALFORMED_SIGNS:
                refuse_malformed(self.strategy, op, self.worker)  # a malformed request, or a value no
                raise                                   # store holds: the consumer's line, as simulated
            if DECLARED[t].timed:                       # load, lookup, handle... take no simulated time
                self.answered = self.h.clock.now
        return result

    @contextmanager
    def _one_instant(self) -> Iterator[None]:
        """A reservation's binding and its record at one instant, as simulated, once it holds the store's
        write lock: a rotation while its transaction waited or committed flagged ``safe`` stale, and a binding
        read before another worker's renewal took the record back to an older principal."""
        with self.store.transaction(), self.h.clock.hold():
            yield

    def _point(self, point: str) -> None:
        self._passes[point] += 1
        if self.target == (point, self._passes[point]):
            self.say(f"at {point}")
            time.sleep(60)                   # the supervisor kills us here
            os._exit(3)

    def _spend(self, delay: float) -> None:
        # the network, as the scenario times it; past LONGEST_SLEEP (a latency of 1e13 units: sleep() cannot
        # take it), as long as a run may last at most: its timeout ends it first
        time.sleep(min(delay / TIME_SCALE, LONGEST_SLEEP))

    # -- what the base driver asks of a driver ---------------------------------------------------------------
    def principal(self) -> str:
        return principal_at(self.h.scenario.rotate_at, self.h.clock.now)

    def finish(self, worker: int, status: str) -> None:
        raise _Done(status)

    def record_effect(self, worker: int, event_id: str) -> None:
        self.store.record_effect(worker, event_id)  # the store's own table: one transaction with the receipt

    # -- requests: time, transactions and reports ------------------------------------------------------------
    def fetch(self, worker, op):
        self._spend(self.timing.fetch_latency)
        with transaction(self.h.pdb):
            return super().fetch(worker, op)

    def handle(self, worker, op):
        with transaction(self.h.sdb):
            return super().handle(worker, op)

    def effect(self, worker, op):
        self._spend(self.timing.effect_latency)
        if not self.sink.external:  # a transactional sink's effects are the store's, the ones judged: an
            with self.store.transaction():      # effect of its own went to the worker's memory, unseen
                self.record_effect(worker, op.event.id)
            return True
        with transaction(self.h.sdb):
            return super().effect(worker, op)

    def call(self, worker, op):
        """Issued at its worker's last result of a request that took simulated time (:meth:`execute`): a
        rotation while a reservation committed, or during a ``Load``, is after its last choice (seed 001)."""
        self._spend(self.timing.effect_latency)
        with transaction(self.h.sdb):
            return super().call(worker, op, self.issued)

    def barrier(self, worker, op):
        swapped = super().barrier(worker, op)
        self.say("page")                     # the supervisor's measure of the pace of work
        return swapped

    def overwrite(self, worker, op):
        done = super().overwrite(worker, op)
        self.say("page")
        return done

    def wait(self, worker, op):
        super().wait(worker, op)
        self._spend(self.timing.backoff)


def _die_with_parent() -> None:
    """Linux: SIGKILL this worker when its supervisor dies, even by SIGKILL (no orphan goes on writing), and
    adopt the orphans of what its consumer forks (a daemon), for the supervisor to kill with it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)            # PR_SET_PDEATHSIG
        libc.prctl(36, 1)                        # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def said(fd: int, line: str) -> None:
    """One report line to the supervisor, which reads it back with :func:`heard`: the text as a JSON string,
    so a consumer's ``halt`` reason reaches the verdict as ``run`` gives it. A lone surrogate in it
    (``"x\\ud800"``) raised in ``encode()`` (the worker died five times with a traceback), and a newline was
    a space."""
    os.write(fd, json.dumps(line).encode() + b"\n")


def heard(line: bytes) -> str:
    """A report line of :func:`said` as its text; another line (bytes a consumer in process wrote on the
    report pipe) as UTF-8, what is no UTF-8 replaced."""
    try:
        text = json.loads(line)
    except ValueError:
        text = None
    return text if isinstance(text, str) else line.decode(errors="replace")


def worker_main(folder, scenario, provider, strategy, worker, t0, target, fd) -> None:
    # Ctrl-C and a hangup reach the whole process group: the supervisor stops the workers itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        _die_with_parent()
    try:
        clock = LiveClock(t0)
        h = Harness(folder, scenario, provider, clock, SQLiteStore.open(folder / "store.db", clock))
        driver = Driver(h, strategy, worker, fd, target)
        driver.say("ready")
        outcome = driver.run()
    except RAISED as exc:                        # one line to the supervisor, which stops the run with it
        line = told(exc) if isinstance(exc, ConsumerError) else f"{type(exc).__name__}: {told(exc)}"
        said(fd, f"error {' '.join(line.split())}")
        os._exit(1)
    driver.say(outcome)
