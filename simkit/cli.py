"""The ``simkit`` command line (CONTRACT §6). Bad input: one line on stderr, exit status 2, nothing written.

:data:`DESCRIPTION` is what ``simkit --help`` says, in plain words for users.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import sys
import tempfile
from contextlib import ExitStack, contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from simkit.tools import bench
from simkit.scenario import read as scenarios
from simkit.tools import sweep as sweeps
from .errors import SimkitError, Terminated, printable
from .model import CRASH_POINTS
from simkit.viz.report import run_summary, table, verdict_row
from simkit.scenario.read import SETTLEMENTS, STORES, parse_crash_arg
from simkit.procedure.strategies import STRATEGIES, resolve
from simkit.world.simulation import simulate
from .service import cli as service_cli

DEMO_SCENARIO = "gauntlet"

DESCRIPTION = """\
simkit: simulate a paginated event-stream consumer with crash-safe
checkpoints, and judge every run.

Bad input (an unknown option value, a malformed scenario file, an output path
that cannot be written) is answered with one line on stderr and exit status 2,
before any work and without writing anything. Ctrl-C stops with exit status 130,
and leaves no half-written file either.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """``simkit: run: argument --seed: invalid int value: 'x' (see simkit run --help)``, from main()."""
        command = self.prog.removeprefix("simkit").strip()
        raise SimkitError(f"{command + ': ' if command else ''}{message} (see {self.prog} --help)")


def _number(option: str, kind=int, minimum=None, positive=False):
    """An argparse ``type`` for a finite number of at least ``minimum`` (or above 0 when ``positive``)."""
    def parse(text: str):
        try:
            x = kind(text)
        except ValueError:
            raise SimkitError(f"{option} {text}: expected {'a whole number' if kind is int else 'a number'}") \
                from None
        if not math.isfinite(x):
            raise SimkitError(f"{option} {text}: must be a finite number")
        if positive and x <= 0:
            raise SimkitError(f"{option} {text}: must be positive")
        if minimum is not None and x < minimum:
            raise SimkitError(f"{option} {text}: must be at least {minimum}")
        return x
    return parse


def _common(p, strategy=True):
    p.add_argument("scenario", help="a bundled scenario name or a path to a scenario TOML file")
    if strategy:
        p.add_argument("--strategy", default="safe",
                       help="strategy name, path/to/file.py:Class or module:Class (default: safe)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: the scenario's)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")


def _store(p):
    p.add_argument("--store", choices=STORES, default=None, help="the durable store (default: the scenario's)")


def _settlement(p):
    p.add_argument("--settlement", choices=SETTLEMENTS, default=None,
                   help="how external calls are settled (default: the scenario's)")


def _command(sub, name: str, text: str):
    """A subcommand whose ``--help`` opens with the line ``simkit --help`` lists for it."""
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")


