"""The SimPy world: provider, store, sink, external service and workers; it executes the requests a consumer yields.

Each worker is a SimPy process driving one consumer generator. Requests take simulated latency, crash
points fall before and after them (CONTRACT §2), a request can be lost on its way (it takes no effect) or its
reply can be lost (it took effect): either way the caller gets ``LOST`` after ``timeout`` and cannot tell which.
A crash discards the consumer with all its memory; the worker restarts after ``restart_delay`` from durable
state only.

External calls (seed 001): ``Reserve`` and ``Settle`` are store transactions (``commit_latency`` each; under
``split_validate_write`` a settlement is two of them, validation then write). ``Call`` reaches the service after
``effect_latency``; the call can be lost on its way (the service never runs it), its reply lost or late (the
caller gets ``TIMEOUT`` after ``timeout`` in each case) or crossed. A late reply is delivered by a process of its
own and settled by the policy when it arrives, whatever became of the caller. ``Reserve`` and ``Settle`` are
out of the reach of ``lost_request`` and ``lost_response`` faults (:func:`~simkit.ops.lost_op` names no op for
them): they always arrive and always answer.
"""
from __future__ import annotations

import importlib

import simpy

from . import provider as providers
from simkit.truth.clock import Clock
from simkit.truth.collector import paused
from simkit.procedure.consumer import Consumer, Contract
from simkit.errors import ScenarioError
from .external import ExternalService, principal_at
from .faults import FaultPlan
from simkit.model import REPLY_LOST, REQUEST_LOST, Checkpoint, Fault, Scenario
from simkit.ops import (LOST, Barrier, Call, Commit, Effect, Fetch, Halt, Handle, Load, Lookup, Overwrite, Reserve, Settle,
                  Skip, Wait, crash_points)
from simkit.store.settlement import POLICIES, TIMEOUT, canonical_request, fingerprint
from .sink import Sink
from simkit.store.sqlite import make_store
from simkit.procedure.strategies import consumer_error
from simkit.truth.ground import GroundTruth
from simkit.truth.trace import Trace


class _Crash(Exception):
    pass


def _commit_step(op: Commit) -> str:
    """The trace step of an event commit: ``quarantine`` for a durable quarantine receipt, else ``commit``."""
    return "quarantine" if op.outcome == "quarantined" else "commit"


class _Halted(Exception):
    pass


class _Stopped(Exception):
    """The progress guard ended the run; ``args[0]`` says why."""


#: The progress guard (CONTRACT §4: ``completed`` is false "for a run ended by the progress guard"). Simulated
#: time is no guard on its own: zero latencies with ``backoff = 0``, a transient event that never stops failing or
#: latencies of 1e-300 spin at one instant, or nearly, while memory grows. Requests are counted per worker and
#: handed over every :data:`GUARD_CHUNK` (a local increment per request on the hot path); a run ends, with
#: ``stopped`` saying why, after :data:`STALL_STEPS` requests at one simulated instant, or once it has spent its
#: step budget: :data:`STEP_BASE` plus :data:`STEPS_PER_ITEM` per event and page of the stream, per worker. The
#: bundled scenarios take at most 1,380 steps per run (docs/verdict.md, "Progress guard"); a million-event
#: benchmark about 3 per event.
GUARD_CHUNK = 1_000
STALL_STEPS = 100_000
STEP_BASE = 1_000_000
STEPS_PER_ITEM = 1_000


class Guard:
    """The progress guard's count: ``steps`` (requests handed over so far, in chunks of :data:`GUARD_CHUNK`) of
    ``budget``, and ``instant`` of them since simulated time last moved, at ``at``. (Its own object: a World
    keeps under 30 attributes, CPython's limit for the fast attribute access its hot path relies on.)"""

    __slots__ = ("steps", "budget", "at", "instant")

    def __init__(self, budget: int):
        self.steps, self.budget, self.at, self.instant = 0, budget, -1.0, 0


