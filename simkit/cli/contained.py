"""What a command runs, contained (docs/cli.md, "Exit status" and "Bounds"): the code of a user's consumer
runs inside a command, and a command's work may be unbounded in its arguments.

:func:`contained` wraps every command: its standard output is its own (:func:`~simkit.cli.output.own_stdout`:
a consumer that closes or replaces ``sys.stdout`` does not take the verdict with it, and a full disk is one
line), SIGTERM and SIGHUP end it as Ctrl-C does (one line, 128 + the signal, files cleaned up), and every
process forked while it runs dies with the process that forked it (``PR_SET_PDEATHSIG``, Linux): a consumer
that forks a child and forgets it left it running, holding the command's pipes, so that whatever read them
hung. A copy of the command that a consumer's ``os.fork()`` sent back into it says nothing and ends there.

:func:`within` runs a command's work (``run``, ``shrink``, ``explore``, ``sweep``, ``audit``: wherever a
consumer's code runs) in a child process leading its own process group and waits for its result at most
``seconds``: then it kills the group (the child, its pool, explore's prefix forks, whatever a consumer
started) and raises :class:`OverBudget`. The child's :class:`~simkit.errors.Note` warnings reach the command
as they come; a child that ends without a result (a consumer's ``os._exit``, a signal) is one line too
(SIGTERM and SIGHUP the command's own), and so is a pool's worker that does (:func:`workers_die`); so is a
RecursionError or MemoryError that a consumer caused in simkit's own code (a lowered
``sys.setrecursionlimit``). In the child, file descriptor 1 is stderr's: what the work prints never mixes with
the answer the command prints (``--json``: one object). :func:`printed_to_stderr` does the same for the
processes ``live`` starts.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import pickle
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TypeVar

from simkit.errors import Note, SimkitError, Terminated, told
from simkit.tools.pool import die_with_parent, terminated, worker_start

from .output import own_stdout

__all__ = ["OverBudget", "contained", "printed_to_stderr", "within", "workers_die"]

T = TypeVar("T")


class OverBudget(SimkitError):
    """A command's work did not end within its budget; it was stopped, and nothing of it is reported."""


# -- every command -------------------------------------------------------------------------------------------
_STATE = {"armed": 0, "forker": 0, "hooked": False}


def _before_fork() -> None:
    _STATE["forker"] = os.getpid()


def _after_fork_in_child() -> None:
    """In a process forked while a command runs: die when the process that forked it dies."""
    if _STATE["armed"]:
        die_with_parent(_STATE["forker"])


def contained(command):
    """``command(args)`` contained as the module doc says; its exit status."""
    @functools.wraps(command)
    def run(args) -> int:
        if sys.platform.startswith("linux") and not _STATE["hooked"]:
            os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
            _STATE["hooked"] = True
        me = os.getpid()
        _STATE["armed"] += 1
        try:
            with own_stdout(), terminated():
                return command(args)
        finally:
            _STATE["armed"] -= 1
            if os.getpid() != me:  # a consumer's fork, come back through the command: end quietly
                os._exit(0)
    return run


# -- a command's work within a budget ------------------------------------------------------------------------
def within(seconds: float, work: Callable[[], T], over: Callable[[], str], who: str) -> T:
    """``work()``'s result, computed in a child process (see the module doc); after ``seconds`` of wall-clock
    time the child and every process of its group are killed and :class:`OverBudget` ``over()`` raised. An
    exception of ``work`` is raised here; a child that ends without an answer is a SimkitError opening with
    ``who``. Where there is no ``os.fork``, ``work()`` runs here, unbounded."""
    if not hasattr(os, "fork"):
        limit = sys.getrecursionlimit()
        try:
            return work()
        except (RecursionError, MemoryError) as exc:
            raise _said_of(exc, who) from None
        finally:
            sys.setrecursionlimit(limit)
    for stream in (sys.stdout, sys.stderr):     # what is buffered now is not the child's to write again
        if stream is not None:
            stream.flush()
    parent = os.getpid()
    r, w = os.pipe()
    try:
        pid = os.fork()
    except OSError:                             # EAGAIN, ENOMEM: no child, and no pipe left open
        os.close(r)
        os.close(w)
        raise
    if pid == 0:  # pragma: no cover -- the child, measured by its parent's tests
        os.close(r)
        _child(Connection(w, readable=False), parent, work)
    os.close(w)
    child = _Child(pid)
    answers = Connection(r, writable=False)     # multiprocessing's framing: a length, then a pickle
    try:
        with terminated():
            return _answer(answers, child, time.monotonic() + seconds, over, who)
    finally:
        answers.close()
        child.end()


