"""``--strategy exec:COMMAND``: a consumer in any language, one process per worker life (docs/protocol.md).

:func:`exec_consumer` makes the :class:`ExternalConsumer` subclass of one command. Its
:meth:`~ExternalConsumer.run` is the same generator as every consumer's, and the process behind it does the
deciding: each life starts COMMAND (split as a shell would, in the current folder, a session of its own),
writes the handshake, then reads a request line, yields it as the request of :mod:`simkit.ops` it encodes
(:mod:`simkit.procedure.wire`), and writes the result back. When the world ends the life (a crash, a halt:
:func:`simkit.procedure.lives.end` closes the generator), when the run ends or when anything raises, what the
process forked (a daemon too: it adopts their orphans) and its group get SIGKILL and are reaped, so the next
life starts from durable state only: a crash is a real one. On Linux it also dies with simkit.

A line that is not a valid request, a process that exits with a failure, or one silent for :data:`LIMIT_ENV`
seconds (then killed) ends the run with one line naming the worker, the line and the problem
(:class:`~simkit.errors.ConsumerError`). A process that exits with status 0 where a request was due has
returned from ``run()``: it *stopped*. Its stderr goes to simkit's, each line prefixed with its worker.

Exploration forks simkit in the middle of a run (:mod:`simkit.tools.forked`); a forked copy of a life cannot
share the parent's process. So there a life keeps its transcript (:func:`transcribed`), and a copy in a new
process starts a process of its own and replays the transcript to it, checking that it asks for the same
requests: a nondeterministic consumer is named as such.
"""
from __future__ import annotations

import atexit
import copyreg
import os
import select
import shlex
import signal
import subprocess
import sys
import time
import weakref
from contextlib import contextmanager, suppress
from functools import cache
from typing import Any, ClassVar, NoReturn, cast

from simkit.errors import ConsumerError, StrategyError

from .consumer import Consumer, Contract
from .programs import die_with_parent, end_below, not_a_file, not_started, passed_through
from .wire import WireError, decode_request, dumps, encode_result, hello, loads, shown

__all__ = ["PREFIX", "LIMIT_ENV", "DEFAULT_LIMIT", "MAX_LINE", "ExternalConsumer", "exec_consumer",
           "end_lives", "live_processes", "wrote", "transcribed"]

#: ``--strategy exec:COMMAND``
PREFIX = "exec:"
#: The environment variable that sets how many wall-clock seconds a consumer may stay silent.
LIMIT_ENV = "SIMKIT_EXEC_TIMEOUT"
DEFAULT_LIMIT = 10.0
#: The longest line a consumer may write, in bytes, plus four times the longest it read (a lookup's page)
MAX_LINE = 1 << 20
_POLL = 0.1     #: how often (seconds) a life waiting for a line looks whether its process has exited
_DRAIN = 0.5    #: how long (seconds) a life's end passes through what is left on its stderr, at most


class _Meta(type):
    """The class of :class:`ExternalConsumer` classes: they pickle by their command (a pool's worker process
    makes its own)."""

    command: str | None
    limit: float


def _reduce(cls: _Meta):
    return cls.__qualname__ if cls.command is None else (exec_consumer, (cls.command, cls.limit))


copyreg.pickle(_Meta, _reduce)


class ExternalConsumer(Consumer, metaclass=_Meta):
    """A consumer that is a process speaking docs/protocol.md; subclasses made by :func:`exec_consumer`."""

    #: the command, as given after ``exec:``; its words; the silence limit in seconds
    command: ClassVar[str | None] = None
    argv: ClassVar[tuple[str, ...]] = ()
    limit: ClassVar[float] = DEFAULT_LIMIT

    def run(self):
        """One life: a fresh process, its requests yielded, their results written back; killed in the end."""
        life = _Life(type(self), _worker_of(sys._getframe(1)), self.contract)
        try:
            while (op := life.request()) is not None:     # None: it exited with status 0, run() returned
                life.answer((yield op))
        finally:
            life.end()


def _limit() -> float:
    text = os.environ.get(LIMIT_ENV)
    if not text:
        return DEFAULT_LIMIT
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 1e6:                # (select() overflows past about 1e8 s, and blamed the consumer)
        raise StrategyError(f"{LIMIT_ENV}={text!r}: must be a number of seconds above 0 and at most 10^6")
    return value


