"""The benchmark's cost table (``cost``): the modelled price of each strategy, in fetches, replays and
checkpoint writes (:mod:`simkit.tools.bench` reports it)."""
from __future__ import annotations

from simkit.procedure.strategies import STRATEGIES
from simkit.runner import simulate
from simkit.scenario.read import parse

__all__ = ["COST_SCENARIO", "cost_table"]

COST_SCENARIO = {"name": "cost", "sink": "transactional", "generate": {"events": 400, "page_size": 10},
                 "random_faults": {"crash": 0.02, "max_faults": 1000}}


def cost_table(seeds: int = 5) -> list[dict]:
    """The modelled price of each strategy: fetches per event, events replayed per crash, writes per page.

    One worker, pages of 10, random crashes and nothing else that replays: seed 000 promises ``safe`` at most
    a page of replay per crash.
    """
    sc = parse(COST_SCENARIO)
    rows = []
    for name, cls in STRATEGIES.items():
        events = fetches = replays = crashes = writes = pages = 0
        for seed in range(seeds):
            run = simulate(sc, cls, seed)
            w = run.world
            events += len(w.provider.events)
            fetches += len(w.provider.log)
            crashes += w.crashes
            replays += sum(1 for s in run.trace.step if s == "replay")
            writes += len(w.store.writes)
            pages += sum(1 for k in w.store.writes if k[3] != "commit")
        rows.append({"strategy": name, "fetches_per_event": fetches / events,
                     "replayed_per_crash": replays / crashes if crashes else 0.0,
                     "checkpoint_writes_per_page": writes / pages if pages else 0.0})
    return rows
