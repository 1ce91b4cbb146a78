"""What the figures' facts cost on one ``safe`` run (docs/performance.md, "The figures' facts by a sweep over
time"): ``durable_prefix``, ``at_risk`` and ``unsafe_rows`` of :mod:`simkit.judge.facts`, each timed once,
after the run and the outcome times they share.

Run: ``python benchmarks/facts_cost.py [EVENTS]`` (default 20,000 events of ``simkit.tools.bench.generated``).
To compare with another revision, run it with ``PYTHONPATH`` at a worktree of that revision.
"""
import sys
import time

from simkit.judge import facts
from simkit.procedure.strategies import STRATEGIES
from simkit.scenario.read import parse
from simkit.tools.bench import generated
from simkit.truth.collector import paused
from simkit.world.simulation import World


def main(events: int) -> str:
    world = World(parse(generated(events)), STRATEGIES["safe"], 0)
    with paused():
        world.run()
    facts.outcome_times(world)
    timed = []
    for fact in (facts.durable_prefix, facts.at_risk, facts.unsafe_rows):
        start = time.perf_counter()
        fact(world)
        timed.append(f"{fact.__name__} {time.perf_counter() - start:.2f} s")
    return f"{events} events: " + ", ".join(timed)


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000))
