"""What a command runs, contained (docs/cli.md, "Exit status" and "Bounds"): the code of a user's consumer
runs inside a command, and a command's work may be unbounded in its arguments.

:func:`contained` wraps every command: its standard output is its own (:func:`~simkit.cli.output.own_stdout`:
a consumer that closes or replaces ``sys.stdout`` does not take the verdict with it, and a full disk is one
line), SIGTERM and SIGHUP end it as Ctrl-C does (one line, 128 + the signal, files cleaned up), and every
process forked while it runs dies with the process that forked it (``PR_SET_PDEATHSIG``, Linux): a consumer
that forks a child and forgets it left it running, holding the command's pipes, so that whatever read them
hung. A copy of the command that a consumer's ``os.fork()`` sent back into it says nothing and ends there.

:func:`within` runs a command's work (``run``, ``shrink``, ``explore``, ``sweep``, ``audit``, ``live``:
wherever a consumer's code runs) in a child process leading its own process group, below a reaper
(:mod:`~simkit.cli.reaper`: a process of its own that runs no consumer code and adopts every orphan of the
work), and waits for its result at most ``seconds``. However the command ends (its answer, its budget, a
stall, SIGTERM, SIGINT, SIGHUP, an error, even its own SIGKILL), the reaper ends every process of the work:
the child, its pool, explore's prefix forks, whatever a consumer started, in a session of its own or not. Past
the budget, :class:`OverBudget`; past the memory bound (the processes' proportional set size, summed), one
line. The child's :class:`~simkit.errors.Note` warnings reach the command as they come; a child that ends
without a result (a consumer's ``os._exit``, a signal) is one line too (SIGTERM and SIGHUP the command's
own), and so is a pool's worker that does (:func:`workers_die`); so is a RecursionError or MemoryError that a
consumer caused in simkit's own code (a lowered ``sys.setrecursionlimit``). In the child, file descriptor 1
is stderr's (``--json``: one object) and 0 is ``/dev/null``'s.
"""
from __future__ import annotations

import contextlib
import functools
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from importlib.machinery import PathFinder
from multiprocessing.connection import Connection, wait
from typing import TypeVar

from simkit.errors import Note, SimkitError, told
from simkit.tools.pool import die_with_parent, terminated, worker_start

from .answers import Answers, ended, said_of, workers_die
from .answers import closed as _closed
from .output import own_stdout, standard_fds, temporary
from .reaper import END_SECONDS, Stall, adopting, become_reaper, default_memory, end_adopted, reaper
from .reaper import suspending as _suspending

__all__ = ["OverBudget", "contained", "within", "workers_die"]          # workers_die: .answers's

T = TypeVar("T")


class OverBudget(SimkitError):
    """A command's work did not end within its budget; it was stopped, and nothing of it is reported."""


# -- every command -------------------------------------------------------------------------------------------
_STATE = {"armed": 0, "forker": 0, "hooked": False, "work": False}


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
        if _STATE["work"]:      # a consumer that runs simkit from its code: at import, a chain of processes
            raise SimkitError(f"{getattr(args, 'command', 'a command')}: a simkit command cannot run inside "
                              "another's work (the consumer's code called simkit.cli.main?)")
        if sys.platform.startswith("linux") and not _STATE["hooked"]:
            os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
            _STATE["hooked"] = True
        standard_fds()
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
def within(seconds: float, work: Callable[[], T], over: Callable[[], str], who: str, *,
           memory: int | None = None, stall: Stall | None = None, leftovers: tuple = ()) -> T:
    """``work()``'s result, computed in a child process (see the module doc); after ``seconds`` of wall-clock
    time or ``stall.seconds`` without a beat of ``stall`` (:class:`~.reaper.Stall`), every process of the
    work is killed and :class:`OverBudget` raised; past ``memory`` bytes used by the work's processes together
    (default: :func:`~.reaper.default_memory`), one SimkitError line. An exception of ``work`` is raised
    here; a child that ends without an answer is a SimkitError opening with ``who``. Where there is no
    ``os.fork``, ``work()`` runs here, unbounded. ``leftovers``: the command's temporary files and folders,
    which the reaper removes should the command be killed outright (the heartbeat of ``stall`` is one)."""
    if not hasattr(os, "fork"):
        limit = sys.getrecursionlimit()
        try:
            return work()
        except (RecursionError, MemoryError) as exc:
            raise said_of(exc, who) from None
        finally:
            sys.setrecursionlimit(limit)
    for stream in (sys.stdout, sys.stderr):     # what is buffered now is not the child's to write again
        if stream is not None:
            stream.flush()
    with adopting() as known:                   # the reaper's orphans, should it be killed: ours to end
        return _within(seconds, work, over, who, default_memory() if memory is None else memory, stall,
                       leftovers, known)


