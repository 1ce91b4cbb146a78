"""What a consumer's program path is, said before or when it fails to start (``--strategy path.py:Class``
and ``exec:COMMAND``, docs/protocol.md): a named pipe, a directory, a script whose ``#!`` interpreter is
missing; what makes a consumer's process die with simkit on Linux, and keeps what it forks below it (a daemon
in a session of its own too) for :func:`end_below` to end; and its stderr passed through.

:func:`children` reads ``/proc/PID/task/*/children`` (CONFIG_PROC_CHILDREN); on a kernel without that file it
reads each process's parent from ``/proc/*/stat``, once per call. :func:`descendants` follows them down."""
from __future__ import annotations

import ctypes
import errno
import os
import re
import shlex
import shutil
import signal
import stat
import sys
import time
from contextlib import suppress
from pathlib import Path

from simkit.errors import echoed

__all__ = ["not_a_file", "not_started", "die_with_parent", "children", "descendants", "end_below",
           "passed_through"]

_PRCTL = None
if sys.platform.startswith("linux"):
    try:
        _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):       # no libc to ask: the process is still killed at every life's end
        pass


def _die_with_parent() -> None:             # runs in the child between fork and exec: keep it minimal
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)           # PR_SET_PDEATHSIG
        _PRCTL(36, 1)                       # PR_SET_CHILD_SUBREAPER, kept across exec: orphans stay below it


#: a ``preexec_fn`` that makes an ``exec:`` consumer's process die with simkit and adopt the orphans of what
#: it forks (a daemon in a session of its own, which its group's SIGKILL misses: :func:`end_below`); ``None``
#: off Linux
die_with_parent = _die_with_parent if _PRCTL is not None else None


_HAS_CHILDREN: list[bool] = []                  # does this kernel have /proc/PID/task/TID/children?


def _children_files() -> bool:
    if not _HAS_CHILDREN:
        _HAS_CHILDREN.append(Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists())
    return _HAS_CHILDREN[0]


def _parents() -> dict[int, list[int]]:
    """Every process's children, from each one's parent in ``/proc/*/stat`` (a process gone meanwhile, or a
    name that is no process, is left out)."""
    kids: dict[int, list[int]] = {}
    with suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit():
                with suppress(OSError, IndexError, ValueError):
                    with open(f"/proc/{name}/stat", "rb") as f:
                        ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
                    kids.setdefault(ppid, []).append(int(name))
    return kids


def children(pid: int, parents: dict[int, list[int]] | None = None) -> list[int]:
    """The ids of ``pid``'s children: from ``/proc/PID/task/*/children``, or where the kernel has no such
    file, from ``parents`` (:func:`_parents`, read now if not given)."""
    if not _children_files():
        return list((_parents() if parents is None else parents).get(pid, ()))
    found: list[int] = []
    with suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with suppress(OSError, ValueError):              # a thread gone meanwhile
                found.extend(int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before their children."""
    parents = None if _children_files() else _parents()
    found, todo, seen = [], [pid], {pid}
    while todo:
        for kid in children(todo.pop(), parents):
            if kid not in seen:
                seen.add(kid)
                found.append(kid)
                todo.append(kid)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def end_below(pid: int, seconds: float = 1.0) -> None:
    """SIGKILL every process below ``pid`` (a consumer's process, a pool's worker), each stopped first so that
    none forks meanwhile, until none is left or ``seconds`` have passed. A group's SIGKILL misses one in
    another group or session (a daemon), which outlived the run in the Python API (``simkit.testing``: no
    reaper there) and piled up one per life until the command's end; :data:`die_with_parent` made a consumer's
    process adopt them, so they are below it while it runs (one it left when it exited on its own is the
    reaper's, in a command). ``pid`` itself is left stopped, not killed: each caller kills it next, and
    calls this only while ``pid`` is its own unreaped child (so the id is not another process's)."""
    with suppress(OSError):
        os.kill(pid, signal.SIGSTOP)
    deadline, stopped = time.monotonic() + seconds, set[int]()
    while (below := {p for p in descendants(pid) if _alive(p)}) and time.monotonic() < deadline:
        for each in below - stopped:
            with suppress(OSError):
                os.kill(each, signal.SIGSTOP)
        if below == stopped:            # none forked since the last look: all of them, at once
            for each in below:
                with suppress(OSError):
                    os.kill(each, signal.SIGKILL)
        stopped = below
        time.sleep(0.001)


#: What a path that is not a regular file is, by its mode (``stat``, links followed)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def not_a_file(path: str | os.PathLike) -> str | None:
    """What to say of ``path`` if it is no regular file (links followed): ``no such file``, ``is a named pipe,
    not a file`` (a FIFO was said to be no such file, and reading one waits for a writer for ever), ``is a
    directory, not a file``, ``cannot be read: File name too long`` (which was a traceback); ``None`` for a
    regular file."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError, ValueError):      # (ValueError: a NUL in the path)
        return "no such file"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    return next((f"is {kind}, not a file" for test, kind in _KINDS if test(mode)), "is not a regular file")


def not_started(program: str, exc: OSError) -> str:
    """Why ``program`` did not start, from the ``OSError`` of its start: the system's words, but of a script
    whose ``#!`` line names an interpreter that is not there, which the system says the script itself is
    ("No such file or directory", of a file that is there), and of a script the system cannot run ("Exec
    format error"): one with no ``#!`` line, or a byte order mark before it. A ``#!`` line ending in a
    carriage return (a script saved with Windows line ends) names its interpreter with the ``\\r``, as the
    system reads it: it was said to name ``/bin/sh``, which is there."""
    path = program if os.sep in program else shutil.which(program)
    if exc.errno not in (errno.ENOENT, errno.ENOEXEC) or not path or not_a_file(path) is not None:
        return exc.strerror or str(exc)
    try:
        with open(path, "rb") as f:
            head = f.readline(4096)
    except OSError:
        head = b""
    words = re.split(rb"[ \t]+", head[2:].rstrip(b"\n").strip(b" \t")) if head.startswith(b"#!") else []
    if exc.errno == errno.ENOENT and words and words[0]:
        interpreter = echoed(words[0].decode(errors="backslashreplace"))
        if words[0].endswith(b"\r"):
            return (f"its #! line ends in a carriage return (Windows line ends), so it names {interpreter}, "
                    "which is not there")
        return f"its #! line names {interpreter}, which is not there"
    if exc.errno == errno.ENOEXEC and head and not head.startswith((b"#!", b"\x7fELF")):
        bom = head.startswith(b"\xef\xbb\xbf#!")
        why = ("it begins with a byte order mark, before its #! line" if bom else "it has no #! line: begin "
               f"it with one, or name its interpreter (exec:sh {shlex.quote(program)})")
        return f"{exc.strerror}: {why}"
    return exc.strerror or str(exc)


def passed_through(worker: int, err: bytes, most: int) -> bytes:
    """The whole lines of ``err`` (what a consumer wrote on its stderr) written to simkit's stderr, each
    prefixed with its worker; the unfinished line left is returned, or passed through too past ``most`` bytes
    (no newline in sight: not held, for memory)."""
    *lines, err = err.split(b"\n")
    if len(err) > most:
        lines.append(err)
        err = b""
    if (out := sys.stderr) is not None:     # None: Python found no stderr at its start (<&- 2>&-)
        out.writelines(f"[worker {worker}] {x.decode('utf-8', 'replace')}\n" for x in lines if x)
        out.flush()
    return err
