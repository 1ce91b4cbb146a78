"""simkit: seed 000's crash-safe cursor handoff, executed in
a deterministic SimPy world and judged from ground truth.

The layers, each a subpackage, in the order a run flows through them (docs/architecture.md draws it):

============  ==========================================================================================
where         what it holds
============  ==========================================================================================
_codegen      generated methods compiled with their source registered, so tracebacks show their lines
model, ops    the vocabulary: events, pages, checkpoints, outcomes; the requests a consumer yields
scenario/     scenario files in, a validated Scenario out; the bundled scenarios
procedure/    the consumer of seed 000 and the unsafe shortcuts
world/        the SimPy world: provider, sink, external service, faults, clock
store/        durable state: checkpoint, receipts, settlement ledger, on memory or SQLite
truth/        ground truth: the logs and the trace a run leaves
judge/        the verdict, from ground truth only
tools/        explore, shrink, sweep, audit, bench
live/         the procedure in real processes on SQLite
service/      the checkpoint service and its change feed, as a model and over HTTP
viz/          timelines, fates, swimlanes, crash matrices, widgets, tables
testing       simkit in a consumer author's pytest suite: the audit and runs as assertions, a plugin
workshop/     the prediction checks and exercises the notebooks call
cli           the ``simkit`` command line
============  ==========================================================================================
"""
from simkit import _starting

_starting.install()     # the command's Ctrl-C, SIGTERM and SIGHUP are its one line from here on: first of all

import sys as _sys  # noqa: E402
from importlib.metadata import PackageNotFoundError as _NotInstalled  # noqa: E402
from importlib.metadata import version as _version  # noqa: E402

try:
    from simkit import ops
    from simkit.errors import ConsumerError, ScenarioError, SimkitError, StrategyError
    from simkit.judge.checker import Verdict, check
    from simkit.model import CRASH_POINTS, Checkpoint, Event, Fault, Page, Scenario
    from simkit.procedure.consumer import Consumer, Contract
    from simkit.procedure.strategies import SHORTCUTS, STRATEGIES, resolve
    from simkit.runner import Run, simulate
    from simkit.scenario.read import bundled, load, parse, parse_crash_arg
    from simkit.tools.audit import Audit, audit
    from simkit.truth.ground import GroundTruth
    from simkit.world.simulation import World
except KeyboardInterrupt:
    # Ctrl-C while the ``simkit`` command imports its package, before its own handling is installed
    # (simkit.cli.main): the command's one line and status, as at any later moment; a program importing
    # simkit gets its KeyboardInterrupt. (The command's Ctrl-C is _starting.early's now: this is one raised
    # before it was in place.)
    if _starting.is_command():
        _sys.stderr.write("simkit: interrupted\n")
        raise SystemExit(130) from None
    raise

try:
    __version__ = _version("simkit")        # the installed distribution's own metadata (pyproject.toml)
except _NotInstalled:                       # a source tree on sys.path, never installed
    __version__ = "0+unknown"

__all__ = [
    "Audit", "CRASH_POINTS", "Checkpoint", "Consumer", "ConsumerError", "Contract", "Event", "Fault",
    "GroundTruth", "Page", "Run", "SHORTCUTS", "STRATEGIES", "Scenario", "ScenarioError", "SimkitError",
    "StrategyError", "Verdict", "World", "__version__", "audit", "bundled", "check", "load", "ops", "parse",
    "parse_crash_arg", "resolve", "simulate",
]
