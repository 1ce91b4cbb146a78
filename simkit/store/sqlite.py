"""The durable store on SQLite (``store = "sqlite"``): the same port as
:class:`simkit.store.memory.MemoryStore`.

Seed 000 steps 1, 4 and 5 as SQL (:mod:`simkit.store.sql`): the page barrier is a conditional ``UPDATE`` on
cursor and version (invariant 3), receipts carry a unique key on event id (invariant 4), and an event's effect
(for a transactional sink), receipt and ``applied_position`` commit in one transaction (invariants 2 and 4).

The ground truth the checker reads (``checkpoint``, ``receipts``, ``writes``, ``receipt_log``, ``reads``) is
read back from the database, where triggers wrote it in the writers' own transactions; so a store opened on
the file after any number of SIGKILLs (:meth:`SQLiteStore.open`) is judged exactly like one that was never
interrupted. The simulation's verdicts and traces are the same on both stores.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import weakref
from pathlib import Path

from simkit.model import Checkpoint
from simkit.truth.clock import Clock, TimeSource
from simkit.truth.log import EffectRow, ReadRow, ReceiptRow, WriteRow

from . import sql
from .durable import DurableDict, DurableList, pack, transaction, unpack
from .limits import refuse_barrier, refuse_event, refuse_overwrite, refuse_unwritable
from .memory import MemoryStore
from .settlement import Ledger, Operation, Reply, Reservation, Transition

__all__ = ["make_store", "connect", "SQLiteStore", "SQLiteLedger"]


def make_store(kind: str, initial: Checkpoint, receipts: dict[str, tuple[str, int]] | None = None,
               clock: TimeSource | None = None):
    """The store a scenario names (``store = "memory" | "sqlite"``: docs/scenarios.md, "Top-level keys")."""
    if kind == "sqlite":
        return SQLiteStore(initial, receipts, clock)
    return MemoryStore(initial, receipts, clock)


def connect(path: str | os.PathLike, synchronous: str = "FULL") -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with WAL and ``synchronous = FULL``."""
    conn = sqlite3.connect(os.fspath(path), isolation_level=None, check_same_thread=False)
    conn.executescript(sql.PRAGMAS.replace("synchronous = FULL", f"synchronous = {synchronous}"))
    return conn


def _remove(directory: str, owner: int) -> None:
    if os.getpid() == owner:             # never from a forked child that inherited the object
        shutil.rmtree(directory, ignore_errors=True)


