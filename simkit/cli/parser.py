"""The ``simkit`` argument parser: every command and option of docs/cli.md, with the help users read.

:data:`DESCRIPTION` is what ``simkit --help`` says, in plain words. A value argparse refuses, and a number out
of range (:func:`number`), is a :class:`~simkit.errors.SimkitError` of one line, as every other bad input is.
"""
from __future__ import annotations

import argparse
import math
import re
import sys

from simkit.errors import SimkitError, printable
from simkit.model import CRASH_POINTS
from simkit.scenario.read import SETTLEMENTS, STORES
from simkit.service import cli as service_cli
from simkit.tools import bench
from simkit.tools.sweep import MAX_SEEDS

from .output import own_stdout, say

__all__ = ["DESCRIPTION", "EXPLORE_BUDGET", "MAX_ARGUMENTS", "MAX_BUDGET", "Parser", "build_parser", "number"]

DESCRIPTION = """\
simkit: simulate a paginated event-stream consumer with crash-safe
checkpoints, and judge every run.

Bad input (an unknown option value, a malformed scenario file, an output path
that cannot be written) is answered with one line on stderr and exit status 2,
before any work and without writing anything. Ctrl-C stops with exit status 130,
and leaves no half-written file either.
"""


#: The most arguments a command line may have: no command needs more than a few dozen
MAX_ARGUMENTS = 4096


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        """No option by a prefix of its name: ``sweep --seeds 10 --seed 3`` ran 3 seeds (``--seed``, which
        ``run`` has, read as ``sweep``'s ``--seeds``), ``audit --seed 7`` 7 per scenario, without a word."""
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an unrecognized argument names the command it
        was given to: ``simkit: run: unrecognized arguments: --out x (see
        simkit run --help)`` (argparse reports it from the top parser)."""
        args = sys.argv[1:] if args is None else list(args)
        if len(args) > MAX_ARGUMENTS:           # argparse reads them in time that grows with their square
            raise SimkitError(f"{len(args)} arguments: at most {MAX_ARGUMENTS} (argparse took 12 s to read "
                              "20,000 --crash flags)")
        for arg in args:                        # main(argv) from Python: no path, name or command holds a NUL
            if isinstance(arg, str) and "\0" in arg:
                raise SimkitError(f"argument '{printable(_shown(arg))}': holds a NUL character, which no "
                                   "file name, strategy or value may")
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(parsed, "command", None)
            prog = f"{self.prog} {command}" if command else self.prog
            raise SimkitError(f"{command + ': ' if command else ''}unrecognized arguments: "
                              f"{' '.join(extras)} (see {prog} --help)")
        return parsed

    def _get_value(self, action, arg_string):
        """As argparse's, but a number (``type=int`` or ``float``) is written in ASCII digits: ``int()`` also
        reads ``٣``, ``1_0`` and `` 7 ``, which ``--crash`` and the scenario files refuse."""
        if action.type in (int, float) and not plain_number(arg_string):
            raise _not_plain(action.option_strings[0] if action.option_strings else action.dest, arg_string,
                             action.type)
        return super()._get_value(action, arg_string)

    def _print_message(self, message, file=None):
        """``--help`` and ``--version`` written as every command writes its answer (:func:`.output.say`):
        standard output that refuses the write (a full disk, ``/dev/full``) is one line and exit status 2,
        where argparse dropped the OSError and exited 0 with nothing written."""
        if message and (file is None or file is sys.stdout):
            with own_stdout():
                say(message, end="")
        elif message:
            super()._print_message(message, file)

    def error(self, message):
        """``simkit: run: argument --seed: invalid int value: 'x' (see simkit run --help)``, from main()."""
        command = self.prog.removeprefix("simkit").strip()
        # a value, not its 5,000 digits
        message = re.sub(r"'([^']{41,})'", lambda m: f"'{_shown(m[1])}'", message)
        raise SimkitError(f"{command + ': ' if command else ''}{message} (see {self.prog} --help)")


#: ``explore --budget``'s default and bound, in seconds: ``service --explore --budget``'s (docs/cli.md),
#: declared once
EXPLORE_BUDGET, MAX_BUDGET = service_cli.EXPLORE_BUDGET, service_cli.MAX_BUDGET


def _shown(text: str) -> str:
    """An argument as a message echoes it: whole, or its
    length when it is long (5,000 digits are no message)."""
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def plain_number(text: str) -> bool:
    """Is ``text`` a number as simkit reads one: ASCII, no ``_`` and no blanks around it?"""
    return text.isascii() and "_" not in text and text == text.strip()


def _not_plain(option: str, text: str, kind) -> SimkitError:
    shown = _shown(printable(text))
    if not text.strip() or text != text.strip():        # quoted, so that its blanks show (--seed ' 7')
        shown = f"'{shown}'"
    return SimkitError(f"{option} {shown}: expected "
                       f"{'a whole number' if kind is int else 'a number'} in ASCII digits")


def number(option: str, kind=int, minimum=None, positive=False, maximum=None):
    """An argparse ``type`` for a finite number of at least ``minimum``
    (or above 0 when ``positive``) and at most ``maximum``, written as :func:`plain_number` says."""
    def parse(text: str):
        if not plain_number(text):
            raise _not_plain(option, text, kind)
        try:
            x = kind(text)
        except ValueError:
            raise SimkitError(f"{option} {_shown(text)}: expected "
                              f"{'a whole number' if kind is int else 'a number'}") \
                from None
        if not math.isfinite(x):
            raise SimkitError(f"{option} {text}: must be a finite number")
        if positive and x <= 0:
            raise SimkitError(f"{option} {text}: must be positive")
        if minimum is not None and x < minimum:
            raise SimkitError(f"{option} {text}: must be at least {minimum}")
        if maximum is not None and x > maximum:
            # an integer bound as itself: --max-memory's 1073741824 was "1.07374e+09", which it is not
            bound = maximum if isinstance(maximum, int) else f"{maximum:g}"
            raise SimkitError(f"{option} {_shown(text)}: must be at most {bound}")
        return x
    return parse


def _common(p, strategy=True):
    p.add_argument("scenario", help="a bundled scenario name or a path to a scenario TOML file")
    if strategy:
        p.add_argument("--strategy", default="safe",
                       help="strategy name, path/to/file.py:Class, module:Class or exec:COMMAND (a program "
                            "in any language) (default: safe)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: the scenario's)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")


def _world(p, store=True):
    """``--store`` (unless the command has its own) and ``--settlement``: the scenario's, overridden."""
    if store:
        p.add_argument("--store", choices=STORES, default=None,
                       help="the durable store (default: the scenario's)")
    p.add_argument("--settlement", choices=SETTLEMENTS, default=None,
                   help="how external calls are settled (default: the scenario's)")


