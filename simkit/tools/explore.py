"""Exhaustive fault exploration: every schedule of up to K faults, run and judged (a bounded model check).

Seed 000, "Limits and validation": *validate the implementation with crash injection before each event
commit, after each event commit, before and after a durable quarantine receipt, before the page barrier, and
after the barrier.* :func:`explore` does that for every pass of every crash point, not just a few.

How schedules are built. The fault-free run (the scenario without its scripted and random faults) records
every crash-point pass, every request and every reply (:class:`~simkit.world.faults.FaultPlan` ``passes``,
``requests`` and ``replies``). Each pass becomes a candidate fault: a crash there, or (with several workers) a
pause; each reply, with ``lost_responses``, a lost reply (the request took effect); each request, with
``lost_requests``, a lost request (it never arrived: no effect, and the caller times out just the same). A
schedule's extensions are the passes, requests and replies that occur *after its last fault in its own run*, so
the run of ``S + [f]`` is the run of ``S`` up to ``f``, every fault of a schedule fires, and every set of faults
within the bounds that can fire together is run exactly once, in firing order.

Deduplication, where it is sound. With one worker, the moment of a crash leaves nothing but durable state:
the store, the sink, the provider, the simulated time. Two schedules whose last crash leaves the same state
(same fingerprint, see :func:`fingerprint`) have the same future; the later one, with no more fault budget
left than the earlier, is skipped with its whole subtree. Any violation it could show is either in that
shared future (the earlier schedule shows it) or before its last fault (its parent shows it). "No more budget"
is counted per kind: crashes, lost replies and lost requests. Pauses, lost replies and lost requests leave a
worker's memory alive, and a second worker's memory is never part of durable state: schedules whose last fault
is one of those are never deduplicated. Nor is a one-fault schedule with no budget left: it has already run, and has
no subtree to skip.

Execution. Schedules of one fault run first; then each one-fault schedule's subtree is explored depth first,
as one task. With ``jobs > 1`` the tasks run in worker processes; the result is the same for any ``jobs``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from simkit.judge.checker import Verdict, check
from simkit.truth.collector import paused
from simkit.procedure.consumer import Consumer
from simkit.errors import SimkitError
from simkit.world.faults import FaultPlan
from simkit.model import CRASH_POINTS, LOST_OPS, Fault, RandomFaults, Scenario
from .pool import processes

#: The most faults of each kind in one schedule: a schedule is explored one recursion level per fault.
MAX_FAULTS = 50
from simkit.procedure.strategies import resolve, strategy_name
from simkit.world.simulation import Run, World

__all__ = ["Exploration", "explore", "failure_kind", "describe_kind", "fault_free", "replay", "fingerprint"]


# -- verdicts --------------------------------------------------------------------------------------------------
def failure_kind(v: Verdict) -> tuple:
    """How a run fails: (lost, duplicated, regressed, invariants broken, incomplete, settlement violation kinds);
    all false/empty when ok."""
    return (bool(v.lost), bool(v.duplicated), v.regressions > 0, tuple(v.invariants_broken), not v.completed,
            tuple(sorted({s["kind"] for s in v.settlement_violations})))


def describe_kind(kind: tuple) -> str:
    """``lost, invariants 1, 2`` for a :func:`failure_kind`."""
    lost, dup, regressed, invariants, incomplete, settlement = kind
    words = [w for w, on in (("lost", lost), ("duplicated", dup), ("regressions", regressed)) if on]
    if invariants:
        words.append("invariant" + ("s " if len(invariants) > 1 else " ") + ", ".join(map(str, invariants)))
    if incomplete:
        words.append("incomplete")
    words += [k.replace("_", " ") for k in settlement]
    return ", ".join(words) or "ok"


# -- the scenario explored --------------------------------------------------------------------------------------
def fault_free(sc: Scenario, keep_faults: bool = False) -> Scenario:
    """``sc`` without random faults and (unless ``keep_faults``) without its scripted ``[[faults]]``.

    The provider's own behaviour (stuck tokens, lost fetch responses of ``[generate]``) stays: it is the
    world being explored, not a fault of the schedule.
    """
    return dataclasses.replace(sc, random_faults=RandomFaults(), faults=tuple(sc.faults) if keep_faults else ())


def replay(sc: Scenario, strategy, faults, seed: int | None = None, keep_faults: bool = False) -> Run:
    """Run one explored schedule again: ``fault_free(sc)`` with ``faults`` (a schedule from :func:`explore`)."""
    from simkit.world.simulation import simulate
    return simulate(fault_free(sc, keep_faults), _strategy(strategy), seed, tuple(faults))


@lru_cache(maxsize=None)
def _resolved(ref: str) -> type[Consumer]:
    return resolve(ref)


def _strategy(strategy) -> type[Consumer]:
    return _resolved(strategy) if isinstance(strategy, str) else strategy


# -- state fingerprints -------------------------------------------------------------------------------------------
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
    if isinstance(x, dict):
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
        limit = world.timing.time_limit
        if any(t != limit for t, *_ in world.env._queue):
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


# -- one run ----------------------------------------------------------------------------------------------------
class _Skip(Exception):
    """This schedule's last crash leaves a state already explored with at least as much budget left."""


