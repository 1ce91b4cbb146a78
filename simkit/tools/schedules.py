"""Schedules of faults: what may follow a schedule (:func:`extensions`), what budget it leaves, and one
schedule run from scratch (:func:`run_schedule`), with the search below a one-fault schedule built on it
(:func:`subtree`); docs/exploring.md, "How schedules are built". :mod:`simkit.tools.forked` runs the same
schedules sharing their prefixes.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from functools import cache

from simkit.errors import ConsumerError
from simkit.judge.checker import check
from simkit.model import Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import resolve
from simkit.truth.collector import paused
from simkit.world.faults import FaultPlan
from simkit.world.simulation import World

from .exploration import Exploration, fault_text, in_schedule, run_dict
from .fingerprint import fingerprint

__all__ = ["Space", "Plan", "Skip", "strategy_class", "run_schedule", "extensions", "budget", "covered",
           "level_one", "packed", "unpacked", "subtree"]


@cache
def _resolved(ref: str) -> type[Consumer]:
    return resolve(ref)


def strategy_class(strategy) -> type[Consumer]:
    """A strategy name or reference resolved (cached), or the Consumer subclass itself."""
    return _resolved(strategy) if isinstance(strategy, str) else strategy


# -- one run -------------------------------------------------------------------------------------------------
class Skip(Exception):
    """This schedule's last crash leaves a state already explored with at least as much budget left."""


class Plan(FaultPlan):
    """The fault plan of one explored run: notes where the schedule's last fault fired, fingerprints it."""

    def __init__(self, base: Scenario, faults: tuple[Fault, ...], seed: int, world: World | None, watch: bool,
                 stop):
        super().__init__(tuple(base.faults) + faults, base.random_faults, seed)
        self.world = world  # None once the run is over (no cycle), or until a forked run sets it
        self.last = faults[-1] if faults else None
        self.at = None                      # index of the last fault in passes / replies / requests
        self.watch = watch
        self.stop = stop
        self.fingerprint = None
        if watch and base.faults:           # a fingerprint reads the counts of the scenario's faults to come
            self.count_all()
        # passes ("p", i), replies ("r", j), requests ("q", k) struck
        self.struck: set[tuple[str, int]] = set()

    def at_point(self, worker, point, position):
        fault = super().at_point(worker, point, position)
        if fault is not None:
            self.struck.add(("p", len(self.passes) - 1))
        if fault is not None and fault is self.last:
            self.at = len(self.passes) - 1
            if self.watch and fault.kind == "crash":
                self.fingerprint = fingerprint(self.world, self)
                if self.fingerprint is not None and self.stop is not None and self.stop(self.fingerprint):
                    raise Skip
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


def run_schedule(base: Scenario, strategy, seed: int, faults: tuple[Fault, ...], dedup: bool, stop=None,
         record: bool = True):
    """Run one schedule. Returns ``(verdict, world, plan)``, or ``None`` when ``stop`` skipped it.

    ``record``: keep the passes and replies after the last fault (its extensions). A schedule with no budget
    left has none: once its faults have fired, the rest of the run costs what a plain run costs.
    """
    cls = strategy_class(strategy)
    with paused():
        world = World(base, cls, seed, faults, keep_trace=False)
        plan = world.faults = Plan(base, faults, seed, world, dedup and base.workers == 1, stop)
        plan.record = record
        try:
            world.run()
        except Skip:
            return None
        except ConsumerError as e:
            raise in_schedule(e, faults) from None
        finally:
            plan.world = None           # no cycle: the world is freed as soon as its caller drops it
        return check(world), world, plan


@dataclass(frozen=True)
class Space:
    """What a schedule may contain."""

    max_crashes: int
    lost_responses: int
    pauses: bool
    pause_duration: float
    points: tuple[str, ...]
    ops: tuple[str, ...]
    lost_requests: int = 0
    #: the ops whose replies may be lost (an unsafe sink's audit spares the effect's reply, not its request:
    #: round 41); ``None``: ``ops``
    reply_ops: tuple[str, ...] | None = None
    #: ``reply_ops`` resolved once, here, rather than on every reply
    replies_of: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "replies_of", self.ops if self.reply_ops is None else self.reply_ops)


