"""simkit: seed 000's crash-safe cursor handoff, executed in a deterministic SimPy world and judged from ground truth."""
from .checker import Verdict, check
from .consumer import Consumer, Contract
from .errors import ConsumerError, ScenarioError, SimkitError, StrategyError
from .model import CRASH_POINTS, Checkpoint, Event, Fault, Page, Scenario
from .scenario import bundled, load, parse, parse_crash_arg
from .strategies import SHORTCUTS, STRATEGIES, resolve
from .world import Run, World, simulate
from .auditor import Audit, audit

__all__ = [
    "Audit", "CRASH_POINTS", "Checkpoint", "Consumer", "ConsumerError", "Contract", "Event", "Fault", "Page", "Run", "SHORTCUTS",
    "STRATEGIES", "Scenario", "ScenarioError", "SimkitError", "StrategyError", "Verdict", "World", "audit", "bundled",
    "check", "load", "parse", "parse_crash_arg", "resolve", "simulate",
]
