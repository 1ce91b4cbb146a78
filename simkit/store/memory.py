"""The durable store: checkpoint with compare-and-swap, receipt ledger, atomic event commits, and the operation
records of external calls (seed 001, :class:`~simkit.store.settlement.Ledger`).

Everything it holds survives a crash. Its write log is ground truth for the checker: every durable
checkpoint change with the state before and after, every receipt with the moment it became durable.
"""
from __future__ import annotations

from simkit.truth.clock import Clock
from simkit.truth.log import ReadLog, ReceiptLog, WriteLog
from simkit.model import TERMINAL, Checkpoint
from .settlement import Ledger


class MemoryStore:
    """The in-memory durable store (``store = "memory"``)."""

    def __init__(self, initial: Checkpoint, receipts: dict[str, tuple[str, int]] | None = None, clock: Clock | None = None):
        self.clock = clock or Clock()
        self._checkpoint = initial
        #: event id -> (outcome, position)
        self.receipts: dict[str, tuple[str, int]] = dict(receipts or {})
        self._id_at = {pos: eid for eid, (out, pos) in self.receipts.items() if out in TERMINAL}
        #: (seq, time, worker, kind, before, after) for every durable checkpoint change
        self.writes = WriteLog(initial)
        #: (seq, time, worker, event id, outcome) for every durable receipt
        self.receipt_log = ReceiptLog((0, 0.0, 0, eid, out) for eid, (out, _) in self.receipts.items())
        #: (seq, time, worker, checkpoint) for every load
        self.reads = ReadLog()
        #: seed 001: the durable operation records of external calls, their history and quarantine
        self.operations = Ledger(self.clock)

    @property
    def checkpoint(self) -> Checkpoint:
        """The durable checkpoint. Only a write changes it, and every write is a row of ``writes``."""
        return self._checkpoint

    def load(self, worker: int) -> Checkpoint:
        """Seed 000 step 1: read the checkpoint."""
        self.reads.add(self.clock.tick(), self.clock.now, worker, self._checkpoint)
        return self._checkpoint

    def lookup(self, events) -> tuple[dict[str, str], dict[int, str]]:
        """Receipts of these events by id, and the ids holding a terminal receipt at their positions."""
        by_id = {e.id: self.receipts[e.id][0] for e in events if e.id in self.receipts}
        by_position = {e.position: self._id_at[e.position] for e in events if e.position in self._id_at}
        return by_id, by_position

    def commit_event(self, worker: int, event_id: str, position: int, outcome: str, applied_position: int,
                     effect=None) -> bool:
        """Invariant 4: write a receipt, the resulting ``applied_position`` and (for a transactional sink, as
        ``effect()``) the effect itself, in one transaction.

        The receipt ledger is unique on event id: a second terminal receipt is refused (returns ``False``).
        ``applied_position`` never moves backwards here (``max``), whatever the caller asks.
        """
        old = self.receipts.get(event_id)
        if old is not None and old[0] in TERMINAL:
            return False
        if effect is not None:
            effect()
        self.receipts[event_id] = (outcome, position)
        if outcome in TERMINAL:
            self._id_at[position] = event_id
        seq, now = self.clock.tick(), self.clock.now
        self.receipt_log.add(seq, now, worker, event_id, outcome)
        cp = self._checkpoint
        if applied_position > cp.applied_position:
            self._checkpoint = Checkpoint(cp.resume_cursor, applied_position, cp.checkpoint_version)
            self.writes.add(seq, now, worker, "commit", cp.resume_cursor, applied_position, cp.checkpoint_version)
        return True

    def compare_and_swap(self, worker: int, cursor: str, version: int, new_cursor: str, new_version: int,
                         applied_position: int) -> bool:
        """Invariant 3: replace the cursor only if cursor and version still match the attempt."""
        before = self._checkpoint
        if before.resume_cursor != cursor or before.checkpoint_version != version:
            return False
        self._write(worker, "barrier", Checkpoint(new_cursor, max(applied_position, before.applied_position), new_version))
        return True

    def overwrite(self, worker: int, new_cursor: str, new_version: int, applied_position: int) -> bool:
        """An unconditional checkpoint write (only the ``no_version_check`` shortcut uses it)."""
        after = Checkpoint(new_cursor, max(applied_position, self._checkpoint.applied_position), new_version)
        self._write(worker, "overwrite", after)
        return True

    def _write(self, worker: int, kind: str, after: Checkpoint) -> None:
        self.writes.add(self.clock.tick(), self.clock.now, worker, kind, after.resume_cursor, after.applied_position,
                        after.checkpoint_version)
        self._checkpoint = after
