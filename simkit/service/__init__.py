"""Seed 004 ("Durable consumer checkpoints"), executable: a change feed, the memory records behind it and their
initial reconciliation scan, the checkpoint service, restore from backup, clients that use it right and wrong, a
deterministic simulation that judges them, and ``simkit serve``.

| module | owns |
| --- | --- |
| :mod:`~simkit.service.contract` | limits, request validation, digests, the error table |
| :mod:`~simkit.service.feed` | the change feed: journal, pages, exact-history (version 2) cursors |
| :mod:`~simkit.service.memory` | records, and the initial memory query scan (``scan_limit``, ``next_after``) |
| :mod:`~simkit.service.checkpoints` | the service model with an explicit clock and its route table; memory mutations with receipts; the batched (and, to compare, split) checkpoint store; backup and restore |
| :mod:`~simkit.service.config` | the dev subject, config files, start-up flags and fault specs |
| :mod:`~simkit.service.schema` | the request and reply bodies as pydantic models, for the OpenAPI document |
| :mod:`~simkit.service.http` | ``simkit serve``: FastAPI routes, OpenAPI, fault injection, uvicorn |
| :mod:`~simkit.service.transport` | one call interface, in process or over HTTP; lost replies as ``ReplyLost`` |
| :mod:`~simkit.service.clients` | the correct client and the three wrong ones, as I/O-free generators |
| :mod:`~simkit.service.sim` | the SimPy world, the ground-truth checker, scenarios, ``explore_service`` |
| :mod:`~simkit.service.cli` | ``simkit serve`` and ``simkit service`` |

The HTTP modules import FastAPI; nothing else here does.
"""
from .checkpoints import ROUTES, STORES, Backup, CheckpointService, ManualClock, Reply
from .config import DEV_SCOPE, DEV_TENANT, ServiceConfigError, build_service, dev_service
from .contract import MAX_REQUEST_BYTES, ServiceError
from .sim import SCENARIOS, explore_service, run_service_scenario

__all__ = [
    "DEV_SCOPE", "DEV_TENANT", "MAX_REQUEST_BYTES", "ROUTES", "STORES", "Backup", "CheckpointService", "ManualClock",
    "Reply", "SCENARIOS", "ServiceConfigError", "ServiceError", "build_service", "dev_service", "explore_service",
    "run_service_scenario",
]