class _Plan(FaultPlan):
    """The fault plan of one explored run: notes where the schedule's last fault fired, fingerprints it."""

    def __init__(self, base: Scenario, faults: tuple[Fault, ...], seed: int, world: World, watch: bool, stop):
        super().__init__(tuple(base.faults) + faults, base.random_faults, seed)
        self.world = world
        self.last = faults[-1] if faults else None
        self.at = None                      # index of the last fault in passes / replies / requests
        self.watch = watch
        self.stop = stop
        self.fingerprint = None
        self.struck: set[tuple[str, int]] = set()     # passes ("p", i), replies ("r", j), requests ("q", k) struck

    def at_point(self, worker, point, position):
        fault = super().at_point(worker, point, position)
        if fault is not None:
            self.struck.add(("p", len(self.passes) - 1))
        if fault is not None and fault is self.last:
            self.at = len(self.passes) - 1
            if self.watch and fault.kind == "crash":
                self.fingerprint = fingerprint(self.world, self)
                if self.fingerprint is not None and self.stop is not None and self.stop(self.fingerprint):
                    raise _Skip
        return fault

    def reply_lost(self, worker, op, position):
        lost = super().reply_lost(worker, op, position)
        if lost and self.fired and self.fired[-1].kind == "lost_response":
            self.struck.add(("r", len(self.replies) - 1))
        if lost and self.last is not None and self.fired and self.fired[-1] is self.last and self.at is None:
            self.at = len(self.replies) - 1
        return lost

    def request_lost(self, worker, op, position):
        lost = super().request_lost(worker, op, position)
        if lost:
            self.struck.add(("q", len(self.requests) - 1))
            if self.last is not None and self.fired[-1] is self.last and self.at is None:
                self.at = len(self.requests) - 1
        return lost

    def reply_altered(self, worker, op, position):
        fault = super().reply_altered(worker, op, position)
        if fault is not None:
            self.struck.add(("r", len(self.replies) - 1))
        return fault


def _run(base: Scenario, strategy, seed: int, faults: tuple[Fault, ...], dedup: bool, stop=None,
         record: bool = True):
    """Run one schedule. Returns ``(verdict, world, plan)``, or ``None`` when ``stop`` skipped it.

    ``record``: keep the passes and replies after the last fault (its extensions). A schedule with no budget
    left has none: once its faults have fired, the rest of the run costs what a plain run costs.
    """
    cls = _strategy(strategy)
    with paused():
        world = World(base, cls, seed, faults)
        plan = world.faults = _Plan(base, faults, seed, world, dedup and base.workers == 1, stop)
        plan.record = record
        try:
            world.run()
        except _Skip:
            return None
        finally:
            plan.world = None           # no cycle: the world is freed as soon as its caller drops it
        return check(world), world, plan


@dataclass(frozen=True)
class _Space:
    """What a schedule may contain."""

    max_crashes: int
    lost_responses: int
    pauses: bool
    pause_duration: float
    points: tuple[str, ...]
    ops: tuple[str, ...]
    lost_requests: int = 0


