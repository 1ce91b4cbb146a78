"""The work's answer as the command reads it (:func:`~simkit.cli.contained.within`): the pipe it comes back
on, read without blocking (:class:`Answers`), and what the command says when there is none (:func:`ended`, and
:func:`workers_die` for a pool's worker)."""
from __future__ import annotations

import contextlib
import os
import signal
import struct

from simkit.errors import SimkitError, Terminated

__all__ = ["Answers", "closed", "ended", "workers_die"]


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


def closed(who: str) -> SimkitError:
    """What to say of a work that closed the pipe its answer goes back on, and went on running."""
    return SimkitError(f"{who}: the work closed the pipe its answer goes back on, and was stopped: did the "
                       "consumer close or replace file descriptors it did not open?")
