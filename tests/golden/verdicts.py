"""Golden verdicts: the verdict and trace digest of every bundled scenario × strategy (three seeds for a
generated scenario), committed beside this file so that any change of judgment or behaviour shows in review.

Seed 001's settlement is judged too: on every scenario with an external sink (``sink``
idempotent or unsafe, the ones whose effects go through the settlement ledger),
``safe`` also runs under each settlement policy other than the scenario's own, keyed
``scenario/safe/seed/policy`` (the three-part key is the scenario's own policy).

Regenerate after a deliberate change, then read the diff::

    python tests/golden/verdicts.py

``tests/judge/test_golden.py`` compares a fresh computation with the committed file.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import simkit
from simkit.model import POLICIES
from simkit.procedure.strategies import STRATEGIES

FILE = Path(__file__).with_name("verdicts.json")


def seeds(sc: simkit.Scenario) -> list[int]:
    return [sc.seed] if sc.generate is None else [sc.seed, sc.seed + 1, sc.seed + 2]


def compute() -> dict[str, dict]:
    """``scenario/strategy/seed`` -> the run's ``--json`` object and its trace digest."""
    out = {}
    for name in simkit.bundled():
        sc = simkit.load(name)
        for strategy in STRATEGIES:
            for seed in seeds(sc):
                run = simkit.simulate(sc, simkit.resolve(strategy), seed)
                out[f"{name}/{strategy}/{seed}"] = entry(run)
        out.update(settlements(sc))
    return out


def entry(run: simkit.Run) -> dict:
    return {**run.as_dict(), "trace_digest": run.trace.digest()}


def settlements(sc: simkit.Scenario) -> dict[str, dict]:
    """``scenario/safe/seed/policy`` -> ``safe`` under every other settlement policy, for an external sink."""
    if sc.sink == "transactional":
        return {}
    return {f"{sc.name}/safe/{seed}/{policy}": entry(simkit.simulate(sc, simkit.resolve("safe"), seed,
                                                                      settlement=policy))
            for policy in POLICIES if policy != sc.settlement for seed in seeds(sc)}


def text(golden: dict) -> str:
    return json.dumps(golden, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    FILE.write_text(text(compute()))
    print(f"wrote {FILE} ({len(json.loads(FILE.read_text()))} runs)", file=sys.stderr)
