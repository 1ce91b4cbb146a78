"""What an exploration found (:class:`Exploration`), and the text ``simkit explore`` prints
(:func:`summary_text`, :func:`fault_text`, :func:`crash_args`); see docs/exploring.md. How a run fails
(:func:`failure_kind`, :func:`describe_kind`) derives from the verdict's declared fields
(:mod:`simkit.judge.verdict`).
"""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

from simkit.errors import ConsumerError, printable
from simkit.judge.checker import Verdict
from simkit.judge.report import counts_line
from simkit.judge.verdict import describe_kind, failure_kind
from simkit.model import Fault, Scenario
from simkit.procedure.strategies import strategy_name
from simkit.runner import Run
from simkit.world.simulation import World

__all__ = ["Exploration", "failure_kind", "describe_kind", "run_dict", "fault_text", "InSchedule",
           "in_schedule", "crash_args", "summary_text"]

#: The digest is a sum of per-schedule hashes modulo this, so that it does not depend on the order of the
#: runs.
_MODULUS = 2 ** 256


# -- verdicts ------------------------------------------------------------------------------------------------
def run_dict(world: World, verdict: Verdict) -> dict:
    """The ``simkit run --json`` object of an explored run."""
    return Run(world.scenario.name, strategy_name(world.strategy), world.seed, verdict, world).as_dict()


def _hash(*parts) -> int:
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest(), "big")


# -- the result ----------------------------------------------------------------------------------------------
@dataclass
class Exploration:
    """The outcome of :func:`~simkit.tools.explore.explore`.

    Schedules are ordered by (number of faults, place in the enumeration), the place a tuple of 1-based
    indices: the one-fault schedule's among the fault-free run's extensions, then each further fault's among
    its parent's (depth-first order). ``digest`` sums a hash of every schedule's faults and verdict (and of
    every skipped schedule's faults), so two explorations that ran the same schedules with the same outcomes
    agree on it whatever order and processes they ran them in.
    """

    scenario: str
    strategy: str
    seed: int
    max_crashes: int
    lost_responses: int
    pauses: bool
    settlement: str = "fenced"
    lost_requests: int = 0
    schedules: int = 0                      # schedules run and judged, the fault-free run included
    by_faults: list[int] = field(default_factory=list)  # schedules run, by number of faults
    deduplicated: int = 0                   # schedules skipped, with their subtrees, as equivalent
    violations: int = 0                     # schedules run whose verdict is not ok
    kinds: Counter = field(default_factory=Counter)     # violations by describe_kind
    first_violation: tuple | None = None    # (faults, run dict): the shortest, first in enumeration order
    passes: dict[str, int] = field(default_factory=dict)  # crash-point passes of the fault-free run, by point
    replies: dict[str, int] = field(default_factory=dict)  # replies of the fault-free run, by op
    requests: dict[str, int] = field(default_factory=dict)  # requests of the fault-free run, by op
    first_key: tuple | None = field(default=None, repr=False)  # (faults, place) of ``first_violation``
    digest_sum: int = field(default=0, repr=False)

    @property
    def ok(self) -> bool:
        return self.violations == 0

    @property
    def digest(self) -> str:
        """Every schedule run (its faults and verdict) and skipped, as one hex digest independent of order."""
        return f"{self.digest_sum:064x}"

    def as_dict(self) -> dict:
        """The ``simkit explore --json`` object."""
        first = None
        if self.first_violation is not None:
            faults, run = self.first_violation
            first = {"faults": [f.as_dict() for f in faults], "verdict": run}
        return {"scenario": self.scenario, "strategy": self.strategy, "seed": self.seed,
                "settlement": self.settlement, "max_crashes": self.max_crashes,
                "lost_responses": self.lost_responses, "lost_requests": self.lost_requests,
                "pauses": self.pauses,
                "schedules": self.schedules, "by_faults": self.by_faults, "deduplicated": self.deduplicated,
                "violations": self.violations, "kinds": dict(sorted(self.kinds.items())),
                "first_violation": first}

    def note(self, faults, verdict: Verdict, run, place: tuple) -> None:
        """Count one judged schedule; ``run`` is its ``--json`` object, or a World to make it from."""
        n = len(faults)
        self.by_faults.extend([0] * (n + 1 - len(self.by_faults)))
        self.by_faults[n] += 1
        self.schedules += 1
        kind = failure_kind(verdict)
        self.digest_sum = (self.digest_sum + _hash(tuple(faults), kind, len(verdict.lost),
                                                   len(verdict.duplicated), verdict.regressions)) % _MODULUS
        if verdict.ok:
            return
        self.violations += 1
        self.kinds[describe_kind(kind)] += 1
        key = (n, place)
        if self.first_key is None or key < self.first_key:
            self.first_violation = (tuple(faults), run if isinstance(run, dict) else run_dict(run, verdict))
            self.first_key = key

    def skip(self, faults) -> None:
        """Count one schedule skipped, with its subtree, as equivalent to one explored before."""
        self.deduplicated += 1
        self.digest_sum = (self.digest_sum + _hash("skipped", tuple(faults))) % _MODULUS

    def merge(self, other: Exploration) -> None:
        """Add the counts of ``other``, an exploration of other schedules (a subtree)."""
        for n, c in enumerate(other.by_faults):
            self.by_faults.extend([0] * (n + 1 - len(self.by_faults)))
            self.by_faults[n] += c
        self.schedules += other.schedules
        self.deduplicated += other.deduplicated
        self.violations += other.violations
        self.kinds.update(other.kinds)
        self.digest_sum = (self.digest_sum + other.digest_sum) % _MODULUS
        if other.first_key is not None and (self.first_key is None or other.first_key < self.first_key):
            self.first_violation, self.first_key = other.first_violation, other.first_key


