"""One run: a world, then its verdict (docs/architecture.md, "one run"). Above both the world and the judge,
so that neither imports the other: the world records ground truth, :func:`simulate` hands it to the judge.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from simkit.errors import StrategyError, described
from simkit.judge.checker import Verdict, check
from simkit.model import Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import resolve, strategy_name
from simkit.truth.collector import paused
from simkit.truth.derived import effects_count
from simkit.truth.ground import GroundTruth
from simkit.truth.trace import Trace
from simkit.world.simulation import World

__all__ = ["Run", "simulate"]


@dataclass
class Run:
    """The outcome of one run: the verdict, the trace and the world whose ground truth it was judged on."""

    scenario: str
    strategy: str
    seed: int
    verdict: Verdict
    world: World = field(repr=False)
    _truth: GroundTruth | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def trace(self) -> Trace:
        return self.world.trace

    def ground_truth(self) -> GroundTruth:
        """The world's ground truth (:class:`~simkit.truth.ground.GroundTruth`), built once per run."""
        if self._truth is None:
            self._truth = self.world.ground_truth()
        return self._truth

    def as_dict(self) -> dict:
        """The ``--json`` object of docs/verdict.md, with ``stopped``: ``None``, or why the progress guard
        ended the run."""
        w = self.world
        return {
            "scenario": self.scenario, "strategy": self.strategy, "seed": self.seed,
            "settlement": w.settlement,
            **self.verdict.as_dict(),
            "stopped": w.stopped,  # why the progress guard ended the run (then completed is false)
            "final_checkpoint": w.store.checkpoint.as_dict(),
            "crashes": w.crashes,
            "fetches": len(w.provider.log),
            "effects": effects_count(w.sink.effects),
        }


def simulate(scenario: Scenario, strategy: type[Consumer] | str = Consumer, seed: int | None = None,
             faults: tuple[Fault, ...] = (), settlement: str | None = None) -> Run:
    """Run ``strategy`` on ``scenario`` and judge it: a pure function of (scenario, strategy, seed, faults).

    ``strategy`` is a :class:`~simkit.procedure.consumer.Consumer` subclass, or a string naming one as
    ``--strategy`` does (:func:`~simkit.procedure.strategies.resolve`): ``"safe"``, a shortcut's name,
    ``"path/to/file.py:ClassName"``, ``"package.module:ClassName"`` or ``"exec:COMMAND"``. ``settlement``
    overrides the scenario's settlement policy (docs/scenarios.md).

    Raises:
        StrategyError: ``strategy`` names no strategy (``strategy sfae: unknown strategy (known: ...)``), or
            is neither a string nor a class.
    """
    strategy = _strategy(strategy)
    seed = scenario.seed if seed is None else seed
    with paused():
        world = World(scenario, strategy, seed, tuple(faults), settlement).run()
        truth = world.ground_truth()
        run = Run(scenario.name, strategy_name(strategy), seed, check(truth), world)
        run._truth = truth
        return run


def _strategy(strategy) -> type[Consumer]:
    """``strategy`` as a class: a string resolved as ``--strategy`` is (a name gave an AttributeError
    traceback from deep in the world); a class as it is; anything else one line."""
    if isinstance(strategy, str):
        return resolve(strategy, "strategy")
    if not isinstance(strategy, type):
        kind = type(strategy).__name__
        what = (f"is an instance of {kind}: pass the class" if isinstance(strategy, Consumer)
                else f"is of type {kind}, not a Consumer subclass or a strategy's name")
        raise StrategyError(f"strategy {described(strategy)}: {what}", param="strategy")
    if not issubclass(strategy, Consumer):
        raise StrategyError(f"strategy {described(strategy)}: is not a Consumer subclass", param="strategy")
    return strategy
