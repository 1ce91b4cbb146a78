"""The supervisor of a live run (:mod:`simkit.live.run`): it forks the workers, kills them with SIGKILL at
seeded random real instants (or, with ``at``, when a worker reports reaching a named crash point), restarts
them, and hears their reports until they catch up or halt.

The run around it (the databases created, read back and judged, :func:`~simkit.live.run.live`) is
:mod:`simkit.live.run`.
"""
from __future__ import annotations

import multiprocessing
import os
import random
import selectors
import sys
import time
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path

from simkit.errors import SimkitError
from simkit.model import Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.programs import end_below

from .worker import TIME_SCALE, heard, worker_main

__all__ = ["MAX_BARREN_DEATHS", "Supervisor"]

#: A worker that dies unplanned this many times in a row without reaching a page barrier stops the run (one
#: line).
MAX_BARREN_DEATHS = 5


# -- the supervisor ------------------------------------------------------------------------------------------
def _below(proc: BaseProcess) -> None:
    """Stop a worker and kill what is below it (:func:`~simkit.procedure.programs.end_below`), before its
    SIGKILL: an ``exec:`` consumer's process, in a session of its own, and the daemons it or a consumer in
    the worker forked, which the worker adopts; they outlived a live run of the Python API."""
    if proc.pid is not None:
        end_below(proc.pid)



@dataclass(eq=False)
class _Worker:
    id: int
    proc: BaseProcess | None = None
    fd: int = -1
    buffer: bytes = b""
    ready_at: float | None = None
    mark: float = 0.0               # when it was last ready or last reached a page barrier
    done: bool = False
    starts: int = 0
    pages: int = 0                  # page barriers this incarnation reached
    barren: int = 0                 # unplanned deaths in a row of incarnations that reached none

    def process(self) -> BaseProcess:
        """The current incarnation's process (there is one once :meth:`Supervisor._start` ran)."""
        assert self.proc is not None
        return self.proc