def _version() -> str:
    try:
        return version("simkit")
    except PackageNotFoundError:          # running from a source tree that is not installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="simkit", description=DESCRIPTION)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--version", action="version", version=f"simkit {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = _command(sub, "run", "one run, judged by the checker")
    _common(p)
    p.add_argument("--crash", action="append", default=[], metavar="POINT[@POSITION][#OCCURRENCE]",
                   help=f"inject a crash (repeatable); POINT is one of {', '.join(CRASH_POINTS)}")
    p.add_argument("--timeline", metavar="PNG", help="also write the timeline figure to this file")
    p.add_argument("--swimlane", metavar="PNG", help="also write the swimlane (Lamport) diagram to this file")
    _store(p)
    _settlement(p)
    p = _command(sub, "compare", "every strategy on one scenario")
    _common(p, strategy=False)
    _store(p)
    _settlement(p)
    _command(sub, "list", "bundled scenarios, strategies and settlement policies")
    p = _command(sub, "demo", "every strategy on the gauntlet, and a timeline PNG")
    p.add_argument("--out", default="simkit-demo-timeline.png", metavar="PNG",
                   help="where to write the timeline (default: simkit-demo-timeline.png)")
    p = _command(sub, "explore", "every fault schedule up to the bounds, run and judged")
    _common(p)
    p.add_argument("--max-crashes", type=_number("--max-crashes", minimum=0), default=2, metavar="K",
                   help="crashes (and pauses) per schedule (default: 2)")
    p.add_argument("--lost-responses", type=_number("--lost-responses", minimum=0), default=0, metavar="L",
                   help="lost replies per schedule: the request took effect, its caller timed out (default: 0)")
    p.add_argument("--lost-requests", type=_number("--lost-requests", minimum=0), default=0, metavar="L",
                   help="lost requests per schedule: the request never arrived, its caller timed out all the same "
                        "(default: 0)")
    p.add_argument("--pauses", action=argparse.BooleanOptionalAction, default=None,
                   help="also pause workers at every pass (default: when the scenario has several workers)")
    p.add_argument("--pause-duration", type=_number("--pause-duration", float, minimum=0), default=None,
                   metavar="T", help="how long a pause lasts (default: the scenario's [random_faults] pause_duration)")
    p.add_argument("--point", action="append", choices=CRASH_POINTS, metavar="POINT",
                   help="only fault at this crash point (repeatable; default: all)")
    p.add_argument("--with-scenario-faults", action="store_true", help="keep the scenario's own [[faults]]")
    p.add_argument("--no-dedup", action="store_true", help="run schedules that lead to an explored state too")
    p.add_argument("--jobs", type=_number("--jobs", minimum=1), default=1, metavar="J",
                   help="worker processes (default: 1; same result for any J)")
    p.add_argument("--out", metavar="TOML", help="write the first violation as a scenario that simkit run replays")
    _store(p)
    _settlement(p)
    p = _command(sub, "sweep", "many seeded runs per strategy and crash rate, summarised")
    p.add_argument("scenario", help="a bundled scenario name or a path to a scenario TOML file")
    p.add_argument("--strategy", action="append", metavar="S", help="a strategy (repeatable; default: all)")
    p.add_argument("--seeds", type=int, required=True, metavar="N",
                   help="seeds per configuration")
    p.add_argument("--first-seed", type=int, default=0, metavar="SEED", help="the first seed (default: 0)")
    p.add_argument("--crash-rate", type=float, action="append", metavar="R",
                   help="override [random_faults] crash (repeatable)")
    p.add_argument("--jobs", type=_number("--jobs"), default=None, metavar="J",
                   help="local worker processes (default: one per CPU)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask distributed scheduler instead")
    p.add_argument("--out", metavar="FILE", help="write one row per run: .csv or .parquet")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    _store(p)
    _settlement(p)
    p = _command(sub, "shrink", "a failing run reduced to a minimal scenario file")
    _common(p)
    p.add_argument("--out", metavar="TOML", help="write the shrunk scenario here (default: print it)")
    _store(p)
    _settlement(p)
    p = _command(sub, "live", "the procedure in real processes on SQLite, killed with SIGKILL")
    _common(p)
    p.add_argument("--kills", type=int, required=True, metavar="N", help="SIGKILLs to deliver")
    p.add_argument("--max-delay", type=float, default=None, metavar="SECONDS",
                   help="a kill lands uniformly within this long after the worker is ready "
                        "(default: twice the measured time per page)")
    p.add_argument("--at", action="append", default=[], choices=CRASH_POINTS, metavar="POINT",
                   help="kill when the worker reaches this crash point instead (repeatable)")
    p.add_argument("--events", type=int, metavar="N", help="a [generate] scenario's stream length, overridden")
    p.add_argument("--dir", metavar="FOLDER", help="keep the databases here (default: a temporary folder)")
    p.add_argument("--timeout", type=_number("--timeout", float, positive=True), default=600.0, metavar="SECONDS",
                   help="give up after this long (default: 600)")
    p.add_argument("--store", choices=STORES, default=None, metavar="sqlite",
                   help="the durable store: live mode needs one that outlives its workers, so only sqlite")
    _settlement(p)
    p = _command(sub, "audit", "a consumer judged on every bundled scenario, a seeded sweep and bounded "
                               "exploration; exit 1 when it fails")
    p.add_argument("strategy", metavar="FILE.py:Class", help="your consumer (or a strategy name, or module:Class)")
    p.add_argument("--seeds", type=_number("--seeds", minimum=1), default=3, metavar="N",
                   help="seeds per generated bundled scenario (default: 3)")
    p.add_argument("--sweep-seeds", type=_number("--sweep-seeds", minimum=0), default=20, metavar="N",
                   help="seeds per generated scenario under random faults (default: 20)")
    p.add_argument("--jobs", type=_number("--jobs", minimum=1), default=1, metavar="J",
                   help="worker processes for each exploration (default: 1)")
    p.add_argument("--out", metavar="TOML", help="where to write the first failure, shrunk "
                                                 "(default: simkit-audit-CLASS.toml)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p = _command(sub, "bench", "the performance benchmark, against bare SimPy in the same run")
    bench.add_arguments(p)
    service_cli.add_parsers(sub)
    return parser


# -- output paths: checked before any work, written whole or not at all ----------------------------------------
def _figure_formats() -> tuple[str, ...]:
    """Matplotlib's file types but PGF, which needs a TeX installation to write."""
    from matplotlib.backend_bases import FigureCanvasBase
    return tuple(f".{x}" for x in sorted(FigureCanvasBase.get_supported_filetypes()) if x != "pgf")


def _check_out(option: str, path: str, suffixes: tuple[str, ...]) -> Path:
    """``path`` as an output file for ``option``, or a one-line error: it must not be a folder, must end in one
    of ``suffixes`` and go into a folder that exists and is writable."""
    out = Path(path)
    try:
        if out.is_dir():
            raise SimkitError(f"{option} {path}: is a folder, not a file")
        if out.suffix.lower() not in suffixes:
            problem = f"unsupported extension {out.suffix!r}" if out.suffix else "no file extension"
            raise SimkitError(f"{option} {path}: {problem}; use {', '.join(suffixes)}")
        folder = out.parent
        if not folder.is_dir():
            raise SimkitError(f"{option} {path}: no such folder {str(folder)!r}")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise SimkitError(f"{option} {path}: cannot write into folder {str(folder)!r}")
        if len(os.fsencode(out.name)) > (most := os.pathconf(folder, "PC_NAME_MAX")):
            raise SimkitError(f"{option} {path}: file name too long ({len(os.fsencode(out.name))} bytes; "
                              f"at most {most} here)")
        if out.exists() and not (out.stat().st_mode & 0o222 and os.access(out, os.W_OK)):
            # a read-only file is one its owner chose to keep: replacing it (a new file, by rename) would
            # succeed in a writable folder, and silently
            raise SimkitError(f"{option} {path}: is read-only; not replaced (remove it or make it writable)")
    except OSError as exc:                      # a name too long for the system, a loop of symbolic links, ...
        raise SimkitError(f"{option} {path}: cannot write it: {exc.strerror or exc}") from None
    return out


class _CannotWrite(OSError):
    """A writer's failure that is not an OSError (a plotting backend's, say), for :func:`_atomic` to report."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def _atomic(option: str, path: Path):
    """A temporary file of its own beside ``path`` to write to (a short name, so any name ``path`` may have
    fits): it replaces ``path`` when the block succeeds and is removed when it fails (or is interrupted), so no
    half-written file is ever left behind."""
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


def _write_text(option: str, path: Path, text: str) -> None:
    with _atomic(option, path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def _load(args):
    sc = scenarios.load(args.scenario)
    if getattr(args, "store", None):
        sc.store = args.store
    if getattr(args, "settlement", None):
        sc.settlement = args.settlement
    if args.seed is not None:
        sweeps.check_seed("--seed", args.seed)
    return sc, (sc.seed if args.seed is None else args.seed)


def _crash_faults(sc, crashes) -> tuple:
    """``--crash`` arguments as faults, held to the rules a ``[[faults]]`` entry of the scenario file obeys."""
    faults = []
    for text in crashes:
        f = parse_crash_arg(text)                 # the point and occurrence; the position needs the scenario
        if f.position is not None and (problem := scenarios.missing_position(sc, f.position)) is not None:
            raise SimkitError(f"--crash {text}: key 'position': {problem}")
        faults.append(f)
    return tuple(faults)


def _figures(args) -> dict[str, tuple[str, Path]]:
    """The figures ``run`` was asked for, their paths checked: kind -> (option, path)."""
    wanted = {kind: (f"--{kind}", path) for kind in ("timeline", "swimlane")
              if (path := getattr(args, kind)) is not None}
    if not wanted:
        return {}
    formats = _figure_formats()
    out = {kind: (option, _check_out(option, path, formats)) for kind, (option, path) in wanted.items()}
    if len(out) == 2 and out["timeline"][1].resolve() == out["swimlane"][1].resolve():
        raise SimkitError(f"--swimlane {args.swimlane}: the same file as --timeline")
    return out


def cmd_run(args) -> int:
    sc, seed = _load(args)
    faults = _crash_faults(sc, args.crash)
    figures = _figures(args)
    strategy = resolve(args.strategy)
    run = simulate(sc, strategy, seed, faults)
    with ExitStack() as stack:                       # both figures, or neither
        for kind, (option, path) in figures.items():
            _save_figure(run, stack.enter_context(_atomic(option, path)), kind)
    print(json.dumps(run.as_dict()) if args.json else run_summary(run))
    return 0


def compare(sc, seed):
    """Every built-in strategy on one scenario, same seed and faults."""
    return [simulate(sc, cls, seed) for cls in STRATEGIES.values()]


def cmd_compare(args) -> int:
    sc, seed = _load(args)
    runs = compare(sc, seed)
    if args.json:
        print(json.dumps({"scenario": sc.name, "seed": seed, "results": [r.as_dict() for r in runs]}))
    else:
        print(f"{sc.name} (seed {seed}, settlement {sc.settlement}): {_shown(sc.description)}\n")
        print(table([verdict_row(r) for r in runs]))
    return 0


def _shown(text: str) -> str:
    """A description as printed: one line, its control characters escaped (a terminal would obey them)."""
    return printable(" ".join(text.split()))


def _brief(text: str, width: int = 80) -> str:
    """The first sentence of a description or docstring as plain text, cut at a word with "…" past ``width``."""
    text = re.split(r"[.:][\"']?\s", " ".join(text.split()).replace("``", "") + " ")[0].strip("\"'. ")
    if len(text) > width:
        text = text[:width - 1].rsplit(" ", 1)[0]
        if text.count("(") > text.count(")"):       # no parenthesis left open
            text = text[:text.rindex("(")]
        text = text.rstrip(" ,;") + "…"
    return text


def cmd_list(args) -> int:
    for name in scenarios.bundled():
        print(f"scenario    {name:34} {_brief(_shown(scenarios.load(name).description))}")
    for name, cls in STRATEGIES.items():
        print(f"strategy    {name:34} {_brief(cls.__doc__ or '')}")
    for name in SETTLEMENTS:
        print(f"settlement  {name}")
    return 0


def _save_figure(run, path: Path, kind: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
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
            raise _CannotWrite(" ".join(f"{type(exc).__name__}: {exc}".split())) from exc
    finally:
        plt.close(fig)


def cmd_demo(args) -> int:
    out = _check_out("--out", args.out, _figure_formats())
    sc = scenarios.load(DEMO_SCENARIO)
    runs = compare(sc, sc.seed)
    worst = next((r for r in runs if r.strategy == "persist_token_on_fetch"), runs[0])
    with _atomic("--out", out) as tmp:
        _save_figure(worst, tmp, "timeline")
    print(f"simkit demo: every strategy on '{sc.name}' (seed {sc.seed})\n{_shown(sc.description)}\n")
    print(table([verdict_row(r) for r in runs]))
    print(f"\nwrote {args.out}: the timeline of {worst.strategy}, resume_cursor against applied_position")
    return 0


def _replay_command(target: str, args, seed: int | None = None, crashes=()) -> str:
    """:func:`~simkit.tools.shrink.replay_command` for this invocation: the seed, settlement and store overrides only
    when replaying the bundled scenario (a written file carries them)."""
    from simkit.tools.shrink import replay_command
    overrides = {} if seed is None else {o: getattr(args, o, None) for o in ("settlement", "store")}
    return replay_command(target, args.strategy, seed, crashes=crashes, **overrides)


def cmd_explore(args) -> int:
    from simkit.tools.explore import crash_args, explore, fault_free, summary_text
    from simkit.tools.shrink import scenario_data, toml_text
    out = _check_out("--out", args.out, (".toml",)) if args.out else None
    sc, seed = _load(args)
    x = explore(sc, args.strategy, max_crashes=args.max_crashes, lost_responses=args.lost_responses,
                lost_requests=args.lost_requests, pauses=args.pauses, pause_duration=args.pause_duration, seed=seed,
                points=args.point,
                dedup=not args.no_dedup, keep_faults=args.with_scenario_faults, jobs=args.jobs,
                progress=not args.json and sys.stderr.isatty())
    replay = _replay_command(args.out, args) if out else None
    if out and x.first_violation is not None:
        # the scenario as explored (overrides applied, its own faults only with --with-scenario-faults), the
        # schedule's faults after them, as the explored run had them
        base = fault_free(sc, args.with_scenario_faults)
        data = scenario_data(base, tuple(base.faults) + tuple(x.first_violation[0]))
        data["seed"] = seed
        _write_text("--out", out, toml_text(data, f"The first violation simkit explore found for {x.strategy}; "
                                                  f"replay: {replay}"))
    if args.json:
        print(json.dumps(x.as_dict()))
        return 0
    print(summary_text(x))
    if x.first_violation is not None:
        crash = crash_args(sc, x.first_violation[0], args.with_scenario_faults)
        if out:
            print(f"  wrote {args.out}: replay with {replay}")
        elif crash is not None:
            print(f"  replay: {_replay_command(args.scenario, args, seed, crash)}")
        else:
            print("  replay: add --out FILE to write it as a scenario for simkit run")
    elif out:
        print(f"  no violation: {args.out} not written")
    return 0


def cmd_sweep(args) -> int:
    from simkit.procedure.strategies import STRATEGIES
    out = _check_out("--out", args.out, sweeps.FORMATS) if args.out else None
    if out:
        sweeps.check_out(args.out)                # the Parquet engine, before any run
    sc, _seed = _load(argparse.Namespace(**vars(args), seed=None))
    for s in args.strategy or ():
        resolve(s)
    result = sweeps.sweep(sc, tuple(args.strategy or STRATEGIES), args.seeds, tuple(args.crash_rate or (None,)),
                   first_seed=args.first_seed, jobs=args.jobs, dask_address=args.dask,
                   progress=not args.json and sys.stderr.isatty())
    if out:
        with _atomic("--out", out) as tmp:
            result.write(tmp)
    print(json.dumps(result.as_dict(args.out)) if args.json else sweeps.summary_table(result)
          + (f"\n\nwrote {args.out}: one row per run" if args.out else ""))
    return 0


def cmd_shrink(args) -> int:
    from simkit.tools.shrink import shrink
    out = _check_out("--out", args.out, (".toml",)) if args.out else None
    sc, seed = _load(args)
    result = shrink(sc, args.strategy, seed)
    if out:
        _write_text("--out", out, result.toml())
    if args.json:
        print(json.dumps({**result.as_dict(), "out": args.out, "toml": result.toml()}))
    elif args.out:
        print(result.summary(args.out))
    else:
        print(result.toml(), end="")
    return 0


def _check_folder(option: str, path: str) -> None:
    """``path`` as a folder to create or reuse: it, or the nearest existing folder above it, is a folder we
    may write into."""
    p = Path(path)
    existing = next(a for a in (p, *p.parents) if a.exists())
    name = "it" if existing == p else repr(str(existing))
    if not existing.is_dir():
        raise SimkitError(f"{option} {path}: {name} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise SimkitError(f"{option} {path}: cannot write into {name}")


def cmd_live(args) -> int:
    from simkit.live.supervisor import live, live_summary
    if args.dir is not None:
        _check_folder("--dir", args.dir)
    sc, seed = _load(args)
    if args.store == "memory":
        raise SimkitError("--store memory: live mode needs a store that outlives its workers; use sqlite")
    if args.events is not None:
        if sc.generate is None or args.events < 1:
            raise SimkitError(f"--events {args.events}: needs a [generate] scenario and a positive count")
        if args.events > scenarios.MAX_EVENTS:
            raise SimkitError(f"--events {args.events}: at most {scenarios.MAX_EVENTS}, as [generate] events")
        sc.generate["events"] = args.events
    run = live(sc, resolve(args.strategy), args.kills, seed, args.max_delay, tuple(args.at), args.dir, args.timeout)
    print(json.dumps(run.as_dict()) if args.json else live_summary(run))
    return 0


def cmd_audit(args) -> int:
    from simkit.tools.audit import audit, audit_text, failure_toml
    from simkit.procedure.strategies import strategy_name
    name = strategy_name(resolve(args.strategy))
    path = args.out or f"simkit-audit-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.toml"
    out = _check_out("--out", path, (".toml",))
    result = audit(args.strategy, seeds=args.seeds, sweep_seeds=args.sweep_seeds, jobs=args.jobs,
                   progress=not args.json and sys.stderr.isatty())
    if not result.ok:
        _write_text("--out", out, failure_toml(result, path))
    if args.json:
        print(json.dumps({**result.as_dict(), "out": None if result.ok else path}))
    else:
        print(audit_text(result, None if result.ok else path))
    return 0 if result.ok else 1


def cmd_bench(args) -> int:
    return bench.run(args.quick, args.repeat, args.json)


COMMANDS = {"run": cmd_run, "compare": cmd_compare, "list": cmd_list, "demo": cmd_demo,
            "explore": cmd_explore, "sweep": cmd_sweep, "shrink": cmd_shrink, "live": cmd_live, "audit": cmd_audit,
            "bench": cmd_bench}
COMMANDS.update(service_cli.COMMANDS)


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except SimkitError as exc:
        print(f"simkit: {printable(str(exc))}", file=sys.stderr)     # one line, whatever it echoes
        return 2
    except BrokenPipeError:
        return 0
    except Terminated as exc:                   # SIGTERM, SIGHUP (simkit live): unwound as Ctrl-C is
        print(f"simkit: terminated by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("simkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
