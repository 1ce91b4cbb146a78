"""The command-line side of seed 004: ``simkit serve`` and ``simkit service``.

``simkit/cli.py`` calls :func:`add_parsers` and merges :data:`COMMANDS`; FastAPI and uvicorn are imported
only when ``serve`` runs.
"""
from __future__ import annotations

import argparse
import json
import time
from contextlib import contextmanager

from simkit.errors import SimkitError

from .checkpoints import STORES
from .config import FAULT_KINDS, FAULT_ROUTES
from .contract import CONTRACT_VERSIONS

__all__ = ["COMMANDS", "DEFAULT_PORT", "EXPLORE_BUDGET", "FLAGS", "MAX_BUDGET", "add_parsers", "cmd_serve",
           "cmd_service", "flagged"]

DEFAULT_PORT = 8004
#: ``service --explore --budget`` and ``explore --budget``: the default wall time, in seconds, and the most it
#: may be (docs/cli.md)
EXPLORE_BUDGET, MAX_BUDGET = 600.0, 1e6
#: The flag of ``simkit serve`` that sets each parameter a library error may name
#: (``ServiceConfigError.param``).
FLAGS = {"port": "--port", "store": "--store", "operator": "--operator", "config": "--config",
         "credentials": "--credential",
         "grants": "--grant", "faults": "--fault", "version": "--contract-version",
         "max_crashes": "--max-crashes", "lost_replies": "--lost-responses", "horizon": "--horizon"}


#: The options that bound ``service --explore``, refused without it (:func:`_explore_options`): parameter ->
#: (flag, type, metavar, default, what it bounds)
EXPLORE_ONLY = {
    "max_crashes": ("--max-crashes", int, "K", 2, "crashes per schedule, 0-50"),
    "lost_responses": ("--lost-responses", int, "L", 1, "lost write replies per schedule, 0-50"),
    "horizon": ("--horizon", int, "N", 3, "occurrences of each crash point / write to try"),
    "budget": ("--budget", float, "SECONDS", EXPLORE_BUDGET,
               "wall time --explore may take; past it, no schedule starts and nothing is reported"),
}


def add_parsers(sub) -> None:
    text = "the seed 004 checkpoint service and change feed on 127.0.0.1"
    p = sub.add_parser("serve", help=text, description=f"{text[0].upper()}{text[1:]}: checkpoint read and "
                       "compare-and-set write, the change feed and the memory query over HTTP, for the dev "
                       "subject (credential 'dev') unless flags or --config add others; its API docs at "
                       "/docs.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--config", metavar="FILE",
                   help="TOML file adding subjects, credentials, grants, journals, faults")
    p.add_argument("--credential", action="append", default=[], metavar="TOKEN=SUBJECT",
                   help="issue a bearer credential for a subject (created if new)")
    p.add_argument("--grant", action="append", default=[], metavar="SUBJECT=CAP[,CAP][@SCOPE_JSON]",
                   help="grant capabilities on an exact scope (default: the dev scope)")
    p.add_argument("--fault", action="append", default=[], metavar="KIND[@ROUTE][#N]",
                   help=f"start-up fault: KIND one of {', '.join(FAULT_KINDS)}; ROUTE one of "
                        f"{', '.join(FAULT_ROUTES)}; N the n-th matching request (default 1, '*' every one)")
    p.add_argument("--operator", metavar="TOKEN",
                   help="add the /_simkit/* operator routes (back up, restore, append), callable only by "
                        "subject 'operator' (role operator), whose credential TOKEN is; off by default")
    p.add_argument("--store", default="batched", metavar="STORE",
                   help="how a checkpoint and its receipt are written: batched (seed 004's one batch, "
                        "default), split (checkpoint, then receipt) or split_receipt_first; the "
                        "crash-mid-write fault dies between")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="how much the server logs on stderr: one line per request at info (default: info)")
    text = "a seed 004 client in the simulated service world, judged"
    p = sub.add_parser("service", help=text,
                       description=f"{text[0].upper()}{text[1:]}: correct and wrong clients "
                       "against the same model, with crashes, lost replies and restores, judged from the "
                       "service's ground truth.")
    p.add_argument("scenario", help="checkpoint_service, restore_from_backup, restore_reused_numbers, "
                                    "initial_reconciliation or crash_mid_checkpoint_write")
    p.add_argument("--client", default=None,
                   help="correct, new_key_retry, reset_on_409 or stop_on_empty_page "
                        "(default: the scenario's)")
    # --contract-version, not --version: `simkit --version` is simkit's own; --version stays accepted,
    # unlisted, in a dest of its own: the two given, the last won without a word (_contract_version)
    p.add_argument("--contract-version", type=int, default=None, dest="version", metavar="VERSION",
                   help="contract version 1 or 2 (default: the scenario's)")
    p.add_argument("--version", type=int, default=None, dest="old_version", help=argparse.SUPPRESS)
    p.add_argument("--store", default=None, metavar="STORE",
                   help="batched, split or split_receipt_first (default: the scenario's; "
                        "crash_mid_checkpoint_write runs all three side by side)")
    p.add_argument("--explore", action="store_true",
                   help="run every schedule of up to --max-crashes crashes and --lost-responses lost write "
                        "replies")
    # default None: not given (refused without --explore, then filled in: _explore_options)
    for flag, kind, metavar, default, what in EXPLORE_ONLY.values():
        p.add_argument(flag, type=kind, default=None, metavar=metavar, help=f"{what} (default: {default:g})")
    p.add_argument("--with-scenario-faults", action="store_true",
                   help="explore on top of the scenario's own lost replies and crashes (default: without "
                        "them)")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")