# -- text ----------------------------------------------------------------------------------------------------
def fault_text(f: Fault) -> str:
    """``crash at before_event_commit@107#2 (worker 2)``, ``pause 25 at …``, ``lost checkpoint_write
    reply@107``, ``lost fetch request#2``."""
    where = (f"@{f.position}" if f.position is not None else "") + (
        f"#{f.occurrence}" if f.occurrence != 1 else ""
    )
    who = f" (worker {f.worker})" if f.worker != 1 else ""
    if f.kind == "lost_response":
        return f"lost {f.op} reply{where}{who}"
    if f.kind == "lost_request":
        return f"lost {f.op} request{where}{who}"
    return f"{'crash' if f.kind == 'crash' else f'pause {f.duration:g}'} at {f.point}{where}{who}"


class InSchedule(ConsumerError):
    """A consumer's own error that names the schedule it was raised in (:func:`in_schedule`)."""


def in_schedule(error: ConsumerError, faults) -> ConsumerError:
    """A consumer's own error (one line) saying the schedule it raised in, so an exploration's or an audit's
    can be reproduced: ``..., in the run with crash at after_event_commit@60``."""
    if isinstance(error, InSchedule):           # said already, by the run that raised it
        return error
    told = "with " + ", ".join(map(fault_text, faults)) if faults else "without a fault"
    return InSchedule(f"{error}, in the run {told}")


def crash_args(sc: Scenario, faults, keep_faults: bool = False) -> list[str] | None:
    """``--crash`` arguments that make ``simkit run`` replay ``faults``, or ``None`` if it cannot."""
    rf = sc.random_faults
    if (sc.faults and not keep_faults) or rf.crash or rf.pause or rf.lost_response or rf.lost_request:
        return None
    if any(f.kind != "crash" or f.worker != 1 for f in faults):
        return None
    return [f"{f.point}" + (f"@{f.position}" if f.position is not None else "")
            + (f"#{f.occurrence}" if f.occurrence != 1 else "") for f in faults]


def summary_text(x: Exploration) -> str:
    """What ``simkit explore`` prints."""
    plural = x.max_crashes != 1
    space = f"up to {x.max_crashes} crash{'es' if plural else ''}"
    space += f" or pause{'s' if plural else ''}" if x.pauses else ""
    space += (
        f" and {x.lost_responses} lost repl{'ies' if x.lost_responses != 1 else 'y'}"
        if x.lost_responses
        else ""
    )
    space += (
        f" and {x.lost_requests} lost request{'s' if x.lost_requests != 1 else ''}" if x.lost_requests else ""
    )
    requests = f"{sum(x.requests.values())} requests, " if x.lost_requests else ""
    depth = ", ".join(f"{n} fault{'s' if n != 1 else ''}: {c}" for n, c in enumerate(x.by_faults))
    lines = [
        f"explore {x.scenario} · {printable(x.strategy)} · seed {x.seed} · settlement {x.settlement}: "
        + ("no violations" if x.ok
           else f"{x.violations} violating schedule{'s' if x.violations != 1 else ''}"),
        f"  schedules of {space}, over {sum(x.passes.values())} crash-point "
        f"passes{',' if requests else ' and'} "
        f"{requests}{'and ' if requests else ''}{sum(x.replies.values())} replies of the fault-free run",
        f"  schedules run: {x.schedules} ({depth}); skipped as equivalent: {x.deduplicated}",
    ]
    if not x.ok:
        lines.append("  violations: " + "; ".join(f"{k}: {n}" for k, n in sorted(x.kinds.items())))
        assert x.first_violation is not None           # a violation was found: the first is kept
        faults, run = x.first_violation
        lines.append("  first violation (fewest faults): "
                     + ("; ".join(map(fault_text, faults)) or "no fault at all"))
        lines.append(f"    {counts_line(run)}")
    return "\n".join(lines)
