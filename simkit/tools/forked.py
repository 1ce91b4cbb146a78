"""Exploration that shares prefixes: one run forks the
process at each fault point (docs/exploring.md, "Execution").

The run of ``S + [f]`` is the run of ``S`` up to ``f``. So a process running ``S`` (a *parent*), at each pass,
request or reply after ``S``'s last fault that :func:`~simkit.tools.schedules.extensions` would offer, forks:
the child injects ``f`` there (the fault fires, as a scripted one would) and runs on to the end of ``S +
[f]``, forking its own extensions in turn while it has budget left; it sends what it found up a pipe and ends
with ``os._exit``. The parent waits for it, then carries on with its own prefix. One process of a chain runs
at a time, so a task takes one CPU whatever its depth. Every schedule is the same run as from scratch, faults
fire at the same passes, and the search visits them in the same order with the same deduplication; a parent
checks that the faults it offered are exactly its :func:`~simkit.tools.schedules.extensions`.

Only where it is safe: ``os.fork`` exists, the store is in memory (an SQLite store's file would be shared),
and no scripted late or crossed reply can strike a reply after the fault is offered. Otherwise
:func:`~simkit.tools.explore.explore` runs each schedule from scratch
(:func:`~simkit.tools.schedules.subtree`). The cyclic GC stays off in every process while it runs
(:func:`~simkit.truth.collector.paused`), so a child touches only the pages its own suffix needs.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import signal
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from simkit.errors import ConsumerError
from simkit.judge.checker import check
from simkit.model import REPLY_FAULTS, Fault, Scenario
from simkit.procedure.external import end_lives, transcribed
from simkit.truth.collector import paused
from simkit.world.simulation import World

from .exploration import Exploration, in_schedule, run_dict
from .fingerprint import fingerprint
from .schedules import Plan, Space, budget, covered, extensions, strategy_class

__all__ = ["forkable", "fork_cost", "pays", "level_ones", "subtrees", "trim", "FORK_PAYS"]

#: Forking pays when the fault-free run takes at least this many fork round trips (:func:`fork_cost`). A
#: forked schedule costs its suffix (about half a run) plus about three round trips: the fork, the pages the
#: child and then the parent copy on write, the pipe; measured in docs/performance.md, where forking only
#: broke even on the gauntlet (a 21 ms run, 1.7 ms round trips).
FORK_PAYS = 20


def forkable(base: Scenario) -> bool:
    """Can schedules of ``base`` share prefixes by forking? (See the module doc.)"""
    return (hasattr(os, "fork") and base.store == "memory"
            and not any(f.kind in REPLY_FAULTS for f in base.faults))


def trim() -> None:
    """Give the C heap's free memory back to the system (glibc's ``malloc_trim``; nothing elsewhere) before
    forking. A fork copies the page tables of every mapping, and its exit tears them down, whether the memory
    in them is in use or freed: a process that once held a long run (the benchmark, a notebook) paid for it
    at every fork, 4.4 ms a fork after a 200,000-event run was dropped against 1.4 ms once trimmed."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


@contextmanager
def _waitable():
    """SIGCHLD at its default while a fork is made and waited for: a consumer runs in this process and may
    have set it to ``SIG_IGN`` (its own children reaped by the kernel), and then the kernel reaps the fork
    too, before :func:`os.waitpid` (``ChildProcessError``). The consumer's setting is restored after."""
    before = signal.getsignal(signal.SIGCHLD)
    if before is not signal.SIG_IGN:
        yield
        return
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    except ValueError:      # not the main thread, which alone may set it (an explore in a thread was this
        yield               # ValueError's traceback): the kernel reaps the fork, :func:`_reaped` waits for it
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGCHLD, before)