class _Child:
    """The child of :func:`within`, by its process id: ended, and reaped, once."""

    def __init__(self, pid: int):
        self.pid = pid
        self.status: int | None = None
        try:
            os.setpgid(pid, pid)                # the child does it too: whichever comes first
        except OSError:
            pass

    def gone(self) -> bool:
        """Has the child exited (reaped now if so)?"""
        if self.status is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = status
        return self.status is not None

    def end(self) -> int | None:
        """Kill its process group, and the child itself if it did not lead one yet (unless reaped: then its id
        is no longer its own); reap it; its wait status."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                self.status = os.waitpid(self.pid, 0)[1]
        return self.status


def _child(pipe: Connection, parent: int, work) -> None:
    """The child of :func:`within`: lead a process group of its own, die with the command, run ``work``, send
    its notes and result (or exception) up the pipe, and exit without running the command's own exit code."""
    me = os.getpid()
    try:
        os.setpgid(0, 0)
        _adopt_orphans()
        worker_start(parent)
        _stdout_to_stderr()

        def send(kind: str, payload) -> None:
            if os.getpid() != me:               # a copy a consumer forked: the answer is the child's to give
                os._exit(0)
            if kind != "note":                  # the last word: the command kills this group once it has it
                _end_strays()
            pipe.send((kind, payload))

        def note(message, category, *args, **kwargs):
            if issubclass(category, Note):
                send("note", (str(message), getattr(message, "param", None)))
        warnings.showwarning = note
        limit = sys.getrecursionlimit()
        try:
            result = work()
        except BaseException as exc:            # noqa: BLE001 -- whatever it is, the command says it
            sys.setrecursionlimit(limit)        # a consumer's, lowered, would stop the answer's pickling
            _flush()
            send("error", _portable(exc))
        else:
            sys.setrecursionlimit(limit)
            _flush()
            try:
                send("result", result)
            except BaseException as exc:        # noqa: BLE001 -- a result that does not pickle
                send("error", _portable(exc))
    finally:
        os._exit(0)


def _adopt_orphans() -> None:
    """Linux: a process the work's processes leave behind in a session of their own (a consumer's daemon,
    ``setsid``) becomes this child's when its parent ends (``PR_SET_CHILD_SUBREAPER``), not init's, so that
    :func:`_end_strays` ends it: the group's SIGKILL does not reach another session."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def _end_strays() -> None:
    """SIGKILL, and reap, every process still this one's child (Linux: read from /proc), until none is."""
    for _ in range(64):
        strays = _children(str(os.getpid()))
        if not strays:
            return
        for pid in strays:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in strays:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def _children(me: str) -> list[int]:
    """The ids of this process's children, by /proc (empty where there is none)."""
    found = []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            with contextlib.suppress(OSError, IndexError):      # gone meanwhile, or not a process
                stat = Path(f"/proc/{name}/stat").read_text() if name.isdigit() else ""
                if stat and stat.rsplit(")", 1)[1].split()[1] == me:
                    found.append(int(name))
    return found


def _stdout_to_stderr() -> None:
    """In the child: what the work prints (a consumer's ``print``, a process
    it starts, a write to fd 1) goes to stderr; the command's standard output
    holds only the answer its parent prints (``--json``: one object)."""
    with contextlib.suppress(OSError):
        os.dup2(2, 1)


@contextlib.contextmanager
def printed_to_stderr():
    """Within it, file descriptor 1 is stderr's (what processes started here print, ``live``'s workers), and
    the command's own standard output is back after it, whole: what it printed before is flushed first."""
    _flush()
    try:
        saved = os.dup(1)
    except OSError:                             # started without a stdout: nothing to keep clean
        yield
        return
    try:
        with contextlib.suppress(OSError):
            os.dup2(2, 1)
        yield
    finally:
        _flush()
        os.dup2(saved, 1)
        os.close(saved)