def exec_consumer(command: str, limit: float | None = None) -> type[ExternalConsumer]:
    """The consumer class of ``exec:COMMAND`` (one per command and limit, so it is the same class each time).

    Raises:
        StrategyError: the command is empty or cannot be split, its program is a path to something that is
            no file (a named pipe, a directory: :func:`not_a_file`; a path to nothing is left to the start,
            which says so), or :data:`LIMIT_ENV` is not a positive number; the message is the problem alone
            (:func:`~simkit.procedure.strategies.resolve` says whose).
    """
    made = _made(command, _limit() if limit is None else limit)
    program = made.argv[0]
    if os.sep in program and (problem := not_a_file(program)) not in (None, "no such file"):
        raise StrategyError(f"{program} {problem}")
    return made


@cache
def _made(command: str, limit: float) -> type[ExternalConsumer]:
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise StrategyError(str(exc)) from None
    if not argv:
        raise StrategyError("no command")
    # named by its bytes' escapes (``exec:./c\xff``): a class's name that is no UTF-8 was a UnicodeEncodeError
    ref = PREFIX + command.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    made = _Meta(ref, (ExternalConsumer,), {"command": command, "argv": argv, "limit": limit, "name": ref,
                                            "__module__": __name__, "__qualname__": ref,
                                            "__doc__": f"The consumer process started by {command!r}."})
    return cast("type[ExternalConsumer]", made)


def _worker_of(frame) -> int:
    """The worker whose life this is: the ``worker`` of the driver that runs the consumer (its local, or its
    own attribute), found up the stack, for the driver protocol hands a consumer only its contract; else 1."""
    while frame is not None:
        found = frame.f_locals.get("worker")
        if type(found) is int:
            return found
        found = getattr(frame.f_locals.get("self"), "worker", None)
        if type(found) is int:
            return found
        frame = frame.f_back
    return 1


_LIVE: weakref.WeakSet = weakref.WeakSet()
_TRANSCRIBE = [False]                       #: whether a life started now keeps its transcript


@contextmanager
def transcribed():
    """Lives started within keep their transcript for a forked copy to replay (:mod:`simkit.tools.forked`);
    elsewhere only the last request line (a page of 2,000 events fetched 3,000 times held 300 MB)."""
    was, _TRANSCRIBE[0] = _TRANSCRIBE[0], True
    try:
        yield
    finally:
        _TRANSCRIBE[0] = was


def live_processes() -> list[int]:
    """The ids of the consumer processes this process has started and not yet killed (a test's check)."""
    return [life.proc.pid for life in list(_LIVE) if life.proc is not None and life.owner == os.getpid()]


def wrote(cls: type, worker: int) -> str | None:
    """``strategy exec:CMD: worker N wrote 'LINE'``, the last request of ``worker``'s life of ``cls``, for a
    request refused once read (a field out of range, a value no store holds); ``None`` if no life runs."""
    for life in list(_LIVE):
        if life.cls is cls and life.worker == worker and life.last is not None:
            return f"{life.label} wrote {shown(life.last)}"
    return None


@atexit.register
def end_lives() -> None:
    """End this process's lives: at exit, and before a forked copy ends with ``os._exit`` mid-run
    (:mod:`simkit.tools.forked`: its consumer died with it, orphaning what it forked)."""
    for life in list(_LIVE):
        life.end()


