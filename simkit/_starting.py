"""The ``simkit`` command's signals while it starts (docs/cli.md, "Exit status"): from the first line of
``import simkit`` until the command line's own handlers take over (:func:`simkit.cli.main`'s Ctrl-C,
:func:`simkit.tools.pool.terminated`'s SIGTERM and SIGHUP), Ctrl-C, SIGTERM and SIGHUP end the command with
its one line and 128 + the signal, as at any later moment. The Python default killed it with no line
(SIGTERM, SIGHUP), or with a traceback (Ctrl-C while ``simkit.cli`` imports), for the second or more it takes
to import on a loaded machine.

Only in the process that is the command (``python -m simkit``, the ``simkit`` script); a program that imports
simkit as a library keeps its own signal handling untouched. Standard library only: it runs before the rest
of the package is imported.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Any

__all__ = ["is_command", "install", "early", "replaceable"]

#: signal -> the handler in place where nobody chose one (Python's own for SIGINT, the default action else)
_DEFAULTS: dict[int, Any] = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL,
                             **({signal.SIGHUP: signal.SIG_DFL} if hasattr(signal, "SIGHUP") else {})}


def is_command() -> bool:
    """Whether this process is the ``simkit`` command: ``python [OPTIONS] -m simkit`` or the ``simkit``
    script. (The interpreter's options are ``sys.orig_argv`` less the command's own arguments.)"""
    argv = getattr(sys, "argv", None) or [""]
    options = sys.orig_argv[1:len(sys.orig_argv) - len(argv) + 1]
    return (options[-2:] == ["-m", "simkit"] or options[-1:] == ["-msimkit"]
            or str(argv[0]).endswith("/simkit"))


def early(signum: int, frame) -> None:
    """The handler while the command starts: its one line, then exit 128 + the signal at once. Nothing is
    written before the command's own handlers are in place, so nothing is left to clean up; and an exception
    raised here could be lost (one raised while ``compile()`` parses a module's source was, and the command
    ran on after its line)."""
    told = "interrupted" if signum == signal.SIGINT else f"terminated by {signal.Signals(signum).name}"
    try:
        os.write(2, f"simkit: {told}\n".encode())     # not sys.stderr: a handler may run inside its write
    finally:
        os._exit(128 + signum)


def install() -> None:
    """:func:`early` for each signal whose handler nobody chose (an ignored SIGHUP, under ``nohup``, stays
    ignored), in the command only (:func:`is_command`)."""
    if not is_command():
        return
    for sig, default in _DEFAULTS.items():
        try:
            if signal.getsignal(sig) is default:
                signal.signal(sig, early)
        except ValueError:                      # imported from a thread: not the command's start
            return


def replaceable(sig: int) -> bool:
    """Whether the command line's handler may take ``sig``: nobody chose one, or :func:`early` holds it."""
    return signal.getsignal(sig) in (_DEFAULTS.get(sig, signal.SIG_DFL), early)
