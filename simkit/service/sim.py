"""A deterministic SimPy world around the seed 004 service, and a checker that judges it from ground truth.

Workers drive :mod:`simkit.service.clients` generators against the model (through :class:`ModelTransport`),
with call latency, lost write replies (the write commits; the reply never comes), crashes at named points
(the client's memory is gone; its durable effect ledger stays), a concurrent writer appending to the feed,
other workers sharing the same consumer id, an operator restoring an older backup mid-run, records from before
the journal that a consumer must scan for (many of them deleted or private to another subject), and the server
dying between a checkpoint command's two writes (``server_crashes``, with the store of :data:`STORES` the scenario
names).

The checker never asks a client anything. It reads the service's journal, checkpoints and committed
commands, the sink's log of effects and reconciliations, and the transport log of who sent what:

- ``lost``: entries of the final journal at or below the consumer's final checkpoint whose effect never ran;
- ``duplicated``: entries (journal, sequence, change digest) whose effect ran more than once;
- ``regressions``: committed checkpoint changes that moved a cursor or revision backwards;
- ``duplicate_acks``: one page acknowledged by two committed commands (same worker, same cursor, no page
  read in between): a lost write retried as a new command instead of the identical one;
- ``unreconciled``: effects of entries the final journal does not have (a restore dropped them) that no
  client reported through an explicit reconciliation;
- ``missed`` (scenarios with ``initial_scan``): records available to the consumer's subject at the end whose
  current state it never received, from the initial scan or from the feed (seed 004: *"An empty query page with
  next_after still requires continuation"*). In those scenarios ``lost`` starts after the cursor the consumer
  created its checkpoint at: the scan, not the feed, answers for what the journal held before it;
- ``broken_receipts``: idempotency keys of checkpoint commands for which the service broke seed 004's receipt
  promise: an identical retry of a committed command answered with anything but its receipt (no restore between),
  or a 200 receipt for a checkpoint the service never committed. Only a store that splits the checkpoint from its
  receipt, crashing between the two, does either;
- ``completed``: the consumer's checkpoint reached the journal's head before the time limit.

``ok`` is true exactly when every list is empty, ``regressions`` and ``duplicate_acks`` are 0 and
``completed`` is true.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

import simpy

from simkit.ops import LOST
from .checkpoints import STORES, CheckpointService, ManualClock
from .clients import CLIENTS, CHANGES, QUERY, WRITE, Apply, ApplyRecord, Call, Halt, Reconcile, Wait
from .config import DEV_SCOPE, DEV_TENANT, ServiceConfigError, dev_service
from .transport import ModelTransport, ReplyLost

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
    #: records from before the journal, one letter each (:data:`RECORD_STATES`): ``v`` visible to the consumer's
    #: subject, ``d`` deleted, ``p`` private to another subject; named ``mem-00``, ``mem-01``, ... (scan order)
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
        "Seed 004 Read or create progress: no checkpoint yet, and 24 records from before the journal, the first "
        "four deleted or private; the initial memory query scan's first page is empty but has a next_after",
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


@dataclass
class ServiceVerdict:
    lost: list = field(default_factory=list)
    duplicated: list = field(default_factory=list)
    regressions: int = 0
    duplicate_acks: int = 0
    unreconciled: list = field(default_factory=list)
    halted: str | None = None
    completed: bool = True
    conflicts: int = 0
    reconciliations: int = 0
    missed: list = field(default_factory=list)
    broken_receipts: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.lost and not self.duplicated and self.regressions == 0 and self.duplicate_acks == 0
                and not self.unreconciled and not self.missed and not self.broken_receipts and self.completed)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "lost": self.lost, "duplicated": self.duplicated, "regressions": self.regressions,
                "duplicate_acks": self.duplicate_acks, "unreconciled": self.unreconciled, "halted": self.halted,
                "completed": self.completed, "conflicts": self.conflicts, "reconciliations": self.reconciliations,
                "missed": self.missed, "broken_receipts": self.broken_receipts}


class _Crash(Exception):
    pass


class _Halted(Exception):
    pass


class ServiceWorld:
    """One run: the service, the sink (effects and the client's durable ledger), workers, faults."""

    CONSUMER = "context-cache"

    def __init__(self, sc: ServiceScenario, client: str = "correct"):
        if client not in CLIENTS:
            raise ServiceConfigError(f"unknown client {client!r}; one of {', '.join(CLIENTS)}")
        if sc.store not in STORES:
            raise ServiceConfigError(f"unknown store {sc.store!r}; one of {', '.join(STORES)}")
        unknown = set(sc.existing_records) - set(RECORD_STATES)
        if unknown:
            raise ServiceConfigError(f"existing_records: unknown state {sorted(unknown)[0]!r}; one of "
                                     f"{', '.join(RECORD_STATES)}")
        self.sc, self.client = sc, client
        self.env = simpy.Environment()
        self.clock = ManualClock()
        records = tuple((f"mem-{i:02d}", RECORD_STATES[c]) for i, c in enumerate(sc.existing_records))
        self.svc: CheckpointService = dev_service(self.clock, changes=0, records=records, store=sc.store)
        for i in range(sc.initial_changes):
            self.svc.append(DEV_TENANT, DEV_SCOPE, "created", f"note-{i}", "seed-writer")
        self.transport = ModelTransport(self.svc)
        #: identity -> (journal_id, sequence, change_digest) of the effect; the consumer's durable ledger
        self.ledger: dict[tuple, tuple] = {}
        #: (time, worker, journal_id, sequence, change_digest) for every external effect that ran
        self.effects: list[tuple] = []
        #: (time, worker, record_id, record_revision) for every record state the initial scan applied
        self.record_effects: list[tuple] = []
        #: (service sequence at the reply, worker, command, status, body) for every checkpoint write reply received
        self.write_replies: list[tuple] = []
        #: (time, worker, filter.next_after sent, page) for every memory query page received
        self.scan_pages: list[tuple] = []
        #: (time, worker, reason, [(journal_id, sequence, change_digest)]) for every explicit reconciliation
        self.reconciled: list[tuple] = []
        #: (time, worker, route, status or "lost", committed write record or None)
        self.calls: list[tuple] = []
        self.halts: list[tuple] = []
        self.crashes = 0
        self._counts: dict[tuple, int] = {}
        self._paused = False

    # -- running ---------------------------------------------------------------------------------------------------
    def run(self) -> "ServiceWorld":
        for w, name in enumerate(self.sc.workers, start=1):
            self.env.process(self._worker(w, CLIENTS[name or self.client]))
        self.env.process(self._appender())
        if self.sc.restore_at is not None:
            self.env.process(self._operator())
        self.env.run(until=self.sc.time_limit)
        return self

    def _now(self) -> None:
        self.clock.now_millis = int(self.env.now * 1000)

    def _appender(self):
        n = 0
        while self.env.now + self.sc.append_every <= self.sc.append_until:
            yield self.env.timeout(self.sc.append_every)
            self._now()
            n += 1
            self.svc.append(DEV_TENANT, DEV_SCOPE, "updated" if n % 3 == 0 else "created", f"rec-{n}-t{self.env.now:g}")

    def _operator(self):
        yield self.env.timeout(self.sc.backup_at)
        backup = self.svc.backup()
        yield self.env.timeout(self.sc.restore_at - self.sc.backup_at)
        self._now()
        self.svc.restore(backup)

    def _worker(self, worker: int, cls):
        incarnation = 0
        while True:
            gen = cls(worker, self.CONSUMER, dict(DEV_SCOPE), self.sc.version, self.sc.limit, incarnation,
                      initial_scan=self.sc.initial_scan, scan_limit=self.sc.scan_limit).run()
            result = None
            try:
                while True:
                    op = gen.send(result)
                    result = yield from self._execute(worker, op)
            except _Crash:
                gen.close()
                self.crashes += 1
                incarnation += 1
                yield self.env.timeout(self.sc.restart_delay)
            except _Halted:
                gen.close()
                return

    def _hit(self, key) -> int:
        self._counts[key] = self._counts.get(key, 0) + 1
        return self._counts[key]

    def _crash_point(self, worker: int, point: str) -> None:
        n = self._hit(("point", worker, point))
        if (worker, point, n) in self.sc.crashes:
            raise _Crash

    def _execute(self, worker: int, op):
        p = self.sc.pause
        if p and not self._paused and worker == p[0] and self.env.now >= p[1]:
            self._paused = True
            yield self.env.timeout(p[2])
        t = type(op)
        if t is Call:
            return (yield from self._call(worker, op))
        if t is Apply:
            yield self.env.timeout(self.sc.apply_latency)
            c = op.entry["cursor"]
            truth = (c["journal_id"], c["sequence"], op.entry["change_digest"])
            if op.identity in self.ledger:
                return False
            self.effects.append((self.env.now, worker) + truth)   # effect and ledger entry commit together
            self.ledger[op.identity] = truth
            self._crash_point(worker, "after_apply")
            return True
        if t is ApplyRecord:
            yield self.env.timeout(self.sc.apply_latency)
            if op.identity in self.ledger:
                return False
            truth = (op.record["record_id"], op.record["record_revision"])
            self.record_effects.append((self.env.now, worker) + truth)   # effect and ledger entry commit together
            self.ledger[op.identity] = truth
            self._crash_point(worker, "after_apply")
            return True
        if t is Reconcile:
            keep = op.keep
            gone = [i for i, truth in self.ledger.items()
                    if not (keep is not None and truth[0] == keep["journal_id"] and truth[1] <= keep["sequence"])
                    and op.have.get(truth[:2]) != truth[2]]
            self.reconciled.append((self.env.now, worker, op.reason, [self.ledger.pop(i) for i in gone]))
            return gone
        if t is Wait:
            yield self.env.timeout(self.sc.backoff)
            return None
        if t is Halt:
            self.halts.append((self.env.now, worker, op.reason))
            raise _Halted
        raise TypeError(f"unknown request {op!r}")

    def _call(self, worker: int, op: Call):
        write = op.route == WRITE
        if write:
            self._crash_point(worker, "before_write")
        yield self.env.timeout(self.sc.call_latency)
        self._now()
        before = len(self.svc.writes)
        n = self._hit(("write", worker)) if write else 0
        crash = write and (worker, n) in self.sc.server_crashes
        try:
            r = self.transport.post(op.route, op.body, faults=("crash-mid-write",) if crash else ())
        except ReplyLost:                                 # the server died mid-write: no reply
            r = None
        committed = self.svc.writes[-1] if len(self.svc.writes) > before else None
        if r is None or (write and (worker, n) in self.sc.lost_writes):
            self.calls.append((self.env.now, worker, op.route, "lost", committed))
            yield self.env.timeout(self.sc.timeout)
            return LOST
        self.calls.append((self.env.now, worker, op.route, r.status, committed))
        if op.route == QUERY and r.status == 200:
            self.scan_pages.append((self.env.now, worker, op.body["filter"]["next_after"], r.body))
        if write:
            self.write_replies.append((self.svc._seq, worker, op.body["command"], r.status, r.body))
            self._crash_point(worker, "after_write")
        return r


def acknowledged_twice(world: ServiceWorld) -> list:
    """The committed commands (:class:`~simkit.service.checkpoints.WriteRecord`) that acknowledged the page their
    worker had just acknowledged, with no page read in between: ``duplicate_acks`` (a lost write retried as a new
    command instead of the identical one, seed 004 "Retry and reconnect correctly" step 4)."""
    acked: dict[int, dict] = {}
    out = []
    for _t, worker, route, _status, committed in world.calls:
        if route == CHANGES:
            acked.pop(worker, None)
        elif committed is not None:
            if acked.get(worker) == committed.after["cursor"]:
                out.append(committed)
            acked[worker] = committed.after["cursor"]
    return out


def effect_fate(world: ServiceWorld):
    """``fate(truth)`` for an effect that ran, ``truth`` its ``(journal_id, sequence, change_digest)``: ``backed``
    (its entry is in the final journal), ``reconciled`` (a restore dropped it and a reconciliation reported it) or
    ``unreconciled`` ("Restoring an older backup can put the server behind external consumer effects")."""
    journal = world.svc.journals[(DEV_TENANT, tuple(DEV_SCOPE.values()))]
    present = {(e.journal_id, e.sequence, e.change_digest) for e in journal.entries}
    reported = {truth for *_x, items in world.reconciled for truth in items}
    return lambda truth: "backed" if truth in present else "reconciled" if truth in reported else "unreconciled"


def broken_receipts(world: ServiceWorld) -> list[str]:
    """Idempotency keys whose checkpoint command the service did not answer as seed 004 promises: *"An identical
    retry returns its original receipt"* (a reply other than 200 to the identical command of one that committed,
    with no restore in between), and a receipt is a committed checkpoint (a 200 whose receipt's checkpoint no
    committed command wrote under its key)."""
    svc = world.svc
    committed: dict[str, list] = {}
    for rec in svc.writes:
        committed.setdefault(rec.idempotency_key, []).append(rec)
    restores = [s for s, _t in svc.restores]
    out: list[str] = []
    for at, _worker, cmd, status, body in world.write_replies:
        key = cmd["idempotency_key"]
        recs = committed.get(key, [])
        if status == 200:
            broken = not any(rec.after == body["receipt"]["checkpoint"] for rec in recs)
        else:
            broken = any(rec.seq <= at and not any(rec.seq < s <= at for s in restores)
                         and rec.after["cursor"] == cmd["cursor"] and rec.consumer_id == cmd["consumer_id"]
                         and cmd["expected_revision"] == (rec.before["revision"] if rec.before else 0)
                         for rec in recs)
        if broken and key not in out:
            out.append(key)
    return out


def missed_records(world: ServiceWorld, ran: dict) -> list[str]:
    """Record ids available to ``dev`` at the end whose current revision the consumer never received: not applied
    from a scan page, and no entry of that revision applied from the feed."""
    ns = (DEV_TENANT, tuple(DEV_SCOPE.values()))
    journal = world.svc.journals[ns]
    received = {(rid, rev) for _t, _w, rid, rev in world.record_effects}
    received |= {(e.record_id, e.record_revision) for e in journal.entries
                 if (e.journal_id, e.sequence, e.change_digest) in ran}
    return sorted(rid for rid, rec in world.svc.records.get(ns, {}).items()
                  if rec.available_to("dev") and (rid, rec.revision) not in received)


def judge(world: ServiceWorld) -> ServiceVerdict:
    """The verdict, from ground truth only (see the module docstring)."""
    svc, sc = world.svc, world.sc
    ns = (DEV_TENANT, tuple(DEV_SCOPE.values()))
    journal = svc.journals[ns]
    key = ("dev", ns, sc.version, world.CONSUMER)
    final = svc.checkpoints.get(key)
    v = ServiceVerdict(halted=world.halts[0][2] if world.halts else None)
    ran: dict[tuple, int] = {}
    for _t, _w, *truth in world.effects:
        ran[tuple(truth)] = ran.get(tuple(truth), 0) + 1
    v.duplicated = [f"{j[-4:]}:{s}" for (j, s, _d), n in ran.items() if n > 1]
    through = final.cursor["sequence"] if final and final.cursor["journal_id"] == journal.journal_id else 0
    start = 0
    if sc.initial_scan:                               # the scan answers for what the journal held before its cursor
        created = [rec for rec in svc.writes if rec.before is None and rec.consumer_id == world.CONSUMER
                   and rec.after["cursor"]["journal_id"] == journal.journal_id]
        start = created[-1].after["cursor"]["sequence"] if created else 0
        v.missed = missed_records(world, ran)
    v.lost = [f"{e.journal_id[-4:]}:{e.sequence}" for e in journal.entries[start:through]
              if (e.journal_id, e.sequence, e.change_digest) not in ran]
    fate = effect_fate(world)
    v.unreconciled = sorted(f"{j[-4:]}:{s}" for (j, s, d) in ran if fate((j, s, d)) == "unreconciled")
    restores = sorted(s for s, _t in svc.restores)
    last: dict[tuple, dict] = {}
    for rec in svc.writes:
        while restores and restores[0] < rec.seq:
            restores.pop(0)
            last.clear()                                  # a restore is the operator's rollback, not a write
        k = (rec.subject_id, rec.namespace, rec.version, rec.consumer_id)
        prev = last.get(k)
        if prev and (rec.after["revision"] <= prev["revision"]
                     or (rec.after["cursor"]["journal_id"] == prev["cursor"]["journal_id"]
                         and rec.after["cursor"]["sequence"] < prev["cursor"]["sequence"])):
            v.regressions += 1
        last[k] = rec.after
    v.duplicate_acks = len(acknowledged_twice(world))
    v.broken_receipts = broken_receipts(world)
    v.conflicts = sum(1 for call in world.calls if call[3] == 409)
    v.reconciliations = len(world.reconciled)
    v.completed = bool(final) and through == journal.head and not world.halts
    return v


@dataclass
class ServiceRun:
    scenario: str
    client: str
    version: int
    verdict: ServiceVerdict
    world: ServiceWorld = field(repr=False)

    def as_dict(self) -> dict:
        w = self.world
        final = w.svc.checkpoints.get(("dev", (DEV_TENANT, tuple(DEV_SCOPE.values())), self.version, w.CONSUMER))
        return {"scenario": self.scenario, "client": self.client, "version": self.version, **self.verdict.as_dict(),
                "final_checkpoint": final.public() if final else None, "journal_head": max(j.head for j in w.svc.journals.values()),
                "crashes": w.crashes, "effects": len(w.effects), "commands": len(w.svc.writes),
                "lost_replies": sum(1 for c in w.calls if c[3] == "lost"), "store": w.sc.store,
                "record_effects": len(w.record_effects)}


def scenario(name_or_scenario) -> ServiceScenario:
    if isinstance(name_or_scenario, ServiceScenario):
        return name_or_scenario
    if name_or_scenario not in SCENARIOS:
        raise ServiceConfigError(f"unknown service scenario {name_or_scenario!r}; one of {', '.join(SCENARIOS)}")
    return SCENARIOS[name_or_scenario]


def run_service_scenario(name="checkpoint_service", client: str = "correct", version: int | None = None,
                         lost_writes=None, crashes=None, store: str | None = None) -> ServiceRun:
    """Run one client on one service scenario and judge it: a pure function of its arguments. ``store``
    overrides the scenario's (:data:`simkit.service.checkpoints.STORES`)."""
    sc = scenario(name)
    if version is not None:
        if version not in (1, 2):
            raise ServiceConfigError(f"--version {version}: the contract versions are 1 and 2")
        sc = replace(sc, version=version)
    if store is not None:
        if store not in STORES:
            raise ServiceConfigError(f"--store {store!r}: one of {', '.join(STORES)}")
        sc = replace(sc, store=store)
    if lost_writes is not None:
        sc = replace(sc, lost_writes=tuple(lost_writes))
    if crashes is not None:
        sc = replace(sc, crashes=tuple(crashes))
    world = ServiceWorld(sc, client).run()
    return ServiceRun(sc.name, client, sc.version, judge(world), world)


def explore_service(name="checkpoint_service", client: str = "correct", version: int | None = None,
                    max_crashes: int = 2, lost_replies: int = 1, horizon: int = 3, keep_faults: bool = False,
                    store: str | None = None):
    """Every combination of up to ``max_crashes`` crashes of worker 1, the client under test (each crash point,
    occurrences 1..``horizon``), and up to ``lost_replies`` lost replies to its checkpoint writes (occurrences
    1..``horizon``). Yields runs. As in :func:`simkit.tools.explore.explore`, the scenario's own lost replies and crashes
    are dropped, unless ``keep_faults``: then every schedule adds to them. Its ``server_crashes`` are its premise and
    always kept; ``store`` overrides its store."""
    sc = scenario(name)
    base_lost, base_crashes = (sc.lost_writes, sc.crashes) if keep_faults else ((), ())
    points = [(1, p, n) for p in CRASH_POINTS for n in range(1, horizon + 1) if (1, p, n) not in base_crashes]
    losses = [(1, n) for n in range(1, horizon + 1) if (1, n) not in base_lost]
    for k in range(max_crashes + 1):
        for crashes in itertools.combinations(points, k):
            for j in range(lost_replies + 1):
                for lost in itertools.combinations(losses, j):
                    yield run_service_scenario(sc, client, version, lost_writes=base_lost + lost,
                                               crashes=base_crashes + crashes, store=store)
