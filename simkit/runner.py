"""One run: a world, then its verdict (docs/architecture.md, "one run"). Above both the world and the judge,
so that neither imports the other: the world records ground truth, :func:`simulate` hands it to the judge.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from simkit.errors import ScenarioError, SimkitError, StrategyError, described
from simkit.judge.checker import Verdict, check
from simkit.model import Fault, Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.lives import not_rerunning
from simkit.procedure.strategies import resolve, strategy_name
from simkit.scenario.checks import MAX_INT, Checker
from simkit.scenario.faults import parse_fault
from simkit.scenario.read import parse
from simkit.scenario.stream import carried_positions, missing_position
from simkit.scenario.write import scenario_data
from simkit.truth.collector import paused
from simkit.truth.derived import effects_count
from simkit.truth.ground import GroundTruth
from simkit.truth.trace import Trace
from simkit.world.memo import per_scenario
from simkit.world.simulation import World

__all__ = ["Run", "a_scenario", "checked", "consumer_class", "judged", "simulate"]


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
        trace = self.world.trace
        assert trace is not None                    # a run of simulate() keeps its trace
        return trace

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
        SimkitError: ``scenario`` is no Scenario (``simkit.load`` makes one), or one changed since into what
            no scenario file says (:func:`checked`: a ScenarioError), ``seed`` no integer within 2**53 either
            side of 0 (as ``--seed``), ``faults`` no sequence of faults as a ``[[faults]]`` table allows
            (``param`` names which).
    """
    not_rerunning()         # a script's top-level simulate() is not run again inside each life
    strategy = consumer_class(strategy)
    return judged(checked(scenario), strategy, seed, faults, settlement)


def judged(scenario: Scenario, strategy: type[Consumer] | str = Consumer, seed: int | None = None,
           faults: tuple[Fault, ...] = (), settlement: str | None = None) -> Run:
    """:func:`simulate` of a scenario :func:`checked` already (a sweep's, once for all its seeds; an audit's
    case): the check, run again for each, was up to 5 % of a run of a long scripted stream."""
    not_rerunning()
    strategy = consumer_class(strategy)
    if not isinstance(scenario, Scenario):
        raise SimkitError(f"scenario {described(scenario)}: is no Scenario (simkit.load or simkit.parse "
                          "makes one)", param="scenario")
    seed = scenario.seed if seed is None else seed
    if type(seed) is not int or abs(seed) > MAX_INT:
        raise SimkitError(f"seed {described(seed)}: must be an integer within {MAX_INT} either side of 0",
                          param="seed")
    faults = _faults(faults, scenario)
    with paused():                      # refused inside a run of this thread (a hook's simulate): one line
        world = World(scenario, strategy, seed, faults, settlement).run()
        truth = world.ground_truth()
        run = Run(scenario.name, strategy_name(strategy), seed, check(truth), world)
        run._truth = truth
        return run


def a_scenario(scenario, param: str = "scenario") -> Scenario:
    """``scenario`` if it is a Scenario, else one line naming ``param`` (a name, ``"default"``, was an
    ``AttributeError`` or ``replace() should be called on dataclass instances``)."""
    if not isinstance(scenario, Scenario):
        raise SimkitError(f"{param} {described(scenario)}: is no Scenario (simkit.load or simkit.parse "
                          "makes one)", param=param)
    return scenario


def checked(scenario, param: str = "scenario") -> Scenario:
    """``scenario`` if it is a Scenario whose every field still holds what a scenario file may say (a notebook
    changes ``workers``, ``timing`` or ``pages`` of one :func:`~simkit.scenario.read.load` made: ``workers =
    2.0``, ``pages`` of strings or ``timing = None`` were tracebacks from deep in the world, and ``workers =
    0`` or ``sink = "bogus"`` ran): it is written back as the dict of its file and read again by
    :func:`~simkit.scenario.read.parse`, whose one line names the key, here as ``param``'s."""
    a_scenario(scenario, param)
    try:
        _read_again(scenario)
    except ScenarioError as exc:        # "scenario: key 'timing.backoff': PROBLEM"
        key, _, problem = str(exc).removeprefix("scenario: key '").partition("': ")
        raise ScenarioError(f"{param} {described(scenario.name)}: {key} {problem}", param=param) from None
    return scenario


@per_scenario(lambda sc: tuple(getattr(sc, f.name) for f in fields(sc)), strict=True)
def _read_again(scenario: Scenario) -> None:
    """:func:`checked`'s reading, once per scenario while none of its fields changes, in value or in type
    (the world's parts are kept alike): read again, a small scenario's check cost a sixth of its run
    (``retry_walkthrough``)."""
    parse(scenario_data(scenario), source="scenario", default_name="scenario")


def _faults(faults, scenario: Scenario) -> tuple[Fault, ...]:
    """``faults`` as a tuple, each fault checked as a ``[[faults]]`` table of ``scenario`` is
    (docs/scenarios.md, "Faults"): a crash at no crash point, at a position no page carries or of a worker the
    scenario does not have was never struck (and the verdict said ok), and a string a sequence of
    characters."""
    if isinstance(faults, (str, bytes)) or not isinstance(faults, (tuple, list)):
        raise SimkitError(f"faults {described(faults)}: must be a tuple of simkit.Fault", param="faults")
    for i, f in enumerate(faults):
        if not isinstance(f, Fault):
            raise SimkitError(f"faults[{i}] {described(f)}: is no simkit.Fault", param="faults")
        try:
            parse_fault(Checker("faults"), f.as_dict() | {"occurrence": f.occurrence, "worker": f.worker},
                        f"[{i}]")
        except ScenarioError as exc:        # "faults: key '[0].point': PROBLEM" said of the argument
            key, _, problem = str(exc).removeprefix("faults: key '").partition("': ")
            raise SimkitError(f"faults{key}: {problem}", param="faults") from None
    carried = carried_positions(scenario) if faults else None
    for i, f in enumerate(faults):          # check_targets' rules for a file's [[faults]], of the argument
        if f.worker > scenario.workers:
            raise SimkitError(f"faults[{i}].worker: no worker {f.worker}: the scenario has workers = "
                              f"{scenario.workers}", param="faults")
        missing = None if f.position is None else missing_position(scenario, f.position, carried)
        if missing is not None:
            raise SimkitError(f"faults[{i}].position: {missing}", param="faults")
    return tuple(faults)


def consumer_class(strategy) -> type[Consumer]:
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
