"""A deterministic SimPy world around the seed 004 service (docs/service.md, "Clients, judged").


Workers drive :mod:`simkit.service.clients` generators against the model (through
:class:`ModelTransport`), with call latency, lost write replies (the write commits; the reply never
comes), crashes at named points (the client's memory is gone; its durable effect ledger stays), a
concurrent writer appending to the feed, other workers sharing the same consumer id, an operator
restoring an older backup mid-run, records from before the journal that a consumer must scan for
(many of them deleted or private to another subject), and the server dying between a checkpoint
command's two writes (``server_crashes``, with the store of
:data:`~simkit.service.checkpoints.STORES` the scenario names). A scenario is checked before it runs
(:mod:`simkit.service.scenario_check`).

It records the ground truth the checker (:mod:`simkit.service.verdict`) judges: effects, the client's durable
ledger, checkpoint write replies, query pages, reconciliations and every call.
"""
from __future__ import annotations

import simpy

from simkit.ops import LOST

from .checkpoints import CheckpointService, ManualClock
from .clients import CLIENTS, DIVERGED, QUERY, WRITE, Apply, ApplyRecord, Call, Halt, Reconcile, Wait
from .config import DEV_SCOPE, DEV_TENANT, ServiceConfigError, dev_service
from .scenario_check import checked
from .scenarios import RECORD_STATES, ServiceScenario
from .transport import ModelTransport, ReplyLost

__all__ = ["ServiceWorld"]


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
        sc = checked(sc)                                # every field, before anything runs
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
        #: (journal_id, sequence) -> the identity the ledger holds its effect under
        self._at: dict[tuple, tuple] = {}
        #: (time, worker, journal_id, sequence, change_digest) for every external effect that ran
        self.effects: list[tuple] = []
        #: (time, worker, record_id, record_revision) for every record state the initial scan applied
        self.record_effects: list[tuple] = []
        #: (service sequence at the reply, worker, command, status, body) for every checkpoint write reply
        #: received
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

    # -- running ---------------------------------------------------------------------------------------------
    def run(self) -> ServiceWorld:
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
            self.svc.append(DEV_TENANT, DEV_SCOPE, "updated" if n % 3 == 0 else "created",
                            f"rec-{n}-t{self.env.now:g}")

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
            if self._at.get(truth[:2], op.identity) != op.identity:
                return DIVERGED                           # another history's effect at this (journal, seq)
            self.effects.append((self.env.now, worker) + truth)   # effect and ledger entry commit together
            self.ledger[op.identity] = truth
            self._at[truth[:2]] = op.identity
            self._crash_point(worker, "after_apply")
            return True
        if t is ApplyRecord:
            yield self.env.timeout(self.sc.apply_latency)
            if op.identity in self.ledger:
                return False
            rec_truth = (op.record["record_id"], op.record["record_revision"])
            # effect and ledger entry commit together
            self.record_effects.append((self.env.now, worker) + rec_truth)
            self.ledger[op.identity] = rec_truth
            self._crash_point(worker, "after_apply")
            return True
        if t is Reconcile:
            keep = op.keep
            gone = [i for i, truth in self.ledger.items()
                    if not (keep is not None and truth[0] == keep["journal_id"]
                            and truth[1] <= keep["sequence"])
                    and op.have.get(truth[:2]) != truth[2]]
            self.reconciled.append((self.env.now, worker, op.reason, [self.ledger.pop(i) for i in gone]))
            self._at = {truth[:2]: i for i, truth in self.ledger.items() if i[0] != "record"}
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
            self.write_replies.append((self.svc.seq, worker, op.body["command"], r.status, r.body))
            self._crash_point(worker, "after_write")
        return r

