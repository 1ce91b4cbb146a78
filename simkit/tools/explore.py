"""Exhaustive fault exploration: every schedule of up to K faults, run and judged (a bounded model check).

docs/vocabulary.md (seed 000, "Limits and validation"): *validate the implementation
with crash injection before each event commit, after each event commit, before and
after a durable quarantine receipt, before the page barrier, and after the barrier.*
:func:`explore` does that for every pass of every crash point, not just a few.

How schedules are built. The fault-free run (the scenario without its scripted and random faults) records
every crash-point pass, every request and every reply (:class:`~simkit.world.faults.FaultPlan` ``passes``,
``requests`` and ``replies``). Each pass becomes a candidate fault: a crash there, or (with several workers) a
pause; each reply, with ``lost_responses``, a lost reply (the request took effect); each request, with
``lost_requests``, a lost request (it never arrived: no effect, and the caller times out just the same). A
schedule's extensions are the passes, requests and replies that occur *after its last fault in its own run*,
so the run of ``S + [f]`` is the run of ``S`` up to ``f``, every fault of a schedule fires, and every set of
faults within the bounds that can fire together is run exactly once, in firing order.

Deduplication, where it is sound. With one worker, the moment of a crash leaves nothing but durable state:
the store, the sink, the provider, the simulated time. Two schedules whose last crash leaves the same state
(same fingerprint, see :func:`fingerprint`) have the same future; the later one, with no more fault budget
left than the earlier, is skipped with its whole subtree. Any violation it could show is either in that
shared future (the earlier schedule shows it) or before its last fault (its parent shows it). "No more budget"
is counted per kind: crashes, lost replies and lost requests. Pauses, lost replies and lost requests leave a
worker's memory alive, and a second worker's memory is never part of durable state: schedules whose last fault
is one of those are never deduplicated. Nor is a one-fault schedule with no budget left: it has already run,
and has no subtree to skip.

Execution. Schedules of one fault run first; then each one-fault schedule's subtree is explored depth first,
as one task, from the extensions its one-fault run found (that run is not made again). Where it can, a
schedule is not run from scratch: the run of its prefix forks a process at the fault
(:mod:`simkit.tools.forked`); elsewhere each schedule runs from scratch (:mod:`simkit.tools.schedules`). With
``jobs > 1`` the tasks run in worker processes; the result is the same for any ``jobs`` and either way.

Modules: :mod:`~simkit.tools.schedules` (what a schedule may contain, one run), :mod:`~simkit.tools.forked`
(prefix sharing), :mod:`~simkit.tools.fingerprint` (state fingerprints), :mod:`~simkit.tools.exploration` (the
result and its text). This module is the search: :func:`explore`.
"""
from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from simkit.errors import SimkitError, described, one_or_many
from simkit.model import CRASH_POINTS, LOST_OPS, MAX_FAULTS, Fault, RandomFaults, Scenario
from simkit.procedure.lives import not_rerunning
from simkit.procedure.strategies import strategy_name
from simkit.runner import Run, a_scenario, checked, simulate

from . import forked
from .exploration import Exploration, crash_args, describe_kind, failure_kind, fault_text, summary_text
from .fingerprint import fingerprint
from .pool import pool_map, processes
from .schedules import Space, budget, covered, extensions, level_one, run_schedule, strategy_class, subtree

__all__ = ["Exploration", "ExploreError", "Split", "begin", "below", "explore", "failing", "failure_kind",
           "describe_kind", "fault_free", "replay", "fingerprint", "fault_text", "crash_args", "summary_text",
           "MAX_FAULTS"]


# The names tests and older callers import from here.
_Space, _run, _extensions, _budget = Space, run_schedule, extensions, budget
_covered, _strategy = covered, strategy_class


class ExploreError(SimkitError):
    """A parameter of :func:`explore` is out of range; the message starts with the parameter's name."""


# -- the scenario explored -----------------------------------------------------------------------------------
def fault_free(sc: Scenario, keep_faults: bool = False) -> Scenario:
    """``sc`` without random faults and (unless ``keep_faults``) without its scripted ``[[faults]]``.

    The provider's own behaviour (stuck tokens, lost fetch responses of ``[generate]``) stays: it is the
    world being explored, not a fault of the schedule.
    """
    return dataclasses.replace(a_scenario(sc), random_faults=RandomFaults(),
                               faults=tuple(sc.faults) if keep_faults else ())


def failing(sc: Scenario, faults, keep_faults: bool = False) -> Scenario:
    """The scenario an explored schedule ran: ``fault_free(sc)`` with ``faults`` as its own ``[[faults]]`` (a
    file that ``simkit run`` and :func:`~simkit.tools.shrink.shrink` take)."""
    base = fault_free(sc, keep_faults)
    return dataclasses.replace(base, faults=tuple(base.faults) + tuple(faults))