def _flush() -> None:
    """What the work printed, out before its answer (the command kills the group once it has it)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:                       # noqa: BLE001, S110 -- the work's own stream: not the answer
            pass


def _portable(exc: BaseException) -> BaseException:
    """``exc`` as it can cross the pipe: itself if it pickles (with its traceback as a note, unless it is a
    :class:`SimkitError`, whose one line says it all), else a SimkitError or RuntimeError saying what it
    was."""
    if not isinstance(exc, SimkitError):
        exc.add_note("in the child process of simkit.cli.contained.within:\n"
                     + "".join(traceback.format_exception(exc)))
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:                           # noqa: BLE001
        cls = SimkitError if isinstance(exc, SimkitError) else RuntimeError
        return cls(f"{type(exc).__name__}: {told(exc)}")


def _answer(answers: Connection, child: _Child, deadline: float, over: Callable[[], str], who: str):
    """Read the child's messages until its result (returned), its exception (raised), its end without one (the
    pipe closed, or the child gone while a process it forked still holds the pipe: a one-line SimkitError), or
    the deadline (:class:`OverBudget`)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            if sys.stderr is not None and sys.stderr.isatty():
                sys.stderr.write("\r\x1b[K")               # the child's progress bar, cut short
            raise OverBudget(over())
        if not answers.poll(min(left, 0.5)):
            if child.gone() and not answers.poll(0):
                raise _ended(child.end(), who)
            continue
        try:
            kind, payload = answers.recv()
        except (EOFError, OSError):             # closed, or closed mid-message: ended without an answer
            raise _ended(child.end(), who) from None
        if kind == "note":
            warnings.warn(Note(payload[0], param=payload[1]), stacklevel=1)
        elif kind == "error":
            raise _said_of(payload, who)
        else:
            return payload


def _said_of(exc: BaseException, who: str) -> BaseException:
    """``exc`` as the command raises it: a RecursionError or MemoryError that reached simkit's own code (a
    consumer that lowered ``sys.setrecursionlimit``, recursed or allocated without end) is one line opening
    with ``who``, not a traceback through the world."""
    if isinstance(exc, RecursionError):
        return SimkitError(f"{who}: RecursionError: {told(exc)} (did the consumer lower "
                           "sys.setrecursionlimit, or recurse without end?)")
    if isinstance(exc, MemoryError):
        return SimkitError(f"{who}: MemoryError: out of memory (did the consumer allocate without bound?)")
    return exc


def _ended(status: int | None, who: str) -> BaseException:
    """What to raise for a child that ended (``status``, from ``waitpid``) without an answer: SIGTERM or
    SIGHUP are the command's own (:class:`~simkit.errors.Terminated`: one line, 128 + the signal, as when the
    command itself gets them, whoever sent them); anything else one SimkitError line opening with ``who``."""
    signum = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
    if signum in (signal.SIGTERM, signal.SIGHUP):
        return Terminated(signum)
    return SimkitError(f"{who}: {_said(status)}")


def _said(status: int | None) -> str:
    """What to say of a child that ended (``status``, from ``waitpid``) without an answer."""
    if status is None:
        how = "how, unknown"
    elif os.WIFSIGNALED(status):
        how = f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    else:
        how = f"exit status {os.WEXITSTATUS(status)}"
    return f"the process doing the work ended ({how}) without a result: {_WHY}"


_WHY = "did the consumer end its own process, overflow the stack, or was it killed (out of memory)?"


@contextlib.contextmanager
def workers_die(who: str):
    """A worker process of the pool that died (a consumer's ``os._exit``, a signal, the kernel's OOM killer)
    as one line opening with ``who``, not ``BrokenProcessPool``'s traceback."""
    from concurrent.futures.process import BrokenProcessPool
    try:
        yield
    except BrokenProcessPool:
        raise SimkitError(f"{who}: a worker process ended without a result: {_WHY}") from None
