"""The durable store: checkpoint with compare-and-swap, receipt ledger, atomic event commits, and the
operation records of external calls (seed 001, :class:`~simkit.store.settlement.Ledger`).

Everything it holds survives a crash. Its write log is ground truth for the checker: every durable
checkpoint change with the state before and after, every receipt with the moment it became durable.
"""
from __future__ import annotations

from collections.abc import ItemsView, MutableMapping

from simkit.model import TERMINAL, Checkpoint, default_id, default_position, is_default_id
from simkit.truth.clock import Clock, TimeSource
from simkit.truth.columns import IdMap
from simkit.truth.log import ReadLog, ReceiptLog, WriteLog

from .limits import MAX_FIELD, refuse_barrier, refuse_event, refuse_overwrite, refuse_unwritable
from .settlement import Ledger

__all__ = ["MemoryStore", "Receipts"]


class Receipts(MutableMapping):
    """The receipt ledger, event id -> (outcome, position), keeping no object per receipt: a receipt whose id
    is the default one of its position (docs/scenarios.md) is its outcome, by position, in ``outcomes``
    (:class:`~simkit.truth.columns.IdMap`); any other is a tuple in ``other``, by id."""

    __slots__ = ("outcomes", "other")

    def __init__(self, items=()):
        self.outcomes = IdMap()
        self.other: dict = {}
        for eid, receipt in dict(items).items():
            self[eid] = receipt

    def __getitem__(self, eid) -> tuple[str, int]:
        r = self.other.get(eid) if self.other else None
        if r is not None:
            return r
        outcome, position = self.outcomes[eid], default_position(eid)
        assert position is not None                 # ``outcomes`` keeps default ids only, by position
        return outcome, position

    def __contains__(self, eid) -> bool:
        return eid in self.outcomes or eid in self.other

    def get(self, eid, default=None):
        r = self.other.get(eid) if self.other else None
        if r is not None:
            return r
        out = self.outcomes.get(eid)
        return default if out is None else (out, default_position(eid))

    def keeps_by_position(self, eid, position) -> bool:
        """Is ``eid``'s receipt, with this ``position``, kept in ``outcomes`` by position (``eid`` is the
        default id of ``position``, ``position`` is at most 2**63 - 1, and no receipt of it is in ``other``)?
        A yes also says that both are values a store holds (:func:`~simkit.store.limits.refuse_event`), so a
        commit's quick path (the world's journal) needs no other check; a position past 2**63 - 1 takes the
        path that refuses it."""
        return (type(eid) is str and is_default_id(eid, position) and position <= MAX_FIELD
                and (not self.other or eid not in self.other))

    def outcome(self, eid) -> str | None:
        """The outcome of ``eid``'s receipt, if any (the hot path's :meth:`get`: no tuple built)."""
        r = self.other.get(eid) if self.other else None
        return r[0] if r is not None else self.outcomes.get(eid)

    def __setitem__(self, eid, receipt: tuple[str, int]) -> None:
        outcome, position = receipt
        if self.keeps_by_position(eid, position):
            self.outcomes.set_at(position, outcome)
        else:
            self.outcomes.pop(eid, None)
            self.other[eid] = tuple(receipt)

    def __delitem__(self, eid) -> None:
        if eid in self.other:
            del self.other[eid]
        else:
            del self.outcomes[eid]

    def __iter__(self):
        yield from self.outcomes
        yield from list(self.other)

    def __len__(self) -> int:
        return len(self.outcomes) + len(self.other)

    def items(self):
        return _ReceiptItems(self)

    def __repr__(self) -> str:
        return f"Receipts({dict(self.items())!r})"


class _ReceiptItems(ItemsView):
    def __iter__(self):
        receipts = self._mapping
        yield from ((eid, (out, default_position(eid))) for eid, out in receipts.outcomes.items())
        yield from list(receipts.other.items())


