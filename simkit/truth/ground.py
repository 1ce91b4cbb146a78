"""The ground truth of one finished run, frozen: exactly
what the judge reads (docs/verdict.md), and nothing else.

:class:`GroundTruth` is built by the SimPy world (``World.ground_truth()``) and by ``simkit live`` from its
databases; :func:`simkit.judge.checker.check` takes it. Its parts are shaped like the world's own objects
(``truth.provider.log``, ``truth.store.writes``, ``truth.sink.effects``, ...), but each is a frozen record of
read-only views: a log is wrapped, never copied (a million-event run must not keep its logs twice), and a
mutable mapping is seen through a :class:`~types.MappingProxyType` (a read-only one, the provider's event
table, is kept as it is: the judge reads its typed columns). The facts derived from it (late events, the
effects count, when a page was held, ...) are defined once, in :mod:`simkit.truth.derived`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import itemgetter, ne
from types import MappingProxyType
from typing import Any

from simkit.model import Checkpoint, Event, Scenario
from simkit.truth import passes
from simkit.truth.columns import Ids
from simkit.truth.log import Log, WriteLog, write_states

__all__ = ["GroundTruth", "LedgerTruth", "ProviderTruth", "ServiceTruth", "SinkTruth", "StoreTruth", "View",
           "WritesView", "as_truth"]


class View(Sequence):
    """A read-only view of a log (a list of rows, or a column-stored :class:`~simkit.truth.log.Log`): it reads
    like the log and copies nothing."""

    __slots__ = ("_rows",)
    _rows: Any

    def __init__(self, rows: Sequence | Log):
        self._rows = rows._rows if isinstance(rows, View) else rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i):
        return self._rows[i]

    def __iter__(self) -> Iterator:
        return iter(self._rows)

    def __eq__(self, other) -> bool:
        return self._rows == (other._rows if isinstance(other, View) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._rows!r})"

    def fields(self, *which: int) -> Iterator[tuple]:
        """Each row's fields ``which`` (two or more), as tuples: a column-stored log reads only those columns
        (an event-id column it does not read builds no id string)."""
        columns = getattr(self._rows, "columns", None)
        if columns is not None:
            return zip(*(columns[i] for i in which))
        return map(itemgetter(*which), self._rows)

    def as_log(self, kind: type[Log]) -> Log:
        """The log as ``kind`` keeps it, column by column (what the passes of :mod:`~simkit.truth.passes`
        walk): itself if it is one, else a copy of its rows (a store that keeps a list)."""
        return self._rows if isinstance(self._rows, kind) else kind(self._rows)

    def id_codes(self, field: int = 3) -> Sequence[int] | None:
        """The log's own codes of the event ids in ``field`` (:class:`~simkit.truth.columns.Ids`: a default id
        as its position, any other below 0), or ``None`` if it keeps no such column (a list of rows)."""
        columns = getattr(self._rows, "columns", None)
        column = columns[field] if columns is not None and len(columns) > field else None
        return column.codes if isinstance(column, Ids) else None


class WritesView(View):
    """The store's checkpoint writes, read-only; :meth:`states` as :func:`simkit.truth.log.write_states` reads
    them (plain tuples, no checkpoint built per row)."""

    __slots__ = ()

    def states(self):
        return write_states(self._rows)

    def besides(self, kind: str):
        """``(seq, worker, applied_position after)`` of every write not of ``kind``, in order: of a
        column-stored log, with no row built for the others."""
        log = self.log()
        if log is None:
            return ((s, w, after[1]) for s, _t, w, k, _b, after in self.states() if k != kind)
        seqs, _t, workers, kinds, _c, applied, _v = log.columns
        rows = compress(count(), map(ne, kinds.codes, repeat(passes.code_of(kinds, kind))))
        return ((seqs[i], workers[i], applied[i]) for i in rows)

    def log(self) -> WriteLog | None:
        """The writes as a :class:`~simkit.truth.log.WriteLog` keeps them (column by column), if they are
        one."""
        return self._rows if isinstance(self._rows, WriteLog) else None


def _mapping(m: Mapping | None) -> Mapping:
    if m is None:
        return MappingProxyType({})
    return MappingProxyType(m) if isinstance(m, MutableMapping) else m


@dataclass(frozen=True, slots=True)
class ProviderTruth:
    """What the provider served and what it can still serve: its stream by id, its log of every response
    ``(seq, time, worker, cursor, next_cursor, ids)``, and its answers about cursors (ground truth only)."""

    events: Mapping[str, Event]
    log: View
    start: str
    #: ``deliverable(event_id, cursor)``: can the cursor, or those after it, still deliver the event?
    deliverable: Callable[[str, str], bool]
    #: ``place(cursor)``: the highest position the cursor can no longer deliver
    place: Callable[[str | None], int]
    #: ``at_end(cursor)``: is the cursor the stream's end page?
    at_end: Callable[[str], bool]
    #: ``script()``: every page as ``(cursor, events, next_cursor, stuck)``, the chain from ``start`` first
    script: Callable[[], list]
    #: ``cursor_rank(cursor)`` and ``last_rank(event_id)``: the cursor's place on the page chain and the last
    #: place whose page carries the event; the cursor can deliver it while the first is at most the second
    cursor_rank: Callable[[str], float]
    last_rank: Callable[[str], float]
    #: ``disordered()`` and ``late()``: the cursors whose page breaks the source order inside itself (step 3)
    #: and the events that join the stream late, where the provider reads them from its own table (else
    #: ``None``: :func:`~simkit.truth.derived.disordered_pages` and
    #: :func:`~simkit.truth.derived.late_arrivals` read the script)
    disordered: Callable[[], frozenset[str]] | None = None
    late: Callable[[], frozenset[str]] | None = None
    #: ``served_ranks(k)``: the ranks in position order of the events row ``k`` of the log served, where the
    #: provider's table knows them with no id read (else ``None``, as is a provider without it)
    served_ranks: Callable[[int], Sequence[int] | None] | None = None

    @classmethod
    def of(cls, provider) -> ProviderTruth:
        return cls(_mapping(provider.events), View(provider.log), provider.start, provider.deliverable,
                   provider.place, provider.at_end, provider.script, provider.cursor_rank, provider.last_rank,
                   getattr(provider, "disordered", None), getattr(provider, "late", None),
                   getattr(provider, "served_ranks", None))


@dataclass(frozen=True, slots=True)
class LedgerTruth:
    """The settlement ledger's history: every transition of every operation record (seed 001)."""

    history: View


