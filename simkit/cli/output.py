"""What the command line writes: output files checked before any work and
written whole or not at all, figures, and errors as the one line a user reads,
naming the flag where the library named its parameter (docs/cli.md)."""
from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from simkit.errors import Note, SimkitError, printable
from simkit.tools.writing import LINK, CannotWrite, atomic, refusal, write_text

__all__ = ["FLAGS", "LINK", "spoken", "notes", "figure_formats", "check_out", "check_folder", "CannotWrite",
           "atomic", "write_text", "save_figure", "check_figures", "own_stdout", "say", "tell",
           "standard_fds", "temporary", "TIMELINE_ROWS_AT_MOST",
           "TIMELINE_EVENTS_AT_MOST"]

#: The flag that sets each parameter a library error may name (``SimkitError.param``): explore's
#: ``max_crashes``, :func:`~simkit.procedure.strategies.resolve`'s ``strategy``, live's ``folder``, sweep's
#: ``path`` (``--out``) ...
FLAGS = {
    "strategy": "--strategy", "crash": "--crash", "seed": "--seed", "seeds": "--seeds",
    "first_seed": "--first-seed",
    "crash_rates": "--crash-rate", "jobs": "--jobs", "dask_address": "--dask", "path": "--out",
    "max_crashes": "--max-crashes", "lost_responses": "--lost-responses", "lost_requests": "--lost-requests",
    "points": "--point", "kills": "--kills", "max_delay": "--max-delay", "at": "--at", "folder": "--dir",
    "repeat": "--repeat", "timeout": "--timeout", "budget": "--budget", "ref": "SCENARIO",
    "events": "--events",
}


def spoken(exc: SimkitError | Note) -> str:
    """``exc`` (or a :class:`~simkit.errors.Note`) as the command line says it, on one line: the parameter it
    opens with (``seeds 0: ...``, or after a command's name, ``bench: repeat must ...``) named by its flag
    from :data:`FLAGS` instead."""
    message = str(exc)
    param = getattr(exc, "param", None)
    if param in FLAGS:
        message = re.sub(rf"^(\w+: )?{re.escape(param)}\b", lambda m: (m[1] or "") + FLAGS[param], message,
                         count=1)
    message = printable(message)
    if len(message) > _LONGEST:                 # a 100 KB scenario name, echoed: its start and the problem
        cut = len(message) - _HEAD - _TAIL
        message = f"{message[:_HEAD]} … ({cut} characters left out) … {message[-_TAIL:]}"
    return message


#: The longest line :func:`spoken` says whole; past it, its first ``_HEAD`` and last ``_TAIL`` characters
_LONGEST, _HEAD, _TAIL = 2000, 1200, 600


@contextmanager
def notes():
    """Within it, every :class:`~simkit.errors.Note` is printed at once as one line on stderr, ``simkit: ``
    and :func:`spoken` (``simkit: --jobs 1000: using 8 worker processes ...``); other warnings as before."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", Note)
        show = warnings.showwarning

        def note(message, category, *args, **kwargs):
            if not issubclass(category, Note):
                return show(message, category, *args, **kwargs)
            tell(f"simkit: {spoken(message)}")
        warnings.showwarning = note
        yield


def standard_fds() -> None:
    """File descriptors 0, 1 and 2, when the command was started without them (``<&- >&-``, a daemon's
    children), opened on ``/dev/null``: else the first pipe a command's work made took their numbers, and the
    work's ``dup2(2, 1)`` put its answer on stderr (pickle bytes on the terminal, and a run of ``safe`` said
    to have ended "without a result"); and ``sys.stdout``, ``sys.stderr`` on them where Python made them
    None (an ``exec:`` consumer's stderr was passed to None's ``write``: AttributeError, blamed on the
    consumer)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with contextlib.suppress(OSError):
                opened = os.open(os.devnull, os.O_RDWR)     # the lowest free number: this one
                if opened != fd:
                    os.dup2(opened, fd)
                    os.close(opened)
    for name, fd in (("stdout", 1), ("stderr", 2)):        # None when Python found no such file at its start
        if getattr(sys, name) is None:
            with contextlib.suppress(OSError):
                setattr(sys, name, open(fd, "w", errors="backslashreplace", closefd=False))  # noqa: SIM115