def _extensions(plan: _Plan, space: _Space, crashes_left: int, lost_left: int, requests_left: int = 0) -> list[Fault]:
    """The faults that may follow the schedule's last fault: every later pass, request and reply, in timeline
    order, except those a fault already struck (a fault kept from the scenario).

    Timeline order: a request recorded ``(…, passes before, replies before)`` comes before pass ``passes before``
    and reply ``replies before``; a reply recorded with ``passes before`` comes before that pass. A request comes
    before its own reply, so a lost request and a lost reply of one request are never in one schedule."""
    passes, replies, requests = plan.passes, plan.replies, plan.requests
    last = plan.last
    if last is None:
        i0, j0, k0 = 0, 0, 0
    elif last.kind == "lost_response":
        i0, j0 = replies[plan.at][5], plan.at + 1
        k0 = next((k for k, q in enumerate(requests) if q[6] >= j0), len(requests))
    elif last.kind == "lost_request":
        _w, _op, _pos, _n, _m, i0, j0 = requests[plan.at]
        k0 = plan.at + 1
    else:
        i0 = plan.at + 1
        j0 = next((j for j, r in enumerate(replies) if r[5] >= i0), len(replies))
        k0 = next((k for k, q in enumerate(requests) if q[5] >= i0), len(requests))
    out: list[Fault] = []
    i, j, k = i0, j0, k0
    n_requests = len(requests) if requests_left else k      # none to offer: skip them all
    while i < len(passes) or j < len(replies) or k < n_requests:
        if k < n_requests and (j >= len(replies) or requests[k][6] <= j) and (i >= len(passes) or requests[k][5] <= i):
            w, op, pos, n_any, n_pos, _i, _j = requests[k]
            k += 1
            if op in space.ops and ("q", k - 1) not in plan.struck:
                out.append(Fault("lost_request", None, pos, n_pos if pos is not None else n_any, w, op=op))
        elif j < len(replies) and (i >= len(passes) or replies[j][5] <= i):
            w, op, pos, n_any, n_pos, _ = replies[j]
            j += 1
            if lost_left and op in space.ops and ("r", j - 1) not in plan.struck:
                out.append(Fault("lost_response", None, pos, n_pos if pos is not None else n_any, w, op=op))
        else:
            w, point, pos, n = passes[i]
            i += 1
            if crashes_left and point in space.points and ("p", i - 1) not in plan.struck:
                out.append(Fault("crash", point, pos, n, w))
                if space.pauses:
                    out.append(Fault("pause", point, pos, n, w, duration=space.pause_duration))
    return out


def _budget(faults, space: _Space) -> tuple[int, int, int]:
    """What a schedule leaves of each bound: (crashes and pauses, lost replies, lost requests)."""
    lost = sum(1 for f in faults if f.kind == "lost_response")
    unsent = sum(1 for f in faults if f.kind == "lost_request")
    return (space.max_crashes - (len(faults) - lost - unsent), space.lost_responses - lost,
            space.lost_requests - unsent)


def _covered(budgets, budget) -> bool:
    """Has a schedule reached this state before with at least ``budget`` left of every bound?"""
    return any(all(had >= left for had, left in zip(old, budget)) for old in budgets)


