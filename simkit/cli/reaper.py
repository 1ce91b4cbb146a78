"""The processes a command's work leaves behind, found and ended, and the memory they use (docs/cli.md,
"Bounds"; Linux).

The processes below one are :func:`~simkit.procedure.programs.children` and
:func:`~simkit.procedure.programs.descendants`, read from ``/proc`` (re-exported here).

:func:`reaper` is the process :func:`~simkit.cli.contained.within` puts between the command and its work: it
runs no consumer code, leads a process group of its own (a group's SIGKILL, a terminal's Ctrl-C or hangup
that end the command do not end it), ignores SIGINT, SIGTERM and SIGHUP, and adopts every process of the work
whose parent ends (``PR_SET_CHILD_SUBREAPER``: a consumer's daemon in a session of its own, which a process
group's SIGKILL does not reach). It ends the work's whole tree (:func:`end_tree`) on every path: when the
work ends, when the command closes its control pipe (the command's answer, its budget, SIGTERM, SIGINT,
SIGHUP, an error; and the command's own death, even by SIGKILL: the kernel closes the pipe), and when the
work's processes use more memory than they may (their proportional set size, summed, checked four times a
second). It tells the command, on its status pipe, the work's process id, the memory it found too much, and
the work's wait status, one line each.

:func:`suspending`: Ctrl-Z (SIGTSTP) stops the work with the command, and ``fg`` (SIGCONT) continues both. A
terminal stops its foreground group, the command's; the work leads a group of its own and ran on, stopped
job and all, using the CPU the user had taken back.
"""
from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from simkit.procedure.programs import children, descendants
from simkit.tools.pool import prctl

__all__ = ["CHECK_EVERY", "END_SECONDS", "Stall", "adopting", "become_reaper", "children", "default_memory",
           "descendants", "end_adopted", "end_tree", "memory_of", "prctl", "reaper", "suspending"]

#: How often, in seconds, the reaper measures the work's memory.
CHECK_EVERY = 0.25
#: How long :func:`end_tree` goes on killing and reaping before it gives up (processes it may not kill).
END_SECONDS = 10.0
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 1, 36, 37
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def default_memory() -> int:
    """The memory a command's work may use by default, in bytes: half of what this machine has, or of what its
    memory cgroup allows if that is less (a container's limit: its OOM killer would come first)."""
    try:
        have = os.sysconf("SC_PHYS_PAGES") * _PAGE
    except (OSError, ValueError, AttributeError):
        have = 8 << 30
    return min(have, *_cgroup_limits()) // 2


def _cgroup_limits() -> list[int]:
    """The memory limits of this process's cgroup (v2 ``memory.max``, v1 ``memory.limit_in_bytes``), where
    there are any."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            name = ("memory.max" if controllers == "" else "memory/memory.limit_in_bytes"
                    if "memory" in controllers.split(",") else None)
            if name is not None:
                folder, _, leaf = name.rpartition("/")
                with contextlib.suppress(OSError, ValueError):
                    found.append(int(Path("/sys/fs/cgroup", folder, path.lstrip("/"), leaf).read_text()))
    return found


def memory_of(pids: list[int]) -> int:
    """The memory the processes ``pids`` use together, in bytes: the sum of their proportional set sizes
    (``Pss`` of ``/proc/PID/smaps_rollup``: a page shared by a pool's forked workers counts once in all), or
    of their resident set sizes where the kernel has no ``smaps_rollup``; and the memory files they hold open
    (:func:`_held`)."""
    total = _held(pids)
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except FileNotFoundError:
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):                       # gone meanwhile
            pass
    return total


#: What an open file's name opens with when its pages are memory, not disk: an anonymous file
#: (``memfd_create``) and a POSIX shared memory object (``shm_open``)
_MEMORY_FILES = ("/memfd:", "/dev/shm/")


def _held(pids: list[int]) -> int:
    """The memory, in bytes, of the memory files (:data:`_MEMORY_FILES`) the processes ``pids`` hold open,
    each file once: a page of one is in no process's ``Pss`` until it is mapped (and once mapped, counted
    twice here: an overestimate, never a way around ``--max-memory``)."""
    seen, total = set(), 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for entry in os.scandir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(entry.path).startswith(_MEMORY_FILES):
                        st = os.stat(entry.path)
                        if (st.st_dev, st.st_ino) not in seen:
                            seen.add((st.st_dev, st.st_ino))
                            total += st.st_blocks * 512
    return total


def end_tree(me: int, statuses: dict[int, int], seconds: float = END_SECONDS) -> None:
    """SIGKILL every process below ``me`` (this process) and reap those that are, or become, its children
    (their wait statuses into ``statuses``), until none is left or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        _reap(statuses)
        below = descendants(me)
        if not below or time.monotonic() > deadline:
            return
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)


def _reap(statuses: dict[int, int]) -> None:
    """Reap every child of this process that has ended, its wait status into ``statuses``."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = status


def become_reaper() -> None:
    """In the process :func:`~simkit.cli.contained.within` forked, before it forks the work: a process group
    of its own, SIGINT, SIGTERM and SIGHUP ignored, no death with the command, orphans adopted."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    prctl(_PR_SET_PDEATHSIG, 0)                 # outlive the command: its SIGKILL is when it is needed most
    prctl(_PR_SET_CHILD_SUBREAPER, 1)


