"""The check of a :class:`~simkit.service.scenarios.ServiceScenario` before the service world runs it: each
field of its type and within the bounds in which a run ends soon, else one
:class:`~simkit.service.config.ServiceConfigError` naming the field (docs/service.md, "Clients, judged").

A scenario is a public dataclass (``dataclasses.replace`` of a bundled one, say), and a field the world cannot
honour ran anyway: ``limit=0`` or ``version=3`` halted the correct client on a 400 (NOT ok), a crash at no
crash point or of no worker was dropped (ok, as if survived), and ``time_limit=inf`` or ``append_every=0``
never ended.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .canonical import show
from .checkpoints import STORES
from .clients import CLIENTS
from .config import ServiceConfigError
from .contract import MAX_LIMIT, MAX_SCAN_LIMIT
from .scenarios import CRASH_POINTS, RECORD_STATES, ServiceScenario

__all__ = ["MAX_CALLS", "MAX_CHANGES", "MAX_RECORDS", "MAX_WORKERS", "checked", "faults"]

#: Workers a scenario may have; journal entries a run may write (``initial_changes`` and the appender's, as a
#: ``serve`` config's journals); records from before the journal; calls one worker may make in ``time_limit``
#: (``time_limit / min(call_latency, backoff)``): a run ends in seconds.
MAX_WORKERS, MAX_CHANGES, MAX_RECORDS, MAX_CALLS = 4, 2_000, 1_000, 10_000


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _refuse(name: str, value, problem: str, param: str | None = None):
    raise ServiceConfigError(f"{name} {show(value)}: {problem}", param=param or name)


def faults(param: str, value, workers: int) -> tuple:
    """``lost_writes`` and ``server_crashes`` (``(worker, n)`` each) or ``crashes`` (``(worker, point, n)``,
    ``point`` one of :data:`CRASH_POINTS`) as a tuple of tuples, or a :class:`ServiceConfigError` naming the
    parameter. A list is read as a tuple: ``simkit service --explore --json`` prints a schedule in lists,
    and a list never equals the tuple the world looks for, so a failing schedule replayed ran without its
    faults."""
    shape = "(worker, point, n)" if param == "crashes" else "(worker, n)"
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        _refuse(param, value, f"a list of {shape}")
    out = []
    for i, item in enumerate(value):
        fault = tuple(item) if isinstance(item, (list, tuple)) else ()
        if (len(fault) != len(shape.split(",")) or not all(_whole(x) for x in (fault[0], fault[-1]))
                or not 1 <= fault[0] <= workers or fault[-1] < 1
                or (param == "crashes" and fault[1] not in CRASH_POINTS)):
            _refuse(f"{param}[{i}]", item, f"expected {shape} with worker 1-{workers}"
                    + (f", point one of {', '.join(CRASH_POINTS)}" if param == "crashes" else "")
                    + " and n a whole number from 1", param)
        out.append(fault)
    return tuple(out)


def _seconds(sc: ServiceScenario, name: str, positive: bool = False) -> None:
    v = getattr(sc, name)
    if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and (v > 0 if positive else v >= 0)):
        _refuse(name, v, f"simulated seconds, a finite number {'above' if positive else 'from'} 0")


def _whole_in(sc: ServiceScenario, name: str, low: int, high: int) -> None:
    v = getattr(sc, name)
    if not _whole(v) or not low <= v <= high:
        _refuse(name, v, f"a whole number {low}-{high:,}")


def _names(sc: ServiceScenario, name: str, allowed, empty: bool = True, none: bool = False) -> None:
    v = getattr(sc, name)
    if (not isinstance(v, tuple) or (not v and not empty)
            or not all((x is None and none) or (isinstance(x, str) and x in allowed) for x in v)):
        _refuse(name, v, "a tuple of " + ("None (the client under test) or " if none else "")
                + ", ".join(allowed))


def checked(sc: ServiceScenario) -> ServiceScenario:
    """``sc`` with its faults as tuples, once every field is checked; else one :class:`ServiceConfigError`."""
    _names(sc, "workers", CLIENTS, empty=False, none=True)
    if len(sc.workers) > MAX_WORKERS:
        _refuse("workers", sc.workers, f"at most {MAX_WORKERS} workers")
    if not _whole(sc.version) or sc.version not in (1, 2):
        _refuse("version", sc.version, "the contract versions are 1 and 2")
    _whole_in(sc, "initial_changes", 0, MAX_CHANGES)
    _whole_in(sc, "limit", 1, MAX_LIMIT)
    _whole_in(sc, "scan_limit", 1, MAX_SCAN_LIMIT)
    for name in ("apply_latency", "timeout", "restart_delay", "append_until"):
        _seconds(sc, name)
    for name in ("call_latency", "backoff", "append_every", "time_limit"):
        _seconds(sc, name, positive=True)
    if sc.time_limit / min(sc.call_latency, sc.backoff) > MAX_CALLS:
        _refuse("time_limit", sc.time_limit, f"at most {MAX_CALLS:,} calls' time (time_limit / "
                                             f"min(call_latency, backoff))")
    if sc.initial_changes + sc.append_until / sc.append_every > MAX_CHANGES:
        _refuse("append_every", sc.append_every, f"at most {MAX_CHANGES:,} changes in all (initial_changes + "
                                                 f"append_until / append_every)")
    if sc.restore_at is not None:
        for name in ("backup_at", "restore_at"):
            _seconds(sc, name)
        if sc.backup_at is None or sc.restore_at < sc.backup_at:      # (None: refused by _seconds)
            _refuse("restore_at", sc.restore_at, f"after backup_at {show(sc.backup_at)}")
    p = sc.pause
    if p is not None and not (isinstance(p, tuple) and len(p) == 3 and _whole(p[0])
                              and 1 <= p[0] <= len(sc.workers)
                              and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                      and math.isfinite(x) and x >= 0 for x in p[1:])):
        _refuse("pause", p, f"None or (worker 1-{len(sc.workers)}, at, duration) in simulated seconds")
    if (not isinstance(sc.existing_records, str) or len(sc.existing_records) > MAX_RECORDS
            or not set(sc.existing_records) <= set(RECORD_STATES)):
        _refuse("existing_records", sc.existing_records, f"at most {MAX_RECORDS:,} of the letters "
                                                         f"{', '.join(RECORD_STATES)}")
    if not isinstance(sc.initial_scan, bool):
        _refuse("initial_scan", sc.initial_scan, "True or False")
    if sc.store not in STORES:
        _refuse("store", sc.store, f"one of {', '.join(STORES)}")
    _names(sc, "clients", CLIENTS)
    _names(sc, "compare_stores", STORES)
    n = len(sc.workers)
    return replace(sc, lost_writes=faults("lost_writes", sc.lost_writes, n),
                   crashes=faults("crashes", sc.crashes, n),
                   server_crashes=faults("server_crashes", sc.server_crashes, n))
