"""Writing a file whole or not at all: a temporary file of its own beside the target, renamed over it (what
every writer of the command line, and :func:`simkit.testing.assert_passes_audit`, writes with)."""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
from contextlib import contextmanager
from pathlib import Path

from simkit.errors import SimkitError

__all__ = ["LINK", "CannotWrite", "atomic", "owners_umask", "refusal", "write_text"]


class CannotWrite(OSError):
    """A writer's failure that is not an OSError (a plotting backend's, say), for :func:`atomic` to report."""


#: The umask the command was started with while :func:`owners_umask` stands in for it (None: none does).
_ASKED: int | None = None


def _umask() -> int:
    if _ASKED is not None:
        return _ASKED
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def owners_umask():
    """The owner keeps read, write and search on what simkit makes for its own work while a command runs
    (its temporary folders, SQLite stores and their journals, opened again by other processes); what the
    umask takes from group and others it still takes. Under ``umask 277`` or ``777`` a non-root user's ``run
    --store sqlite`` printed a PermissionError's traceback and ``live`` refused its own temporary folder. The
    files the user asked for (:func:`atomic`) get the mode the umask asked for, as a plain ``open()``'s."""
    global _ASKED
    mask = os.umask(0)
    os.umask(mask & 0o077)
    before, _ASKED = _ASKED, mask
    try:
        yield
    finally:
        _ASKED = before
        os.umask(mask)


def _fresh(folder: Path, suffix: str) -> Path:
    """A new empty file of simkit's own in ``folder``, mode 0600 while it is written; named absolute (a
    consumer's ``chdir`` cannot move it) unless that name would pass PATH_MAX, in a folder deeper than 4,096
    bytes, where it stays relative (``tempfile.mkstemp`` makes it absolute, and refused every write there)."""
    whole = folder.absolute()
    with contextlib.suppress(OSError, ValueError):
        if len(os.fsencode(whole)) + 64 >= os.pathconf(folder, "PC_PATH_MAX"):
            whole = folder
    for _ in range(100):
        tmp = whole / f".simkit-{secrets.token_hex(6)}{suffix}"     # a short name: any ``path``'s name fits
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        try:
            os.fchmod(fd, 0o600)                    # whatever the umask took: its writer opens it again
        finally:
            os.close(fd)
        return tmp
    raise FileExistsError(errno.EEXIST, "no usable temporary file name found")


@contextmanager
def atomic(option: str, path: Path):
    """A temporary file of its own beside ``path`` to write to: it replaces ``path`` when the block succeeds
    and is removed when it fails (or is interrupted), so no half-written file is ever left behind. It gets
    the mode a plain ``open()`` would give once written, not before: under a umask without the owner's write
    bit (``umask 277``, ``777``) it was unwritable before its writer opened it, for anyone but root."""
    try:
        tmp = _fresh(path.parent, path.suffix)
    except OSError as exc:
        raise SimkitError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())          # the mode a plain open() would give, not 0600
        os.replace(tmp, path)
    except OSError as exc:
        raise SimkitError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def write_text(option: str, path: Path, text: str) -> None:
    with atomic(option, path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def refusal(out: Path, suffixes: tuple[str, ...] | None = None) -> str | None:
    """Why ``out`` cannot be written as an output file (ending in one of ``suffixes``, where given), or
    ``None``: what every writer of simkit checks before its work."""
    if out.is_symlink():                        # every writer's: a link is neither followed nor replaced
        return LINK
    if out.is_dir():
        return "is a folder, not a file"
    if out.exists() and not out.is_file():      # renamed over, a FIFO's reader waited for ever
        return "is not a regular file (a FIFO, a socket or a device): not replaced; name a file"
    if suffixes is not None and out.suffix.lower() not in suffixes:
        problem = f"unsupported extension {out.suffix!r}" if out.suffix else "no file extension"
        return f"{problem}; use {', '.join(suffixes)}"
    folder = out.parent
    if not folder.is_dir():
        return (f"{str(folder)!r} is a file, not a folder" if folder.exists()
                else f"no such folder {str(folder)!r}")
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot write into folder {str(folder)!r}"
    if len(os.fsencode(out.name)) > (most := os.pathconf(folder, "PC_NAME_MAX")):
        return f"file name too long ({len(os.fsencode(out.name))} bytes; at most {most} here)"
    if out.exists() and not (out.stat().st_mode & 0o222 and os.access(out, os.W_OK)):
        # a read-only file is one its owner chose to keep: replacing it (a new file, by rename) would
        # succeed in a writable folder, and silently
        return "is read-only; not replaced (remove it or make it writable)"
    return None


#: What every writer of simkit's says of an output path that is a symbolic link (docs/cli.md, "Exit status"):
#: written through, it could replace any file the link names (a link planted in a shared folder); replaced,
#: the link a user made is gone. Either is a surprise: refused, the user chooses.
LINK = "is a symbolic link: neither written through nor replaced; name its target, or remove the link"
