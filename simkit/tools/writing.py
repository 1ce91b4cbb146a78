"""Writing a file whole or not at all: a temporary file of its own beside the target, renamed over it (what
every writer of the command line, and :func:`simkit.testing.assert_passes_audit`, writes with)."""
from __future__ import annotations

import contextlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from simkit.errors import SimkitError

__all__ = ["CannotWrite", "atomic", "write_text"]


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