#: ``--max-memory``'s bound, in MiB: a pebibyte
MAX_MEMORY_MIB = 1 << 30


def _memory(p) -> None:
    """``--max-memory``: the memory the work's processes (the consumer's among them) may use together."""
    p.add_argument("--max-memory", type=number("--max-memory", minimum=1, maximum=MAX_MEMORY_MIB),
                   default=None, metavar="MIB",
                   help="memory the work's processes may use together, in MiB; past it they are stopped "
                        "(default: half of this machine's memory)")


def _command(sub, name: str, text: str):
    """A subcommand whose ``--help`` opens with the line ``simkit --help`` lists for it."""
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")


def _version() -> str:
    # one reading of the package metadata, in simkit/__init__.py
    from simkit import __version__
    return __version__


def _run(sub) -> None:
    p = _command(sub, "run", "one run, judged by the checker")
    _common(p)
    p.add_argument("--crash", action="append", default=[], metavar="POINT[@POSITION][#OCCURRENCE]",
                   help=f"inject a crash (repeatable); POINT is one of {', '.join(CRASH_POINTS)}")
    p.add_argument("--timeline", metavar="PNG", help="also write the timeline figure to this file")
    p.add_argument("--swimlane", metavar="PNG", help="also write the swimlane (Lamport) diagram to this file")
    _world(p)
    _memory(p)


