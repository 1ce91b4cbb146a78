"""Writing a file whole or not at all: a temporary file of its own beside the target, renamed over it (what
every writer of the command line, and :func:`simkit.testing.assert_passes_audit`, writes with)."""
from __future__ import annotations

import contextlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from simkit.errors import SimkitError

__all__ = ["LINK", "CannotWrite", "atomic", "refusal", "write_text"]


class CannotWrite(OSError):
    """A writer's failure that is not an OSError (a plotting backend's, say), for :func:`atomic` to report."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic(option: str, path: Path):
    """A temporary file of its own beside ``path`` to write to (a short name, so any name ``path`` may have
    fits): it replaces ``path`` when the block succeeds and is removed when it fails (or is interrupted), so
    no half-written file is ever left behind."""
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=".simkit-", suffix=path.suffix)
        os.close(fd)
    except OSError as exc:
        raise SimkitError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None
    tmp = Path(name)
    try:
        os.chmod(tmp, 0o666 & ~_umask())          # the mode a plain open() would give, not mkstemp's 0600
        yield tmp
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
