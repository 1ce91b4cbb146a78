"""Run and explore the seed 004 service world (docs/service.md, "Clients,
judged"): one client on one scenario, judged (:func:`run_service_scenario`),
or every schedule of crashes and lost replies (:func:`explore_service`).

The parts: :mod:`simkit.service.scenarios` (what a run needs, the bundled scenarios),
:mod:`simkit.service.simworld` (the SimPy world) and :mod:`simkit.service.verdict` (the checker, from ground
truth only); their names are answered here too.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from simkit.model import MAX_FAULTS

from .checkpoints import STORES
from .config import DEV_SCOPE, DEV_TENANT, ServiceConfigError
from .scenario_check import faults
from .scenarios import CRASH_POINTS, RECORD_STATES, SCENARIOS, ServiceScenario, scenario
from .simworld import ServiceWorld
from .verdict import ServiceVerdict, acknowledged_twice, broken_receipts, effect_fate, judge, missed_records

__all__ = [
    "CRASH_POINTS", "RECORD_STATES", "SCENARIOS", "ServiceRun", "ServiceScenario", "ServiceVerdict",
    "ServiceWorld", "MAX_FAULTS", "acknowledged_twice", "broken_receipts", "effect_fate", "explore_service",
    "judge", "missed_records", "run_service_scenario", "scenario",
]



@dataclass
class ServiceRun:
    scenario: str
    client: str
    version: int
    verdict: ServiceVerdict
    world: ServiceWorld = field(repr=False)

    def as_dict(self) -> dict:
        w = self.world
        final = w.svc.checkpoints.get(("dev", (DEV_TENANT, tuple(DEV_SCOPE.values())), self.version,
                                       w.CONSUMER))
        return {"scenario": self.scenario, "client": self.client, "version": self.version,
                **self.verdict.as_dict(), "final_checkpoint": final.public() if final else None,
                "journal_head": max(j.head for j in w.svc.journals.values()),
                "crashes": w.crashes, "effects": len(w.effects), "commands": len(w.svc.writes),
                "lost_replies": sum(1 for c in w.calls if c[3] == "lost"), "store": w.sc.store,
                "record_effects": len(w.record_effects)}


def run_service_scenario(name="checkpoint_service", client: str = "correct", version: int | None = None,
                         lost_writes=None, crashes=None, store: str | None = None) -> ServiceRun:
    """Run one client on one service scenario and judge it: a pure function of its arguments. ``store``
    overrides the scenario's (:data:`simkit.service.checkpoints.STORES`)."""
    sc = scenario(name)
    if version is not None:
        sc = replace(sc, version=version)          # checked with the rest (scenario_check.checked)
    if store is not None:
        if store not in STORES:
            raise ServiceConfigError(f"store {store!r}: one of {', '.join(STORES)}")
        sc = replace(sc, store=store)
    if lost_writes is not None:
        sc = replace(sc, lost_writes=faults("lost_writes", lost_writes, len(sc.workers)))
    if crashes is not None:
        sc = replace(sc, crashes=faults("crashes", crashes, len(sc.workers)))
    world = ServiceWorld(sc, client).run()
    return ServiceRun(sc.name, client, sc.version, judge(world), world)


def explore_service(name="checkpoint_service", client: str = "correct", version: int | None = None,
                    max_crashes: int = 2, lost_replies: int = 1, horizon: int = 3, keep_faults: bool = False,
                    store: str | None = None):
    """Every combination of up to ``max_crashes`` crashes of worker 1, the client under test (each crash
    point, occurrences 1..``horizon``), and up to ``lost_replies`` lost replies to its checkpoint writes
    (occurrences 1..``horizon``). Returns an iterator of runs. As in :func:`simkit.tools.explore.explore`, the
    scenario's own lost replies and crashes are dropped, unless ``keep_faults``: then every schedule adds to
    them. Its ``server_crashes`` are its premise and always kept; ``store`` overrides its store.

    ``max_crashes`` and ``lost_replies`` are 0..:data:`MAX_FAULTS`, ``horizon`` at least 0 (else a
    :class:`ServiceConfigError` naming the parameter, before any run). The schedules are made as they run,
    never listed up front: a huge ``horizon`` costs time, not memory.
    """
    for param, bound, k in (("max_crashes", max_crashes, "K"), ("lost_replies", lost_replies, "L"),
                            ("horizon", horizon, None)):
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 0:
            raise ServiceConfigError(f"{param} {bound!r}: must be a whole number, at least 0", param=param)
        if k and bound > MAX_FAULTS:
            raise ServiceConfigError(f"{param} {bound}: at most {MAX_FAULTS}, as in simkit explore "
                                     f"(schedules grow "
                                     f"as occurrences ** {k})", param=param)
    sc = scenario(name)
    return _schedules(sc, client, version, max_crashes, lost_replies, horizon, keep_faults, store)


def _schedules(sc: ServiceScenario, client, version, max_crashes, lost_replies, horizon, keep_faults, store):
    base_lost, base_crashes = (sc.lost_writes, sc.crashes) if keep_faults else ((), ())
    points = _Occurrences(tuple((p,) for p in CRASH_POINTS), horizon, base_crashes)
    losses = _Occurrences(((),), horizon, base_lost)
    for k in range(max_crashes + 1):
        for crashes in _combinations(points, k):
            for j in range(lost_replies + 1):
                for lost in _combinations(losses, j):
                    yield run_service_scenario(sc, client, version, lost_writes=base_lost + lost,
                                               crashes=base_crashes + crashes, store=store)


class _Occurrences:
    """The faults ``(1, *key, n)`` of worker 1 for each key (in order) and n = 1..``horizon``, except those in
    ``skip``: a sequence computed item by item, never built, so its length may be any number: :attr:`size`
    (``len()`` stops at ``sys.maxsize``, and ``--horizon 10**23`` was an ``OverflowError`` traceback)."""

    def __init__(self, keys: tuple[tuple, ...], horizon: int, skip):
        self.keys, self.horizon = keys, horizon
        at = {key: i for i, key in enumerate(keys)}
        #: positions of the skipped faults in the full grid, ascending
        self.holes = sorted({at[f[1:-1]] * horizon + f[-1] - 1 for f in skip
                             if f[0] == 1 and f[1:-1] in at and 1 <= f[-1] <= horizon})
        self.size = len(keys) * horizon - len(self.holes)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple:
        for hole in self.holes:                 # the i-th position that is not a hole
            if hole > i:
                break
            i += 1
        key, n = divmod(i, self.horizon)
        return (1, *self.keys[key], n + 1)


def _combinations(pool, k: int):
    """``itertools.combinations(pool, k)``, in the same order, without copying ``pool`` (an
    :class:`_Occurrences`, of any :attr:`~_Occurrences.size`) first."""
    n = pool.size
    if k > n:
        return
    idx = list(range(k))
    while True:
        yield tuple(pool[i] for i in idx)
        for i in reversed(range(k)):
            if idx[i] != i + n - k:
                break
        else:
            return
        idx[i] += 1
        for j in range(i + 1, k):
            idx[j] = idx[j - 1] + 1