@dataclass(frozen=True, slots=True)
class StoreTruth:
    """The durable store: its final checkpoint, and its logs of writes, reads and receipts."""

    checkpoint: Checkpoint
    writes: WritesView
    reads: View
    receipts: Mapping[str, tuple[str, int]]
    receipt_log: View
    operations: LedgerTruth | None

    @classmethod
    def of(cls, store) -> StoreTruth:
        ledger = getattr(store, "operations", None)
        writes = store.writes
        # the durable checkpoint as the write log leaves it: only a write changes it (an object a consumer was
        # handed is no record of it)
        checkpoint = writes.last() if isinstance(writes, WriteLog) else store.checkpoint
        return cls(checkpoint, WritesView(writes), View(store.reads), _mapping(store.receipts),
                   View(store.receipt_log), None if ledger is None else LedgerTruth(View(ledger.history)))


@dataclass(frozen=True, slots=True)
class SinkTruth:
    """The sink: its kind, the handler's decisions and every effect that happened, with each event's count."""

    kind: str
    decisions: View
    effects: View
    effect_count: Mapping[str, int]

    @property
    def external(self) -> bool:
        return self.kind != "transactional"

    @classmethod
    def of(cls, sink) -> SinkTruth:
        return cls(sink.kind, View(sink.decisions), View(sink.effects), _mapping(sink.effect_count))


@dataclass(frozen=True, slots=True)
class ServiceTruth:
    """The external service's log of every request it saw (seed 001): a reply's true identity is read here."""

    requests: View

    @classmethod
    def of(cls, service) -> ServiceTruth | None:
        return None if service is None else cls(View(service.requests))


@dataclass(frozen=True, slots=True)
class GroundTruth:
    """Everything the judge reads about one finished run (docs/verdict.md): immutable, built once."""

    scenario: Scenario | None
    provider: ProviderTruth
    store: StoreTruth
    sink: SinkTruth
    service: ServiceTruth | None
    #: ``(time, worker, reason)`` of every halt, in order
    halts: tuple[tuple[float, int, str], ...]
    #: did every worker catch up or halt before the time limit, with no progress guard?
    completed: bool
    #: ``None``, or why the progress guard ended the run
    stopped: str | None = None
    #: the settlement policy the run used (seed 001)
    settlement: str | None = None
    #: the provider contract the consumer was given: may events appear behind served positions?
    backfills: bool = False
    #: the run's trace (:class:`~simkit.truth.trace.Trace`), where there is one (``simkit live`` keeps none)
    trace: Any = None
    #: facts derived once and kept (:mod:`simkit.truth.derived`); not part of the value
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, *, provider, store, sink, service=None, halts=(), completed: bool = True, stopped=None,
              scenario: Scenario | None = None, settlement: str | None = None, backfills: bool | None = None,
              trace=None) -> GroundTruth:
        """Ground truth from a run's provider, store, sink and external service (any objects with their public
        attributes: the world's own, or those ``simkit live`` reads back from its databases)."""
        if backfills is None:
            backfills = bool(getattr(scenario, "backfills", False))
        return cls(scenario, ProviderTruth.of(provider), StoreTruth.of(store), SinkTruth.of(sink),
                   ServiceTruth.of(service), tuple(halts), bool(completed), stopped, settlement, backfills,
                   trace)


def as_truth(run) -> GroundTruth:
    """``run``'s ground truth: a :class:`GroundTruth` as it is, anything with
    ``ground_truth()`` (a World, a Run) through it, and any other object shaped like a world
    (a hand-built history: ``provider``, ``store``, ``sink``, ``halts``, ``completed``, and
    optionally ``service``, ``scenario``, ``contract``, ...) read once; else :class:`TypeError`, naming what
    it lacks."""
    if isinstance(run, GroundTruth):
        return run
    method = getattr(run, "ground_truth", None)
    if method is not None:
        return method()
    missing = [k for k in ("provider", "store", "sink", "halts", "completed") if not hasattr(run, k)]
    if missing:
        raise TypeError(f"no ground truth in {type(run).__name__}: a World, a Run, a GroundTruth or a "
                        "history with provider, store, sink, halts and completed is judged (it lacks "
                        f"{missing[0]})")
    contract = getattr(run, "contract", None)
    return GroundTruth.build(
        provider=run.provider, store=run.store, sink=run.sink, service=getattr(run, "service", None),
        halts=run.halts, completed=run.completed, stopped=getattr(run, "stopped", None),
        scenario=getattr(run, "scenario", None), settlement=getattr(run, "settlement", None),
        backfills=None if contract is None else contract.backfills, trace=getattr(run, "trace", None))