class Supervisor:
    """Starts the workers, kills them with SIGKILL on a seeded schedule, restarts them, until they catch up.

    Random mode (``at`` empty): kill ``i`` picks a worker and a fraction ``u`` from
    ``random.Random(f"kills:{seed}")`` and lands ``u * window`` seconds after the worker's current incarnation
    is ready. The window is ``max_delay``, or by default twice the workers' recent time per page barrier: a
    kill lands on average one page into the work, on a fast machine and on a slow one alike.
    Point mode: the n-th incarnation of worker ``w`` that is given a kill is told the crash point
    ``at[(n - 1) % len(at)]`` and the pass ``(n - 1) // len(at) % 5 + 1``: the first pass of each point in
    turn, then the second, up to the fifth, then the first again; it reports reaching that pass and is killed
    there. A drawn pass (1-5) could lie past an incarnation's last, and a window only the first pass opens
    was then missed (docs/live.md: ``--at`` hits it every time).

    A worker that dies without being killed by the supervisor (SIGKILL from the OOM killer or an operator) is
    a crash like any other: counted in ``deaths``, apart from ``kills``, and restarted.
    """

    def __init__(self, folder: Path, scenario: Scenario, provider, strategy: type[Consumer], seed: int,
                 kills: int, max_delay: float | None, at: tuple[str, ...], timeout: float, t0: float):
        self.args = (folder, scenario, provider, strategy)
        self.kills_wanted, self.max_delay, self.at, self.timeout, self.t0 = kills, max_delay, at, timeout, t0
        self.rng = random.Random(f"kills:{seed}")
        #: point mode: the kills given to each worker so far
        self.targeted = dict.fromkeys(range(1, scenario.workers + 1), 0)
        self.workers = {w: _Worker(w) for w in range(1, scenario.workers + 1)}
        self.ctx = multiprocessing.get_context("fork")
        self.sel = selectors.DefaultSelector()
        self.kills = self.allotted = 0
        #: workers that died without being killed by us (the OOM killer, an operator): (worker, exit status)
        self.deaths: list[tuple[int, int | None]] = []
        self.page_times: list[float] = []
        self.halts: list[tuple[float, int, str]] = []
        self.plan: list | None = None

    @property
    def starts(self) -> int:
        """Worker processes started so far, restarts included."""
        return sum(w.starts for w in self.workers.values())

    def _start(self, wk: _Worker) -> None:
        target = None
        if self.at and self.allotted < self.kills_wanted:
            n, self.allotted = self.targeted[wk.id], self.allotted + 1
            target, self.targeted[wk.id] = (self.at[n % len(self.at)], n // len(self.at) % 5 + 1), n + 1
        r, w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()           # a forked child must not write our buffered output a second time
        proc = self.ctx.Process(target=worker_main, args=(*self.args, wk.id, self.t0, target, w), daemon=True)
        wk.proc = proc
        proc.start()
        os.close(w)
        wk.fd, wk.buffer, wk.ready_at, wk.starts, wk.pages = r, b"", None, wk.starts + 1, 0
        self.sel.register(r, selectors.EVENT_READ, wk)

    def _kill(self, wk: _Worker) -> None:
        _below(wk.process())
        wk.process().kill()          # SIGKILL, to the process we started
        wk.process().join()
        self.kills += 1
        self._read(wk, until_eof=True)
        if not wk.done:
            self._start(wk)

    def _read(self, wk: _Worker, until_eof: bool = False) -> None:
        while True:
            data = os.read(wk.fd, 65536)
            if not data:
                self.sel.unregister(wk.fd)
                os.close(wk.fd)
                wk.process().join()
                if not wk.done and not until_eof:
                    self._died(wk)
                return
            wk.buffer += data
            *lines, wk.buffer = wk.buffer.split(b"\n")
            for line in lines:       # bytes a consumer wrote on the pipe: a line no word of ours opens
                self._hear(wk, heard(line))
            if not until_eof:
                return

    def _died(self, wk: _Worker) -> None:
        """A worker we did not kill is gone: a crash like any other, counted apart from ours, and restarted.
        One that keeps dying before it reaches a page barrier cannot make progress: the run stops there."""
        self.deaths.append((wk.id, wk.process().exitcode))
        wk.barren = 0 if wk.pages else wk.barren + 1
        if wk.barren >= MAX_BARREN_DEATHS:
            raise SimkitError(f"live worker {wk.id} died {wk.barren} times in a row before reaching a page "
                              f"barrier (last exit status {wk.process().exitcode})")
        if self.plan is not None and self.plan[0] is wk:
            self.plan[2] = None      # a kill planned for the dead incarnation lands in the next one
        self._start(wk)

    def _hear(self, wk: _Worker, line: str) -> None:
        word, _, rest = line.partition(" ")
        if word == "ready":
            wk.ready_at = wk.mark = time.monotonic()
        elif word == "page":
            now = time.monotonic()
            self.page_times.append(now - wk.mark)
            wk.mark = now
            wk.pages += 1
        elif word == "error":        # the worker's own one-line report of an exception, before it exits
            raise SimkitError(f"live worker {wk.id}: {rest}")
        elif word in ("caught_up", "stopped"):     # (the verdict says whether the stream was done)
            wk.done = True
        elif word == "halt":
            wk.done = True
            self.halts.append(((time.monotonic() - self.t0) * TIME_SCALE, wk.id, rest))
        elif word == "at" and not wk.done:
            self._kill(wk)

    def _stop(self) -> None:
        for wk in self.workers.values():
            if wk.proc is not None and wk.proc.is_alive():
                _below(wk.proc)
                wk.proc.kill()
                wk.proc.join()
            if wk.fd >= 0 and wk.fd in self.sel.get_map():
                self.sel.unregister(wk.fd)
                os.close(wk.fd)
                wk.fd = -1

    def window(self) -> float:
        """Random mode: the longest a worker runs before its kill, in seconds."""
        if self.max_delay is not None:
            return self.max_delay
        recent = sorted(self.page_times[-50:])
        return 2 * recent[len(recent) // 2] if recent else 0.02

    def run(self) -> bool:
        """Until every worker caught up or halted (``True``), or ``timeout`` seconds passed (``False``).
        However it ends (an error, Ctrl-C, SIGTERM), no worker is left running."""
        try:
            return self._run()
        finally:
            self._stop()

    def _run(self) -> bool:
        for wk in self.workers.values():
            self._start(wk)
        deadline = time.monotonic() + self.timeout
        while not all(wk.done for wk in self.workers.values()):
            now = time.monotonic()
            if now >= deadline:
                return False
            wait = deadline - now
            if not self.at and self.plan is None and self.kills < self.kills_wanted:
                self.plan = [self.workers[self.rng.randint(1, len(self.workers))], self.rng.random(), None]
            if self.plan is not None:
                wk, u, due = self.plan
                if wk.done:
                    self.plan = None     # that worker finished first: the next kill of the schedule
                    continue
                if wk.ready_at is not None:
                    if due is None:
                        due = self.plan[2] = wk.ready_at + u * self.window()
                    if now >= due:
                        self.plan = None
                        self._kill(wk)
                        continue
                    wait = min(wait, due - now)
            for key, _ in self.sel.select(timeout=wait):
                if self.sel.get_map().get(key.fd) is key:    # not closed, nor its number reused by a restart
                    self._read(key.data)
        return True

