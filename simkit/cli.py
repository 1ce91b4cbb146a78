"""The ``simkit`` command line (CONTRACT §6). Bad input: one line on stderr, exit status 2, nothing written."""
from __future__ import annotations

import argparse
import json
import sys

from . import scenario as scenarios
from .errors import SimkitError
from .model import CRASH_POINTS
from .report import run_summary, table, verdict_row
from .scenario import SETTLEMENTS, parse_crash_arg
from .strategies import STRATEGIES, resolve
from .world import simulate

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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="simkit", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("run", help="one run, judged by the checker")
    _common(p)
    p.add_argument("--crash", action="append", default=[], metavar="POINT[@POSITION][#OCCURRENCE]",
                   help=f"inject a crash; POINT is one of {', '.join(CRASH_POINTS)}")
    p.add_argument("--timeline", metavar="PNG", help="also write the timeline figure to this file")
    p.add_argument("--swimlane", metavar="PNG", help="also write the swimlane (Lamport) diagram to this file")
    p = sub.add_parser("compare", help="every strategy on one scenario")
    _common(p, strategy=False)
    sub.add_parser("list", help="bundled scenarios, strategies and settlement policies")
    p = sub.add_parser("demo", help="every strategy on the gauntlet, and a timeline PNG")
    p.add_argument("--out", default="simkit-demo-timeline.png", help="where to write the timeline PNG")
    return parser


def _load(args):
    sc = scenarios.load(args.scenario)
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
        print(f"{sc.name} (seed {seed}): {sc.description}\n")
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


COMMANDS = {"run": cmd_run, "compare": cmd_compare, "list": cmd_list, "demo": cmd_demo}


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