# -- the result -------------------------------------------------------------------------------------------------
@dataclass
class Exploration:
    """The outcome of :func:`explore`."""

    scenario: str
    strategy: str
    seed: int
    max_crashes: int
    lost_responses: int
    pauses: bool
    settlement: str = "fenced"
    lost_requests: int = 0
    schedules: int = 0                      # schedules run and judged, the fault-free run included
    by_faults: list[int] = field(default_factory=list)  # schedules run, by number of faults
    deduplicated: int = 0                   # schedules skipped, with their subtrees, as equivalent
    violations: int = 0                     # schedules run whose verdict is not ok
    kinds: Counter = field(default_factory=Counter)     # violations by describe_kind
    first_violation: tuple | None = None    # (faults, run dict): the shortest, first in enumeration order
    passes: dict[str, int] = field(default_factory=dict)  # crash-point passes of the fault-free run, by point
    replies: dict[str, int] = field(default_factory=dict)  # replies of the fault-free run, by op
    requests: dict[str, int] = field(default_factory=dict)  # requests of the fault-free run, by op

    @property
    def ok(self) -> bool:
        return self.violations == 0

    def as_dict(self) -> dict:
        """The ``simkit explore --json`` object."""
        first = None
        if self.first_violation is not None:
            faults, run = self.first_violation
            first = {"faults": [f.as_dict() for f in faults], "verdict": run}
        return {"scenario": self.scenario, "strategy": self.strategy, "seed": self.seed,
                "settlement": self.settlement, "max_crashes": self.max_crashes,
                "lost_responses": self.lost_responses, "lost_requests": self.lost_requests, "pauses": self.pauses,
                "schedules": self.schedules, "by_faults": self.by_faults, "deduplicated": self.deduplicated,
                "violations": self.violations, "kinds": dict(sorted(self.kinds.items())),
                "first_violation": first}

    def _note(self, faults, verdict: Verdict, run, order) -> None:
        """Count one judged schedule; ``run`` is its ``--json`` object, or a World to make it from."""
        n = len(faults)
        self.by_faults.extend([0] * (n + 1 - len(self.by_faults)))
        self.by_faults[n] += 1
        self.schedules += 1
        if verdict.ok:
            return
        self.violations += 1
        self.kinds[describe_kind(failure_kind(verdict))] += 1
        key = (n, order)
        if self.first_violation is None or key < self._first_key:
            self.first_violation = (tuple(faults), run if isinstance(run, dict) else _as_dict(run, verdict))
            self._first_key = key

    def _merge(self, other: "Exploration", order) -> None:
        for n, c in enumerate(other.by_faults):
            self.by_faults.extend([0] * (n + 1 - len(self.by_faults)))
            self.by_faults[n] += c
        self.schedules += other.schedules
        self.deduplicated += other.deduplicated
        self.violations += other.violations
        self.kinds.update(other.kinds)
        if other.first_violation is not None:
            key = (len(other.first_violation[0]), order)
            if self.first_violation is None or key < self._first_key:
                self.first_violation, self._first_key = other.first_violation, key


# -- the search -------------------------------------------------------------------------------------------------
def _as_dict(world: World, verdict: Verdict) -> dict:
    return Run(world.scenario.name, strategy_name(world.strategy), world.seed, verdict, world).as_dict()


def _level_one(args) -> tuple:
    """One one-fault schedule: its verdict, its run object if it fails, its fingerprint (picklable)."""
    base, strategy, seed, fault, dedup, more = args
    verdict, world, plan = _run(base, strategy, seed, (fault,), dedup and more, record=more)
    return verdict, (None if verdict.ok else _as_dict(world, verdict)), plan.fingerprint


def _subtree(args) -> Exploration:
    """Depth-first exploration below one one-fault schedule (whose own verdict the caller already counted)."""
    base, strategy, seed, root, space, dedup, seen = args
    seen = {fp: list(budgets) for fp, budgets in seen.items()}
    result = Exploration(base.name, "", seed, space.max_crashes, space.lost_responses, space.pauses,
                         lost_requests=space.lost_requests)

    def stop_for(budget):
        def stop(fp):
            if _covered(seen.get(fp, ()), budget):
                return True
            seen.setdefault(fp, []).append(budget)
            return False
        return stop

    counter = 0

    def visit(faults, plan):
        nonlocal counter
        for fault in _extensions(plan, space, *_budget(faults, space)):
            child = faults + (fault,)
            budget = _budget(child, space)
            out = _run(base, strategy, seed, child, dedup, stop_for(budget), record=any(budget))
            counter += 1
            if out is None:
                result.deduplicated += 1
                continue
            verdict, world, child_plan = out
            result._note(child, verdict, world, counter)
            if any(left > 0 for left in budget):
                visit(child, child_plan)

    _verdict, _world, plan = _run(base, strategy, seed, (root,), dedup)
    visit((root,), plan)
    return result