def replay(sc: Scenario, strategy, faults, seed: int | None = None, keep_faults: bool = False) -> Run:
    """Run one explored schedule again: ``fault_free(sc)`` with ``faults`` (a schedule from
    :func:`explore`)."""
    return simulate(fault_free(sc, keep_faults), strategy_class(strategy), seed, tuple(faults))


# -- running the levels --------------------------------------------------------------------------------------
def _call(args):
    """``fn(*rest)`` for ``(fn, *rest)``: a task of a process pool."""
    return args[0](*args[1:])


def _map(fn, tasks, jobs: int, progress):
    """``fn`` over ``tasks``, in order, in up to ``jobs`` processes (:func:`~simkit.tools.pool.pool_map`), one
    step of ``progress`` per task."""
    return pool_map(fn, tasks, jobs, lambda _result: progress.update(1))


def _groups(indices: list[int], jobs: int) -> list[list[int]]:
    """``indices`` dealt round-robin into at most ``jobs`` non-empty groups."""
    n = max(1, min(processes(jobs, len(indices)), len(indices)))
    return [g for g in (indices[i::n] for i in range(n)) if g]


def _level_ones(base, ref, seed, firsts, space, dedup, jobs, bar, fork) -> list[tuple]:
    """(verdict, run object if it fails, fingerprint) of every one-fault schedule, in order."""
    more = [any(budget((f,), space)) for f in firsts]
    if not fork:
        tasks = [(base, ref, seed, f, dedup, m, space) for f, m in zip(firsts, more)]
        return list(_map(level_one, tasks, jobs, bar))
    indices = list(range(1, len(firsts) + 1))
    if processes(jobs, len(firsts)) <= 1:
        found = forked.level_ones(base, ref, seed, space, dedup, indices,
                                  lambda: bar.update(1)) if indices else {}
    else:
        calls = [(forked.level_ones, base, ref, seed, space, dedup, g) for g in _groups(indices, jobs)]
        found = {k: v for part in _map(_call, calls, jobs, _Quiet()) for k, v in part.items()}
        bar.update(len(firsts))
    return [found[k] for k in indices]


def _subtrees(base, ref, seed, roots, space, dedup, seen, jobs, bar, fork, known) -> list[Exploration]:
    """The exploration below each of ``roots`` ((index, fault) pairs), in order; ``known``: the extensions of
    the roots whose one-fault run found them (by index, :func:`~simkit.tools.schedules.packed`)."""
    if not fork:
        tasks = [(base, ref, seed, fault, (k,), space, dedup, seen, known.get(k)) for k, fault in roots]
        return list(_map(subtree, tasks, jobs, bar))
    indices = [k for k, _fault in roots]
    if processes(jobs, len(roots)) <= 1:
        found = forked.subtrees(base, ref, seed, space, dedup, seen, indices,
                                lambda: bar.update(1)) if roots else {}
    else:
        calls = [(forked.subtrees, base, ref, seed, space, dedup, seen, [k]) for k in indices]
        found = {k: v for part in _map(_call, calls, jobs, bar) for k, v in part.items()}
    return [found[k] for k in indices]


class _Quiet:
    """A progress bar that shows nothing."""

    def update(self, n: int) -> None:
        pass


# -- the search ----------------------------------------------------------------------------------------------
def _space(scenario: Scenario, base: Scenario, max_crashes: int, lost_responses: int, lost_requests: int,
           pauses, pause_duration, points, ops, reply_ops=None) -> Space:
    """The space of schedules, its parameters checked (:class:`ExploreError` names the parameter)."""
    for name, bound in (("max_crashes", max_crashes), ("lost_responses", lost_responses),
                        ("lost_requests", lost_requests)):
        if type(bound) is not int:      # 1.5 ran as if 1, "1" was a TypeError from a comparison
            raise ExploreError(f"{name} {described(bound)}: must be a whole number (an int)", param=name)
        if bound < 0:
            raise ExploreError(f"{name} {bound}: must be at least 0", param=name)
        if bound > MAX_FAULTS:
            raise ExploreError(f"{name} {bound}: at most {MAX_FAULTS} (schedules grow as passes ** K; "
                               f"a schedule of 1,000 faults ended in a RecursionError)", param=name)
    points = CRASH_POINTS if points is None else one_or_many("points", points, (str,))
    for p in points:
        if p not in CRASH_POINTS:
            raise ExploreError(f"points: unknown crash point {p!r} (one of {', '.join(CRASH_POINTS)})",
                               param="points")
    ops = one_or_many("ops", ops, (str,))              # "fetch" was a reply per letter ('f': unknown)
    reply_ops = None if reply_ops is None else one_or_many("reply_ops", reply_ops, (str,))
    for name, given in (("ops", ops), ("reply_ops", reply_ops or ())):
        for op in given:
            if op not in LOST_OPS:
                raise ExploreError(f"{name}: unknown reply {op!r} (one of {', '.join(LOST_OPS)})", param=name)
    return Space(max_crashes, lost_responses, base.workers > 1 if pauses is None else bool(pauses),
                 scenario.random_faults.pause_duration if pause_duration is None else float(pause_duration),
                 points, tuple(ops), lost_requests, None if reply_ops is None else tuple(reply_ops))


