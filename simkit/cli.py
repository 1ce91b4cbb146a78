"""The ``simkit`` command line (CONTRACT §6). Bad input: one line on stderr, exit status 2, nothing written."""
from __future__ import annotations

import argparse
import json
import sys

from . import bench
from . import scenario as scenarios
from .errors import SimkitError
from .model import CRASH_POINTS
from .report import run_summary, table, verdict_row
from .scenario import SETTLEMENTS, STORES, parse_crash_arg
from .strategies import STRATEGIES, resolve
from .world import simulate
from .service import cli as service_cli

DEMO_SCENARIO = "gauntlet"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise SimkitError(f"{self.prog}: {message}")


def _common(p, strategy=True):
    p.add_argument("scenario", help="a bundled scenario name or a path to a scenario TOML file")
    if strategy:
        p.add_argument("--strategy", default="safe", help="strategy name, path/to/file.py:Class or module:Class")
    p.add_argument("--seed", type=int, default=None, help="seed (default: the scenario's)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")


def _store(p):
    p.add_argument("--store", choices=STORES, default=None, help="the durable store (default: the scenario's)")


def _settlement(p):
    p.add_argument("--settlement", choices=SETTLEMENTS, default=None,
                   help="how external calls are settled, CONTRACT §3b (default: the scenario's)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="simkit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("run", help="one run, judged by the checker")
    _common(p)
    p.add_argument("--crash", action="append", default=[], metavar="POINT[@POSITION][#OCCURRENCE]",
                   help=f"inject a crash; POINT is one of {', '.join(CRASH_POINTS)}")
    p.add_argument("--timeline", metavar="PNG", help="also write the timeline figure to this file")
    p.add_argument("--swimlane", metavar="PNG", help="also write the swimlane (Lamport) diagram to this file")
    _store(p)
    _settlement(p)
    p = sub.add_parser("compare", help="every strategy on one scenario")
    _common(p, strategy=False)
    _store(p)
    _settlement(p)
    sub.add_parser("list", help="bundled scenarios, strategies and settlement policies")
    p = sub.add_parser("demo", help="every strategy on the gauntlet, and a timeline PNG")
    p.add_argument("--out", default="simkit-demo-timeline.png", help="where to write the timeline PNG")
    p = sub.add_parser("explore", help="every fault schedule up to the bounds, run and judged")
    _common(p)
    p.add_argument("--max-crashes", type=int, default=2, metavar="K", help="crashes (and pauses) per schedule")
    p.add_argument("--lost-responses", type=int, default=0, metavar="L", help="lost replies per schedule")
    p.add_argument("--pauses", action=argparse.BooleanOptionalAction, default=None,
                   help="also pause workers at every pass (default: when the scenario has several workers)")
    p.add_argument("--pause-duration", type=float, default=None, metavar="T",
                   help="how long a pause lasts (default: the scenario's [random_faults] pause_duration)")
    p.add_argument("--point", action="append", choices=CRASH_POINTS, metavar="POINT",
                   help="only fault at this crash point (repeatable; default: all)")
    p.add_argument("--with-scenario-faults", action="store_true", help="keep the scenario's own [[faults]]")
    p.add_argument("--no-dedup", action="store_true", help="run schedules that lead to an explored state too")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="worker processes (same result for any J)")
    p.add_argument("--out", metavar="TOML", help="write the first violation as a scenario that simkit run replays")
    _store(p)
    _settlement(p)
    p = sub.add_parser("sweep", help="many seeded runs per strategy and crash rate, summarised")
    p.add_argument("scenario", help="a bundled scenario name or a path to a scenario TOML file")
    p.add_argument("--strategy", action="append", metavar="S", help="a strategy (repeatable; default: all)")
    p.add_argument("--seeds", type=int, required=True, metavar="N", help="seeds per configuration")
    p.add_argument("--first-seed", type=int, default=0, metavar="S", help="the first seed (default 0)")
    p.add_argument("--crash-rate", type=float, action="append", metavar="R",
                   help="override [random_faults] crash (repeatable)")
    p.add_argument("--jobs", type=int, default=None, metavar="J", help="local worker processes (default: CPUs)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask distributed scheduler instead")
    p.add_argument("--out", metavar="FILE", help="write one row per run: .csv or .parquet")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    _store(p)
    _settlement(p)
    p = sub.add_parser("shrink", help="a failing run reduced to a minimal scenario file")
    _common(p)
    p.add_argument("--out", metavar="TOML", help="write the shrunk scenario here (default: print it)")
    _store(p)
    _settlement(p)
    p = sub.add_parser("live", help="the procedure in real processes on SQLite, killed with SIGKILL")
    _common(p)
    p.add_argument("--kills", type=int, required=True, metavar="N", help="SIGKILLs to deliver")
    p.add_argument("--max-delay", type=float, default=None, metavar="SECONDS",
                   help="a kill lands uniformly within this long after the worker is ready "
                        "(default: twice the measured time per page)")
    p.add_argument("--at", action="append", default=[], choices=CRASH_POINTS, metavar="POINT",
                   help="kill when the worker reaches this crash point instead (repeatable)")
    p.add_argument("--events", type=int, metavar="N", help="a [generate] scenario's stream length, overridden")
    p.add_argument("--dir", metavar="FOLDER", help="keep the databases here (default: a temporary folder)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS", help="give up after this long")
    _store(p)
    _settlement(p)
    p = sub.add_parser("bench", help="the performance benchmark, against bare SimPy in the same run")
    bench.add_arguments(p)
    service_cli.add_parsers(sub)
    return parser