def _compare_list_demo(sub) -> None:
    p = _command(sub, "compare", "every strategy on one scenario")
    _common(p, strategy=False)
    _world(p)
    _command(sub, "list", "bundled scenarios, strategies and settlement policies")
    p = _command(sub, "demo", "every strategy on the gauntlet, and a timeline PNG")
    p.add_argument("--out", default="simkit-demo-timeline.png", metavar="PNG",
                   help="where to write the timeline (default: simkit-demo-timeline.png)")


def _explore(sub) -> None:
    p = _command(sub, "explore", "every fault schedule up to the bounds, run and judged")
    _common(p)
    p.add_argument("--max-crashes", type=number("--max-crashes", minimum=0), default=2, metavar="K",
                   help="crashes (and pauses) per schedule (default: 2)")
    p.add_argument("--lost-responses", type=number("--lost-responses", minimum=0), default=0, metavar="L",
                   help="lost replies per schedule: the request took effect, its caller timed out (default: "
                        "0)")
    p.add_argument("--lost-requests", type=number("--lost-requests", minimum=0), default=0, metavar="L",
                   help="lost requests per schedule: the request never arrived, its caller timed out all "
                        "the same (default: 0)")
    p.add_argument("--pauses", action=argparse.BooleanOptionalAction, default=None,
                   help="also pause workers at every pass (default: when the scenario has several workers)")
    p.add_argument("--pause-duration", type=number("--pause-duration", float, minimum=0), default=None,
                   metavar="T", help="how long a pause lasts (default: the scenario's [random_faults] "
                                     "pause_duration)")
    p.add_argument("--point", action="append", choices=CRASH_POINTS, metavar="POINT",
                   help="only fault at this crash point (repeatable; default: all)")
    p.add_argument("--with-scenario-faults", action="store_true", help="keep the scenario's own [[faults]]")
    p.add_argument("--no-dedup", action="store_true", help="run schedules that lead to an explored state too")
    p.add_argument("--jobs", type=number("--jobs", minimum=1), default=1, metavar="J",
                   help="worker processes (default: 1; same result for any J)")
    p.add_argument("--out", metavar="TOML", help="write the first violation as a scenario that simkit run "
                                                 "replays")
    p.add_argument("--budget", type=number("--budget", float, positive=True, maximum=MAX_BUDGET),
                   default=EXPLORE_BUDGET, metavar="SECONDS",
                   help=f"wall time the exploration may take; past it, it is stopped and nothing is reported "
                        f"(default: {EXPLORE_BUDGET:g})")
    _world(p)
    _memory(p)


def _sweep_shrink(sub) -> None:
    p = _command(sub, "sweep", "many seeded runs per strategy and crash rate, summarised")
    p.add_argument("scenario", help="a bundled scenario name or a path to a scenario TOML file")
    p.add_argument("--strategy", action="append", metavar="S", help="a strategy (repeatable; default: all)")
    p.add_argument("--seeds", type=int, required=True, metavar="N",
                   help="seeds per configuration")
    p.add_argument("--first-seed", type=int, default=0, metavar="SEED", help="the first seed (default: 0)")
    p.add_argument("--crash-rate", type=float, action="append", metavar="R",
                   help="override [random_faults] crash (repeatable)")
    p.add_argument("--jobs", type=number("--jobs"), default=None, metavar="J",
                   help="local worker processes (default: one per CPU)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask distributed scheduler instead")
    p.add_argument("--out", metavar="FILE", help="write one row per run: .csv or .parquet")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    _world(p)
    _memory(p)
    p = _command(sub, "shrink", "a failing run reduced to a minimal scenario file")
    _common(p)
    p.add_argument("--out", metavar="TOML", help="write the shrunk scenario here (default: print it)")
    p.add_argument("--budget", type=number("--budget", float, positive=True, maximum=MAX_BUDGET),
                   default=EXPLORE_BUDGET, metavar="SECONDS",
                   help=f"wall time shrinking may take; past it, it is stopped and nothing is written "
                        f"(default: {EXPLORE_BUDGET:g})")
    _world(p)
    _memory(p)


