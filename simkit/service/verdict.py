"""The checker of the service world (docs/service.md, "Clients, judged"): it judges a finished
:class:`~simkit.service.simworld.ServiceWorld` from ground truth only.

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
  current state it never received, from the initial scan or from the feed (seed 004: *"An empty query page
  with next_after still requires continuation"*). In those scenarios ``lost`` starts after the cursor the
  consumer created its checkpoint at: the scan, not the feed, answers for what the journal held before it;
- ``broken_receipts``: idempotency keys of checkpoint commands for which the service broke seed 004's receipt
  promise: an identical retry of a committed command answered with anything but its receipt (no restore
  between), or a 200 receipt for a checkpoint the service never committed. Only a store that splits the
  checkpoint from its receipt, crashing between the two, does either;
- ``completed``: the consumer's checkpoint reached the journal's head before the time limit.

``ok`` is true exactly when every list is empty, ``regressions`` and ``duplicate_acks`` are 0 and
``completed`` is true.

An entry in ``lost``, ``duplicated`` and ``unreconciled`` is named ``journal:sequence`` (``"0001:10"``, the
journal_id cut to its last four digits). This module owns that name: :class:`Entry` is its structured form,
and :meth:`ServiceVerdict.entries` gives those lists as entries, so a reader never splits the string back.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .clients import CHANGES
from .config import DEV_SCOPE, DEV_TENANT
from .simworld import ServiceWorld
from .stored import WriteRecord

__all__ = [
    "Entry", "ServiceVerdict", "acknowledged_twice", "broken_receipts", "effect_fate", "judge",
    "missed_records",
]

#: the verdict's lists of journal entries, by field name
ENTRY_FIELDS = ("lost", "duplicated", "unreconciled")


class Entry(NamedTuple):
    """A journal entry as the verdict names it: ``journal`` the last four digits of its journal_id."""
    journal: str
    sequence: int

    @classmethod
    def of(cls, journal_id: str, sequence: int) -> Entry:
        return cls(journal_id[-4:], sequence)

    def __str__(self) -> str:
        return f"{self.journal}:{self.sequence}"


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
    #: ``lost``, ``duplicated`` and ``unreconciled`` as :class:`Entry` values (the lists hold their names)
    entry_lists: dict[str, list[Entry]] = field(default_factory=dict, repr=False, compare=False)

    def entries(self, name: str) -> list[Entry]:
        """The entries of the list ``name`` (one of ``lost``, ``duplicated``, ``unreconciled``), in its order.

        Raises:
            ValueError: ``name`` is not one of those lists.
        """
        if name not in ENTRY_FIELDS:
            raise ValueError(f"name {name!r}: one of {', '.join(ENTRY_FIELDS)}")
        return list(self.entry_lists.get(name, ()))

    def _set_entries(self, name: str, entries: list[Entry]) -> None:
        self.entry_lists[name] = entries
        setattr(self, name, [str(e) for e in entries])

    @property
    def ok(self) -> bool:
        return (not self.lost and not self.duplicated and self.regressions == 0 and self.duplicate_acks == 0
                and not self.unreconciled and not self.missed and not self.broken_receipts and self.completed)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "lost": self.lost, "duplicated": self.duplicated,
                "regressions": self.regressions,
                "duplicate_acks": self.duplicate_acks, "unreconciled": self.unreconciled,
                "halted": self.halted,
                "completed": self.completed, "conflicts": self.conflicts,
                "reconciliations": self.reconciliations,
                "missed": self.missed, "broken_receipts": self.broken_receipts}


def acknowledged_twice(world: ServiceWorld) -> list:
    """The committed commands (:class:`~simkit.service.checkpoints.WriteRecord`) that acknowledged the page
    their worker had just acknowledged, with no page read in between: ``duplicate_acks`` (a lost write retried
    as a new command instead of the identical one, seed 004 "Retry and reconnect correctly" step 4). An
    acknowledgment a restore rolled back is none: its identical retry meets the restored state (a 409, its
    receipt gone with it), and saving the page again with a new key is the correct client's recovery, which
    was counted."""
    acked: dict[int, WriteRecord] = {}
    restores = [s for s, _t in world.svc.restores]
    out = []
    for _t, worker, route, _status, committed in world.calls:
        if route == CHANGES:
            acked.pop(worker, None)
        elif committed is not None:
            prev = acked.get(worker)
            if prev is not None and prev.after["cursor"] == committed.after["cursor"] \
                    and not any(prev.seq < s < committed.seq for s in restores):
                out.append(committed)
            acked[worker] = committed
    return out


def effect_fate(world: ServiceWorld):
    """``fate(truth)`` for an effect that ran, ``truth`` its ``(journal_id, sequence,
    change_digest)``: ``backed`` (its entry is in the final journal), ``reconciled`` (a
    restore dropped it and a reconciliation reported it) or ``unreconciled`` ("Restoring
    an older backup can put the server behind external consumer effects")."""
    journal = world.svc.journals[(DEV_TENANT, tuple(DEV_SCOPE.values()))]
    present = {(e.journal_id, e.sequence, e.change_digest) for e in journal.entries}
    reported = {truth for *_x, items in world.reconciled for truth in items}
    return lambda truth: (
        "backed" if truth in present else "reconciled" if truth in reported else "unreconciled"
    )


def broken_receipts(world: ServiceWorld) -> list[str]:
    """Idempotency keys whose checkpoint command the service did not answer as seed 004 promises: *"An
    identical retry returns its original receipt"* (a reply other than 200 to the identical command of one
    that committed, with no restore in between), and a receipt is a committed checkpoint (a 200 whose
    receipt's checkpoint no committed command wrote under its key)."""
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
    """Record ids available to ``dev`` at the end whose current revision the consumer never received: not
    applied from a scan page, and no entry of that revision applied from the feed."""
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
    v._set_entries("duplicated", [Entry.of(j, s) for (j, s, _d), n in ran.items() if n > 1])
    through = final.cursor["sequence"] if final and final.cursor["journal_id"] == journal.journal_id else 0
    start = 0
    if sc.initial_scan:  # the scan answers for what the journal held before its cursor
        created = [rec for rec in svc.writes if rec.before is None and rec.consumer_id == world.CONSUMER
                   and rec.after["cursor"]["journal_id"] == journal.journal_id]
        start = created[-1].after["cursor"]["sequence"] if created else 0
        v.missed = missed_records(world, ran)
    v._set_entries("lost", [Entry.of(e.journal_id, e.sequence) for e in journal.entries[start:through]
                            if (e.journal_id, e.sequence, e.change_digest) not in ran])
    fate = effect_fate(world)
    v._set_entries("unreconciled", sorted((Entry.of(j, s) for (j, s, d) in ran
                                           if fate((j, s, d)) == "unreconciled"),
                                          key=str))
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