def extensions(plan: Plan, space: Space, crashes_left: int, lost_left: int,
               requests_left: int = 0) -> list[Fault]:
    """The faults that may follow the schedule's last fault: every later pass, request and reply, in timeline
    order, except those a fault already struck (a fault kept from the scenario).

    Timeline order: a request (:class:`~simkit.world.faults.RequestRow`) comes before pass ``passes_before``
    and reply ``replies_before``; a reply (:class:`~simkit.world.faults.ReplyRow`) comes before pass
    ``passes_before``. A request comes before its own reply, so a lost request and a lost reply of one request
    are never in one schedule."""
    passes, replies, requests = plan.passes, plan.replies, plan.requests
    last, at = plan.last, plan.at
    if last is not None and at is None:     # its parent's run, repeated, never reached where the fault is
        raise ConsumerError(f"the run with {fault_text(last)} never reached that fault, which its run "
                            "without it reached: the consumer is not deterministic (state kept outside its "
                            "module, in os.environ, a file or another module, is not wiped between runs)")
    if last is None:
        i0, j0, k0 = 0, 0, 0
    elif last.kind == "lost_response":
        i0, j0 = replies[at].passes_before, at + 1
        k0 = next((k for k, q in enumerate(requests) if q.replies_before >= j0), len(requests))
    elif last.kind == "lost_request":
        i0, j0 = requests[at].passes_before, requests[at].replies_before
        k0 = at + 1
    else:
        i0 = at + 1
        j0 = next((j for j, r in enumerate(replies) if r.passes_before >= i0), len(replies))
        k0 = next((k for k, q in enumerate(requests) if q.passes_before >= i0), len(requests))
    out: list[Fault] = []
    i, j, k = i0, j0, k0
    n_requests = len(requests) if requests_left else k      # none to offer: skip them all
    while i < len(passes) or j < len(replies) or k < n_requests:
        q = requests[k] if k < n_requests else None
        if q is not None and (j >= len(replies) or q.replies_before <= j) and (
                i >= len(passes) or q.passes_before <= i):
            k += 1
            if q.op in space.ops and ("q", k - 1) not in plan.struck:
                out.append(Fault("lost_request", None, q.position, q.occurrence, q.worker, op=q.op))
        elif j < len(replies) and (i >= len(passes) or replies[j].passes_before <= i):
            r = replies[j]
            j += 1
            if lost_left and r.op in space.replies_of and ("r", j - 1) not in plan.struck:
                out.append(Fault("lost_response", None, r.position, r.occurrence, r.worker, op=r.op))
        else:
            p = passes[i]
            i += 1
            if crashes_left and p.point in space.points and ("p", i - 1) not in plan.struck:
                out.append(Fault("crash", p.point, p.position, p.occurrence, p.worker))
                if space.pauses:
                    out.append(Fault("pause", p.point, p.position, p.occurrence, p.worker,
                                     duration=space.pause_duration))
    return out


def budget(faults, space: Space) -> tuple[int, int, int]:
    """What a schedule leaves of each bound: (crashes and pauses, lost replies, lost requests)."""
    lost = sum(1 for f in faults if f.kind == "lost_response")
    unsent = sum(1 for f in faults if f.kind == "lost_request")
    return (space.max_crashes - (len(faults) - lost - unsent), space.lost_responses - lost,
            space.lost_requests - unsent)


def covered(budgets, budget) -> bool:
    """Has a schedule reached this state before with at least ``budget`` left of every bound?"""
    return any(all(had >= left for had, left in zip(old, budget)) for old in budgets)




# -- the search, from scratch --------------------------------------------------------------------------------
def level_one(args) -> tuple:
    """One one-fault schedule: its verdict, its run object if it fails, its fingerprint, and (given the space
    and budget left) its extensions (:func:`packed`, for :func:`subtree`, so that it is not run again there);
    picklable."""
    base, strategy, seed, fault, dedup, more, *space = args
    verdict, world, plan = run_schedule(base, strategy, seed, (fault,), dedup and more, record=more)
    found = (verdict, (None if verdict.ok else run_dict(world, verdict)), plan.fingerprint)
    if not (more and space):
        return found
    return (*found, packed(extensions(plan, space[0], *budget((fault,), space[0]))))


_FAULT_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(Fault)))


def packed(faults: list[Fault]) -> tuple[tuple, ...]:
    """``faults`` as tuples of their fields: a schedule's extensions sent to another process (a frozen
    dataclass pickles ten times slower than its tuple)."""
    return tuple(map(_FAULT_FIELDS, faults))


def unpacked(rows) -> list[Fault]:
    """The faults :func:`packed` made tuples of."""
    return [Fault(*row) for row in rows]


def _stop_for(seen: dict, left: tuple):
    """``stop`` for :func:`run_schedule`: is this fingerprint covered? (If not, it is noted with ``left``.)"""
    def stop(fp):
        if covered(seen.get(fp, ()), left):
            return True
        seen.setdefault(fp, []).append(left)
        return False
    return stop


def subtree(args) -> Exploration:
    """Depth-first exploration below one one-fault schedule (whose own verdict the caller already counted),
    each schedule run from scratch. ``args``: (base, strategy, seed, root, its place, space, dedup, seen), and
    optionally the root's extensions as :func:`level_one` found them (:func:`packed`; ``None``: the root
    is run again to find them)."""
    base, strategy, seed, root, place, space, dedup, seen, *known = args
    seen = {fp: list(budgets) for fp, budgets in seen.items()}
    result = Exploration(base.name, "", seed, space.max_crashes, space.lost_responses, space.pauses,
                         lost_requests=space.lost_requests)

    def visit(faults, after, at):
        for i, fault in enumerate(after, 1):
            child = faults + (fault,)
            left = budget(child, space)
            out = run_schedule(base, strategy, seed, child, dedup, _stop_for(seen, left), record=any(left))
            if out is None:
                result.skip(child)
                continue
            verdict, world, child_plan = out
            result.note(child, verdict, world, at + (i,))
            if any(n > 0 for n in left):
                visit(child, extensions(child_plan, space, *left), at + (i,))

    if known and known[0] is not None:
        after = unpacked(known[0])
    else:
        _verdict, _world, plan = run_schedule(base, strategy, seed, (root,), dedup)
        after = extensions(plan, space, *budget((root,), space))
    visit((root,), after, place)
    return result
