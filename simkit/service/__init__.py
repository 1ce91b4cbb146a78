"""Seed 004 ("Durable consumer checkpoints"), executable: a change feed, the memory records behind it and
their initial reconciliation scan, the checkpoint service, restore from backup, clients that use it right and
wrong, a deterministic simulation that judges them, and ``simkit serve``.

==============  ==============================================================================================
module          owns
==============  ==============================================================================================
contract        limits, request validation, the error table
canonical       canonical JSON and its digest; a caller's value cut short for a message
feed            the change feed: journal, pages, exact-history (version 2) cursors
memory          records in id order, and the initial memory query scan (``scan_limit``, ``next_after``)
checkpoints     :class:`CheckpointService` and its calls: checkpoint read and write, batched or split store
access          subjects, credentials, exact-scope grants, roles; the 401 and 403 checks
maintenance     journals, memory mutations with receipts, imported records, backup and restore, corruption
stored          stored values: checkpoint with digest, write record (ground truth), backup, receipt digests
options         the dev subject, start-up options (credentials, grants, operator), fault specs, their error
config          config files read and applied; :func:`build_service`: defaults, options and a file together
schema          the request and reply bodies as pydantic models, for the OpenAPI document
http            ``simkit serve``: :func:`create_app`, the seed routes, route errors, OpenAPI, :func:`serve`
apidocs         ``/docs`` and ``/redoc`` offline: Swagger UI and ReDoc served from an installed package
web             HTTP plumbing: no-store and lost-reply wrapper, error replies, body reading, OpenAPI helpers
admin           the ``/_simkit/*`` operator routes: backup, restore, append
server          uvicorn on 127.0.0.1: the socket, :func:`running`, the request deadline
transport       one call interface, in process or over HTTP; lost replies as ``ReplyLost``
clients         the correct client and the three wrong ones, as I/O-free generators
scenarios       :class:`ServiceScenario` and the bundled :data:`SCENARIOS`
scenario_check  a scenario checked before it runs: one error naming the field the world cannot honour
simworld        :class:`ServiceWorld`: the SimPy world (latency, lost replies, crashes, restores, server
                crashes)
verdict         the checker: :class:`ServiceVerdict` from ground truth only
sim             :func:`run_service_scenario` and :func:`explore_service`
plot            figures of runs: progress, outcomes, the initial scan
cli             ``simkit serve`` and ``simkit service``
==============  ==============================================================================================

The HTTP modules (http, web, admin, server) import FastAPI and uvicorn; nothing else here does.
"""
from .checkpoints import ROUTES, STORES, Backup, CheckpointService, ManualClock, Reply
from .config import DEV_SCOPE, DEV_TENANT, ServiceConfigError, build_service, dev_service
from .contract import MAX_REQUEST_BYTES, ServiceError
from .sim import SCENARIOS, explore_service, run_service_scenario

__all__ = [
    "DEV_SCOPE", "DEV_TENANT", "MAX_REQUEST_BYTES", "ROUTES", "STORES", "Backup", "CheckpointService",
    "ManualClock", "Reply", "SCENARIOS", "ServiceConfigError", "ServiceError", "build_service", "dev_service",
    "explore_service", "run_service_scenario",
]