def _load(args):
    sc = scenarios.load(args.scenario)
    if getattr(args, "store", None):
        sc.store = args.store
    if getattr(args, "settlement", None):
        sc.settlement = args.settlement
    return sc, (sc.seed if args.seed is None else args.seed)


def cmd_run(args) -> int:
    sc, seed = _load(args)
    faults = tuple(parse_crash_arg(c) for c in args.crash)
    run = simulate(sc, resolve(args.strategy), seed, faults)
    if args.timeline:
        _save_figure(run, args.timeline, "timeline")
    if args.swimlane:
        _save_figure(run, args.swimlane, "swimlane")
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
        print(f"{sc.name} (seed {seed}, settlement {sc.settlement}): {sc.description}\n")
        print(table([verdict_row(r) for r in runs]))
    return 0


def cmd_list(args) -> int:
    for name in scenarios.bundled():
        sc = scenarios.load(name)
        print(f"scenario    {name:34} {sc.description.split(':')[0][:90]}")
    for name, cls in STRATEGIES.items():
        print(f"strategy    {name:34} {(cls.__doc__ or '').strip().splitlines()[0][:90]}")
    for name in SETTLEMENTS:
        print(f"settlement  {name}")
    return 0


def _save_figure(run, path, kind):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plot import timeline
    from .swimlane import swimlane
    height = 5.5 if kind == "timeline" else 1.6 + 0.75 * (run.world.scenario.workers + 3)
    fig, ax = plt.subplots(figsize=(12, height), layout="constrained")
    (timeline if kind == "timeline" else swimlane)(ax, run)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cmd_demo(args) -> int:
    sc = scenarios.load(DEMO_SCENARIO)
    runs = compare(sc, sc.seed)
    print(f"simkit demo: every strategy on '{sc.name}' (seed {sc.seed})\n{sc.description}\n")
    print(table([verdict_row(r) for r in runs]))
    worst = next((r for r in runs if r.strategy == "persist_token_on_fetch"), runs[0])
    _save_figure(worst, args.out, "timeline")
    print(f"\nwrote {args.out}: the timeline of {worst.strategy}, resume_cursor against applied_position")
    return 0


