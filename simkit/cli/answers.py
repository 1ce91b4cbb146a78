"""The work's answer as the command reads it (:func:`~simkit.cli.contained.within`): the pipe it comes back
on, read without blocking (:class:`Answers`), what the command says when there is none (:func:`ended`, and
:func:`workers_die` for a pool's worker), and the work's exception as the command says it
(:func:`said_of`)."""
from __future__ import annotations

import contextlib
import errno
import os
import resource
import signal
import struct

from simkit.errors import SimkitError, Terminated, told
from simkit.tools.pool import cpu_limited

__all__ = ["Answers", "closed", "ended", "imported", "limited", "said_of", "workers_die"]


class Answers:
    """The command's end of the pipe the work answers on, read without blocking: a consumer may write on it
    too (it inherited it), and a blocking ``Connection.recv`` of a message whose head it wrote, and whose rest
    never came, held the command past its budget. Messages are multiprocessing's frames (a length, then a
    pickle); a length past ``most`` bytes (the work's memory bound) is one line."""

    def __init__(self, fd: int, most: int, who: str):
        self.fd, self.most, self.who = fd, most, who
        os.set_blocking(fd, False)
        self.buffer = bytearray()
        self.eof = False

    def fileno(self) -> int:
        return self.fd

    def pump(self) -> None:
        """Read what the pipe holds now (one read: the caller watches its clocks between reads)."""
        if self.eof or self.fd < 0:
            return
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.eof = True
        self.buffer += data

    def message(self) -> bytes | None:
        """The next whole message, or None while it is not all there."""
        if len(self.buffer) < 4:
            return None
        size, head = struct.unpack("!i", self.buffer[:4])[0], 4
        if size == -1:                          # a long one: an 8-byte length follows
            if len(self.buffer) < 12:
                return None
            size, head = struct.unpack("!Q", self.buffer[4:12])[0], 12
        if not 0 <= size <= self.most:
            raise SimkitError(f"{self.who}: the work's answer would be {size} bytes, more than the "
                              f"{self.most >> 20} MiB its processes may use (--max-memory): did the consumer "
                              "write on a file descriptor it did not open?")
        if len(self.buffer) < head + size:
            return None
        out = bytes(self.buffer[head:head + size])
        del self.buffer[:head + size]
        return out

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def ended(status: int | None, who: str) -> BaseException:
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
    if status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        # simkit's own exit once the answer is sent, or its sending failed: the pipe closed under it
        return (f"the process doing the work ended ({how}) without a result: did the consumer end its own "
                "process, or close or replace file descriptors it did not open?")
    return f"the process doing the work ended ({how}) without a result: {_why()}"


def _why() -> str:
    return ("did the consumer end its own process, overflow the stack, or was it killed (out of memory)"
            f"{cpu_limited()}?")


@contextlib.contextmanager
def workers_die(who: str):
    """A worker process of the pool that died (a consumer's ``os._exit``, a signal, the kernel's OOM killer)
    as one line opening with ``who``, not ``BrokenProcessPool``'s traceback."""
    from concurrent.futures.process import BrokenProcessPool
    try:
        yield
    except BrokenProcessPool:
        raise SimkitError(f"{who}: a worker process ended without a result: {_why()}") from None


def closed(who: str) -> SimkitError:
    """What to say of a work that closed the pipe its answer goes back on, and went on running."""
    return SimkitError(f"{who}: the work closed the pipe its answer goes back on, and was stopped: did the "
                       "consumer close or replace file descriptors it did not open?")


_FULL = ("disk I/O error", "database or disk is full")  # SQLite's for a file it cannot grow (--store sqlite)


def limited() -> str:
    """The limit on address space the command runs under (``ulimit -v``), as a clause to say with an
    allocation or import that failed ("" without one): a consumer that allocated without bound is then not
    the only suspect."""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return ""
    return f", under a limit on address space of {soft >> 20} MiB (ulimit -v)"


def imported(exc: ImportError) -> str:
    """An ImportError as one clause: the module, and the first failure it was raised from (NumPy's own says
    "failed to map segment from shared object" twenty lines below its advice)."""
    root: BaseException = exc
    while (below := root.__cause__ or root.__context__) is not None and below is not root:
        root = below
    said = told(root).strip().splitlines() or [""]
    return f"cannot import {exc.name or 'a module'}: {type(root).__name__}: {said[-1]}{limited()}"


def said_of(exc: BaseException, who: str) -> BaseException:
    """``exc`` as the command raises it: a RecursionError, MemoryError or EMFILE that reached simkit's own
    code (a consumer that lowered ``sys.setrecursionlimit`` or ``RLIMIT_NOFILE``, recursed or allocated
    without end), an ImportError of a library simkit's own code imports when it needs it (NumPy's, under
    ``ulimit -v``: a consumer's is its ConsumerError), a thread that cannot start (``ulimit -v``, ``-u``),
    or a value of the consumer's that the SQLite store
    cannot encode, is one line opening with ``who``, not a traceback through the world."""
    if isinstance(exc, RecursionError):
        return SimkitError(f"{who}: RecursionError: {told(exc)} (did the consumer lower "
                           "sys.setrecursionlimit, or recurse without end?)")
    if isinstance(exc, MemoryError):
        return SimkitError(f"{who}: MemoryError: out of memory{limited()} (did the consumer allocate "
                           "without bound?)")
    if isinstance(exc, ImportError) and type(exc).__module__ == "builtins":
        return SimkitError(f"{who}: {imported(exc)}")
    if type(exc) is RuntimeError and told(exc) == "can't start new thread":    # a pool's manager thread
        return SimkitError(f"{who}: RuntimeError: can't start new thread{limited()} (a limit on processes, "
                           "ulimit -u, counts threads too)")
    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        # a pool's pipes, live's databases; and SQLite's full disk (RLIMIT_FSIZE): each a traceback, exit 1
        return SimkitError(f"{who}: OSError: {exc.strerror} (did the consumer lower RLIMIT_NOFILE, or open "
                           "files without closing them?)")
    if f"{type(exc).__module__}.{type(exc).__name__}" == "sqlite3.OperationalError" and told(exc) in _FULL:
        return SimkitError(f"{who}: the SQLite store cannot write its database: {told(exc)} (a full disk, or "
                           "a limit on file sizes the consumer set: RLIMIT_FSIZE?)")
    if (isinstance(exc, UnicodeEncodeError) and "surrogates not allowed" in told(exc)
            or isinstance(exc, OverflowError) and "SQLite INTEGER" in told(exc)):
        # a value no store holds, met where the store writes it (--store sqlite): the consumer's
        return SimkitError(f"{who}: {type(exc).__name__}: {told(exc)} (a value the consumer gave that a "
                           "store cannot hold: a string with a lone surrogate, an integer past 2**63 - 1)")
    if isinstance(exc, ChildProcessError) and signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        # in the work's process: the kernel reaped what simkit forked (explore's prefix forks) before it could
        return SimkitError(f"{who}: ChildProcessError: {told(exc)} (the consumer set SIGCHLD to SIG_IGN, "
                           "and the processes explore forks were reaped before it could wait for them)")
    return exc