def _map(fn, tasks, jobs: int, progress):
    jobs = processes(jobs, len(tasks))
    if jobs <= 1:
        for t in tasks:
            yield fn(t)
            progress.update(1)
        return
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for r in pool.map(fn, tasks, chunksize=max(1, len(tasks) // (8 * jobs))):
            yield r
            progress.update(1)


def explore(scenario: Scenario, strategy="safe", *, max_crashes: int = 2, lost_responses: int = 0,
            lost_requests: int = 0, pauses: bool | None = None, pause_duration: float | None = None, seed: int | None = None,
            points: tuple[str, ...] | None = None, ops: tuple[str, ...] = LOST_OPS, dedup: bool = True,
            keep_faults: bool = False, jobs: int = 1, progress: bool = False) -> Exploration:
    """Run every schedule of up to ``max_crashes`` crashes (and pauses), ``lost_responses`` lost replies and
    ``lost_requests`` lost requests.

    Args:
        scenario: the scenario; its random faults are dropped, and its scripted faults too unless
            ``keep_faults`` (then they stay in every schedule, as part of the world).
        strategy: a strategy name, ``path.py:Class``/``module:Class`` reference, or a Consumer subclass.
        max_crashes: K, the most crash or pause faults in one schedule.
        lost_responses: L, the most lost replies (fetch, effect, checkpoint write) in one schedule: the request
            took effect, its caller times out.
        lost_requests: the most lost requests (fetch, effect, checkpoint write) in one schedule: the request never
            arrived and took no effect, its caller times out just the same. Seed 001's reservation and
            settlement transactions are not among them (:func:`~simkit.ops.lost_op`).
        pauses: also pause at every pass (a stale worker); default: when the scenario has several workers.
        pause_duration: how long a pause lasts; default the scenario's ``[random_faults] pause_duration``.
        seed: the seed (generated providers); default the scenario's.
        points: only these crash points get faults (default: all of CONTRACT §2).
        ops: only the replies and requests of these ops may be lost.
        dedup: skip schedules whose last crash leaves an already explored state (sound; see module doc).
        jobs: worker processes for the subtrees (at most :data:`~simkit.tools.pool.JOBS_PER_CPU` per CPU and one per
            subtree); the result does not depend on it.
        progress: show a tqdm bar on stderr.

    Raises:
        SimkitError: a bound is negative or a point or op is unknown.
    """
    if max_crashes < 0 or lost_responses < 0 or lost_requests < 0:
        raise SimkitError("explore: --max-crashes, --lost-responses and --lost-requests must be at least 0")
    for option, bound in (("--max-crashes", max_crashes), ("--lost-responses", lost_responses),
                          ("--lost-requests", lost_requests)):
        if bound > MAX_FAULTS:
            raise SimkitError(f"{option} {bound}: at most {MAX_FAULTS} (schedules grow as passes ** K; "
                              f"a schedule of 1,000 faults ended in a RecursionError)")
    points = CRASH_POINTS if points is None else tuple(points)
    for p in points:
        if p not in CRASH_POINTS:
            raise SimkitError(f"explore: unknown crash point {p!r} (one of {', '.join(CRASH_POINTS)})")
    for op in ops:
        if op not in LOST_OPS:
            raise SimkitError(f"explore: unknown reply {op!r} (one of {', '.join(LOST_OPS)})")
    base = fault_free(scenario, keep_faults)
    seed = scenario.seed if seed is None else seed
    jobs = processes(jobs)                      # the CPU bound, noted once; each pool also gets no more than tasks
    space = _Space(max_crashes, lost_responses, base.workers > 1 if pauses is None else bool(pauses),
                   scenario.random_faults.pause_duration if pause_duration is None else float(pause_duration),
                   points, tuple(ops), lost_requests)
    cls = _strategy(strategy)
    ref = strategy if isinstance(strategy, str) else cls
    result = Exploration(scenario.name, strategy_name(cls), seed, max_crashes, lost_responses, space.pauses,
                         getattr(scenario, "settlement", "fenced"), lost_requests)

    verdict, world, plan = _run(base, ref, seed, (), dedup)
    result._note((), verdict, world, 0)
    result.passes = dict(Counter(p[1] for p in plan.passes))
    result.replies = dict(Counter(r[1] for r in plan.replies))
    result.requests = dict(Counter(q[1] for q in plan.requests))
    firsts = _extensions(plan, space, max_crashes, lost_responses, lost_requests)

    from tqdm import tqdm
    bar = tqdm(total=len(firsts), disable=not progress, desc=f"explore {scenario.name} · {result.strategy}",
               unit="schedule", leave=False)
    seen: dict[bytes, list[tuple[int, int, int]]] = {}
    roots = []
    # a one-fault schedule is fingerprinted only if it has a subtree to prune: otherwise it has already run
    tasks = [(base, ref, seed, f, dedup, any(_budget((f,), space))) for f in firsts]
    for k, (fault, (verdict, run, fp)) in enumerate(zip(firsts, _map(_level_one, tasks, jobs, bar)), 1):
        budget = _budget((fault,), space)
        if fp is not None and dedup:
            if _covered(seen.get(fp, ()), budget):
                result.deduplicated += 1
                continue
            seen.setdefault(fp, []).append(budget)
        result._note((fault,), verdict, run, k)
        if any(left > 0 for left in budget):
            roots.append((k, fault))
    tasks = [(base, ref, seed, fault, space, dedup, seen) for _k, fault in roots]
    bar.total = len(firsts) + len(roots)
    bar.refresh()
    for (k, _fault), sub in zip(roots, _map(_subtree, tasks, jobs, bar)):
        result._merge(sub, k)
    bar.close()
    return result


# -- text ---------------------------------------------------------------------------------------------------------
def fault_text(f: Fault) -> str:
    """``crash at before_event_commit@107#2 (worker 2)``, ``pause 25 at …``, ``lost checkpoint_write reply@107``,
    ``lost fetch request#2``."""
    where = (f"@{f.position}" if f.position is not None else "") + (f"#{f.occurrence}" if f.occurrence != 1 else "")
    who = f" (worker {f.worker})" if f.worker != 1 else ""
    if f.kind == "lost_response":
        return f"lost {f.op} reply{where}{who}"
    if f.kind == "lost_request":
        return f"lost {f.op} request{where}{who}"
    return f"{'crash' if f.kind == 'crash' else f'pause {f.duration:g}'} at {f.point}{where}{who}"


def crash_args(sc: Scenario, faults, keep_faults: bool = False) -> list[str] | None:
    """``--crash`` arguments that make ``simkit run`` replay ``faults``, or ``None`` if it cannot."""
    rf = sc.random_faults
    if (sc.faults and not keep_faults) or rf.crash or rf.pause or rf.lost_response or rf.lost_request:
        return None
    if any(f.kind != "crash" or f.worker != 1 for f in faults):
        return None
    return [f"{f.point}" + (f"@{f.position}" if f.position is not None else "")
            + (f"#{f.occurrence}" if f.occurrence != 1 else "") for f in faults]


def summary_text(x: Exploration) -> str:
    """What ``simkit explore`` prints."""
    plural = x.max_crashes != 1
    space = f"up to {x.max_crashes} crash{'es' if plural else ''}" + (f" or pause{'s' if plural else ''}" if x.pauses else "")
    space += f" and {x.lost_responses} lost repl{'ies' if x.lost_responses != 1 else 'y'}" if x.lost_responses else ""
    space += f" and {x.lost_requests} lost request{'s' if x.lost_requests != 1 else ''}" if x.lost_requests else ""
    requests = f"{sum(x.requests.values())} requests, " if x.lost_requests else ""
    depth = ", ".join(f"{n} fault{'s' if n != 1 else ''}: {c}" for n, c in enumerate(x.by_faults))
    lines = [
        f"explore {x.scenario} · {x.strategy} · seed {x.seed} · settlement {x.settlement}: "
        + ("no violations" if x.ok else f"{x.violations} violating schedule{'s' if x.violations != 1 else ''}"),
        f"  schedules of {space}, over {sum(x.passes.values())} crash-point passes{',' if requests else ' and'} "
        f"{requests}{'and ' if requests else ''}{sum(x.replies.values())} replies of the fault-free run",
        f"  schedules run: {x.schedules} ({depth}); skipped as equivalent: {x.deduplicated}",
    ]
    if not x.ok:
        lines.append("  violations: " + "; ".join(f"{k}: {n}" for k, n in sorted(x.kinds.items())))
        faults, run = x.first_violation
        lines.append("  first violation (fewest faults): " + ("; ".join(map(fault_text, faults)) or "no fault at all"))
        inv = ", ".join(str(i) for i in sorted({v["invariant"] for v in run["invariant_violations"]})) or "none"
        settled = ", ".join(sorted({s["kind"].replace("_", " ") for s in run.get("settlement_violations", ())}))
        lines.append(f"    lost: {len(run['lost'])}   duplicated: {len(run['duplicated'])}   regressions: "
                     f"{run['regressions']}   invariants broken: {inv}   "
                     f"completed: {'yes' if run['completed'] else 'no'}" + (f"   settlement: {settled}" if settled else ""))
    return "\n".join(lines)