@contextmanager
def flagged():
    """Re-raise a :class:`~simkit.service.config.ServiceConfigError` that names a parameter (``store 'x':
    ...``) as naming its flag instead (``--store 'x': ...``)."""
    from .config import ServiceConfigError
    try:
        yield
    except ServiceConfigError as exc:
        message = str(exc)
        if exc.param not in FLAGS or not message.startswith(exc.param):
            raise
        raise ServiceConfigError(FLAGS[exc.param] + message[len(exc.param):]) from None


def cmd_serve(args) -> int:
    from .config import ServiceConfigError, build_service
    if not 0 <= args.port <= 65535:
        raise ServiceConfigError(f"--port {args.port}: must be 0-65535")
    from .http import WallClock, serve
    with flagged():
        svc, faults = build_service(WallClock(), args.config, args.credential, args.grant, args.fault,
                                    args.operator, args.store)
        serve(svc, faults, args.port, args.log_level)
    return 0


def _explore_options(args) -> None:
    """Refuse an option of ``--explore`` given without it (it was ignored without a word); else fill in the
    defaults."""
    from .config import ServiceConfigError
    given = [flag for key, (flag, *_rest) in EXPLORE_ONLY.items() if getattr(args, key) is not None]
    given += ["--with-scenario-faults"] if args.with_scenario_faults else []
    if given and not args.explore:
        raise ServiceConfigError(f"{given[0]}: only with --explore, whose schedules it bounds")
    for key, (_flag, _kind, _metavar, default, _what) in EXPLORE_ONLY.items():
        if getattr(args, key) is None:
            setattr(args, key, default)


def _contract_version(args) -> None:
    """``--contract-version``, or its old name ``--version``: both given, they must agree (the last won, and
    the other was dropped without a word); the one version is checked and left in ``args.version``."""
    from .config import ServiceConfigError
    old = getattr(args, "old_version", None)
    if old is not None and args.version is not None and old != args.version:
        raise ServiceConfigError(f"--contract-version {args.version} and --version {old}: give one "
                                 "(--version is the old name of --contract-version)")
    args.version = args.version if args.version is not None else old
    if args.version is not None and args.version not in CONTRACT_VERSIONS:
        raise ServiceConfigError(f"--contract-version {args.version}: the contract versions are 1 and 2")


def cmd_service(args) -> int:
    from .clients import CLIENTS
    from .config import ServiceConfigError
    from .sim import run_service_scenario, scenario
    sc = scenario(args.scenario)
    if args.client is not None and args.client not in CLIENTS:
        raise ServiceConfigError(f"--client {args.client!r}: one of {', '.join(CLIENTS)}")
    if args.store is not None and args.store not in STORES:
        raise ServiceConfigError(f"--store {args.store!r}: one of {', '.join(STORES)}")
    _contract_version(args)
    _explore_options(args)
    if not 0 < args.budget <= MAX_BUDGET:       # nan fails both comparisons
        raise ServiceConfigError(f"--budget {args.budget:g}: seconds from more than 0 to {MAX_BUDGET:g}")
    clients = [args.client] if args.client else list(sc.clients)
    if args.explore:
        return _explore(args, sc, clients)
    stores = [args.store] if args.store else list(sc.compare_stores or (sc.store,))
    with flagged():
        runs = [run_service_scenario(sc, name, args.version, store=store) for name in clients
                for store in stores]
    if args.json:
        print(json.dumps({"scenario": sc.name, "results": [r.as_dict() for r in runs]}))
        return 0
    print(f"{sc.name}: {sc.description}\n")
    _table(sc, runs, clients, stores)
    return 0