def cmd_explore(args) -> int:
    from .explore import crash_args, explore, fault_free, summary_text
    from .shrink import scenario_data, toml_text
    sc, seed = _load(args)
    x = explore(sc, args.strategy, max_crashes=args.max_crashes, lost_responses=args.lost_responses,
                pauses=args.pauses, pause_duration=args.pause_duration, seed=seed, points=args.point,
                dedup=not args.no_dedup, keep_faults=args.with_scenario_faults, jobs=args.jobs,
                progress=not args.json and sys.stderr.isatty())
    if args.out and x.first_violation is not None:
        data = scenario_data(fault_free(sc, args.with_scenario_faults), x.first_violation[0])
        data["seed"] = seed
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(toml_text(data, f"The first violation simkit explore found for {x.strategy}; replay: "
                                     f"simkit run {args.out} --strategy {args.strategy}"))
    if args.json:
        print(json.dumps(x.as_dict()))
        return 0
    print(summary_text(x))
    if x.first_violation is not None:
        crash = crash_args(sc, x.first_violation[0], args.with_scenario_faults)
        if args.out:
            print(f"  wrote {args.out}: replay with simkit run {args.out} --strategy {args.strategy}")
        elif crash is not None:
            print(f"  replay: simkit run {args.scenario} --strategy {args.strategy} --seed {seed}"
                  + "".join(f" --crash {c}" for c in crash))
        else:
            print("  replay: add --out FILE to write it as a scenario for simkit run")
    elif args.out:
        print(f"  no violation: {args.out} not written")
    return 0


def cmd_sweep(args) -> int:
    from .strategies import STRATEGIES
    from .sweep import _check_out, summary_table, sweep
    sc, _seed = _load(argparse.Namespace(**vars(args), seed=None))
    for s in args.strategy or ():
        resolve(s)
    if args.out:
        _check_out(__import__("pathlib").Path(args.out))
    result = sweep(sc, tuple(args.strategy or STRATEGIES), args.seeds, tuple(args.crash_rate or (None,)),
                   first_seed=args.first_seed, jobs=args.jobs, dask_address=args.dask,
                   progress=not args.json and sys.stderr.isatty())
    if args.out:
        result.write(args.out)
    print(json.dumps(result.as_dict(args.out)) if args.json else summary_table(result)
          + (f"\n\nwrote {args.out}: one row per run" if args.out else ""))
    return 0


def cmd_shrink(args) -> int:
    from .shrink import shrink
    sc, seed = _load(args)
    result = shrink(sc, args.strategy, seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(result.toml())
    if args.json:
        print(json.dumps({**result.as_dict(), "out": args.out, "toml": result.toml()}))
    elif args.out:
        print(result.summary(args.out))
    else:
        print(result.toml(), end="")
    return 0


def cmd_live(args) -> int:
    from .live import live, live_summary
    sc, seed = _load(args)
    if args.store == "memory":
        raise SimkitError("--store memory: live mode needs a store that outlives its workers; use sqlite")
    if args.events is not None:
        if sc.generate is None or args.events < 1:
            raise SimkitError(f"--events {args.events}: needs a [generate] scenario and a positive count")
        sc.generate["events"] = args.events
    run = live(sc, resolve(args.strategy), args.kills, seed, args.max_delay, tuple(args.at), args.dir, args.timeout)
    print(json.dumps(run.as_dict()) if args.json else live_summary(run))
    return 0


def cmd_bench(args) -> int:
    return bench.run(args.quick, args.repeat, args.json)


COMMANDS = {"run": cmd_run, "compare": cmd_compare, "list": cmd_list, "demo": cmd_demo,
            "explore": cmd_explore, "sweep": cmd_sweep, "shrink": cmd_shrink, "live": cmd_live, "bench": cmd_bench}
COMMANDS.update(service_cli.COMMANDS)


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except SimkitError as exc:
        print(f"simkit: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