class _Stdout:
    """The command's standard output as :func:`own_stdout` holds it: a character the stream's encoding lacks
    is written as its escape (``\\xb7``), a write the system refuses is one
    :class:`~simkit.errors.SimkitError` line, and ``close()`` only flushes (a consumer's code runs inside the
    command)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self._do(lambda: self.stream.write(text), text)

    def flush(self) -> None:
        self._do(self.stream.flush)

    def close(self) -> None:
        self.flush()

    def _do(self, op, text: str | None = None):
        try:
            return op()
        except UnicodeEncodeError:              # LANG=C, PYTHONIOENCODING=ascii: "·" and "…" as escapes
            if text is None:
                raise
            encoding = self.stream.encoding or "ascii"
            return self._do(lambda: self.stream.write(text.encode(encoding,
                                                                  "backslashreplace").decode(encoding)))
        except BrokenPipeError:                 # the reader is gone: main() ends quietly
            raise
        except OSError as exc:
            self._failed(exc.strerror or str(exc))
        except ValueError:
            if not getattr(self.stream, "closed", False):
                raise
            raise SimkitError("standard output: closed by the code the command ran (a consumer's?)") from None

    def _failed(self, problem: str):
        """Standard output refused a write (a full disk, ``/dev/full``, a terminal gone): the rest goes
        nowhere (Python's own flush at exit would print a second error), and one line says why."""
        with contextlib.suppress(OSError, ValueError, AttributeError):
            if self.stream.fileno() == 1:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.close(null)
        raise SimkitError(f"standard output: cannot write to it: {problem}")

    def __getattr__(self, name):
        return getattr(self.stream, name)


_OUT: list = []  # (process id, stream) of each own_stdout() under way, innermost last


@contextmanager
def _blocking(stream):
    """Writes to ``stream``'s descriptor wait for its reader while the command runs: a parent may hand it a
    non-blocking pipe (``O_NONBLOCK``, as Node.js's do), where Python's buffered writes dropped, silently,
    what the pipe could not take at once (``audit --json`` cut at 64 KiB, the exit status as if whole). The
    flag, which the parent shares, is put back after (by this process: not a copy a consumer forked)."""
    pid = os.getpid()
    try:
        fd = stream.fileno()
        was = os.get_blocking(fd)
        if not was:
            os.set_blocking(fd, True)
    except (OSError, ValueError, AttributeError):
        was = True
    try:
        yield
    finally:
        if not was and os.getpid() == pid:
            with contextlib.suppress(OSError):
                os.set_blocking(fd, False)


@contextmanager
def own_stdout():
    """Within it, ``sys.stdout`` is the command's own (:class:`_Stdout`) and :func:`say`
    writes to it whatever the code run inside does to ``sys.stdout`` (a consumer may
    close it, replace it, or set it to None). Its output is flushed before the block
    ends, so a write that fails is the command's one line, not a warning at exit."""
    stream = sys.stdout
    out = stream if stream is None or isinstance(stream, _Stdout) else _Stdout(stream)
    sys.stdout = out
    _OUT.append((os.getpid(), out))
    try:
        with _blocking(stream), _blocking(sys.stderr):     # (what a consumer prints goes to stderr)
            yield
            if out is not None:
                out.flush()
    finally:
        _OUT.pop()
        sys.stdout = stream


def say(*parts, end: str = "\n") -> None:
    """``print(*parts, end=end)`` to the command's standard output (:func:`own_stdout`; nothing if it started
    closed), or ``sys.stdout`` outside one. A copy of the command that a consumer's ``os.fork()`` sent back
    into it says nothing: the command's answer is its own to give, once."""
    if not _OUT:
        print(*parts, end=end)
        return
    pid, out = _OUT[-1]
    if pid == os.getpid() and out is not None:
        print(*parts, end=end, file=out)


def tell(line: str) -> None:
    """``line`` on stderr, if it can be written at all: a command started with its stderr closed (``2>&-``)
    keeps its exit status (the failed write's traceback made it 1)."""
    if sys.stderr is None:                      # started without one: not stdout's to say instead
        return
    try:
        with _blocking(sys.stderr):             # a non-blocking pipe a consumer's output filled: not lost
            print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def _matplotlib():
    """``matplotlib``, set to draw into files (Agg), whatever ``MPLBACKEND`` says: the command line draws only
    files, and matplotlib validates that variable as it is first imported, so a value it does not know
    (``MPLBACKEND=nosuch``) was a ValueError traceback out of ``simkit demo``. The variable is left out of
    that import only; the environment a consumer process inherits keeps it (and has no OPENBLAS_NUM_THREADS
    of simkit's)."""
    if "matplotlib" not in sys.modules:
        saved = os.environ.pop("MPLBACKEND", None), os.environ.get("OPENBLAS_NUM_THREADS")
        # NumPy's OpenBLAS, which a figure never uses, starts a thread per core as it loads: under ulimit -v
        # one it could not start raised SIGINT ("simkit: interrupted", 130) or cost the memory to import
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            import matplotlib
        finally:
            for key, value in zip(("MPLBACKEND", "OPENBLAS_NUM_THREADS"), saved, strict=True):
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    import matplotlib
    matplotlib.use("Agg")
    return matplotlib


def figure_formats() -> tuple[str, ...]:
    """Matplotlib's file types but PGF, which needs a TeX installation to write."""
    _matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase
    return tuple(f".{x}" for x in sorted(FigureCanvasBase.get_supported_filetypes()) if x != "pgf")


def check_out(option: str, path: str, suffixes: tuple[str, ...], inputs: tuple[str, ...] = ()) -> Path:
    """``path`` as an output file for ``option``, or a one-line error: it must not
    be a folder or a symbolic link (:data:`LINK`), must end in one of ``suffixes``, go
    into a folder that exists and is writable, and not be one of the files in ``inputs``
    (the command's scenario: ``shrink my.toml --out my.toml`` replaced the scenario), a bundled one's
    named by its name (:func:`~simkit.scenario.read.scenario_file`)."""
    from simkit.scenario.read import folder_spelled, scenario_file
    if not path:            # ``--out "$UNSET"``: explore, shrink and sweep wrote nothing and said nothing
        raise SimkitError(f"{option} '': names no file; give one, or leave {option} out")
    out = Path(path)        # (which drops a trailing "/": ``--out new.toml/`` wrote the file new.toml)
    try:
        problem = refusal(out, suffixes)
        if folder_spelled(path):
            problem = "names a folder (a trailing '/'), not a file"
        if problem is None and out.is_file():
            problem = next((f"is the scenario file {printable(str(x))!r} itself: it would be replaced; write "
                            "elsewhere" for x in inputs if (f := scenario_file(x)).is_file()
                            and os.path.samefile(out, f)), None)
    except OSError as exc:  # a name too long for the system, a loop of symbolic links, ...
        raise SimkitError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None
    if problem is not None:
        raise SimkitError(f"{option} {path}: {problem}")
    return out


def check_folder(option: str, path: str) -> None:
    """``path`` as a folder to create or reuse: it, or the nearest existing folder above it, is a folder we
    may write into. An empty ``path`` (``--dir "$UNSET"``) names no folder: ``Path("")`` is the current one,
    where ``live`` left its databases."""
    if not path.strip():
        raise SimkitError(f"{option} {path!r}: names no folder; give one, or leave {option} out")
    p = Path(path)
    existing = next(a for a in (p, *p.parents) if a.exists())
    name = "it" if existing == p else repr(str(existing))
    if not existing.is_dir():
        raise SimkitError(f"{option} {path}: {name} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise SimkitError(f"{option} {path}: cannot write into {name}")


def temporary(who: str, make):
    """``make()``, which makes a command's temporary file or folder (``tempfile``'s): a full disk (or
    ``RLIMIT_FSIZE``) where ``TMPDIR`` and ``/tmp`` are is one line opening with ``who``, not the traceback of
    Python's "No usable temporary directory found"."""
    try:
        return make()
    except OSError as exc:
        raise SimkitError(f"{who}: cannot make a temporary file or folder for the work: "
                          f"{exc.strerror or exc} (a full disk where TMPDIR or /tmp is?)") from None


#: The most trace rows, and events of the stream, a timeline is drawn of: past them its marks are no longer
#: legible, and its drawing grows with them (the facts it draws, :mod:`simkit.judge.facts`, are near linear).
TIMELINE_ROWS_AT_MOST, TIMELINE_EVENTS_AT_MOST = 20_000, 10_000


def check_figures(run, figures: dict) -> None:
    """Refuse, before anything is drawn, a figure of a run longer than it draws (``figures``: kind ->
    (option, path), as ``run`` checked them): one line naming ``--swimlane`` or ``--timeline`` and its
    limit."""
    rows = len(run.trace)
    if "swimlane" in figures:
        # (its module imports matplotlib and NumPy: only for a swimlane, not for every run, which paid 140 ms
        # for them and, under ulimit -v, a traceback)
        from simkit.viz.swimlane import TRACE_ROWS_AT_MOST
        if rows > TRACE_ROWS_AT_MOST:
            option, path = figures["swimlane"]
            raise SimkitError(f"{option} {path}: the run has {rows} trace rows and a swimlane draws at most "
                              f"{TRACE_ROWS_AT_MOST}; use --timeline, or a shorter stream")
    events = len(run.world.provider.events)
    if "timeline" in figures and (rows > TIMELINE_ROWS_AT_MOST or events > TIMELINE_EVENTS_AT_MOST):
        option, path = figures["timeline"]
        raise SimkitError(f"{option} {path}: the run has {rows} trace rows over a stream of {events} events, "
                          f"and a timeline draws at most {TIMELINE_ROWS_AT_MOST} rows and "
                          f"{TIMELINE_EVENTS_AT_MOST} events; use a shorter stream")


def save_figure(run, path: Path, kind: str) -> None:
    """``run``'s ``timeline`` or ``swimlane`` figure written to ``path``; a plotting backend's own failure is
    a :class:`CannotWrite` of one line, not a traceback."""
    _matplotlib()
    import matplotlib.pyplot as plt

    from simkit.viz.plot import timeline
    from simkit.viz.swimlane import swimlane
    height = 5.5 if kind == "timeline" else 1.6 + 0.75 * (run.world.scenario.workers + 3)
    fig, ax = plt.subplots(figsize=(12, height), layout="constrained")
    try:
        (timeline if kind == "timeline" else swimlane)(ax, run)
        try:
            fig.savefig(path, dpi=110)
        except (OSError, SimkitError):
            raise
        except Exception as exc:                  # a backend's own failure: one line, not a traceback
            raise CannotWrite(" ".join(f"{type(exc).__name__}: {exc}".split())) from exc
    finally:
        plt.close(fig)