def _explore(args, sc, clients: list[str]) -> int:
    """``simkit service --explore``: every schedule per client, and the first failing one,
    within ``--budget`` seconds shared by the clients (schedules grow as occurrences ** K:
    ``--horizon 10**9`` never ended). Past the budget no schedule starts, and nothing is
    reported: one line, exit status 2, as ``simkit explore`` (docs/cli.md, "Bounds")."""
    from .sim import explore_service
    deadline = time.monotonic() + args.budget
    out = []
    for name in clients:
        with flagged():                 # a bound out of range: one line naming its flag, before any run
            tally = _tally(name, explore_service(sc, name, args.version, args.max_crashes,
                                                 args.lost_responses, args.horizon, args.with_scenario_faults,
                                                 args.store), deadline)
        if tally.get("complete") is False:
            raise SimkitError(f"service {sc.name} --explore: the budget of {args.budget:g} s (--budget) ran "
                              f"out after {tally['runs']} schedules of client {name}, before every schedule "
                               "was run; none is reported. Raise --budget, or ask for less (--max-crashes, "
                               "--lost-responses, --horizon)")
        out.append(tally)
    if args.json:
        print(json.dumps({"scenario": sc.name, "explore": out}))
        return 0
    for o in out:
        print(f"{sc.name} · {o['client']}: {o['runs'] - o['failing']}/{o['runs']} schedules ok")
    return 0


def _tally(client: str, runs, deadline: float | None = None) -> dict:
    """How many ``runs`` there were, how many failed, and the first failing one; a run is dropped once counted
    (memory stays flat however many schedules there are). Past ``deadline`` (``time.monotonic()``) no further
    run starts, and the tally says ``"complete": false``."""
    count, failing, first = 0, 0, None
    runs = iter(runs)
    while deadline is None or time.monotonic() < deadline:
        r = next(runs, None)
        if r is None:
            return {"client": client, "runs": count, "failing": failing, "first_failing": first}
        count += 1
        if not r.verdict.ok:
            failing += 1
            if first is None:
                first = {"crashes": [list(c) for c in r.world.sc.crashes],
                         "lost_writes": [list(x) for x in r.world.sc.lost_writes], **r.verdict.as_dict()}
    return {"client": client, "runs": count, "failing": failing, "first_failing": first, "complete": False}


def _shown(items: list, n: int) -> str:
    """``len(items)``, then the first ``n`` of them in parentheses."""
    if not items:
        return "0"
    return f"{len(items)} ({', '.join(items[:n])}{', …' if len(items) > n else ''})"


def _table(sc, runs: list, clients: list[str], stores: list[str]) -> None:
    """One line per run. The columns of the scan and of the
    store appear only where the scenario exercises them."""
    scan, store = sc.initial_scan, bool(sc.server_crashes) or stores != ["batched"]
    w = max([15] + [len(name) + 1 for name in clients])
    head = (f"{'client':{w}} {'v':2} {'ok':4} {'lost':26} {'dup':4} {'dup acks':9} {'unreconciled':14} "
            f"{'409s':5} "
            f"reconciled")
    if store:
        head = (f"{'client':{w}} {'v':2} {'store':20} {'ok':4} {'lost':26} {'dup':4} {'dup acks':9} "
                f"{'broken receipts':16} {'409s':5} reconciled")
    print(head + ("  missed" if scan else ""))
    for r in runs:
        v = r.verdict
        line = f"{r.client:{w}} {r.version:<2} "
        if store:
            line += f"{r.world.sc.store:20} "
        line += f"{'yes' if v.ok else 'NO':4} {_shown(v.lost, 2):26} "
        line += f"{len(v.duplicated):<4} {v.duplicate_acks:<9} "
        line += f"{len(v.broken_receipts):<16} " if store else f"{len(v.unreconciled):<14} "
        line += f"{v.conflicts:<5} {v.reconciliations:<10}"
        if scan:
            line += f"  {_shown(v.missed, 3)}"
        print(line.rstrip())


COMMANDS = {"serve": cmd_serve, "service": cmd_service}