def _roots(result: Exploration, firsts: list[Fault], level: list[tuple], space: Space, dedup: bool):
    """Count the one-fault schedules; return the fingerprints they reached and the ones with a subtree."""
    seen: dict[bytes, list[tuple[int, int, int]]] = {}
    roots = []
    for k, (fault, (verdict, run, fp, *_known)) in enumerate(zip(firsts, level), 1):
        left = budget((fault,), space)
        if fp is not None and dedup:
            if covered(seen.get(fp, ()), left):
                result.skip((fault,))
                continue
            seen.setdefault(fp, []).append(left)
        result.note((fault,), verdict, run, (k,))
        if any(n > 0 for n in left):
            roots.append((k, fault))
    return seen, roots


def _fault_free_run(result: Exploration, base: Scenario, ref, seed: int, space: Space, dedup: bool):
    """Run and count the fault-free schedule; return its
    extensions (the one-fault schedules) and its seconds."""
    start = time.perf_counter()
    verdict, world, plan = run_schedule(base, ref, seed, (), dedup)
    seconds = time.perf_counter() - start
    result.note((), verdict, world, ())
    result.passes = dict(Counter(p.point for p in plan.passes))
    result.replies = dict(Counter(r.op for r in plan.replies))
    result.requests = dict(Counter(q.op for q in plan.requests))
    return extensions(plan, space, *budget((), space)), seconds


def explore(scenario: Scenario, strategy="safe", *, max_crashes: int = 2, lost_responses: int = 0,
            lost_requests: int = 0, pauses: bool | None = None, pause_duration: float | None = None,
            seed: int | None = None, points: tuple[str, ...] | None = None, ops: tuple[str, ...] = LOST_OPS,
            dedup: bool = True, keep_faults: bool = False, jobs: int = 1, progress: bool = False,
            share_prefixes: bool | None = None, reply_ops: tuple[str, ...] | None = None) -> Exploration:
    """Run every schedule of up to ``max_crashes`` crashes (and pauses), ``lost_responses`` lost replies and
    ``lost_requests`` lost requests.

    Args:
        scenario: the scenario; its random faults are dropped, and its scripted faults too unless
            ``keep_faults`` (then they stay in every schedule, as part of the world).
        strategy: a strategy name, ``path.py:Class``/``module:Class`` reference, or a Consumer subclass.
        max_crashes: K, the most crash or pause faults in one schedule.
        lost_responses: L, the most lost replies (fetch, effect, checkpoint write) in one schedule: the
            request took effect, its caller times out.
        lost_requests: the most lost requests (fetch, effect, checkpoint write) in one schedule: the request
            never arrived and took no effect, its caller times out just the same. Seed 001's reservation and
            settlement transactions are not among them (:func:`~simkit.ops.lost_op`).
        pauses: also pause at every pass (a stale worker); default: when the scenario has several workers.
        pause_duration: how long a pause lasts; default the scenario's ``[random_faults] pause_duration``.
        seed: the seed (generated providers); default the scenario's.
        points: only these crash points get faults (default: all of docs/vocabulary.md's crash points; one
            alone is a list of one).
        ops: only the replies and requests of these ops may be lost (one alone: a list of one).
        reply_ops: only the replies of these ops may be lost (default: ``ops``).
        dedup: skip schedules whose last crash leaves an already explored state (sound; see module doc).
        jobs: worker processes for the tasks (at most :data:`~simkit.tools.pool.JOBS_PER_CPU` per CPU and one
            per task); the result does not depend on it.
        progress: show a tqdm bar on stderr.
        share_prefixes: run a schedule's prefix once and fork at each fault (:mod:`simkit.tools.forked`) where
            that is safe; ``False`` runs each schedule from scratch; ``None`` (default) forks where it is safe
            and the fault-free run is long enough for forking to pay (:func:`~simkit.tools.forked.pays`).
            The result is the same either way.

    Raises:
        ExploreError: a bound is negative or too large, or a point or op is unknown; the message starts with
            the parameter's name (``max_crashes``, ``lost_responses``, ``lost_requests``, ``points``,
            ``ops``).
    """
    split, bar = _begin(scenario, strategy, max_crashes, lost_responses, lost_requests, pauses,
                        pause_duration, seed, points, ops, dedup, keep_faults, jobs, progress, share_prefixes,
                        reply_ops=reply_ops)
    for sub in _subtrees(split.base, split.ref, split.seed, split.roots, split.space, split.dedup, split.seen,
                         split.jobs, bar, split.fork, split.known):
        split.result.merge(sub)
    bar.close()
    return split.result