class SQLiteStore:
    """The durable store in a SQLite file.

    Args:
        initial: the checkpoint at time 0.
        receipts: event id -> (outcome, position) already durable at time 0.
        clock: stamps every durable write (simulated time in a run, real time in live mode).
        path: the database file to create, in WAL mode with ``synchronous = FULL``. By default (the
            simulation's store) a file in a fresh temporary folder, removed with the store, and written
            without fsync (``synchronous = OFF``): the file dies with the run, the simulation's crashes are
            process crashes, and in WAL mode a killed process loses no committed transaction whatever the
            setting. Same SQL.
    """

    def __init__(self, initial: Checkpoint, receipts: dict[str, tuple[str, int]] | None = None,
                 clock: TimeSource | None = None, path: str | os.PathLike | None = None):
        synchronous = "FULL"
        if path is None:
            folder = tempfile.mkdtemp(prefix="simkit-store-")
            weakref.finalize(self, _remove, folder, os.getpid())
            path, synchronous = Path(folder) / "store.db", "OFF"
        self.path = Path(path)
        db = connect(self.path, synchronous)
        db.executescript("BEGIN IMMEDIATE;" + sql.SCHEMA + "COMMIT;")
        self._attach(db, clock)
        with self._tx():
            self._db.execute(sql.INIT_CHECKPOINT, initial.as_dict())
            self._db.executemany(sql.INIT_RECEIPT, [
                {"event_id": eid, "outcome": out, "position": pos}
                for eid, (out, pos) in (receipts or {}).items()])

    @classmethod
    def open(cls, path: str | os.PathLike, clock: TimeSource | None = None) -> SQLiteStore:
        """Attach to an existing store file (a restarted worker, or the checker after a live run)."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"no store database at {path}")
        store = cls.__new__(cls)
        store.path = Path(path)
        store._attach(connect(path), clock)
        return store

    def _attach(self, conn: sqlite3.Connection, clock: TimeSource | None) -> None:
        self._db = conn
        self.clock = clock or Clock()
        self._cache: dict[str, tuple[int, object]] = {}
        #: seed 001: the durable operation records of external calls, their history and quarantine
        self.operations = SQLiteLedger(conn, self.clock)

    def close(self) -> None:
        self._db.close()

    def _tx(self):
        return transaction(self._db)

    def transaction(self):
        """A transaction on the store's database, for writes of a caller's that must land together."""
        return self._tx()

    def record_initial_effect(self, event_id: str) -> None:
        """The effect of an initial receipt: it happened before time 0 (sequence 0, time 0, worker 0)."""
        self._db.execute(sql.RECORD_EFFECT, {"seq": 0, "time": 0.0, "worker": 0, "event_id": event_id})

    def _stamp(self, worker: int, **params) -> dict:
        """The statement's parameters, stamped with the next sequence number, the time and the worker.

        Taken inside the write transaction, so sequence order is commit order even across processes.
        """
        return {"seq": self.clock.tick(), "time": self.clock.now, "worker": worker, **params}

    # -- the port (same as MemoryStore) -------------------------------------------------------------------
    def load(self, worker: int) -> Checkpoint:
        """Seed 000 step 1: read the checkpoint (and log the read: the attempt identity)."""
        with self._tx():
            row = self._db.execute(sql.LOAD, self._stamp(worker)).fetchall()[0]
        return Checkpoint(*row)

    def lookup(self, events) -> tuple[dict[str, str], dict[int, str]]:
        """Step 4: receipts of these events by id, and the
        ids holding a terminal receipt at their positions."""
        ids = json.dumps([e.id for e in events])
        positions = json.dumps(sorted({e.position for e in events}))
        own = not self._db.in_transaction
        if own:
            self._db.execute("BEGIN")        # one snapshot for both reads, even with other writers about
        try:
            by_id = dict(self._db.execute(sql.LOOKUP_BY_ID, {"ids": ids}).fetchall())
            by_position = dict(self._db.execute(sql.LOOKUP_BY_POSITION, {"positions": positions}).fetchall())
        finally:
            if own:
                self._db.execute("COMMIT")
        return by_id, by_position

    def id_at(self, position: int) -> str | None:
        """The id holding the last terminal receipt at ``position``, if any (as
        :meth:`~simkit.store.memory.MemoryStore.id_at`: explore's fingerprints)."""
        rows = self._db.execute(sql.LOOKUP_BY_POSITION, {"positions": json.dumps([position])}).fetchall()
        return rows[-1][1] if rows else None

    def commit_event(self, worker: int, event_id: str, position: int, outcome: str, applied_position: int,
                     effect=None) -> bool:
        """Step 4 / invariants 2 and 4: the effect (``effect()``, for a transactional sink), the receipt and
        the resulting ``applied_position`` in one transaction. ``False``, and nothing written, when the event
        already holds a terminal receipt."""
        refuse_unwritable(outcome, applied_position)      # what the memory store refuses, in its order
        refuse_event(event_id, position)
        with self._tx():
            held = self._db.execute(sql.RECEIPT_IS_TERMINAL, {"event_id": event_id}).fetchone()
            if held is not None and held[0]:
                return False
            if effect is not None:
                effect()
            params = self._stamp(worker, event_id=event_id, position=position, outcome=outcome,
                                 applied_position=applied_position)
            if self._db.execute(sql.WRITE_RECEIPT, params).rowcount != 1:
                raise sqlite3.IntegrityError(f"second terminal receipt for {event_id}")   # rolls back
            self._db.execute(sql.RAISE_APPLIED, params)
        return True

    def record_effect(self, worker: int, event_id: str) -> None:
        """The transactional sink's effect; call it as ``effect``
        of :meth:`commit_event` (same transaction)."""
        self._db.execute(sql.RECORD_EFFECT, self._stamp(worker, event_id=event_id))

    def compare_and_swap(self, worker: int, cursor: str, version: int, new_cursor: str, new_version: int,
                         applied_position: int) -> bool:
        """Step 5 / invariant 3: replace the cursor only if cursor and version still match the attempt.

        The stamp is taken before the conditional ``UPDATE`` runs, so a rejected barrier spends a sequence
        number that the memory store does not: later numbers are larger, in the same order (verdicts and
        traces agree).
        """
        refuse_barrier(cursor, version, new_cursor, new_version, applied_position)
        with self._tx():
            params = self._stamp(worker, cursor=cursor, version=version, next_cursor=new_cursor,
                                 next_version=new_version, applied_position=applied_position)
            return self._db.execute(sql.BARRIER, params).rowcount == 1

    def overwrite(self, worker: int, new_cursor: str, new_version: int, applied_position: int) -> bool:
        """An unconditional checkpoint write (only the ``no_version_check`` shortcut uses it)."""
        refuse_overwrite(new_cursor, new_version, applied_position)
        with self._tx():
            self._db.execute(sql.OVERWRITE, self._stamp(worker, next_cursor=new_cursor,
                                                        next_version=new_version,
                                                        applied_position=applied_position))
        return True

    # -- ground truth, read back from the database ---------------------------------------------------------
    @property
    def checkpoint(self) -> Checkpoint:
        return Checkpoint(*self._db.execute(sql.CHECKPOINT).fetchone())

    def _read(self, name: str, query: str, convert):
        """A log read back from the database; cached until this connection writes again."""
        changes = self._db.total_changes
        hit = self._cache.get(name)
        if hit is None or hit[0] != changes:
            hit = self._cache[name] = (changes, convert(self._db.execute(query).fetchall()))
        return hit[1]

    @property
    def receipts(self) -> dict[str, tuple[str, int]]:
        """event id -> (outcome, position)."""
        return self._read("receipts", sql.RECEIPTS, lambda rows: {eid: (out, pos) for eid, out, pos in rows})

    @property
    def writes(self) -> list[WriteRow]:
        """(seq, time, worker, kind, before, after) for every
        durable checkpoint change (``checkpoint_history``)."""
        return self._read("writes", sql.HISTORY, lambda rows: [
            WriteRow._make((*r[:4], Checkpoint(*r[4:7]), Checkpoint(*r[7:10]))) for r in rows])

    @property
    def receipt_log(self) -> list[ReceiptRow]:
        """(seq, time, worker, event id, outcome) for every durable receipt."""
        return self._read("receipt_log", sql.RECEIPT_LOG, lambda rows: list(map(ReceiptRow._make, rows)))

    @property
    def reads(self) -> list[ReadRow]:
        """(seq, time, worker, checkpoint) for every load."""
        return self._read("reads", sql.READS, lambda rows: [
            ReadRow(s, t, w, Checkpoint(*cp)) for s, t, w, *cp in rows])

    @property
    def effects(self) -> list[EffectRow]:
        """(seq, time, worker, event id) for every effect of the transactional sink (live mode)."""
        return self._read("effects", sql.EFFECTS, lambda rows: list(map(EffectRow._make, rows)))

    def integrity(self) -> str:
        """``PRAGMA integrity_check``: ``ok`` or the problems found."""
        return "; ".join(r[0] for r in self._db.execute("PRAGMA integrity_check").fetchall())


# -- seed 001: the operation records of external calls -------------------------------------------------------
def _reply(r: Reply | None) -> str | None:
    return None if r is None else pack([*_fields(r.identity), r.request, r.outcome])


def _unreply(text: str | None) -> Reply | None:
    if text is None:
        return None
    *identity, request, outcome = unpack(text)
    return Reply(Reservation(*identity), request, outcome)


def _fields(r: Reservation) -> tuple:
    return (r.operation_id, r.fingerprint, r.binding, r.generation)


_OPERATION = ("operation_id", "fingerprint", "binding", "generation", "state", "result")
_TRANSITION = ("seq", "time", "worker", "operation_id", "action", "before", "after",
               "fingerprint", "binding", "generation", "reply", "detail")


def _transition(t: Transition) -> tuple:
    return (t.seq, t.time, t.worker, t.operation_id, t.action, t.before, t.after, *_fields(t.reservation)[1:],
            _reply(t.reply), t.detail)


def _untransition(r) -> Transition:
    seq, time, worker, operation_id, action, before, after = r[:7]
    return Transition(seq, time, worker, operation_id, action, before, after,
                      Reservation(operation_id, *r[7:10]), _unreply(r[10]), r[11])


class SQLiteLedger(Ledger):
    """:class:`simkit.store.settlement.Ledger` with its
    records, history and quarantine in the store's database.

    The ledger's own code decides every transition; each method runs in one ``BEGIN IMMEDIATE`` transaction
    (``split_validate_write`` keeps its two), and the generation counter is the greatest ever reserved.
    """

    def __init__(self, db: sqlite3.Connection, clock: TimeSource):
        super().__init__(clock)
        self._db = db
        self.records = DurableDict(db, "operations", _OPERATION,
                                   lambda o: (*_fields(o.reservation), o.state, _reply(o.result)),
                                   lambda r: Operation(Reservation(*r[:4]), r[4], _unreply(r[5])))
        self.history = DurableList(db, "operation_history", _TRANSITION, _transition, _untransition)
        self.quarantine = DurableList(db, "operation_quarantine", _TRANSITION, _transition, _untransition)

    def reserve(self, *args, **kw) -> Operation:
        with transaction(self._db):
            self._generation = self._db.execute(
                "SELECT coalesce(max(generation), 0) FROM operation_history").fetchone()[0]
            return super().reserve(*args, **kw)

    def settle(self, *args, **kw) -> str:
        with transaction(self._db):
            return super().settle(*args, **kw)

    def validate(self, *args, **kw):
        with transaction(self._db):
            return super().validate(*args, **kw)

    def write(self, *args, **kw) -> str:
        with transaction(self._db):
            return super().write(*args, **kw)