def _within(seconds, work, over, who, memory, stall, leftovers, known):
    parent, fds = os.getpid(), list[int]()
    # the work's temporary files (the simulation's SQLite stores): a killed work (its budget, a consumer's
    # os._exit) left them in the system's folder; here they go with the work, and with the reaper's leftovers
    scratch = temporary(who, lambda: tempfile.mkdtemp(prefix="simkit-work-"))
    try:
        for _ in range(3):                      # answers (work -> command), control, status (reaper's)
            fds.extend(os.pipe())
        r, w, cr, cw, sr, sw = fds
        pid = os.fork()
    except OSError as exc:                      # EMFILE, EAGAIN, ENOMEM: no child, and no pipe left open
        for fd in fds:
            os.close(fd)
        shutil.rmtree(scratch, ignore_errors=True)
        raise SimkitError(f"{who}: cannot start the process doing the work: {exc.strerror or exc}") from None
    if pid == 0:  # pragma: no cover -- the reaper, measured by its parent's tests
        for fd in (r, cw, sr):
            os.close(fd)
        become_reaper()
        reaper_pid, pid = os.getpid(), os.fork()    # here, not deeper: the work's stack is as deep as ever
        if pid == 0:                                # (a consumer may lower the recursion limit to it)
            for fd in (cr, sw):
                os.close(fd)
            tempfile.tempdir = scratch
            _child(Connection(w, readable=False), reaper_pid, work, who)
        os.close(w)                             # the reaper keeps no end of the answers' pipe
        reaper(cr, sw, pid, memory, parent, (*leftovers, scratch, *((stall.path,) if stall else ())))
    for fd in (w, cr, sw):
        os.close(fd)
    child = _Work(pid, cw, sr, memory, known)
    answers = Answers(r, memory, who)          # multiprocessing's framing: a length, then a pickle
    try:
        with terminated(), _suspending(child.reaper, lambda: child.pid):
            return _answer(answers, child, time.monotonic() + seconds, over, who, stall)
    finally:
        answers.close()
        child.end()
        shutil.rmtree(scratch, ignore_errors=True)


class _Work:
    """The work of :func:`within`, as the command sees it: the reaper's process id, the control pipe that
    ends it, and what the reaper says on its status pipe (the work's process id, its wait status, the memory
    it used past its bound)."""

    def __init__(self, reaper_pid: int, control: int, status: int, memory: int, known: set[int] | None):
        self.reaper, self.control, self.fd, self.limit = reaper_pid, control, status, memory
        self.known = known                      # our children before the reaper (None: we adopt none)
        os.set_blocking(status, False)
        self.pid: int | None = None
        self.status: int | None = None
        self.used: int | None = None            # what the reaper found past the bound
        self.ended = False                      # the reaper said the work ended, or is gone itself
        self.buffer = b""

    def read(self) -> None:
        """Take in what the reaper has said."""
        while self.fd >= 0 and not self.ended:
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:                        # the reaper is gone
                self.ended = True
                return
            *lines, self.buffer = (self.buffer + data).split(b"\n")
            for line in lines:
                word, _, value = line.decode().partition(" ")
                if word == "pid":
                    self.pid = int(value)
                elif word == "memory":
                    self.used = int(value)
                elif word == "exit":
                    self.status, self.ended = (None if int(value) < 0 else int(value)), True

    def gone(self) -> bool:
        """Has the work's process ended?"""
        self.read()
        return self.ended

    def end(self) -> int | None:
        """End the work (the reaper kills every process of it and says so), wait for the reaper, and return
        the work's wait status (None: unknown)."""
        if self.control >= 0:
            os.close(self.control)
            self.control = -1
            with contextlib.suppress(OSError):  # one a consumer stopped (SIGSTOP) is waited for otherwise
                os.kill(self.reaper, signal.SIGCONT)
        deadline = time.monotonic() + END_SECONDS + 5
        while True:
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(self.reaper, os.WNOHANG)[0] == 0 and time.monotonic() < deadline:
                    time.sleep(0.005)
                    continue
            break
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.reaper, signal.SIGKILL)      # past its deadline: not left running either
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.reaper, 0)
        self.read()
        if self.status is None and self.pid is not None:    # the reaper was killed: the work's group at least
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        if self.status is None and self.known is not None:  # and the orphans it left to this process
            end_adopted(self.known)
            self.known = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        return self.status

    def error(self, who: str, closed: bool = False) -> BaseException:
        """What to raise for a work that ended without an answer (:func:`~.answers.ended`), that used too
        much, or that ``closed`` the answers' pipe and still runs a second later (``os.closerange``)."""
        deadline = time.monotonic() + 1.0
        while closed and not self.gone() and time.monotonic() < deadline:
            time.sleep(0.01)
        alive = closed and not self.gone()
        status = self.end()
        if alive and self.used is None:
            return _closed(who)
        if self.used is not None:
            return SimkitError(
                f"{who}: the work's processes (the consumer's among them) used more than "
                f"{self.limit >> 20} MiB of memory together ({self.used >> 20} MiB; --max-memory); stopped, "
                "nothing reported: did the consumer allocate without bound?")
        return ended(status, who)


