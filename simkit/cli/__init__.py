"""The ``simkit`` command line (docs/cli.md). Bad input: one line on stderr, exit status 2, nothing written.

============  ==========================================================================================
module        owns
============  ==========================================================================================
parser        :func:`build_parser`: every command and option, the help users read, numbers held to range
commands      ``cmd_<command>`` for each command and :data:`COMMANDS`, name -> function
output        output files checked before any work and written whole or not at all, the figures, and a
              library error or note as the one line a user reads (its parameter named by the flag, ``FLAGS``)
contained     every command contained (its stdout its own, SIGTERM one line, forked strays ended with it),
              and a command's work in a process of its own within a budget (``explore --budget``, ``shrink
              --budget``), what a consumer prints sent to stderr
reaper        the process between a command and its work: it adopts the work's orphans, ends every process
              of it however the command ends, bounds its memory (``--max-memory``); /proc read for children
answers       the work's answer read without blocking (a consumer may write on its pipe), and what the command
              says of a work that ended without one
============  ==========================================================================================

``serve`` and ``service`` are :mod:`simkit.service.cli`'s. :func:`main` is the ``simkit`` script
(pyproject.toml) and ``python -m simkit``.
"""
from __future__ import annotations

import signal
from contextlib import contextmanager

from simkit._starting import replaceable
from simkit.errors import Interrupted, SimkitError, Terminated
from simkit.tools.writing import owners_umask

from .answers import imported, limited
from .commands import COMMANDS, DEMO_SCENARIO, compare
from .output import FLAGS, notes, spoken, tell
from .parser import DESCRIPTION, build_parser

__all__ = ["main", "build_parser", "COMMANDS", "DESCRIPTION", "DEMO_SCENARIO", "FLAGS", "compare"]


@contextmanager
def _ctrl_c():
    """Ctrl-C raises :class:`~simkit.errors.Interrupted`, so that a ``KeyboardInterrupt`` a consumer raises
    itself is told apart (its one line, exit 2), not taken for the user's (issue 32). Only where Python's own
    handler is in place (or the command's while it started, :mod:`simkit._starting`), in the main thread."""
    if not replaceable(signal.SIGINT):
        yield
        return

    def interrupted(signum, frame):
        raise Interrupted()

    try:
        before = signal.signal(signal.SIGINT, interrupted)
    except ValueError:                          # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def main(argv=None) -> int:
    """Run one command; its exit status: 0, 1 (``audit`` found a failure), 2 (bad input, or no memory or
    library left: one line on stderr), 130 (Ctrl-C) or 128 + the signal (SIGTERM, SIGHUP)."""
    try:
        args = build_parser().parse_args(argv)
        with notes(), _ctrl_c(), owners_umask():
            return COMMANDS[args.command](args)
    except SimkitError as exc:
        tell(f"simkit: {spoken(exc)}")                              # one line, whatever it echoes
        return 2
    except BrokenPipeError:
        return 0
    except Terminated as exc:                   # SIGTERM, SIGHUP (simkit live): unwound as Ctrl-C is
        tell(f"simkit: terminated by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    except KeyboardInterrupt:
        tell("simkit: interrupted")
        return 130
    except MemoryError:                         # the command's own (ulimit -v); its work's: answers.said_of
        tell(f"simkit: MemoryError: out of memory{limited()}")
        return 2
    except ImportError as exc:                  # a library a command imports when it needs it (ulimit -v)
        tell(f"simkit: {imported(exc)}")
        return 2
