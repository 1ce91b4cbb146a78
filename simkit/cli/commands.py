"""One function per ``simkit`` command (docs/cli.md): each takes the parsed arguments, checks every output
path and argument before any work, runs, prints, and returns the exit status. :data:`COMMANDS` maps a
command's name to it.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from importlib.util import find_spec
from pathlib import Path

from simkit.errors import SimkitError, echoed, printable
from simkit.judge.report import run_summary, table, verdict_row
from simkit.procedure.strategies import STRATEGIES, docstring, resolve, strategy_name
from simkit.runner import Run, simulate
from simkit.scenario import read as scenarios
from simkit.scenario.read import SETTLEMENTS, parse_crash_arg
from simkit.service import cli as service_cli
from simkit.tools import bench
from simkit.tools import sweep as sweeps
from simkit.tools.scenario_toml import file_stem, shell_word
from simkit.tools.schedules import strategy_class
from simkit.world.guard import WALL_SECONDS

from . import output
from .contained import contained, within, workers_die
from .output import atomic, check_folder, check_out, figure_formats, say, temporary, write_text
from .reaper import Stall

__all__ = ["COMMANDS", "DEMO_SCENARIO", "compare", "cmd_run", "cmd_compare", "cmd_list", "cmd_demo",
           "cmd_explore", "cmd_sweep", "cmd_shrink", "cmd_live", "cmd_audit", "cmd_bench"]

DEMO_SCENARIO = "gauntlet"


def _load(args):
    """The scenario ``args`` name, ``--store`` and ``--settlement`` applied, and the seed to run."""
    sc = scenarios.load(args.scenario)
    if getattr(args, "store", None):
        sc.store = args.store
    if getattr(args, "settlement", None):
        sc.settlement = args.settlement
    if args.seed is not None:
        sweeps.check_seed("--seed", args.seed)
    return sc, (sc.seed if args.seed is None else args.seed)


def _crash_faults(sc, crashes) -> tuple:
    """``--crash`` arguments as faults, held to the rules
    a ``[[faults]]`` entry of the scenario file obeys."""
    faults = []
    for text in crashes:
        f = parse_crash_arg(text)                 # the point and occurrence; the position needs the scenario
        if f.position is not None and (problem := scenarios.missing_position(sc, f.position)) is not None:
            raise SimkitError(f"--crash {text}: key 'position': {problem}")
        faults.append(f)
    return tuple(faults)


def _figures(args) -> dict:
    """The figures ``run`` was asked for, their paths checked: kind -> (option, path)."""
    wanted = {kind: (f"--{kind}", path) for kind in ("timeline", "swimlane")
              if (path := getattr(args, kind)) is not None}
    if not wanted:
        return {}
    formats = figure_formats()
    out = {kind: (option, check_out(option, path, formats, (args.scenario,)))
           for kind, (option, path) in wanted.items()}
    if len(out) == 2 and out["timeline"][1].resolve() == out["swimlane"][1].resolve():
        raise SimkitError(f"--swimlane {args.swimlane}: the same file as --timeline")
    return out


#: How long ``run`` may take in its process of its own: past one run's own wall-clock guard, with room for its
#: figures (the guard speaks first)
RUN_BUDGET = WALL_SECONDS + 300.0


def _memory(args) -> int | None:
    """``--max-memory``, in bytes (None: :func:`~.reaper.default_memory`)."""
    mib = getattr(args, "max_memory", None)
    return None if mib is None else mib << 20


def _apart(seconds: float, work, who: str, args, stall: Stall | None = None, leftovers=()):
    """``work()`` (a consumer's code runs in it) in a process of its own
    (:func:`~.contained.within`): a consumer that ends it, overflows the stack or
    prints is one line, or stderr's, not a silent exit or a broken ``--json``."""
    return within(seconds, work, lambda: f"{who}: did not end within {seconds:g} s of wall-clock time; "
                                         "stopped, nothing reported", who, memory=_memory(args), stall=stall,
                  leftovers=tuple(str(p) for p in leftovers))


def cmd_run(args) -> int:
    sc, seed = _load(args)
    faults = _crash_faults(sc, args.crash)
    figures = _figures(args)

    with ExitStack() as stack:                       # both figures, or neither; no temporary file left
        # drawn by the run's process, renamed into place by this one (which outlives it, killed or not)
        tmps = {kind: stack.enter_context(atomic(option, path)) for kind, (option, path) in figures.items()}

        def work() -> str:
            run = simulate(sc, resolve(args.strategy), seed, faults)
            output.check_figures(run, figures)       # a bounded drawing, or no figure at all
            for kind, tmp in tmps.items():
                output.save_figure(run, tmp, kind)
            return json.dumps(run.as_dict()) if args.json else run_summary(run)
        text = _apart(RUN_BUDGET, work, f"run {sc.name}", args, leftovers=tmps.values())
    say(text)
    return 0


def compare(sc, seed) -> Iterator[Run]:
    """Every built-in strategy on one scenario, same seed and faults, run as each is asked for: one kept at a
    time where each is its row once judged (eight held at once were 2.6 GB at 10**6 events)."""
    return (simulate(sc, cls, seed) for cls in STRATEGIES.values())


def cmd_compare(args) -> int:
    sc, seed = _load(args)

    def work() -> str:                  # apart, as run's: a killed command leaves no --store sqlite folder
        runs = compare(sc, seed)
        if args.json:
            return json.dumps({"scenario": sc.name, "seed": seed, "results": [r.as_dict() for r in runs]})
        return (f"{sc.name} (seed {seed}, settlement {sc.settlement}): {_shown(sc.description)}\n\n"
                + table([verdict_row(r) for r in runs]))
    say(_apart(RUN_BUDGET * len(STRATEGIES), work, f"compare {sc.name}", args))
    return 0


def _shown(text: str) -> str:
    """A description as printed: one line, escaped and cut past 2,000 characters (:func:`echoed`)."""
    return echoed(" ".join(text.split()), 2000)


def _brief(text: str, width: int = 80) -> str:
    """The first sentence of a description or docstring as
    plain text, cut at a word with "…" past ``width``."""
    text = re.split(r"[.:][\"']?\s", " ".join(text.split()).replace("``", "") + " ")[0].strip("\"'. ")
    if len(text) > width:
        text = text[:width - 1].rsplit(" ", 1)[0]
        if text.count("(") > text.count(")"):       # no parenthesis left open
            text = text[:text.rindex("(")]
        text = text.rstrip(" ,;") + "…"
    return text


def cmd_list(args) -> int:
    for name in scenarios.bundled():
        say(f"scenario    {name:34} {_brief(_shown(scenarios.load(name).description))}")
    for name, cls in STRATEGIES.items():
        say(f"strategy    {name:34} {_brief(docstring(cls))}")
    for name in SETTLEMENTS:
        say(f"settlement  {name}")
    return 0


def cmd_demo(args) -> int:
    out = check_out("--out", args.out, figure_formats())
    sc = scenarios.load(DEMO_SCENARIO)
    runs = list(compare(sc, sc.seed))
    worst = next((r for r in runs if r.strategy == "persist_token_on_fetch"), runs[0])
    with atomic("--out", out) as tmp:
        output.save_figure(worst, tmp, "timeline")
    say(f"simkit demo: every strategy on '{sc.name}' (seed {sc.seed})\n{_shown(sc.description)}\n")
    say(table([verdict_row(r) for r in runs]) + f"\n\nwrote {printable(args.out)}: the timeline of "
        f"{worst.strategy}, resume_cursor against applied_position")
    return 0


def _replay_command(target: str, args, seed: int | None = None, crashes=()) -> str:
    """:func:`~simkit.tools.shrink.replay_command` for this invocation, as it is printed (control characters
    as their escapes): the seed, settlement and store overrides only when replaying the bundled scenario (a
    written file carries them)."""
    from simkit.tools.shrink import replay_command
    overrides = {} if seed is None else {o: getattr(args, o, None) for o in ("settlement", "store")}
    return printable(replay_command(target, args.strategy, seed, crashes=crashes, **overrides))


def _write_violation(args, out, sc, seed, x, replay: str) -> None:
    """The first violation ``explore`` found, as a scenario file: the scenario as
    explored (overrides applied, its own faults only with --with-scenario-faults),
    the schedule's faults after them, as the run had them."""
    from simkit.tools.explore import fault_free
    from simkit.tools.shrink import scenario_data, toml_text
    base = fault_free(sc, args.with_scenario_faults)
    data = scenario_data(base, tuple(base.faults) + tuple(x.first_violation[0]))
    data["seed"] = seed
    write_text("--out", out, toml_text(data, f"The first violation simkit explore found for {x.strategy}; "
                                             f"replay: {replay}"))


def cmd_explore(args) -> int:
    from simkit.tools.explore import crash_args, explore, summary_text
    out = check_out("--out", args.out, (".toml",), (args.scenario,)) if args.out is not None else None
    sc, seed = _load(args)

    def work():
        # here, in the work's process: a module that ends it at import is one line; and once (cached), as
        # explore() takes it: a module that changes the folder at import was then "no such file" (round 12)
        strategy_class(args.strategy)
        return explore(sc, args.strategy, max_crashes=args.max_crashes, lost_responses=args.lost_responses,
                       lost_requests=args.lost_requests, pauses=args.pauses,
                       pause_duration=args.pause_duration,
                       seed=seed, points=args.point, dedup=not args.no_dedup,
                       keep_faults=args.with_scenario_faults,
                       jobs=args.jobs, progress=not args.json and sys.stderr.isatty())
    with workers_die(f"explore {sc.name}"):
        x = within(args.budget, work, lambda: _over_budget(sc, args), f"explore {sc.name}",
                   memory=_memory(args))
    replay = _replay_command(args.out, args) if out else ""
    if out and x.first_violation is not None:
        _write_violation(args, out, sc, seed, x, replay)
    if args.json:
        say(json.dumps(x.as_dict()))
        return 0
    say(summary_text(x))
    if x.first_violation is not None:
        crash = crash_args(sc, x.first_violation[0], args.with_scenario_faults)
        if out:
            say(f"  wrote {printable(args.out)}: replay with {replay}")
        elif crash is not None:
            say(f"  replay: {_replay_command(args.scenario, args, seed, crash)}")
        else:
            say("  replay: add --out FILE to write it as a scenario for simkit run")
    elif out:
        say(f"  no violation: {printable(args.out)} not written")
    return 0


def _over_budget(sc, args) -> str:
    """What ``explore`` says when its budget runs out: nothing was judged, and how to ask for less."""
    bounds = [f"{n} {one if n == 1 else many}" for n, one, many in (
        (args.max_crashes, "crash", "crashes"), (args.lost_responses, "lost reply", "lost replies"),
        (args.lost_requests, "lost request", "lost requests")) if n]
    return (f"explore {sc.name}: the budget of {args.budget:g} s (--budget) ran out before every schedule "
            f"of up to {' and '.join(bounds) or 'no faults'} was run; none is reported. Raise --budget, or "
             "ask for less (--max-crashes, --lost-responses, --lost-requests, --point)")


#: How long ``sweep`` waits for a run to end before it stops: past one run's own wall-clock guard (a SIGALRM
#: timer, which a consumer may take), with room to spare
SWEEP_STALL = RUN_BUDGET


def cmd_sweep(args) -> int:
    out = check_out("--out", args.out, sweeps.FORMATS, (args.scenario,)) if args.out is not None else None
    if out:
        sweeps.check_out(args.out)                # the Parquet engine, before any run
    if args.dask:
        _needs("distributed", "--dask", "'simkit[dask]'")
    sc, _seed = _load(argparse.Namespace(**vars(args), seed=None))
    who = f"sweep {sc.name}"
    with ExitStack() as stack:
        tmp = stack.enter_context(atomic("--out", out)) if out else None
        # bounded by --seeds (sweeps.MAX_RUNS runs at most), and each run by the stall: no clock for the whole
        stall = stack.enter_context(temporary(who, lambda: Stall(
            SWEEP_STALL, f"{who}: no run ended for {SWEEP_STALL:g} s of wall-clock time (a consumer that "
                         "takes SIGALRM, and sleeps or spins?); stopped, nothing reported")))

        def work() -> str:
            for s in args.strategy or ():       # here: a module that ends the process at import is one line
                strategy_class(s)               # (once, as the sweep takes it: see cmd_explore)
            with workers_die(who):
                result = sweeps.sweep(sc, tuple(args.strategy or STRATEGIES), args.seeds,
                                      tuple(args.crash_rate or (None,)),
                                      first_seed=args.first_seed, jobs=args.jobs, dask_address=args.dask,
                                      progress=not args.json and sys.stderr.isatty(), heartbeat=stall.path)
            if tmp is not None:                 # written here, renamed into place by the command
                result.write(tmp)
            return (json.dumps(result.as_dict(args.out)) if args.json else sweeps.summary_table(result)
                    + (f"\n\nwrote {printable(args.out)}: one row per run" if args.out else ""))
        text = _apart(math.inf, work, who, args, stall, leftovers=(tmp,) if tmp is not None else ())
    say(text)
    return 0


def cmd_shrink(args) -> int:
    from simkit.tools.shrink import shrink
    out = check_out("--out", args.out, (".toml",), (args.scenario,)) if args.out is not None else None
    sc, seed = _load(args)

    def work() -> tuple[str, str | None]:
        """What to print (its end of line too), and the shrunk scenario's text (None: nothing to write)."""
        if args.json:  # a run that does not fail: the one JSON object says so, and nothing to shrink
            run = simulate(sc, strategy_class(args.strategy), seed)     # once, as shrink() takes it
            if run.verdict.ok:
                return json.dumps({"scenario": sc.name, "strategy": run.strategy, "seed": seed,
                                   "failure": None, "original": None, "shrunk": None, "runs": 1,
                                   "verdict": run.as_dict(), "out": None, "toml": None,
                                   "nothing_to_shrink": True}) + "\n", None
        result = shrink(sc, args.strategy, seed)
        toml = result.toml()
        if args.json:
            return json.dumps({**result.as_dict(), "out": args.out, "toml": toml}) + "\n", toml
        return (result.summary(args.out) + "\n" if args.out else toml), toml

    text, toml = within(args.budget, work, lambda: (
        f"shrink {sc.name}: the budget of {args.budget:g} s (--budget) ran out before the failing run was "
        "shrunk; nothing written. Raise --budget"), f"shrink {sc.name}", memory=_memory(args))
    if out and toml is not None:
        write_text("--out", out, toml)
    say(text, end="")
    return 0


def cmd_live(args) -> int:
    from simkit.live.run import live, live_summary, stretched
    if args.dir is not None:
        check_folder("--dir", args.dir)
    sc, seed = _load(args)
    if args.store == "memory":
        raise SimkitError("--store memory: live mode needs a store that outlives its workers; use sqlite")
    if args.events is not None:
        sc = stretched(sc, args.events)

    def work() -> str:
        """The run, in a process of its own (its workers are that process's children): a module that ends
        its process at import, and whatever the workers start, in a session of their own or not, end with
        it; what the workers print goes to stderr."""
        run = live(sc, resolve(args.strategy), args.kills, seed, args.max_delay, tuple(args.at), args.dir,
                   args.timeout, scratch=scratch)
        return json.dumps(run.as_dict()) if args.json else live_summary(run)
    # the temporary folder is this process's: removed however the run's process ends (SIGKILL, its budget)
    with temporary(f"live {sc.name}", lambda: tempfile.TemporaryDirectory(prefix="simkit-live-")) as scratch:
        text = _apart(args.timeout + RUN_BUDGET, work, f"live {sc.name}", args, leftovers=(scratch,))
    say(text)
    return 0


def cmd_audit(args) -> int:
    from simkit.tools.audit import audit, audit_text, failure_toml
    # audit's own argument, not a --strategy flag; imported in a process of its own, as the work is
    name = _apart(RUN_BUDGET, lambda: strategy_name(resolve(args.strategy, param=None)), "audit", args)
    path = f"simkit-audit-{file_stem(name)}.toml" if args.out is None else args.out
    out = check_out("--out", path, (".toml",), tuple(scenarios.bundled()))   # the scenarios it reads

    def work() -> tuple[bool, str, str | None]:
        """Passed?, what to print, and the first failure's scenario file (None when it passed)."""
        result = audit(args.strategy, seeds=args.seeds, sweep_seeds=args.sweep_seeds, jobs=args.jobs,
                       budget=args.budget, progress=not args.json and sys.stderr.isatty())
        where = None if result.ok else path
        text = (json.dumps({**result.as_dict(), "out": where}) if args.json else audit_text(result, where))
        return result.ok, text, None if result.ok else failure_toml(result, path)

    ok, text, toml = _apart(args.budget + RUN_BUDGET, work, f"audit {name}", args)
    if toml is not None:
        write_text("--out", out, toml)
    say(text)
    return 0 if ok else 1


def _needs(module: str, flag: str, install: str) -> None:
    """An optional dependency ``flag`` needs, asked before any work: one line saying what to install."""
    if find_spec(module) is None:
        raise SimkitError(f"{flag} needs {module}: pip install {install}")


def cmd_bench(args) -> int:
    if args.notebooks:
        _needs("nbclient", "--notebooks", "nbclient (or 'simkit[workshop]', whose jupyterlab brings it)")
        folder = Path(bench.__file__).resolve().parents[2] / "notebooks"     # where bench looks for them
        if not folder.is_dir():
            raise SimkitError(f"--notebooks times the notebooks of a simkit checkout; there is none at "
                              f"{folder}")
    return bench.run(args.quick, args.repeat, args.json, args.notebooks)


def cmd_workshop(args) -> int:
    if not args.folder:     # Path("") is the current folder: ``workshop "$UNSET"`` wrote 11 files there
        raise SimkitError("workshop DIR '': names no folder; give one (. for the current folder)")
    from simkit.workshop.edition import write_edition  # imports the widgets: only when asked for
    try:
        written = write_edition(args.folder, force=args.force)
    except OSError as exc:  # a folder that cannot be made or written (/proc/x, a full disk)
        raise SimkitError(f"{args.folder}: cannot write the notebooks there: {exc.strerror or exc}") from None
    # the folder as typed, escaped: a newline in it made the one line two (errors were escaped already); the
    # command as a shell takes it back (a space, a byte no UTF-8: ``jupyter lab my workshop/...`` opened two)
    say(f"wrote {len(written)} files to {printable(args.folder)}; open it with jupyter lab "
        f"{shell_word(str(written[0]))}")
    return 0


COMMANDS = {"run": cmd_run, "compare": cmd_compare, "list": cmd_list, "demo": cmd_demo,
            "explore": cmd_explore, "sweep": cmd_sweep, "shrink": cmd_shrink, "live": cmd_live,
            "audit": cmd_audit, "bench": cmd_bench, "workshop": cmd_workshop}
COMMANDS.update(service_cli.COMMANDS)
COMMANDS = {name: contained(command) for name, command in COMMANDS.items()}