def _child(pipe: Connection, parent: int, work, who: str) -> None:
    """The child of :func:`within`: lead a process group of its own, die with its parent (the reaper), run
    ``work``, send its notes and result (or exception) up the pipe, and exit without running the command's own
    exit code."""
    me, known = os.getpid(), set(sys.modules)        # what the command can unpickle without a search
    _STATE["work"] = True
    try:
        os.setpgid(0, 0)
        worker_start(parent)
        _own_streams()

        def send(kind: str, payload) -> None:
            if os.getpid() != me:               # a copy a consumer forked: the answer is the child's to give
                os._exit(0)
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
            send("error", _portable(said_of(exc, who), known, who))
        else:
            sys.setrecursionlimit(limit)
            _flush()
            try:
                send("result", result)
            except BaseException as exc:        # noqa: BLE001 -- a result that does not pickle
                send("error", _portable(exc, known, who))
    finally:
        os._exit(0)


def _own_streams() -> None:
    """In the child: fd 1 is stderr's (the command's standard output holds its answer alone), fd 0 /dev/null's
    (in a process group of its own, a read of the terminal, ``breakpoint()``, stopped it, SIGTTIN)."""
    with contextlib.suppress(OSError):
        os.dup2(2, 1)
        os.dup2(null := os.open(os.devnull, os.O_RDONLY), 0)
        os.close(null)


def _flush() -> None:
    """What the work printed, out before its answer (the command kills the group once it has it)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:                       # noqa: BLE001, S110 -- the work's own stream: not the answer
            pass


def _portable(exc: BaseException, known: set[str], who: str) -> BaseException:
    """``exc`` as it can cross the pipe and be read by the command: itself (with its traceback as a note,
    unless it is a :class:`SimkitError`, whose one line says it all), without the exceptions it was raised
    from (tblib, which ``distributed`` installs, pickles them too: a consumer's own, say); else, for a class
    the command cannot import (a consumer's, from a file: not in ``known``, the modules the command had) or
    one that does not pickle, a SimkitError saying what it was."""
    if not isinstance(exc, SimkitError):
        exc.add_note("in the child process of simkit.cli.contained.within:\n"
                     + "".join(traceback.format_exception(exc)))
    exc.__cause__ = exc.__context__ = exc.__traceback__ = None
    module = getattr(type(exc), "__module__", "") or ""
    try:
        top = module.partition(".")[0]          # simkit's own, found by an editable install's finder: known
        if module not in known and top not in known and PathFinder.find_spec(top) is None:
            raise TypeError(module)
        if told(pickle.loads(pickle.dumps(exc))) != told(exc):    # tblib's copy of a UnicodeError: no words
            raise TypeError(module)
        return exc
    except Exception:                           # noqa: BLE001
        if isinstance(exc, SimkitError):
            return SimkitError(told(exc), param=getattr(exc, "param", None))
        return SimkitError(f"{who}: the consumer's code raised {type(exc).__name__}: {told(exc)}")


def _answer(answers: Answers, child: _Work, deadline: float, over: Callable[[], str], who: str,
            stall: Stall | None):
    """Read the child's messages until its result (returned), its exception (raised), its end without one (the
    pipe closed, or the child gone while a process it forked still holds the pipe: a one-line SimkitError, or
    the reaper's word that it used too much memory), the deadline or a stall (:class:`OverBudget`)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or (stall is not None and stall.stalled()):
            if sys.stderr is not None and sys.stderr.isatty():
                sys.stderr.write("\r\x1b[K")               # the child's progress bar, cut short
            raise OverBudget(over() if left <= 0 else stall.what)   # type: ignore[union-attr]
        if (message := answers.message()) is None:
            if answers.eof:                     # closed, or closed mid-message: ended without an answer
                raise child.error(who, closed=True)
            ready = wait([answers.fd, child.fd], min(left, 0.5))
            if answers.fd in ready:
                answers.pump()
            elif child.gone():                  # gone, while a process it forked holds the pipe open
                had = len(answers.buffer)
                answers.pump()                  # what it wrote before it ended is there to read
                if len(answers.buffer) == had and not answers.eof:
                    raise child.error(who)
            continue
        try:
            kind, payload = pickle.loads(message)
        except Exception as exc:                # noqa: BLE001 -- a class this process cannot import
            raise SimkitError(f"{who}: the work's answer cannot be read here: {type(exc).__name__}: "
                              f"{told(exc)}") from None
        if kind == "note":
            warnings.warn(Note(payload[0], param=payload[1]), stacklevel=1)
        elif kind == "error":
            raise said_of(payload, who)
        else:
            return payload
