"""How many worker processes ``--jobs J`` starts (explore, sweep, audit): never more than :data:`JOBS_PER_CPU`
per CPU, nor more than there are tasks. ``--jobs 1000`` once started 1,002 processes for 9 schedules, and
``--jobs 1000000`` was a fork bomb. :func:`pool_map` runs a function over tasks in that many processes.

No worker outlives the command (issue 32: after SIGTERM or SIGKILL, workers of ``sweep --jobs`` and ``explore
--jobs`` ran on under PID 1 for half an hour, and whatever read the command's pipes hung). On Linux each
worker, and each process a worker forks (``explore``'s prefix sharing), asks the kernel for SIGKILL when its
parent dies (``PR_SET_PDEATHSIG``): that covers a SIGKILL of the command. SIGTERM and SIGHUP raise
:class:`~simkit.errors.Terminated` in the command while its pool runs, and Ctrl-C its ``KeyboardInterrupt``:
the pool's workers are killed at once (not waited for: a task may take minutes) and the command ends with one
line, exit 128 + the signal. Workers ignore Ctrl-C, which a terminal sends to them too: the command handles
it.
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import threading
import time
import warnings
from collections import deque
from contextlib import contextmanager, suppress
from typing import cast

from simkit._starting import replaceable
from simkit.errors import Note, SimkitError, Terminated

__all__ = ["JOBS_PER_CPU", "cpu_limited", "die_with_parent", "most", "pool_map", "prctl", "processes",
           "served", "terminated", "worker_start"]

#: Worker processes per CPU at most: the runs are pure Python and CPU-bound, so more only add memory.
JOBS_PER_CPU = 4


def cpu_limited() -> str:
    """The limit on CPU time each process has (``ulimit -t``), as a clause for one that died without a word
    ("" without a limit): the kernel ends one past it (SIGXCPU, SIGKILL), which said "did the consumer end its
    own process?" of ``safe``."""
    soft = resource.getrlimit(resource.RLIMIT_CPU)[0]
    if soft == resource.RLIM_INFINITY:
        return ""
    return f", or did it use up the CPU time each process may (ulimit -t {soft})"


def most() -> int:
    """The most worker processes this machine gets."""
    return JOBS_PER_CPU * (os.cpu_count() or 1)


def processes(jobs: int, tasks: int | None = None) -> int:
    """``jobs`` as a number of processes to start for ``tasks`` tasks: at most :func:`most` (with a
    :class:`~simkit.errors.Note` warning when that cuts what was asked for) and at most ``tasks``, and at
    least 1."""
    if jobs > most():
        warnings.warn(Note(f"jobs {jobs}: using {most()} worker processes ({JOBS_PER_CPU} per CPU at most)",
                           param="jobs"), stacklevel=2)
        jobs = most()
    if tasks is not None:
        jobs = min(jobs, tasks)
    return max(1, jobs)