class World:
    """Everything one run needs; ground truth lives in ``provider``, ``store`` and ``sink``."""

    def __init__(self, scenario: Scenario, strategy: type[Consumer], seed: int, faults: tuple[Fault, ...] = (),
                 settlement: str | None = None):
        self.scenario = scenario
        self.settlement = scenario.settlement if settlement is None else settlement
        if self.settlement not in POLICIES:
            raise ScenarioError(f"settlement {self.settlement!r}: not one of {', '.join(POLICIES)}")
        self.strategy = strategy
        self.seed = seed
        self.env = simpy.Environment()
        self.clock = Clock(self.env)
        self.timing = scenario.timing
        self.provider = providers.build(scenario, seed)
        self.provider.clock = self.clock
        self.sink = Sink(scenario.sink, scenario.events, self.clock)
        init = scenario.initial
        id_at = {e.position: e.id for e in self.provider.events.values()}
        receipts = {id_at[p]: ("applied", p) for p in init.receipts}
        for eid in receipts:
            self.sink.effects.append((0, 0.0, 0, eid))
            self.sink.effect_count[eid] = 1
        start = Checkpoint(init.resume_cursor or self.provider.start, init.applied_position, init.checkpoint_version)
        self.store = make_store(scenario.store, start, receipts, self.clock)   # CONTRACT §5: memory | sqlite
        self.service = ExternalService(self.sink, self.clock)
        self.faults = FaultPlan(tuple(scenario.faults) + tuple(faults), scenario.random_faults, seed)
        self.faults.record = False
        self.contract = Contract(backfills=scenario.backfills, external_sink=self.sink.external)
        self.trace = Trace()
        self.halts: list[tuple[float, int, str]] = []
        self.crashes = 0
        self._status = {w: "active" for w in range(1, scenario.workers + 1)}
        self._fetched: dict[int, str] = {}
        self._done = self.env.event()
        self._solo = scenario.workers == 1      # no other worker can act while this one spends time
        self._late = 0                          # late-reply processes still to arrive
        self._placed = (None, 0)
        self.completed = False
        #: ``None``, or why the progress guard ended the run (:data:`STALL_STEPS`, :meth:`step_budget`)
        self.stopped: str | None = None
        self.guard = Guard(self.step_budget())
        self._processes: list = []              # the generators of every SimPy process this world started
        # dispatch by request type, to this class's handlers (functions, not bound methods: no cycle to the world)
        cls = type(self)
        self._instant = {Load: cls._load, Lookup: cls._lookup, Skip: cls._skip, Handle: cls._handle}
        self._timed = {Fetch: cls._fetch, Effect: cls._effect, Commit: cls._commit, Barrier: cls._barrier,
                       Overwrite: cls._overwrite, Wait: cls._wait, Halt: cls._halt, Reserve: cls._reserve,
                       Call: cls._call, Settle: cls._settle}

    # -- running ------------------------------------------------------------------------------------------
    def run(self) -> "World":
        for w in self._status:
            self._start(self._worker(w))
        limit = self.env.timeout(self.timing.time_limit)
        try:
            with paused():
                self.env.run(until=self.env.any_of([self._done, limit]))
        except _Stopped as stop:
            self.stopped = stop.args[0]
        finally:
            for process in self._processes:     # their frames hold the world: let it be freed by reference count
                process.close()
        self.completed = self._done.triggered and self.stopped is None
        return self

    def ground_truth(self) -> GroundTruth:
        """What the judge reads about this run (:class:`~simkit.truth.ground.GroundTruth`): views of the logs
        of the provider, store, sink and service, copied nothing."""
        return GroundTruth.build(provider=self.provider, store=self.store, sink=self.sink, service=self.service,
                                 halts=self.halts, completed=self.completed, stopped=self.stopped,
                                 scenario=self.scenario, settlement=self.settlement,
                                 backfills=self.contract.backfills, trace=self.trace)

    def step_budget(self) -> int:
        """The most requests this run may take (:data:`STEP_BASE`, :data:`STEPS_PER_ITEM`)."""
        return STEP_BASE + STEPS_PER_ITEM * self.scenario.workers * (len(self.provider.events) + self.provider.pages)

    def _progress(self) -> None:
        """The progress guard, every :data:`GUARD_CHUNK` requests of a worker: too many at one instant, or the
        step budget spent, ends the run (raises :class:`_Stopped`, which :meth:`run` catches)."""
        g = self.guard
        g.steps += GUARD_CHUNK
        now = self.clock.now
        if now != g.at:
            g.at, g.instant = now, GUARD_CHUNK
        else:
            g.instant += GUARD_CHUNK
            if g.instant >= STALL_STEPS:
                raise _Stopped(f"progress guard: {g.instant} steps at t={now:g} without simulated time advancing")
        if g.steps >= g.budget:
            raise _Stopped(f"progress guard: the step budget of {g.budget} steps spent at t={now:g} "
                           f"({STEP_BASE} + {STEPS_PER_ITEM} per event and page per worker)")

    def _start(self, process) -> None:
        self._processes.append(process)
        self.env.process(process)

    def _worker(self, worker: int):
        left = GUARD_CHUNK                          # requests until the next call of the progress guard
        while True:
            gen = self._consumer()
            result = None
            try:
                while True:
                    try:
                        op = gen.send(result)
                    except Exception as exc:        # the consumer's own code: no traceback, one line (CLI exit 2)
                        raise consumer_error(self.strategy, exc) from exc
                    left -= 1
                    if not left:
                        left = GUARD_CHUNK
                        self._progress()
                    instant = self._instant.get(type(op))
                    if instant is not None:
                        result = instant(self, worker, op)
                    elif type(op) is Commit and op.with_effect and self.sink.external:
                        result = yield from self._effect_then_commit(worker, op)
                    elif type(op) is Commit and self._quiet(self.timing.commit_latency):
                        result = self._commit_ahead(worker, op)
                    else:
                        result = yield from self._execute(worker, op)
            except _Crash:
                self._close(gen)
                self.crashes += 1
                self._status[worker] = "active"
                yield from self._latency(self.timing.restart_delay)
                self._row(worker, "restart")
            except _Halted:
                self._close(gen)
                return

    def _consumer(self):
        """A fresh consumer's procedure (after a crash too: it remembers nothing)."""
        try:
            gen = self.strategy(self.contract).run()
        except Exception as exc:
            raise consumer_error(self.strategy, exc) from exc
        if not hasattr(gen, "send"):
            raise consumer_error(self.strategy, None, problem=f"run() returned {type(gen).__name__}, not a generator")
        return gen

    def _close(self, gen) -> None:
        """Discard a consumer (crashed or halted): its own cleanup may not raise."""
        try:
            gen.close()
        except Exception as exc:
            raise consumer_error(self.strategy, exc) from exc

    def _effect_then_commit(self, worker: int, op):
        """``Commit(with_effect=True)`` on an external sink: no external sink joins the store's transaction
        (invariant 4 offers a transaction only where the sink has one), so it is the call, then the commit, with
        the crash points of both between them."""
        done = yield from self._execute(worker, Effect(op.event))
        if done is LOST:
            return LOST
        return (yield from self._execute(worker, Commit(op.event, op.outcome, op.applied_position)))

    def _execute(self, worker: int, op):
        before, after = crash_points(op)
        event = getattr(op, "event", None)
        if before and (pause := self._point(worker, before, event)) is not None:
            yield from self._pause(worker, pause, event)
        timed = self._timed.get(type(op))
        if timed is None:
            raise consumer_error(self.strategy, None, op)
        result = yield from timed(self, worker, op)
        if after and result is not LOST and (pause := self._point(worker, after, event)) is not None:
            yield from self._pause(worker, pause, event)
        return result

    def _point(self, worker: int, point: str, event):
        """Pass a crash point: a crash raises, a pause is returned for the caller to take (:meth:`_pause`)."""
        fault = self.faults.at_point(worker, point, event.position if event is not None else None)
        if fault is not None and fault.kind == "crash":
            self._row(worker, "crash", event, point)
            raise _Crash
        return fault

    def _pause(self, worker: int, fault, event):
        self._row(worker, "pause", event, fault.point)
        yield from self._latency(fault.duration)
        self._row(worker, "resume", event, fault.point)

    def _lost(self, worker: int, op: str, event, lost: bool = False) -> bool:
        """Is the reply of this request, which took effect, lost? (Then :meth:`_no_reply`.)"""
        return self.faults.reply_lost(worker, op, event.position if event is not None else None) or lost

    def _unsent(self, worker: int, op: str, event) -> bool:
        """Is this request lost on its way, so that it never arrives and takes no effect? (Then :meth:`_no_reply`
        with ``request lost``.) Asked when it would arrive, after its latency."""
        return self.faults.request_lost(worker, op, event.position if event is not None else None)

    def _no_reply(self, worker: int, step: str, event, outcome: str = REPLY_LOST):
        """The reply never comes (``reply lost``: the request took effect; ``request lost``: it never arrived, and
        nothing durable changed): the caller learns after its timeout, the same way in both cases."""
        self._row(worker, step, event, outcome)
        yield from self._latency(self.timing.timeout)

    def _row(self, worker, step, event=None, outcome=""):
        cp = self.store.checkpoint
        self.trace.add(self.clock.now, worker, step, event.id if event is not None else "",
                       event.position if event is not None else None, cp, self._place(cp.resume_cursor), outcome)

    def _place(self, cursor: str) -> int:
        """The durable cursor's place in the stream (for the trace), remembered while the cursor stays."""
        if cursor is not self._placed[0]:
            self._placed = (cursor, self.provider.place(cursor))
        return self._placed[1]

    def _latency(self, delay: float):
        """Spend ``delay`` of simulated time: ahead of the scheduler if :meth:`_ahead` may, else in SimPy."""
        if not self._ahead(delay):
            yield from self._sync()
            yield self.env.timeout(delay)

    def _ahead(self, delay: float) -> bool:
        """Spend ``delay`` without the scheduler, if possible. A lone worker, while no late reply is on its way,
        runs ahead (``clock.ahead``) and hands the time over at the next real wait: nothing else could happen in
        between, so requests that need no waiting cost no scheduler round-trip. It never runs past the time limit."""
        if delay <= 0:
            return True
        if self._can_run_ahead(delay):
            self.clock.ahead += delay
            return True
        return False

    def _can_run_ahead(self, delay: float) -> bool:
        return self._solo and not self._late and self.clock.now + delay < self.timing.time_limit

    def _quiet(self, delay: float) -> bool:
        """Can the next ``delay`` pass with no fault and no other process to interleave? Then a commit needs
        neither crash-point passes nor a generator (:meth:`_commit_ahead`, which a subclass overriding
        :meth:`_commit` should override too)."""
        return self.faults.idle() and self._can_run_ahead(delay)

    def _sync(self):
        """Hand the time a lone worker ran ahead to the scheduler."""
        if self.clock.ahead:
            ahead, self.clock.ahead = self.clock.ahead, 0.0
            yield self.env.timeout(ahead)

    # -- requests -------------------------------------------------------------------------------------------
    def _load(self, worker, op):
        self._status[worker] = "active"
        cp = self.store.load(worker)
        self._row(worker, "load")
        return cp

    def _fetch(self, worker, op):
        yield from self._latency(self.timing.fetch_latency)
        if self._unsent(worker, "fetch", None):         # the provider is never asked: no log row, no fetch counted
            yield from self._no_reply(worker, "fetch", None, REQUEST_LOST)
            return LOST
        page = self.provider.fetch(op.cursor, worker)
        self._fetched[worker] = op.cursor
        if page is None:
            self._row(worker, "fetch", None, "cursor refused")
            return None
        if self._lost(worker, "fetch", None, self.provider.response_lost()):
            yield from self._no_reply(worker, "fetch", None)
            return LOST
        top = page.events[-1].position if page.events else None
        cp = self.store.checkpoint
        self.trace.add(self.clock.now, worker, "fetch", "", top, cp, self._place(cp.resume_cursor),
                       f"{len(page.events)} events")
        return page

    def _lookup(self, worker, op):
        return self.store.lookup(op.events)

    def _skip(self, worker, op):
        self._row(worker, "replay", op.event)

    def _handle(self, worker, op):
        decision = self.sink.decide(worker, op.event)
        if decision != "apply":
            self._row(worker, "handle", op.event, decision)
        return decision

    def _effect(self, worker, op):
        yield from self._latency(self.timing.effect_latency)
        if self._unsent(worker, "effect", op.event):     # the sink runs nothing
            yield from self._no_reply(worker, "effect", op.event, REQUEST_LOST)
            return LOST
        self.sink.effect(worker, op.event.id)
        if self._lost(worker, "effect", op.event):
            yield from self._no_reply(worker, "effect", op.event)
            return LOST
        self._row(worker, "effect", op.event)
        return True

    def _commit(self, worker, op):
        yield from self._latency(self.timing.commit_latency)
        if self._unsent(worker, "checkpoint_write", op.event):     # no receipt, no effect, no applied_position
            yield from self._no_reply(worker, _commit_step(op), op.event, REQUEST_LOST)
            return LOST
        ok, step = self._commit_write(worker, op)
        if self._lost(worker, "checkpoint_write", op.event):
            yield from self._no_reply(worker, step, op.event)
            return LOST
        self._row(worker, step, op.event, op.outcome if ok else "conflict")
        return ok

    def _commit_ahead(self, worker, op):
        """:meth:`_commit` when :meth:`_quiet`: no crash point can strike, no reply can be lost."""
        self.clock.ahead += self.timing.commit_latency
        ok, step = self._commit_write(worker, op)
        self._row(worker, step, op.event, op.outcome if ok else "conflict")
        return ok

    def _commit_write(self, worker, op) -> tuple[bool, str]:
        e = op.event
        effect = (lambda: self.sink.record(worker, e.id)) if op.with_effect else None
        ok = self.store.commit_event(worker, e.id, e.position, op.outcome, op.applied_position, effect)
        return ok, _commit_step(op)

    def _barrier(self, worker, op):
        yield from self._latency(self.timing.commit_latency)
        if self._unsent(worker, "checkpoint_write", None):        # no compare, no swap
            yield from self._no_reply(worker, "barrier", None, REQUEST_LOST)
            return LOST
        ok = self.store.compare_and_swap(worker, op.cursor, op.version, op.next_cursor, op.next_version, op.applied_position)
        if self._lost(worker, "checkpoint_write", None):
            yield from self._no_reply(worker, "barrier" if ok else "barrier_rejected", None)
            return LOST
        self._row(worker, "barrier" if ok else "barrier_rejected", None, op.next_cursor)
        return ok

    def _overwrite(self, worker, op):
        yield from self._latency(self.timing.commit_latency)
        if self._unsent(worker, "checkpoint_write", None):
            yield from self._no_reply(worker, "barrier", None, REQUEST_LOST)
            return LOST
        self.store.overwrite(worker, op.next_cursor, op.next_version, op.applied_position)
        if self._lost(worker, "checkpoint_write", None):
            yield from self._no_reply(worker, "barrier", None)
            return LOST
        self._row(worker, "barrier", None, op.next_cursor)
        return True

    # -- seed 001: external calls and their settlement ---------------------------------------------------------
    def _principal(self) -> str:
        """The authorization binding in force now."""
        return principal_at(self.scenario.rotate_at, self.clock.now)

    def _reserve(self, worker, op):
        yield from self._latency(self.timing.commit_latency)
        e = op.event
        record = self.store.operations.reserve(worker, e.id, fingerprint(canonical_request(e)), self._principal())
        self._row(worker, "reserve", e, f"{record.reservation} {record.state}")
        return record

    def _call(self, worker, op):
        yield from self._latency(self.timing.effect_latency)
        e, mine = op.event, op.reservation
        if self._unsent(worker, "effect", e):        # the service never runs it: nothing to settle late either
            self._row(worker, "effect", e, REQUEST_LOST)
            yield from self._latency(self.timing.timeout)
            self._row(worker, "timeout", e, str(mine))
            return TIMEOUT
        lost = self.faults.reply_lost(worker, "effect", e.position)
        fault = None if lost else self.faults.reply_altered(worker, "effect", e.position)
        if fault is not None and fault.kind == "crossed_reply":
            reply = self.service.crossed(mine, fault.differs)
            self._row(worker, "effect", e, f"crossed reply {reply.identity}")
            return reply
        reply = self.service.execute(worker, mine)
        delay = fault.delay if fault is not None else 0.0
        if lost or delay >= self.timing.timeout:
            self._row(worker, "effect", e, REPLY_LOST)
            if not lost:
                yield from self._sync()
                self._late += 1
                self._start(self._late_reply(worker, e, mine, reply, delay))
            yield from self._latency(self.timing.timeout)
            self._row(worker, "timeout", e, str(mine))
            return TIMEOUT
        yield from self._latency(delay)
        self._row(worker, "effect", e)
        return reply

    def _settle(self, worker, op):
        return (yield from self._settlement(worker, op.event, op.reservation, op.observation, "settle"))

    def _late_reply(self, worker, event, reservation, reply, delay):
        """A late reply arrives ``delay`` after its request ran, and is settled by the policy on arrival."""
        yield self.env.timeout(delay)
        self._row(worker, "late_reply", event, str(reply.identity))
        yield from self._settlement(worker, event, reservation, reply, "settle_late")
        self._late -= 1

    def _settlement(self, worker, event, reservation, observation, step):
        ledger = self.store.operations
        yield from self._latency(self.timing.commit_latency)
        if self.settlement == "split_validate_write":
            decision = ledger.validate(worker, reservation, observation)
            self._row(worker, "validate", event, f"{decision.action} {decision.state or ''}".strip())
            yield from self._latency(self.timing.commit_latency)
            state = ledger.write(worker, decision)
        else:
            state = ledger.settle(self.settlement, worker, reservation, observation)
        last = ledger.history[-1]
        self._row(worker, step, event, f"{last.action}: {last.before} -> {last.after}")
        return state

    def _wait(self, worker, op):
        self._row(worker, op.reason)
        if op.reason == "caught_up" and self.provider.is_end(self._fetched.get(worker, "")):
            self._status[worker] = "caught_up"
            self._check_done()
        yield from self._sync()
        yield self.env.timeout(self.timing.backoff)

    def _halt(self, worker, op):
        self._row(worker, "halt", None, op.reason)
        self.halts.append((self.clock.now, worker, op.reason))
        self._status[worker] = "halted"
        self._check_done()
        raise _Halted
        yield  # pragma: no cover

    def _check_done(self):
        if not self._done.triggered and all(s != "active" for s in self._status.values()):
            self._done.succeed()


def __getattr__(name: str):
    """``Run`` and ``simulate`` moved to :mod:`simkit.runner` (above both the world and the judge); the old names
    still import from here."""
    if name in ("Run", "simulate"):
        return getattr(importlib.import_module("simkit.runner"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