def _reaped(pid: int) -> int | None:
    """The exit status of the fork ``pid``, once it has ended; ``None`` where the kernel reaped it itself
    (SIGCHLD ignored, in a thread that cannot set it back: :func:`_waitable`; ``waitpid`` waits all the same,
    then raises ``ChildProcessError``)."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


@lru_cache(maxsize=1)
def fork_cost() -> float:
    """Seconds for one fork of this process and its exit, the best of three (measured once, trimmed)."""
    trim()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        with _waitable():
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            _reaped(pid)
        best = min(best, time.perf_counter() - start)
    return best


def pays(run_seconds: float) -> bool:
    """Does forking pay for schedules of a run that took ``run_seconds`` from scratch? (:data:`FORK_PAYS`)"""
    return run_seconds >= FORK_PAYS * fork_cost()


class _Done(Exception):
    """Every target of this run has been forked: the rest of its prefix is of no use."""


class ForkPlan(Plan):
    """The fault plan of a process that forks a child at each fault it offers (see the module doc).

    ``mode`` is what this process is: ``top`` (the fault-free run; children are ``level`` or ``root``),
    ``level`` (a one-fault schedule run to its verdict and fingerprint), ``root`` (a one-fault schedule whose
    subtree is explored; its own verdict is already counted) or ``tree`` (a schedule of that subtree).
    """

    def __init__(self, base: Scenario, seed: int, space: Space, dedup: bool, below: str,
                 targets: set[int] | None = None, seen: dict | None = None):
        super().__init__(base, (), seed, None, False, None)
        self.space, self.dedup, self.below, self.targets = space, dedup and base.workers == 1, below, targets
        if self.dedup and base.faults:      # a fingerprint reads the counts of the scenario's faults to come
            self.count_all()
        self.seen = {} if seen is None else seen
        self.mode, self.left = "top", budget((), space)
        self.faults: tuple[Fault, ...] = ()
        self.place: tuple[int, ...] = ()
        self.open = any(self.left)          # offering faults: after the last fault, with budget left
        self.offered: list[Fault] = []
        self.results: dict[int, Any] = {}  # what each child sent: a level's verdict, a subtree's exploration
        self.acc: Exploration | None = None
        self.new_seen: list = []
        self.out: int | None = None         # the pipe to the parent, in a child
        self.fp: bytes | None = None
        self.on_result: Callable[[], object] | None = None

    # -- the hooks: offer a fault at each pass, reply and request --------------------------------------------
    def at_point(self, worker, point, position):
        fault = super().at_point(worker, point, position)
        if fault is None and self.open and self.left[0] and point in self.space.points:
            w, _point, pos, n = self.passes[-1]
            offers = [Fault("crash", point, pos, n, w)]
            if self.space.pauses:
                offers.append(Fault("pause", point, pos, n, w, duration=self.space.pause_duration))
            for f in offers:
                if self._branch(f):
                    return self._fire(f, ("p", len(self.passes) - 1))
        return fault

    def reply_lost(self, worker, op, position):
        lost = super().reply_lost(worker, op, position)
        if not lost and self.open and self.left[1] and op in self.space.replies_of:
            w, _op, pos, n_any, n_pos, _i = self.replies[-1]
            f = Fault("lost_response", None, pos, n_pos if pos is not None else n_any, w, op=op)
            if self._branch(f):
                self._fire(f, ("r", len(self.replies) - 1))
                return True
        return lost

    def request_lost(self, worker, op, position):
        lost = super().request_lost(worker, op, position)
        if not lost and self.open and self.left[2] and op in self.space.ops:
            w, _op, pos, n_any, n_pos, _i, _j = self.requests[-1]
            f = Fault("lost_request", None, pos, n_pos if pos is not None else n_any, w, op=op)
            if self._branch(f):
                self._fire(f, ("q", len(self.requests) - 1))
                return True
        return lost

    # -- forking ---------------------------------------------------------------------------------------------
    def _branch(self, f: Fault) -> bool:
        """Offer ``f``: fork a child for it if it is a target. True in the child, which injects it."""
        self.offered.append(f)
        index = len(self.offered)
        if self.targets is not None and index not in self.targets:
            return False
        r, w = os.pipe()
        with _waitable():
            pid = os.fork()
            if pid == 0:
                os.close(r)
                if self.out is not None:
                    os.close(self.out)
                self.out = w
                self._become(f, index)
                return True             # (leaving the block gives the child the consumer's SIGCHLD again)
            os.close(w)
            with os.fdopen(r, "rb") as pipe:
                data = pipe.read()
            status = _reaped(pid)
        if not data:
            raise RuntimeError(f"explore: the forked run of {f} ended (status {status}) without a result")
        kind, payload = pickle.loads(data)
        if kind == "error":
            raise payload
        self._absorb(index, f, kind, payload)
        if self.targets is not None and index == max(self.targets):
            raise _Done
        return False

    def _become(self, f: Fault, index: int) -> None:
        """In the child: this process now runs ``S + [f]``."""
        self.mode = self.below
        self.below = "tree"
        self.targets = None
        self.faults, self.place = self.faults + (f,), self.place + (index,)
        self.left = budget(self.faults, self.space)
        self.open = self.mode != "level" and any(self.left)
        self.record = any(self.left)
        self.offered, self.new_seen = [], []
        self.acc = Exploration("", "", 0, self.space.max_crashes, self.space.lost_responses,
                               self.space.pauses, lost_requests=self.space.lost_requests)

    def _fire(self, f: Fault, key: tuple) -> Fault:
        """In the child: ``f`` strikes here; fingerprint the state it leaves (a crash, one worker)."""
        self.fired.append(f)
        self.struck.add(key)
        self.last, self.at = f, key[1]
        if not (self.dedup and f.kind == "crash") or self.mode == "root":
            return f
        assert self.world is not None           # set by _drive while the run goes on
        if self.mode == "level":
            self.fp = fingerprint(self.world, self) if any(self.left) else None
            return f
        fp = fingerprint(self.world, self)
        if fp is not None:
            if covered(self.seen.get(fp, ()), self.left):
                self._send("skip", None)
            self.seen.setdefault(fp, []).append(self.left)
            self.new_seen.append((fp, self.left))
        return f

    def _absorb(self, index: int, f: Fault, kind: str, payload) -> None:
        """In the parent: what a child found."""
        if self.mode == "top":
            self.results[index] = payload
            if self.on_result is not None:
                self.on_result()
            return
        assert self.acc is not None             # a parent below the top explores a subtree (_become)
        if kind == "skip":
            self.acc.skip(self.faults + (f,))
            return
        acc, new_seen = payload
        self.acc.merge(acc)
        for fp, left in new_seen:
            self.seen.setdefault(fp, []).append(left)
        self.new_seen += new_seen

    # -- the end of a child ----------------------------------------------------------------------------------
    def finish(self, world: World) -> None:
        """In a child whose run has ended: check that it offered its extensions, judge, send up, exit."""
        if self.open and self.offered != extensions(self, self.space, *self.left):
            raise RuntimeError(f"explore: the faults offered after {self.faults} are not the schedule's "
                               "extensions (a bug in simkit.tools.forked)")
        if self.mode == "level":
            verdict = check(world)
            self._send("level", (verdict, None if verdict.ok else run_dict(world, verdict), self.fp))
        if self.mode == "tree":
            assert self.acc is not None
            verdict = check(world)
            self.acc.note(self.faults, verdict, world, self.place)
        self._send("tree", (self.acc, self.new_seen))

    def _send(self, kind: str, payload) -> None:
        try:
            data = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:          # noqa: BLE001 -- whatever it is, the parent must hear of it
            data = pickle.dumps(("error", RuntimeError(f"explore: a forked run's result: {e!r}")))
        assert self.out is not None             # only a child sends, up the pipe _branch gave it
        with os.fdopen(self.out, "wb") as pipe:
            pipe.write(data)
        try:
            end_lives()                         # (a skip comes mid-run) what an exec: consumer forked too
        finally:                                # (a Ctrl-C in it: this copy must not go on as the parent)
            os._exit(0)

    def fail(self, error: BaseException) -> None:
        """In a child: send ``error`` up instead of a result
        (with the child's traceback as a note), and exit."""
        error.add_note("in a forked run of simkit.tools.forked:\n"
                       + "".join(traceback.format_exception(error)))
        try:
            pickle.dumps(error)
        except Exception:               # noqa: BLE001
            error = RuntimeError(f"explore: a forked run raised {error!r}")
        self._send("error", error)


def _drive(base: Scenario, strategy, seed: int, plan: ForkPlan) -> dict[int, Any]:
    """Run the fault-free schedule with ``plan``, forking
    at its targets; ``{index: what the child found}``."""
    cls = strategy_class(strategy)
    trim()
    with paused(), transcribed():           # a forked child replays an exec: consumer's life
        world = World(base, cls, seed, (), keep_trace=False)
        world.faults, plan.world = plan, world
        try:
            world.run()
            if plan.out is not None:
                plan.finish(world)
        except _Done:
            pass
        except BaseException as e:
            error = in_schedule(e, plan.faults) if isinstance(e, ConsumerError) else e
            if plan.out is not None:
                plan.fail(error)
            if error is e:
                raise
            raise error from None
        finally:
            plan.world = None
    return plan.results


def level_ones(base: Scenario, strategy, seed: int, space: Space, dedup: bool, indices, on_result=None
               ) -> dict[int, tuple]:
    """The one-fault schedules at ``indices`` (1-based) of the fault-free run's extensions, each forked from
    that run: ``{index: (verdict, run object if it fails, fingerprint)}``. ``on_result()`` after each."""
    plan = ForkPlan(base, seed, space, dedup, "level", set(indices))
    plan.on_result = on_result
    return _drive(base, strategy, seed, plan)


def subtrees(base: Scenario, strategy, seed: int, space: Space, dedup: bool, seen: dict, indices,
             on_result=None
             ) -> dict[int, Exploration]:
    """The subtrees below the one-fault schedules at ``indices``, each forked from the fault-free run and
    exploring its own subtree by forking: ``{index: its exploration}``. Each starts from the same ``seen``
    (fingerprint -> budgets left), as from scratch. ``on_result()`` after each."""
    plan = ForkPlan(base, seed, space, dedup, "root", set(indices), seen)
    plan.on_result = on_result
    return {k: acc for k, (acc, _new_seen) in _drive(base, strategy, seed, plan).items()}