def pool_map(fn, tasks: list, jobs: int, done=None, chunksize: int | None = None):
    """``fn`` over ``tasks``, yielding the results in order, in up to ``jobs`` processes (:func:`processes`;
    one: in this process, no pool). ``done(result)`` is called as each result comes back (a progress bar's
    update). ``chunksize``: tasks sent to a process at a time (default: about eight chunks per process;
    sweep's tasks are chunks of seeds already, and go one by one). ``fn`` and the tasks must pickle when a
    pool runs them."""
    jobs = processes(jobs, len(tasks))
    if jobs <= 1:
        for t in tasks:
            result = fn(t)
            if done is not None:
                done(result)
            yield result
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    chunksize = max(1, len(tasks) // (8 * jobs)) if chunksize is None else chunksize
    before = set(multiprocessing.active_children())
    threading.excepthook = _cancelled_quietly(threading.excepthook)        # the pool's thread may outlive us
    with terminated():
        try:        # its locks are files in /dev/shm: a full one (or RLIMIT_FSIZE) refuses them
            pool = ProcessPoolExecutor(max_workers=jobs, initializer=worker_start, initargs=(os.getpid(),))
        except OSError as exc:
            raise SimkitError(f"jobs {jobs}: cannot start a pool of worker processes: {exc.strerror or exc} "
                              "(a full /dev/shm? or --jobs 1)", param="jobs") from None
        try:
            for result in pool.map(fn, tasks, chunksize=chunksize):
                if done is not None:
                    done(result)
                yield result
        except BaseException:  # a signal, an error, or the caller stopped early: end the workers
            pool.shutdown(wait=False, cancel_futures=True)
            for child in set(multiprocessing.active_children()) - before:
                child.kill()
            raise
        finally:
            pool.shutdown(wait=False)
            _ended(set(multiprocessing.active_children()) - before)


def _ended(children, grace: float = 5.0) -> None:
    """Each of a finished pool's workers, waited for ``grace`` seconds in all and then killed: a worker's exit
    joins every thread that is not a daemon, and one that a consumer's module starts at import (a heartbeat)
    never ends, so ``explore --jobs 2`` and ``sweep --jobs 2`` waited for it until their budget or stall,
    every result in (round 12). :func:`served`'s workers are killed the same way."""
    deadline = time.monotonic() + grace
    for child in children:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.is_alive():
            child.kill()
            child.join()


def _cancelled_quietly(hook):
    """``hook``, but silent about a pool's thread failing a task already cancelled: Python 3.11's
    ``ProcessPoolExecutor`` raises InvalidStateError there when its workers are killed, a traceback on stderr
    after the command's one line. A pool's thread that dies of anything else (``can't start new thread``,
    under ``ulimit -v`` or ``-u``, as it starts its queue's) fails the tasks it left: they waited for ever, a
    traceback on stderr. Installed once; every other exception still reaches ``hook``."""
    from concurrent.futures import InvalidStateError

    if getattr(hook, "quiet_about", None) is InvalidStateError:
        return hook

    def quiet(args):
        if isinstance(args.exc_value, InvalidStateError):
            return
        items = getattr(args.thread, "pending_work_items", None)    # a pool's manager thread's (3.11 to 3.13)
        if not isinstance(items, dict):
            hook(args)
            return
        for item in list(items.values()):
            with suppress(InvalidStateError):
                item.future.set_exception(args.exc_value)
    quiet.quiet_about = InvalidStateError
    return quiet


@contextmanager
def terminated():
    """Within it, SIGTERM and SIGHUP raise :class:`~simkit.errors.Terminated`
    (where Python's default action is in place, or the command's while it started, :mod:`simkit._starting`;
    only in the main thread):
    :func:`pool_map` then ends its workers before the command ends."""
    def stop(signum, frame):
        raise Terminated(signum)

    before = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            if replaceable(sig):            # the default action, or the command's while it started
                before[sig] = signal.signal(sig, stop)
        except ValueError:                      # not the main thread
            break
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


_PR_SET_PDEATHSIG = 1
_forker = [0]                                   # the pid of the process about to fork (os.register_at_fork)


def prctl(option: int, value) -> int:
    """``prctl(option, value)`` where there is one (Linux): its result, 0 on success; else -1. ``value`` an
    integer, or a ``ctypes`` pointer for a ``PR_GET_*`` option to write to."""
    if sys.platform.startswith("linux"):
        try:
            return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    return -1


def die_with_parent(parent: int) -> None:
    """Ask the kernel (Linux) to SIGKILL this process when its parent dies; if the parent is gone already (it
    died before the request), end now."""
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def worker_start(parent: int) -> None:
    """A pool worker's first act: Ctrl-C is the command's to handle, SIGTERM and SIGHUP kill (not the handlers
    the command had when it forked), and this process, and each one it forks, dies with its parent. SIGTTOU is
    ignored (and so by what it starts): under ``stty tostop`` a write to the terminal (explore's progress bar,
    a consumer's print) from the work's process group, not the terminal's, stopped it until its budget."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    die_with_parent(parent)
    os.register_at_fork(before=lambda: _forker.__setitem__(0, os.getpid()),
                        after_in_child=lambda: die_with_parent(_forker[0]))


def served(fn, queue: deque, jobs: int, deadline: float | None, what: str):
    """``(task, fn(task))`` for each task taken from the left of ``queue``, as each comes back: in this
    process when ``jobs`` is 1 and there is no deadline, else in ``jobs`` forked processes (``fn`` and what
    it reads are inherited, not pickled: a consumer class defined in a test or a notebook cell need not
    pickle; tasks and results are), each handed the next task as soon as it answers, so none idles while a
    task is left. The caller may add tasks to ``queue`` between results (``appendleft`` to run them next).
    Stops at the deadline; kills every process (and what each forked) when done or when the caller stops
    asking. ``what`` names the command in the message when a worker dies."""
    if jobs == 1 and deadline is None:
        while queue:
            task = queue.popleft()
            yield task, fn(task)
        return
    from multiprocessing.connection import Connection, wait

    from simkit.procedure.programs import end_below  # (here: simkit.procedure imports this module)
    workers: list = []
    with terminated():              # SIGTERM and SIGHUP end the command, and with it every worker
        try:
            idle = _started(workers, jobs, fn)
            busy: dict[Connection, object] = {}
            while True:
                while idle and queue:
                    conn = idle.pop()
                    busy[conn] = queue.popleft()
                    conn.send(busy[conn])
                if not busy:
                    return
                left = None if deadline is None else deadline - time.monotonic()
                # wait() answers with some of the connections it was given
                ready = (cast("list[Connection]", wait(list(busy), timeout=left))
                         if left is None or left > 0 else [])
                if not ready:
                    return
                for conn in ready:
                    try:
                        out = conn.recv()
                    except EOFError:
                        raise SimkitError(f"{what}: a worker process died (did the consumer end its own "
                                          f"process{cpu_limited()}?)") from None
                    if isinstance(out, BaseException):
                        raise out
                    idle.append(conn)
                    yield busy.pop(conn), out
        finally:
            for process, conn in workers:
                with suppress(ProcessLookupError):
                    assert process.pid is not None                  # started above
                    if process.exitcode is None:                    # (unreaped: the id is still its own)
                        end_below(process.pid)                      # an exec: consumer's session and daemons
                    os.killpg(process.pid, signal.SIGKILL)          # the worker and what it forked
                process.kill()                                      # (were it killed before it led its group)
                process.join()
                conn.close()


def _started(workers: list, jobs: int, fn) -> list:
    """Fork ``jobs`` workers of :func:`served` (each added to ``workers`` as ``(process, connection)`` once
    started, so that it is killed whatever happens next); their connections."""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    for _ in range(jobs):
        mine, theirs = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(theirs, os.getpid(), fn), daemon=True)
        try:
            process.start()
        except BaseException:                   # no worker: neither end of its pipe stays open
            mine.close()
            theirs.close()
            raise
        workers.append((process, mine))
        theirs.close()
    return [conn for _process, conn in workers]


def _serve(conn, parent: int, fn) -> None:
    """A worker process of :func:`served`, leading its own process group (killed whole when the command is
    done) and dying with the command (:func:`worker_start`): ``fn`` of each task it is sent, answered with the
    result (or the exception, as a one-line :class:`SimkitError` if it does not pickle)."""
    os.setpgid(0, 0)
    worker_start(parent)
    while True:
        task = conn.recv()
        try:
            out = fn(task)
        except Exception as exc:        # a one-line consumer error, sent to the caller to raise
            out = exc
        try:
            conn.send(out)
        except Exception:
            conn.send(SimkitError(str(out)))
