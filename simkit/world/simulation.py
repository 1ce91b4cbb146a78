"""The SimPy world: provider, store, sink, external service and workers; it executes a consumer's requests.

Each worker is a SimPy process driving one consumer generator. Requests take simulated latency, crash points
fall before and after them (docs/vocabulary.md, "Crash points"), a request can be lost on its way (it takes no
effect) or its reply can be lost (it took effect): either way the caller gets ``LOST`` after ``timeout`` and
cannot tell which. A crash discards the consumer with all its memory; the worker restarts after
``restart_delay`` from durable state only. Timed requests: :mod:`~simkit.world.timed`; seed 001's external
calls: :mod:`~simkit.world.calls`; crash points and lost replies: :mod:`~simkit.world.points` (the bases of
:class:`World`); progress guard: :mod:`~simkit.world.guard`.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from functools import partial
from types import GeneratorType
from typing import ClassVar

import simpy

from simkit.errors import ScenarioError
from simkit.model import POLICIES, Fault, Scenario
from simkit.ops import DECLARED, LOST, WELL_FORMED, Call, Commit, Effect, crash_points
from simkit.procedure import strategies
from simkit.procedure.consumer import Consumer, Contract
from simkit.procedure.driver import Driver, Halted
from simkit.procedure.lives import end, not_rerunning, start
from simkit.procedure.strategies import RAISED, consumer_error, refuse_malformed, strategy_ref
from simkit.store.memory import MemoryStore
from simkit.store.sqlite import SQLiteStore, make_store
from simkit.truth.clock import Clock
from simkit.truth.ground import GroundTruth
from simkit.truth.journal import journal
from simkit.truth.trace import CONFLICT, Trace, commit_step, untraced

from . import provider as providers
from .external import ExternalService
from .faults import FaultPlan
from .guard import (
    GUARD_CHUNK,
    STALL_STEPS,
    STEP_BASE,
    STEPS_PER_ITEM,
    Guard,
    Stopped,
    earned_budget,
    wall_clock,
)
from .points import Crash
from .quick import failed as quick_failed
from .quick import quick_path
from .sink import Sink
from .timed import TimedRequests

__all__ = ["GUARD_CHUNK", "LATER", "STALL_STEPS", "STEPS_PER_ITEM", "STEP_BASE", "Guard", "World"]


#: What :meth:`World._commit_at_once` answers when the commit must take the timed path (crash points, faults).
LATER = object()


class World(TimedRequests):
    """Everything one run needs; ground truth lives in ``provider``, ``store`` and ``sink``. The driver of the
    simulation (:class:`~simkit.procedure.driver.Driver`): each request's method adds simulated latency,
    faults and trace rows to what the request does. The requests :mod:`simkit.requests` declares ``timed``
    take simulated time: their methods are generator functions (checked when a class is created)."""

    simulated = True
    #: request type -> the function that executes it at once (:meth:`at_once_table`), per class
    _at_once: ClassVar[dict[type, Callable]]
    # the world's own parts, narrower than what a driver asks of them
    provider: providers.Provider
    store: MemoryStore | SQLiteStore
    sink: Sink
    service: ExternalService

    def __init__(self, scenario: Scenario, strategy: type[Consumer], seed: int,
                 faults: tuple[Fault, ...] = (), settlement: str | None = None, keep_trace: bool = True):
        """``keep_trace`` false: no trace (``trace`` is ``None``), for a run judged and thrown away."""
        not_rerunning()
        super().__init__()
        self.scenario = scenario
        self.settlement = scenario.settlement if settlement is None else settlement
        if self.settlement not in POLICIES:
            raise ScenarioError(f"settlement {self.settlement!r}: not one of {', '.join(POLICIES)}",
                                param="settlement")
        self.strategy, self.seed = strategy, seed
        self.env = simpy.Environment()
        self.clock = Clock(self.env)
        self.timing = scenario.timing
        self.provider = providers.build(scenario, seed)
        self.provider.clock = self.clock
        self.sink = Sink(scenario.sink, scenario.events, self.clock, self.provider.events)
        start, receipts = scenario.initial.durable(  # (events name initial receipts: seed 000 step 1)
            self.provider.events.values() if scenario.initial.receipts else (), self.provider.start)
        for eid in receipts:
            self.sink.record_initial(eid)
        self.store = make_store(scenario.store, start, receipts, self.clock)
        self.service = ExternalService(self.sink, self.clock)
        self.faults = FaultPlan(tuple(scenario.faults) + tuple(faults), scenario.random_faults, seed)
        self.faults.record = False
        self.contract = Contract(backfills=scenario.backfills, external_sink=self.sink.external)
        self.trace = Trace() if keep_trace else None
        if self.trace is None:
            self._row = untraced  # type: ignore[method-assign]  # (not a bound method kept: a cycle)
        #: one commit's rows in one call (:meth:`_journaled`): memory store, sink's own effect, default ids
        store = self.store
        self._journal = (journal(self.sink.effects, store.receipt_log, store.writes, self.trace)
                         if type(store) is MemoryStore and type(self).record_effect is Driver.record_effect
                         and self.provider.events.ids is None else None)
        #: the usual requests in C where they stand for this world's own (:mod:`.quick`), else None
        self._quick = quick_path(self, World.handle, World._commit_at_once, World._journaled, World._place)
        self.halts: list[tuple[float, int, str]] = []
        self.crashes = 0
        self._status = {w: "active" for w in range(1, scenario.workers + 1)}
        self._finished: dict[int, str] = {}     # worker -> how it first finished: once done, it stays done
        self.stopped_early = False              # a worker's run() returned before the end of the stream
        self._done = self.env.event()
        self._solo = scenario.workers == 1      # no other worker can act while this one spends time
        self._late = 0                          # late-reply processes still to arrive
        self._placed: tuple[str | None, int] = (None, 0)     # the durable cursor last placed, and its place
        self.completed = False
        #: ``None``, or why the progress guard ended the run (:data:`STALL_STEPS`, :meth:`step_budget`)
        self.stopped: str | None = None
        self.guard = Guard(self.step_budget(),
                           partial(earned_budget, scenario.workers, self.store, self.provider))
        self._processes: list = []              # the generators of every SimPy process this world started
        self.issued = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._at_once = cls.at_once_table()

    @classmethod
    def at_once_table(cls) -> dict:
        """Request type -> the function that executes it at once: each request declared neither ``timed`` nor
        with crash points (:mod:`simkit.requests`; any other goes through :meth:`_execute`, between its
        points), and ``Commit``'s quick path (:meth:`_commit_at_once`, which may answer :data:`LATER`) unless
        this class has a ``commit`` of its own, which the quick path would skip."""
        table = {t: f for t, f in cls.dispatch.items() if t not in cls.timed and not DECLARED[t].points}
        if cls.commit is TimedRequests.commit:
            table[Commit] = cls._commit_at_once
        return table

    # -- running ------------------------------------------------------------------------------------------
    def run(self) -> World:
        for w in self._status:
            self._start(self._worker(w))
        limit = self.env.timeout(self.timing.time_limit)
        try:
            with wall_clock(lambda: f"strategy {strategy_ref(self.strategy)}"):
                self.env.run(until=self.env.any_of([self._done, limit]))
        except Stopped as stop:
            self.stopped = stop.args[0]
        finally:
            for process in self._processes:  # their frames hold the world: let it be freed by reference count
                process.close()
        self.completed = self._done.triggered and self.stopped is None and not self.stopped_early
        return self

    def ground_truth(self) -> GroundTruth:
        """What the judge reads about this run (:class:`~simkit.truth.ground.GroundTruth`): views of the logs
        of the provider, store, sink and service, copied nothing."""
        return GroundTruth.build(provider=self.provider, store=self.store, sink=self.sink,
                                 service=self.service,
                                 halts=self.halts, completed=self.completed, stopped=self.stopped,
                                 scenario=self.scenario, settlement=self.settlement,
                                 backfills=self.contract.backfills, trace=self.trace)

    def state(self) -> tuple:
        """For fingerprints, what the future depends on beyond
        store, sink, provider: status, halts, guard, service."""
        g = self.guard
        return (self._status, self._finished, self._fetched, self.halts, (g.steps, g.at, g.instant),
                self.service.state())

    @property
    def late_replies(self) -> int:
        """Late replies on their way (:meth:`_late_reply`): while
        there is one, more than the workers is scheduled."""
        return self._late

    def step_budget(self) -> int:
        """The most requests this run may take by now (:func:`~simkit.world.guard.earned_budget`)."""
        return earned_budget(self.scenario.workers, self.store, self.provider)

    def _start(self, process) -> None:
        self._processes.append(process)
        self.env.process(process)

    def _worker(self, worker: int):
        """One worker: a consumer driven request by request, restarted from durable state after each crash.
        A request is refused before it runs when it is malformed (:data:`~simkit.ops.WELL_FORMED`), executed
        at once when its method can (:attr:`_at_once`), else through :meth:`_execute`."""
        at_once, well_formed = self._at_once, WELL_FORMED
        left = GUARD_CHUNK                          # requests until the next call of the progress guard
        while True:
            gen = start(self.strategy, self.contract)    # a new life: it remembers nothing
            result = failed = None
            quick = self._quick if type(gen) is GeneratorType else None
            try:
                while True:
                    try:
                        if quick is None:
                            op = gen.send(result)
                            left -= 1
                        else:                       # the usual requests executed in C, up to the next one
                            op, left, failed = quick(self, gen, result, left, worker)
                    except StopIteration:           # step 7's "stop": the worker is done, at the end or not
                        self._row(worker, "stopped")
                        self.finish(worker, "stopped" if self._at_end(worker) else "stopped_early")
                        return
                    except RAISED as exc:  # the consumer's own code: no traceback, one line (CLI exit 2)
                        raise consumer_error(self.strategy, exc) from exc
                    if failed is not None:
                        quick_failed(self.strategy, worker, op, failed)
                    if not left:
                        left = GUARD_CHUNK
                        self.guard.chunk(self.clock.now)
                    if (ok := well_formed.get(t := type(op))) is not None and not ok(op):
                        refuse_malformed(self.strategy, op, worker)     # (raises: a False is malformed's)
                    try:  # a request the world cannot execute: is it malformed?
                        if (now := at_once.get(t)) is None or (
                            result := now(self, worker, op)
                        ) is LATER:
                            result = yield from self._execute(worker, op)
                    except strategies.MALFORMED_SIGNS:
                        refuse_malformed(self.strategy, op, worker)
                        raise
            except Crash:
                end(self.strategy, gen)
                self.crashes += 1
                self._status[worker] = "active"
                yield from self._latency(self.timing.restart_delay)
                self._row(worker, "restart")
            except Halted:
                end(self.strategy, gen)
                return
            except GeneratorExit:       # the run is over (World.run closes its workers): so is this life
                end(self.strategy, gen)
                raise
            except BaseException:       # a run cut short from within (explore's _Done): its life too
                with suppress(Exception):
                    end(self.strategy, gen)
                raise

    def _execute(self, worker: int, op):
        """A request between its crash points (docs/vocabulary.md, "Crash points"): one that takes simulated
        time, or has crash points, or the quick path deferred. ``Commit(with_effect=True)`` on an external
        sink is the call, then the commit: no external sink joins the store's transaction (invariant 4 offers
        one only where the sink has one), so the crash points of both fall between them."""
        t = type(op)
        run = self.dispatch.get(t)
        if run is None:
            raise consumer_error(self.strategy, None, op)
        if t is Commit and op.with_effect and self.sink.external:
            if (yield from self._execute(worker, Effect(op.event))) is LOST:
                return LOST
            return (yield from self._execute(worker, Commit(op.event, op.outcome, op.applied_position)))
        if per_event := DECLARED[t].per_event:  # its faults strike where the stream holds its event
            op = self.provider.events.placed(op)
        event = op.event if per_event else None
        before, after = crash_points(op)
        if before and (pause := self._point(worker, before, event)) is not None:
            if t is Call:                   # issued before its pause (ExternalCalls.call takes it)
                self.issued[worker] = self.clock.now
            yield from self._pause(worker, pause, event)
        result = (yield from run(self, worker, op)) if t in self.timed else run(self, worker, op)
        if after and result is not LOST and (pause := self._point(worker, after, event)) is not None:
            yield from self._pause(worker, pause, event)
        return result

    def _row(self, worker, step, event=None, outcome="", position=None):
        """A trace row, with the durable checkpoint as it stands and its cursor's place in the stream
        (remembered while the cursor stays); ``position``: the event's, or given for a row without one."""
        cp = self.store.checkpoint
        place = self._place(cp.resume_cursor)
        if event is None:
            self.trace.add(self.clock.now, worker, step, "", position, cp, place, outcome)
        else:
            self.trace.add(self.clock.now, worker, step, event.id, event.position, cp, place, outcome)

    def _place(self, cursor: str) -> int:
        """``cursor``'s place in the stream, remembered while the durable cursor stays the same object."""
        placed = self._placed
        if cursor is not placed[0]:
            placed = self._placed = (cursor, self.provider.place(cursor))
        return placed[1]

    def _latency(self, delay: float):
        """Spend ``delay`` of simulated time: ahead of the scheduler if :meth:`_ahead` may, else in SimPy."""
        if not self._ahead(delay):
            yield from self._wait(delay)

    def _ahead(self, delay: float) -> bool:
        """Spend ``delay`` without the scheduler if possible: a lone worker,
        no late reply on its way, runs ahead (``clock.ahead``) up to the time
        limit, handing the time over at its next real wait (a plain call)."""
        if delay <= 0:
            return True
        if self._solo and not self._late and self.clock.now + delay < self.timing.time_limit:
            self.clock.ahead += delay
            return True
        return False

    def _wait(self, delay: float):
        """Spend ``delay`` in SimPy, after handing over the time run ahead."""
        yield from self._sync()
        yield self.env.timeout(delay)

    def _sync(self):
        """Hand the time a lone worker ran ahead to the scheduler."""
        if self.clock.ahead:
            ahead, self.clock.ahead = self.clock.ahead, 0.0
            yield self.env.timeout(ahead)

    # -- requests executed at once ---------------------------------------------------------------------------
    def load(self, worker, op):
        self._status[worker] = "active"
        cp = Driver.load(self, worker, op)
        self._row(worker, "load")
        return cp

    def skip(self, worker, op):
        self._row(worker, "replay", op.event)

    def handle(self, worker, op):
        decision = self.sink.decide(worker, op.event)      # Driver.handle, inlined on the hot path
        if decision != "apply":
            self._row(worker, "handle", op.event, decision)
        return decision

    def halt(self, worker, op):
        self._row(worker, "halt", None, op.reason)
        self.halts.append((self.clock.now, worker, op.reason))
        self.finish(worker, "halted")
        super().halt(worker, op)

    def finish(self, worker: int, status: str) -> None:
        """``worker`` caught up, stopped or halted. The run is done once every worker has, each at its own
        moment (docs/verdict.md, ``completed``): one that backs off after catching up stays done."""
        self._status[worker] = self._finished[worker] = status
        if not self._done.triggered and len(self._finished) == len(self._status):
            self.stopped_early = "stopped_early" in self._finished.values()
            self._done.succeed()

    def _at_end(self, worker: int) -> bool:
        """Was the worker's last fetch that reached the provider the end of the stream (step 7)?"""
        return self.provider.is_end(self._fetched.get(worker, ""))

    def _commit_at_once(self, worker, op):
        """:meth:`commit` with no crash-point pass and no generator when no fault can strike
        (``faults.quiet``) and nothing can interleave, else :data:`LATER`: its latency run ahead, then the
        base driver's commit (and so :meth:`record_effect`) and its trace row, or the same in one journal row
        (:meth:`_journaled`). (Only for the world's own :meth:`commit`: :meth:`at_once_table`.)"""
        if not self.faults.quiet or (op.with_effect and self.sink.external):
            return LATER
        latency = self.timing.commit_latency
        if not (self._solo and not self._late and self.clock.now + latency < self.timing.time_limit):
            return LATER                            # (:meth:`_ahead`'s test, inlined)
        self.clock.ahead += latency
        if (row := self._journal) is not None and (done := self._journaled(worker, op, row)) is not None:
            return done
        ok = Driver.commit(self, worker, op := self.provider.events.placed(op))     # (a forged position)
        self._row(worker, commit_step(op.outcome), op.event, op.outcome if ok else CONFLICT)
        return ok

    def _journaled(self, worker, op, row: Callable[..., None]) -> bool | None:
        """:meth:`_commit_at_once` of an event with its default id and no terminal receipt, on the memory
        store: the same state changes as :meth:`Driver.commit` (:meth:`MemoryStore.closed` and
        :meth:`MemoryStore.hold`, invariant 4) and the same rows, written in one call
        (:mod:`simkit.truth.journal`). ``None`` for any other commit, which takes the general path. Its
        outcome and applied_position are ones ``refuse_unwritable`` admits (ops.WELL_FORMED, in _worker)."""
        e, outcome, applied = op.event, op.outcome, op.applied_position
        eid, position = e.id, e.position
        store: MemoryStore = self.store         # type: ignore[assignment]  # (the journal is the memory store's)
        if not store.receipts.keeps_by_position(eid, position) or store.closed(eid, position, True):
            return None
        clock = self.clock
        effect_seq = None
        if op.with_effect:                          # a transactional sink (:meth:`Driver.record_effect`)
            effect_seq = clock.tick()
            self.sink.count(eid, position)
        before = store.hold(eid, position, outcome, applied, True)
        cp = store.checkpoint
        row(effect_seq, clock.tick(), clock.now, worker, eid, position, outcome, commit_step(outcome),
            cp.resume_cursor, cp.applied_position, cp.checkpoint_version, self._place(cp.resume_cursor),
            before is not None)
        return True

World._at_once = World.at_once_table()
