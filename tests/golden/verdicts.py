"""Golden verdicts: the verdict and trace digest of every bundled scenario × strategy (three seeds for a
generated scenario), committed beside this file so that any change of judgment or behaviour shows in review.

Regenerate after a deliberate change, then read the diff::

    python tests/golden/verdicts.py

``tests/judge/test_golden.py`` compares a fresh computation with the committed file.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import simkit
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
                out[f"{name}/{strategy}/{seed}"] = {**run.as_dict(), "trace_digest": run.trace.digest()}
    return out


def text(golden: dict) -> str:
    return json.dumps(golden, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    FILE.write_text(text(compute()))
    print(f"wrote {FILE} ({len(json.loads(FILE.read_text()))} runs)", file=sys.stderr)