def _live(sub) -> None:
    p = _command(sub, "live", "the procedure in real processes on SQLite, killed with SIGKILL")
    _common(p)
    p.add_argument("--kills", type=int, required=True, metavar="N", help="SIGKILLs to deliver")
    p.add_argument("--max-delay", type=float, default=None, metavar="SECONDS",
                   help="a kill lands uniformly within this long after the worker is ready "
                        "(default: twice the measured time per page)")
    p.add_argument("--at", action="append", default=[], choices=CRASH_POINTS, metavar="POINT",
                   help="kill when the worker reaches this crash point instead (repeatable)")
    p.add_argument("--events", type=int, metavar="N",
                   help="a [generate] scenario's stream length, overridden")
    p.add_argument("--dir", metavar="FOLDER", help="keep the databases here (default: a temporary folder)")
    p.add_argument("--timeout", type=number("--timeout", float, positive=True), default=600.0,
                   metavar="SECONDS", help="give up after this long (default: 600)")
    p.add_argument("--store", choices=STORES, default=None, metavar="sqlite",
                   help="the durable store: live mode needs one that outlives its workers, so only sqlite")
    _world(p, store=False)
    _memory(p)


def _audit_bench(sub) -> None:
    p = _command(sub, "audit", "a consumer judged on every bundled scenario, a seeded sweep and bounded "
                               "exploration; exit 1 when it fails")
    p.add_argument("strategy", metavar="FILE.py:Class",
                   help="your consumer (or a strategy name, module:Class, or exec:COMMAND: a program "
                        "in any language)")
    # at most MAX_SEEDS, as the library's audit() takes them: past it, its one line named its parameters
    p.add_argument("--seeds", type=number("--seeds", minimum=1, maximum=MAX_SEEDS), default=3, metavar="N",
                   help="seeds per generated bundled scenario (default: 3)")
    p.add_argument("--sweep-seeds", type=number("--sweep-seeds", minimum=0, maximum=MAX_SEEDS), default=20,
                   metavar="N",
                   help="seeds per generated scenario under random faults (default: 20)")
    p.add_argument("--jobs", type=number("--jobs", minimum=1), default=None, metavar="J",
                   help="worker processes running cases (default: one per core)")
    p.add_argument("--budget", type=number("--budget", float, positive=True, maximum=MAX_BUDGET),
                   default=60.0, metavar="SECONDS",
                   help="wall time the cases share, cheapest first; what it leaves out is said (default: 60)")
    p.add_argument("--out", metavar="TOML", help="where to write the first failure, shrunk "
                                                 "(default: simkit-audit-CLASS.toml)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    _memory(p)
    p = _command(sub, "bench", "the performance benchmark, against bare SimPy in the same run")
    bench.add_arguments(p)


def _workshop(sub) -> None:
    p = _command(sub, "workshop", "write the workshop notebooks an attendee works in (no solutions) into a "
                                  "folder")
    p.add_argument("folder", metavar="DIR", help="where to write them (created if needed)")
    p.add_argument("--force", action="store_true", help="overwrite the notebooks already in DIR")


def build_parser() -> argparse.ArgumentParser:
    """``simkit`` and its commands, in the order ``simkit --help`` lists them; ``serve`` and ``service`` are
    :mod:`simkit.service.cli`'s."""
    parser = Parser(prog="simkit", description=DESCRIPTION)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--version", action="version", version=f"simkit {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add in (_run, _compare_list_demo, _explore, _sweep_shrink, _live, _audit_bench, _workshop,
                service_cli.add_parsers):
        add(sub)
    return parser