class MemoryStore:
    """The in-memory durable store (``store = "memory"``)."""

    def __init__(self, initial: Checkpoint, receipts: dict[str, tuple[str, int]] | None = None,
                 clock: TimeSource | None = None):
        self.clock = clock or Clock()
        self._checkpoint = initial
        receipts = dict(receipts or {})
        #: event id -> (outcome, position)
        self.receipts = Receipts(receipts)
        #: position -> the id holding the last terminal receipt there, where that is not the position's
        #: default id (the default id's own receipt says the rest: :meth:`id_at`)
        self._named_at: dict[int, str] = {}
        for eid, (out, pos) in receipts.items():
            if out in TERMINAL:
                self._terminal_at(pos, eid)
        #: (seq, time, worker, kind, before, after) for every durable checkpoint change
        self.writes = WriteLog(initial)
        #: (seq, time, worker, event id, outcome) for every durable receipt
        self.receipt_log = ReceiptLog((0, 0.0, 0, eid, out) for eid, (out, _) in receipts.items())
        #: (seq, time, worker, checkpoint) for every load
        self.reads = ReadLog()
        #: seed 001: the durable operation records of external calls, their history and quarantine
        self.operations = Ledger(self.clock)

    @property
    def checkpoint(self) -> Checkpoint:
        """The durable checkpoint. Only a write changes it, and every write is a row of ``writes``."""
        return self._checkpoint

    def load(self, worker: int) -> Checkpoint:
        """Seed 000 step 1: read the checkpoint. The consumer gets a copy: whatever it does to it changes
        nothing durable (only a write does)."""
        cp = self._checkpoint
        self.reads.add(self.clock.tick(), self.clock.now, worker, cp)
        return Checkpoint(cp.resume_cursor, cp.applied_position, cp.checkpoint_version)

    def _terminal_at(self, position: int, event_id: str) -> None:
        # a default id is left to its receipt in ``outcomes`` only where it is kept there (not at -1: "e-1")
        if is_default_id(event_id, position) and position <= MAX_FIELD:
            self._named_at.pop(position, None)
        else:
            self._named_at[position] = event_id

    def id_at(self, position: int) -> str | None:
        """The id holding the last terminal receipt at ``position``, if any."""
        eid = self._named_at.get(position)
        if (
            eid is None
            and type(position) is int
            and position >= 0
            and self.receipts.outcomes.at(position) in TERMINAL
        ):
            eid = default_id(position)
        return eid

    def lookup(self, events) -> tuple[dict[str, str], dict[int, str]]:
        """Receipts of these events by id, and the ids holding a terminal receipt at their positions."""
        receipts, outcomes, named_at = self.receipts, self.receipts.outcomes, self._named_at
        by_id, by_position = {}, {}
        for e in events:
            eid, pos = e.id, e.position
            if receipts.keeps_by_position(eid, pos):
                out = outcomes.at(pos)          # the usual case: one slot answers both
                if out is not None:
                    by_id[eid] = out
                holder = named_at.get(pos) if named_at else None
                if holder is None and out in TERMINAL:
                    holder = eid
            else:
                r = receipts.get(eid)
                if r is not None:
                    by_id[eid] = r[0]
                holder = self.id_at(pos)
            if holder is not None:
                by_position[pos] = holder
        return by_id, by_position

    def commit_event(self, worker: int, event_id: str, position: int, outcome: str, applied_position: int,
                     effect=None) -> bool:
        """Invariant 4: write a receipt, the resulting ``applied_position`` and (for a transactional sink, as
        ``effect()``) the effect itself, in one transaction.

        The receipt ledger is unique on event id: a second terminal receipt is refused (returns ``False``).
        ``applied_position`` never moves backwards here (``max``), whatever the caller asks.
        """
        refuse_unwritable(outcome, applied_position)
        fast = self.receipts.keeps_by_position(event_id, position)     # the usual case: the id parsed once
        if not fast:
            refuse_event(event_id, position)        # as SQLite does (a default id in range needs no check)
        if self.closed(event_id, position, fast):
            return False
        if effect is not None:
            effect()
        before = self.hold(event_id, position, outcome, applied_position, fast)
        seq, now = self.clock.tick(), self.clock.now
        self.receipt_log.add(seq, now, worker, event_id, outcome)
        if before is not None:
            self.writes.add(seq, now, worker, "commit", before.resume_cursor, applied_position,
                            before.checkpoint_version)
        return True

    def closed(self, event_id: str, position: int, fast: bool) -> bool:
        """Does ``event_id`` hold a terminal receipt already (invariant 4: then a commit writes nothing)?
        ``fast``: :meth:`Receipts.keeps_by_position` said yes for this id and position."""
        receipts = self.receipts
        return (receipts.outcomes.at(position) if fast else receipts.outcome(event_id)) in TERMINAL

    def hold(self, event_id: str, position: int, outcome: str, applied_position: int,
             fast: bool) -> Checkpoint | None:
        """The state half of :meth:`commit_event`, its logs left to the caller: keep the receipt, and raise
        ``applied_position`` (never lower it). Returns the checkpoint before if it rose, else ``None``."""
        if fast:
            self.receipts.outcomes.set_at(position, outcome)
        else:
            self.receipts[event_id] = (outcome, position)
        if outcome in TERMINAL and (self._named_at or not fast):
            self._terminal_at(position, event_id)
        cp = self._checkpoint
        if applied_position > cp.applied_position:
            self._checkpoint = Checkpoint(cp.resume_cursor, applied_position, cp.checkpoint_version)
            return cp
        return None

    def compare_and_swap(self, worker: int, cursor: str, version: int, new_cursor: str, new_version: int,
                         applied_position: int) -> bool:
        """Invariant 3: replace the cursor only if cursor and version still match the attempt."""
        refuse_barrier(cursor, version, new_cursor, new_version, applied_position)
        before = self._checkpoint
        if before.resume_cursor != cursor or before.checkpoint_version != version:
            return False
        after = Checkpoint(new_cursor, max(applied_position, before.applied_position), new_version)
        self._write(worker, "barrier", after)
        return True

    def overwrite(self, worker: int, new_cursor: str, new_version: int, applied_position: int) -> bool:
        """An unconditional checkpoint write (only the ``no_version_check`` shortcut uses it)."""
        refuse_overwrite(new_cursor, new_version, applied_position)
        after = Checkpoint(new_cursor, max(applied_position, self._checkpoint.applied_position), new_version)
        self._write(worker, "overwrite", after)
        return True

    def _write(self, worker: int, kind: str, after: Checkpoint) -> None:
        self.writes.add(self.clock.tick(), self.clock.now, worker, kind, after.resume_cursor,
                        after.applied_position, after.checkpoint_version)
        self._checkpoint = after
