"""The service world's scenarios: :class:`ServiceScenario` (everything a run needs) and the bundled
:data:`SCENARIOS` that ``simkit service`` runs (docs/service.md, "Clients, judged").
"""
from __future__ import annotations

from dataclasses import dataclass

from .checkpoints import STORES
from .config import ServiceConfigError

__all__ = ["CRASH_POINTS", "RECORD_STATES", "SCENARIOS", "ServiceScenario", "scenario"]

CRASH_POINTS = ("after_apply", "before_write", "after_write")
#: ``existing_records`` letters: the state of each record from before the journal, ``mem-00``, ``mem-01``, ...
RECORD_STATES = {"v": "visible", "d": "deleted", "p": "private"}


@dataclass(frozen=True)
class ServiceScenario:
    """Everything a run of the service world needs. Times are simulated seconds."""

    name: str
    description: str
    #: (client name, or None for the client under test) per worker; worker 1 is the client under test
    workers: tuple = (None,)
    version: int = 1
    initial_changes: int = 6
    limit: int = 3
    append_every: float = 4.0
    append_until: float = 60.0
    #: (worker, n): the reply to that worker's n-th checkpoint write is lost
    lost_writes: tuple = ()
    #: (worker, point, n): that worker crashes the n-th time it reaches the point
    crashes: tuple = ()
    backup_at: float | None = None
    restore_at: float | None = None
    #: (worker, at, duration): a stale worker stops for ``duration`` at its first step after ``at``
    pause: tuple | None = None
    call_latency: float = 1.0
    apply_latency: float = 0.5
    timeout: float = 3.0
    backoff: float = 5.0
    restart_delay: float = 2.0
    time_limit: float = 400.0
    #: records from before the journal, one letter each (:data:`RECORD_STATES`): ``v`` visible to the
    #: consumer's subject, ``d`` deleted, ``p`` private to another subject; named ``mem-00``, ``mem-01``, ...
    #: (scan order)
    existing_records: str = ""
    #: consumers without a checkpoint scan existing records first (the memory query), ``scan_limit`` a page
    initial_scan: bool = False
    scan_limit: int = 4
    #: the service's store (:data:`simkit.service.checkpoints.STORES`)
    store: str = "batched"
    #: (worker, n): the server dies between the two writes of that worker's n-th checkpoint write
    server_crashes: tuple = ()
    #: the clients ``simkit service`` runs by default
    clients: tuple = ("correct", "new_key_retry", "reset_on_409")
    #: the stores ``simkit service`` runs each client with by default, side by side (empty: just ``store``)
    compare_stores: tuple = ()


SCENARIOS = {
    "checkpoint_service": ServiceScenario(
        "checkpoint_service",
        "Seed 004: two workers share one consumer id (a concurrent writer), a feed writer appends, and "
        "checkpoint write replies are lost",
        workers=(None, "correct"), initial_changes=12, lost_writes=((1, 2), (1, 4), (2, 3)),
    ),
    "restore_from_backup": ServiceScenario(
        "restore_from_backup",
        "Seed 004 Recovery and limits: the operator restores an older backup; the consumer's cursor is ahead "
        "of the restored journal (409) and it must reconcile explicitly",
        workers=(None,), backup_at=14.0, restore_at=30.0, append_until=80.0,
    ),
    "restore_reused_numbers": ServiceScenario(
        "restore_reused_numbers",
        "Seed 004 Verified progress: a consumer paused across a restore wakes after new writes reused its "
        "sequence numbers; version 1 cannot tell, version 2's exact-history cursor can",
        workers=(None,), backup_at=14.0, restore_at=30.0, pause=(1, 24.0, 30.0), append_until=80.0,
    ),
    "initial_reconciliation": ServiceScenario(
        "initial_reconciliation",
        "Seed 004 Read or create progress: no checkpoint yet, and 24 records from before the journal, the "
        "first four deleted or private; the initial memory query scan's first page is empty but has a "
        "next_after",
        workers=(None,), initial_changes=4, existing_records="ddpp" "vvdv" "pdvp" "ddpd" "vpvv" "dvvp",
        initial_scan=True, limit=3, scan_limit=4, clients=("correct", "stop_on_empty_page"),
    ),
    "crash_mid_checkpoint_write": ServiceScenario(
        "crash_mid_checkpoint_write",
        "Seed 004: checkpoint and receipt commit in one synchronous WAL batch; the server dies during the "
        "consumer's 2nd checkpoint write (--store split: between the checkpoint and its receipt) and the "
        "consumer retries the identical command",
        workers=(None,), server_crashes=((1, 2),), clients=("correct",), compare_stores=STORES,
    ),
}



def scenario(name_or_scenario) -> ServiceScenario:
    if isinstance(name_or_scenario, ServiceScenario):
        return name_or_scenario
    if name_or_scenario not in SCENARIOS:
        raise ServiceConfigError(f"unknown service scenario {name_or_scenario!r}; one of "
                                 f"{', '.join(SCENARIOS)}")
    return SCENARIOS[name_or_scenario]