@dataclass
class Split:
    """An exploration begun (:func:`begin`): the fault-free run and every one-fault schedule counted in
    ``result``; what is left is the subtree below each of ``roots`` ((index, fault) pairs), each from the same
    ``seen`` (:func:`below`). ``known`` holds, by index, the extensions of the roots whose one-fault run found
    them (:func:`~simkit.tools.schedules.packed`), so that no root is run twice; a root missing from it is run
    again. Pickles when ``ref`` does (the audit sends it to its workers with ``ref`` None, and only the
    ``known`` of the roots each is to explore, and each puts its consumer back)."""

    result: Exploration
    base: Scenario
    ref: Any
    seed: int
    space: Space
    dedup: bool
    fork: bool
    seen: dict
    roots: list[tuple[int, Fault]]
    jobs: int = 1
    known: dict[int, tuple] = field(default_factory=dict)


def _begin(scenario, strategy, max_crashes, lost_responses, lost_requests, pauses, pause_duration, seed,
           points, ops, dedup, keep_faults, jobs, progress, share_prefixes, stop_if_failing=False,
           reply_ops=None) -> tuple[Split, Any]:
    """:func:`explore` up to its subtrees: the split, and the progress bar (still open)."""
    not_rerunning()         # a script's top-level explore() is not run again inside each life
    base = fault_free(checked(scenario), keep_faults)     # ("retry_walkthrough": a TypeError from replace())
    space = _space(scenario, base, max_crashes, lost_responses, lost_requests, pauses, pause_duration, points,
                   ops, reply_ops)
    seed = scenario.seed if seed is None else seed
    jobs = processes(jobs)  # the CPU bound, noted once; each pool also gets no more than tasks
    cls = strategy_class(strategy)
    ref = strategy if isinstance(strategy, str) else cls
    result = Exploration(scenario.name, strategy_name(cls), seed, max_crashes, lost_responses, space.pauses,
                         getattr(scenario, "settlement", "fenced"), lost_requests)
    firsts, seconds = _fault_free_run(result, base, ref, seed, space, dedup)
    if stop_if_failing and not result.ok:
        firsts = []
    fork = share_prefixes is not False and forked.forkable(base) and (share_prefixes or forked.pays(seconds))
    from tqdm import tqdm
    bar = tqdm(total=len(firsts), disable=not progress, desc=f"explore {scenario.name} · {result.strategy}",
               unit="schedule", leave=False)
    level = _level_ones(base, ref, seed, firsts, space, dedup, jobs, bar, fork)
    seen, roots = _roots(result, firsts, level, space, dedup)
    known = {k: level[k - 1][3] for k, _fault in roots if len(level[k - 1]) > 3}
    bar.total = len(firsts) + len(roots)
    bar.refresh()
    return Split(result, base, ref, seed, space, dedup, fork, seen, roots, jobs, known), bar


def begin(scenario: Scenario, strategy="safe", *, max_crashes: int = 2, lost_responses: int = 0,
          lost_requests: int = 0, pauses: bool | None = None, pause_duration: float | None = None,
          seed: int | None = None, points: tuple[str, ...] | None = None, ops: tuple[str, ...] = LOST_OPS,
          dedup: bool = True, keep_faults: bool = False, share_prefixes: bool | None = None,
          stop_if_failing: bool = False, reply_ops: tuple[str, ...] | None = None) -> Split:
    """:func:`explore`, in this process, up to the subtrees below its one-fault schedules: what runs them
    (:func:`below`, in any processes, any grouping) and merges what they find into ``Split.result`` gets
    :func:`explore`'s result. Same arguments; :class:`ExploreError` alike. ``stop_if_failing``: where the
    fault-free run fails, no schedule with a fault is run (``roots`` is empty; the audit's case has failed
    already)."""
    split, bar = _begin(scenario, strategy, max_crashes, lost_responses, lost_requests, pauses,
                        pause_duration, seed, points, ops, dedup, keep_faults, 1, False, share_prefixes,
                        stop_if_failing, reply_ops)
    bar.close()
    return split


def below(split: Split, roots: list[tuple[int, Fault]]) -> Exploration:
    """The subtrees below ``roots`` (some of ``split.roots``), in this
    process, as one exploration to merge into ``split.result``."""
    out = Exploration(split.result.scenario, split.result.strategy, split.seed, split.space.max_crashes,
                      split.space.lost_responses, split.space.pauses, lost_requests=split.space.lost_requests)
    for sub in _subtrees(split.base, split.ref, split.seed, roots, split.space, split.dedup, split.seen, 1,
                         _Quiet(), split.fork, split.known):
        out.merge(sub)
    return out
