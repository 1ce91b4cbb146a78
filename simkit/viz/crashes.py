"""Every single-crash schedule of a strategy, each judged against the strategy's
fault-free run: ``worse``, ``same`` or ``better`` (docs/exploring.md); what
:func:`simkit.viz.plot.crash_matrix` draws with ``better=``."""
from __future__ import annotations

from simkit.errors import one_or_many
from simkit.judge.verdict import harms
from simkit.model import CRASH_POINTS, Fault, Scenario
from simkit.procedure.strategies import STRATEGIES
from simkit.tools.explore import fault_free, replay
from simkit.world.simulation import World

from .inputs import strategy_class as _strategy
from .inputs import strategy_name as _name

__all__ = ["crash_effect", "crash_effects", "single_crashes"]


def single_crashes(scenario: Scenario, strategy="safe", seed: int | None = None) -> list[Fault]:
    """Every single-crash schedule of ``strategy`` on ``scenario``: a crash at each crash-point pass of its
    fault-free run (:func:`simkit.tools.explore.fault_free`), as ``simkit.tools.explore.explore(...,
    max_crashes=1)`` runs them, in the order they are passed."""
    sc = fault_free(scenario)
    world = World(sc, _strategy(strategy), sc.seed if seed is None else seed)
    world.faults.record = True                  # keep every pass: what a crash can strike
    world.run()
    return [Fault("crash", point, position, n, worker) for worker, point, position, n in world.faults.passes]


def crash_effect(fault_free_verdict, crashed_verdict) -> str:
    """``worse``, ``same`` or ``better``: a crashed run
    against the fault-free run of the same strategy and input.

    Safety first: the crash made the run worse if it added a lost or duplicated event, a regression, a broken
    invariant or a settlement violation; better if it added none of these and took one away. A halt that
    stopped the retry before an event the fault-free run lost was lost is better, even though a halt without
    cause leaves the run incomplete: the event is still there to be investigated, not gone. Only when safety
    is unchanged does liveness decide (the crash left the run incomplete: worse; let it complete: better).
    """
    (safe_before, live_before), (safe_after, live_after) = harms(fault_free_verdict), harms(crashed_verdict)
    for before, after in ((safe_before, safe_after), (live_before, live_after)):
        if after - before:
            return "worse"
        if before - after:
            return "better"
    return "same"


def crash_effects(scenario: Scenario, strategies=None, seed: int | None = None):
    """Every single-crash schedule of each strategy on ``scenario``, judged against that strategy's fault-free
    run (:func:`crash_effect`): a frame indexed by (crash point, strategy) with the count of schedules ``run``
    and how many came out ``worse``, ``same`` and ``better``. Crash points a strategy never passes have
    ``run`` 0.

    For :func:`simkit.viz.plot.crash_matrix`: ``fx = crash_effects(sc)``, then
    ``crash_matrix(ax, fx.worse.unstack(), fx.run.unstack(), better=fx.better.unstack())``.
    """
    import pandas as pd

    strategies = list(STRATEGIES) if strategies is None else list(one_or_many("strategies", strategies,
                                                                              (str, type)))
    rows = {(p, _name(s)): dict(run=0, worse=0, same=0, better=0) for p in CRASH_POINTS for s in strategies}
    for strategy in strategies:
        base = replay(scenario, _strategy(strategy), (), seed)
        for fault in single_crashes(scenario, strategy, seed):
            assert fault.point is not None          # a crash names its crash point
            row = rows[fault.point, _name(strategy)]
            row["run"] += 1
            row[crash_effect(base.verdict, replay(scenario, _strategy(strategy), (fault,),
                                                  seed).verdict)] += 1
    index = pd.MultiIndex.from_tuples(list(rows), names=["crash point", "strategy"])
    return pd.DataFrame(list(rows.values()), index=index, columns=["run", "worse", "same", "better"])