class _Life:
    """One worker life's process: started at once, the handshake written; its transcript kept for a replay
    where one may come (:func:`transcribed`)."""

    def __init__(self, cls: type[ExternalConsumer], worker: int, contract: Contract):
        self.cls, self.worker = cls, worker
        self.label = f"strategy {cls.__qualname__}: worker {worker}"
        self.hello = dumps(hello(worker, Contract(contract.backfills, contract.external_sink)))
        # [request line, request, result line or None], in order; its last request line
        self.said: list[list[Any]] | None = [] if _TRANSCRIBE[0] else None
        self.last: bytes | None = None
        self.longest = MAX_LINE             # the longest line it may write (:data:`MAX_LINE`)
        self.proc: Any = None               # the subprocess.Popen while it runs
        self.owner = 0
        self._spawn()

    def _spawn(self) -> None:
        if not self.cls.argv:   # the base class itself (module:ExternalConsumer): Popen([]) was an IndexError
            raise ConsumerError(f"strategy {self.cls.__qualname__}: has no command to start (its argv is "
                                "empty): name the program as exec:COMMAND")
        try:
            self.proc = subprocess.Popen(self.cls.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, bufsize=0, start_new_session=True,
                                         preexec_fn=die_with_parent)
        except OSError as exc:
            raise ConsumerError(
                f"{self.label}: cannot start {self.cls.argv[0]!r}: {not_started(self.cls.argv[0], exc)}"
            ) from None
        self.owner = os.getpid()
        os.set_blocking(self.proc.stdin.fileno(), False)    # a full pipe is waited on in _write, bounded
        self.out, self.err = b"", b""
        self.out_open = self.err_open = True
        _LIVE.add(self)
        self._write(self.hello)

    # -- the conversation ------------------------------------------------------------------------------------
    def request(self) -> Any:
        """The next request, or ``None`` when the process exited with status 0 (its ``run()`` returned)."""
        self._own()
        line = self._line()
        if line is None:
            return None
        op = self._decode(line)
        self.last = line
        if self.said is not None:
            self.said.append([line, op, None])
        return op

    def answer(self, result: Any) -> None:
        self._own()
        try:
            line = dumps(encode_result(result))
        except WireError as exc:            # a driver's result with no form: simkit's bug, said in one line
            raise ConsumerError(f"{self.label}: {exc}") from None
        if self.said is not None:
            self.said[-1][2] = line
        self.longest = max(self.longest, MAX_LINE + 4 * len(line))   # (its \u escapes, its spaces)
        self._write(line)

    def _decode(self, line: bytes) -> Any:
        try:
            return decode_request(loads(line))
        except WireError as exc:
            self.end()
            raise ConsumerError(f"{self.label} wrote {shown(line)}: {exc}") from None

    def _own(self) -> None:
        """In a forked copy of simkit: a process of its own, brought to where the life is (module doc)."""
        if self.owner == os.getpid():
            return
        self.proc = None                    # the parent's: never touched here
        if self.said is None:               # forked outside transcribed(): no life to replay
            raise ConsumerError(f"{self.label}: a copy of simkit forked in a life cannot replay it")
        self._spawn()
        for n, (line, op, result) in enumerate(self.said, 1):
            again = self._line()
            if again is None or self._decode(again) != op:
                self.end()
                wrote = "nothing" if again is None else shown(again)
                raise ConsumerError(f"{self.label}: replayed, it wrote {wrote} as request {n} where it "
                                    f"first wrote {shown(line)}: the consumer is not deterministic")
            if result is not None:
                self._write(result)

    # -- the pipes -------------------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        """``data`` on the consumer's stdin. A consumer that never reads an answer fills the pipe: that is
        waited on at most :data:`LIMIT_ENV` seconds (a blocking write waited for ever), passing stderr through
        (a consumer blocked on a full stderr is still heard); then it is killed with one line."""
        fd, view = self.proc.stdin.fileno(), memoryview(data)
        deadline = time.monotonic() + self.cls.limit
        while view:
            try:    # at most PIPE_BUF bytes: all or none, and at once (the fd does not block: _spawn)
                view = view[os.write(fd, view[:select.PIPE_BUF]):]
                continue
            except BlockingIOError:         # the pipe is full: wait for room below
                pass
            except (BrokenPipeError, ConnectionResetError):
                return  # it is gone: the next read finds out how (exit 0 is a stop, whatever the race)
            left = deadline - time.monotonic()
            err = [self.proc.stderr] if self.err_open else []
            readable, writable, _ = select.select(err, [fd], [], max(left, 0)) if left > 0 else ([], [], [])
            if not readable and not writable:
                self.end()
                raise ConsumerError(f"{self.label} read no answer for {self.cls.limit:g} s (wall clock; "
                                    f"{LIMIT_ENV} sets it): killed; a consumer reads each answer before it "
                                    "writes its next request")
            if readable:
                self._take(self.proc.stderr, False)

    def _line(self) -> bytes | None:
        """The next line on stdout (passing stderr through meanwhile), or ``None`` at a clean exit. Whether
        the process has exited is asked only when it has been silent for :data:`_POLL` (a child it forked may
        hold its stdout open: :meth:`_gone`), not on the way to every answer."""
        deadline = time.monotonic() + self.cls.limit
        while b"\n" not in self.out:
            if len(self.out) > self.longest:
                self._too_long(self.out)
            if not self.out_open:
                self._exited()
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                self.end()
                raise ConsumerError(f"{self.label} wrote nothing for {self.cls.limit:g} s (wall clock; "
                                    f"{LIMIT_ENV} sets it): killed; a consumer flushes its output after each "
                                    "request line")
            fds = [f for f, o in ((self.proc.stdout, self.out_open), (self.proc.stderr, self.err_open)) if o]
            ready = select.select(fds, [], [], min(left, _POLL))[0]
            for f in ready:
                self._take(f, f is self.proc.stdout)
            if not ready and self._gone():
                self._exited()
                return None
        line, self.out = self.out.split(b"\n", 1)
        if len(line) > self.longest:        # its end read with the chunk that took it past the bound
            self._too_long(line)
        return line

    def _too_long(self, line: bytes) -> NoReturn:
        self.end()
        raise ConsumerError(f"{self.label} wrote a line longer than {self.longest} bytes: {shown(line)}")

    def _gone(self) -> bool:
        """Whether the process exited, no whole line left to read (what it wrote is taken first): a child it
        forked may hold its stdout open, and it has stopped all the same (docs/protocol.md, "Stopping")."""
        if self.proc.poll() is None:
            return False
        while (self.out_open and b"\n" not in self.out and len(self.out) <= self.longest
               and select.select([self.proc.stdout], [], [], 0)[0]):
            self._take(self.proc.stdout, True)
        return b"\n" not in self.out

    def _take(self, f, stdout: bool) -> int:
        """One read of stdout (kept) or stderr (passed through, line by line); how many bytes it read."""
        chunk = os.read(f.fileno(), 65536)
        if stdout:
            self.out += chunk
            self.out_open = bool(chunk)
            return len(chunk)
        self.err_open = bool(chunk)
        self.err = passed_through(self.worker, self.err + (chunk or b"\n"), MAX_LINE)
        return len(chunk)

    def _drain(self, err) -> None:
        """What the killed group left on stderr, passed through: at most :data:`MAX_LINE` bytes and
        :data:`_DRAIN` seconds of it. A process it forked into a session of its own, which no SIGKILL of the
        group reaches, may hold stderr open and write without end: the life's end read it for ever (the run
        never ended). One it left when it exited on its own is killed only by the CLI's reaper."""
        deadline, taken = time.monotonic() + _DRAIN, 0
        while self.err_open and taken <= MAX_LINE and (left := deadline - time.monotonic()) > 0 \
                and select.select([err], [], [], min(left, 0.05))[0]:
            taken += self._take(err, False)

    def _exited(self) -> None:
        """stdout closed or the process exited: a stop (status 0, nothing unfinished), or the run's end in one
        line. :meth:`end` kills what is left of its group (a child it forked)."""
        try:
            status = self.proc.wait(timeout=self.cls.limit)
        except subprocess.TimeoutExpired:
            status = None
        unfinished = self.out
        self.end()
        if status == 0 and not unfinished:
            return None
        how = ("closed its output but did not exit" if status is None else
               f"was killed by signal {-status}" if status < 0 else f"exited with status {status}")
        tail = f" after writing an unfinished line {shown(unfinished)}" if unfinished else ""
        raise ConsumerError(f"{self.label} {how}{tail}")

    def end(self) -> None:
        """SIGKILL to what it forked (:func:`~.programs.end_below`) and its group, reaped; its stderr's rest
        passed through. Only the process this copy of simkit started (not a forked copy's parent's)."""
        _LIVE.discard(self)
        proc, self.proc = self.proc, None
        if proc is None or self.owner != os.getpid():
            return
        if proc.returncode is None:         # (not reaped: its id is its own) a daemon it forked too
            end_below(proc.pid)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        try:
            self._drain(proc.stderr)
        except (OSError, ValueError):
            pass
        finally:
            for f in (proc.stdin, proc.stdout, proc.stderr):
                with suppress(OSError):
                    f.close()

    def __del__(self) -> None:
        with suppress(Exception):           # a finalizer must not raise
            self.end()