def reaper(control: int, status: int, work: int, memory: int, parent: int, leftovers=()) -> None:
    """The reaper's life (module doc) once it forked the work, process ``work``: watch it until it ends,
    ``control`` reads EOF or a byte, or the work uses more than ``memory`` bytes; end the work's tree; say
    what happened on ``status``; remove ``leftovers`` (the command's temporary files and folders) if the
    command, ``parent``, is gone (killed: nothing of it ran); exit."""
    try:
        me, statuses = os.getpid(), dict[int, int]()
        _say(status, f"pid {work}")
        waits = [control]
        with contextlib.suppress(OSError, AttributeError):
            waits.append(os.pidfd_open(work))   # readable when the work ends
        while work not in statuses:
            ready = select.select(waits, [], [], CHECK_EVERY)[0]
            _reap(statuses)
            if control in ready:                # EOF (the command is done, or gone) or a byte: end it now
                break
            if work not in statuses and (used := memory_of(descendants(me))) > memory:
                _say(status, f"memory {used}")
                break
        end_tree(me, statuses)
        _say(status, f"exit {statuses.get(work, -1)}")
        if os.getppid() != parent:              # alive, the command removes them itself (after a rename)
            for path in leftovers:
                with contextlib.suppress(OSError):
                    shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    finally:
        os._exit(0)


@contextlib.contextmanager
def adopting():
    """While the work runs, this process is a subreaper (Linux): should the reaper be killed (a consumer may
    SIGKILL its parent), its orphans, the work's processes in sessions of their own among them, come to this
    process, which ends them (:func:`end_adopted`), instead of to init, where they ran on. Yields this
    process's children before (which are not the work's), or None where there is no such thing."""
    import ctypes
    was = ctypes.c_int(0)
    if prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was)) != 0 or prctl(_PR_SET_CHILD_SUBREAPER, 1) != 0:
        yield None
        return
    try:
        yield set(children(os.getpid()))
    finally:
        prctl(_PR_SET_CHILD_SUBREAPER, was.value)


def end_adopted(known: set[int], seconds: float = END_SECONDS) -> None:
    """SIGKILL every child of this process that is not in ``known`` (the reaper's orphans, adopted when it was
    killed), and every process below each, and reap them, until none is left or ``seconds`` have passed."""
    me, deadline = os.getpid(), time.monotonic() + seconds
    while True:
        adopted = []
        for pid in children(me):                # reaped once ended: only those, no child of the caller's
            if pid not in known:
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] != pid:
                        adopted.append(pid)
        if not adopted or time.monotonic() > deadline:
            return
        for pid in adopted:
            for each in (*descendants(pid), pid):
                with contextlib.suppress(OSError):
                    os.kill(each, signal.SIGKILL)
        time.sleep(0.002)


@contextlib.contextmanager
def suspending(reaper_pid: int, work_pid: Callable[[], int | None]):
    """While in it, SIGTSTP stops the processes below the reaper (``work_pid()``'s group first: what it forks
    meanwhile is in it), then the command; SIGCONT continues them. The reaper runs on: should the command be
    killed while stopped, it ends the work as ever. Only where SIGTSTP's default action is in place, in the
    main thread (a command's, not a library's caller's)."""
    if signal.getsignal(signal.SIGTSTP) is not signal.SIG_DFL or not _main_thread():
        yield
        return

    def stop(signum, frame) -> None:
        before = {pid: _stopped(pid) for pid in descendants(reaper_pid)}     # (one stopped to be killed)
        if (group := work_pid()) in before:     # not a number the work's end freed; none of it forks now
            with contextlib.suppress(OSError):
                os.killpg(group, signal.SIGSTOP)
        ours = [pid for pid in descendants(reaper_pid) if not before.get(pid, False)]
        for pid in ours:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        try:
            os.kill(os.getpid(), signal.SIGTSTP)    # stopped here (in an orphaned group the kernel drops it)
        finally:
            signal.signal(signal.SIGTSTP, stop)
            for pid in ours:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGCONT)

    before = signal.signal(signal.SIGTSTP, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTSTP, before)


def _stopped(pid: int) -> bool:
    """Is ``pid`` stopped (``T`` in ``/proc/PID/stat``)?"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] == b"T"
    except (OSError, IndexError):
        return False


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


def _say(fd: int, line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, f"{line}\n".encode())


class Stall:
    """A heartbeat for :func:`within`: the work touches :attr:`path` (a file of its own, any process of the
    work, whatever its start method) as it makes progress; ``seconds`` without a touch end the work with
    :class:`OverBudget` ``what``. A context manager: the file is removed after."""

    def __init__(self, seconds: float, what: str):
        self.seconds, self.what = seconds, what
        fd, self.path = tempfile.mkstemp(prefix="simkit-beat-")
        os.close(fd)
        self.seen, self.at = self._mtime(), time.monotonic()

    def _mtime(self) -> int:
        try:
            return os.stat(self.path).st_mtime_ns
        except OSError:
            return 0

    def stalled(self) -> bool:
        """No beat for ``seconds``? (Measured on this process's monotonic clock, from each change seen.)"""
        if (now := self._mtime()) != self.seen:
            self.seen, self.at = now, time.monotonic()
        return time.monotonic() - self.at > self.seconds

    def __enter__(self) -> Stall:
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)
