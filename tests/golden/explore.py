"""Golden explorations: the ``simkit explore --json`` object of every bundled scenario small enough to explore
(plus the fault-free run's pass, reply and request counts), for ``safe`` and every shortcut, committed beside
this file so that any change of what exploration runs or finds shows in review.

Bounds, as ``(max_crashes, lost_responses, lost_requests)``, chosen so that
``tests/tools/test_golden_explore.py`` stays within about a minute on two cores:

* one-worker scripted scenarios of at most ``simkit.tools.audit.SMALL`` events: ``simkit audit``'s bounds
  (:data:`simkit.tools.audit.BOUNDS`: two crashes; a crash and a lost reply; a crash and a lost request);
* the larger scripted ones (two workers, or ``transient_storm``): one fault of each kind, and for ``safe`` a
  deeper bound on two of them (:data:`DEEPER`);
* the generated ones (:data:`GENERATED`): one fault, for some strategies only.

Regenerate after a deliberate change, then read the diff::

    python tests/golden/explore.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import simkit
from simkit.procedure.strategies import STRATEGIES
from simkit.tools.audit import BOUNDS, SMALL
from simkit.tools.explore import explore

FILE = Path(__file__).with_name("explore.json")

#: One fault of each kind.
SINGLE = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
#: Scripted scenarios too large for the audit's bounds on every strategy: one deeper bound for ``safe``.
DEEPER = {"fence_race": (2, 0, 0), "transient_storm": (1, 1, 0)}
#: Generated scenarios: (strategies, bounds).
GENERATED = {"default": (tuple(STRATEGIES), ((0, 1, 0),)), "gauntlet": (("safe",), ((0, 0, 1),))}


def _events(sc: simkit.Scenario) -> int:
    return len({p for page in sc.pages for p in page["positions"]})


def cases() -> list[tuple[str, str, tuple[int, int, int]]]:
    """Every (scenario, strategy, bounds) explored, in order."""
    out = []
    for name in simkit.bundled():
        sc = simkit.load(name)
        if sc.generate is not None:
            strategies, bounds = GENERATED[name]
            out += [(name, s, b) for s in strategies for b in bounds]
        elif sc.workers == 1 and _events(sc) <= SMALL and name not in DEEPER:
            out += [(name, s, b) for s in STRATEGIES for b in BOUNDS]
        else:
            out += [(name, s, b) for s in STRATEGIES for b in SINGLE]
            out += [(name, "safe", DEEPER[name])] if name in DEEPER else []
    return out


def key(name: str, strategy: str, bounds: tuple[int, int, int]) -> str:
    return f"{name}/{strategy}/{'-'.join(map(str, bounds))}"


def _explore(name: str, strategy: str, **options):
    return explore(simkit.load(name), strategy, **options)


def compute_one(name: str, strategy: str, bounds: tuple[int, int, int], explored=_explore) -> dict:
    """One exploration's ``--json`` object and its fault-free run's counts. ``explored(name, strategy,
    **bounds)``: the exploration (the test's is one other tests share, tests/conftest.py's ``shared``)."""
    crashes, replies, requests = bounds
    x = explored(name, strategy, max_crashes=crashes, lost_responses=replies, lost_requests=requests)
    return {**x.as_dict(), "passes": x.passes, "replies": x.replies, "requests": x.requests}


def compute(explored=_explore) -> dict[str, dict]:
    """``scenario/strategy/crashes-replies-requests`` -> :func:`compute_one`."""
    return {key(*case): compute_one(*case, explored) for case in cases()}


def text(golden: dict) -> str:
    return json.dumps(golden, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    FILE.write_text(text(compute()))
    print(f"wrote {FILE} ({len(json.loads(FILE.read_text()))} explorations)", file=sys.stderr)
