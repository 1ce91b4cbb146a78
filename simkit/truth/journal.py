"""One committed event, one tuple: the rows a commit leaves in four logs, kept and written in bulk.

An event's commit writes its effect (for a transactional sink: :class:`~simkit.truth.log.EffectLog`), its
receipt (:class:`~simkit.truth.log.ReceiptLog`), the checkpoint change if ``applied_position`` rose
(:class:`~simkit.truth.log.WriteLog`) and its trace row (:class:`~simkit.truth.trace.Trace`). A
:class:`Journal` keeps each commit as one tuple of :data:`ROW` and writes what it kept column by column when
flushed (each kind's ``extend``): the writer must flush before anything else writes to, or reads, those logs.
The rows are the very rows the four ``add`` calls write (tests/truth/test_journal.py); a value a column
refuses undoes that commit's rows in every log, and the flush raises. :func:`journal`'s generated function
writes one commit's rows at once: the flush's fallback, and the reference it is tested against.
"""
from __future__ import annotations

from collections.abc import Callable
from itertools import compress
from textwrap import indent

from simkit._codegen import compile_function
from simkit.model import default_id, default_position

from .columns import Column, Ids
from .log import EffectLog, ReceiptLog, WriteLog
from .trace import COLUMNS, KINDS, Trace

__all__ = ["Journal", "journal", "ROW"]

#: The arguments of the function :func:`journal` returns, in order: the effect's sequence number (``None``: no
#: effect), the receipt's (the checkpoint change's too), the time, the worker, the event, the receipt's
#: outcome, the trace row's step, the durable checkpoint after the commit and its cursor's place, and whether
#: ``applied_position`` rose (then the change is a ``commit`` write from the same cursor and version).
ROW = ("effect_seq", "seq", "now", "worker", "event_id", "position", "outcome", "step", "cursor", "applied",
       "version", "place", "raised")

#: log prefix -> its kinds, the values of its columns, and the condition of its row (``None``: always)
_LOGS: dict[str, tuple[tuple[type[Column], ...], tuple[str, ...], str | None]] = {
    "e": (EffectLog.KINDS, ("effect_seq", "now", "worker", "event_id"), "effect_seq is not None"),
    "r": (ReceiptLog.KINDS, ("seq", "now", "worker", "event_id", "outcome"), None),
    "w": (WriteLog.KINDS, ("seq", "now", "worker", '"commit"', "cursor", "applied", "version"), "raised"),
    "t": (KINDS, ("now", "worker", "step", "event_id", "position", "cursor", "place", "applied", "version",
                  "outcome"), None),
}


def _source(logs: dict) -> str:
    body, names = [f"default = {Ids.DEFAULT_AT.format(v='event_id', p='position')}"], []
    for log, (kinds, values, condition) in logs.items():
        columns = [f"{log}{i}" for i in range(len(kinds))]
        names.append(f"{', '.join(columns)}, = {log}")
        lines = []
        for c, kind, v in zip(columns, kinds, values):
            if v.startswith('"'):                        # a constant: named, as an APPEND repeats its value
                lines.append(f"{c}_value = {v}")
                v = f"{c}_value"
            template = Ids.APPEND_KNOWN if kind is Ids else kind.APPEND
            lines.extend(template.format(c=c, v=v, p="position", d="default").splitlines())
        body.extend(lines if condition is None else [f"if {condition}:", *("    " + x for x in lines)])
    before = f"{', '.join(f'n{log}' for log in logs)} = {', '.join(f'len({log}0)' for log in logs)}"
    undo = "\n".join(f"_cut(({', '.join(f'{log}{i}' for i in range(len(k)))},), n{log})"
                     for log, (k, _v, _c) in logs.items())
    row = (f"def row({', '.join(ROW)}):\n    {before}\n    try:\n" + indent("\n".join(body), "        ")
           + "\n    except BaseException:\n" + indent(undo, "        ") + "\n        raise\n")
    return f"def bind({', '.join(logs)}):\n" + indent("\n".join(names) + "\n" + row + "return row\n", "    ")


def _cut(columns, n) -> None:
    """Cut every column back to ``n`` rows (a number, or one per column): the commit's rows are undone."""
    for c, k in zip(columns, [n] * len(columns) if isinstance(n, int) else n):
        del c[k:]


_GLOBALS = {"default_id": default_id, "default_position": default_position, "_cut": _cut}
_BIND = compile_function(_source(_LOGS), "bind", "journal.bind", __name__, _GLOBALS)
#: the same, for a world that keeps no trace (an explored schedule's: nothing reads it)
_BIND_UNTRACED = compile_function(_source({k: v for k, v in _LOGS.items() if k != "t"}), "bind",
                                  "journal.bind_untraced", __name__, _GLOBALS)


def journal(effects: EffectLog, receipts: ReceiptLog, writes: WriteLog,
            trace: Trace | None) -> Callable[..., None]:
    """The function that writes one commit's rows to these logs (``trace`` ``None``: to the other three),
    called with :data:`ROW`'s arguments. It binds the logs' columns now: the logs must keep them (each keeps
    its columns for its life)."""
    if trace is None:
        return _BIND_UNTRACED(effects.columns, receipts.columns, writes.columns)
    return _BIND(effects.columns, receipts.columns, writes.columns, tuple(getattr(trace, c) for c in COLUMNS))


class Journal:
    """Commits kept as :data:`ROW` tuples (``add``), written to the logs in bulk by :meth:`flush`: each
    column's values of every kept row in one ``extend``. The logs must keep their columns (each keeps its
    columns for its life); ``trace`` ``None``: the other three only."""

    __slots__ = ("rows", "add", "_row", "_logs")

    def __init__(self, effects: EffectLog, receipts: ReceiptLog, writes: WriteLog, trace: Trace | None):
        self.rows: list[tuple] = []
        #: keep one commit: its :data:`ROW` values as one tuple
        self.add: Callable[[tuple], None] = self.rows.append
        self._row = journal(effects, receipts, writes, trace)
        columns = {"e": effects.columns, "r": receipts.columns, "w": writes.columns,
                   "t": None if trace is None else tuple(getattr(trace, c) for c in COLUMNS)}
        self._logs = [(columns[log], kinds, values, condition)
                      for log, (kinds, values, condition) in _LOGS.items() if columns[log] is not None]

    def flush(self) -> None:
        """Write every kept commit's rows, in the order kept. A value a column refuses: the commits before
        it written, its own rows undone in every log, the error raised, nothing kept."""
        rows = self.rows
        if not rows:
            return
        marks = [len(c) for columns, *_ in self._logs for c in columns]
        try:
            self._bulk(rows)
        except Exception:
            self._cut(marks)
            try:
                for row in rows:            # one by one: the refused commit's rows are undone, and it raises
                    self._row(*row)
            finally:
                rows.clear()
        except BaseException:               # interrupted: nothing written, everything still kept
            self._cut(marks)
            raise
        rows.clear()

    def _cut(self, marks: list[int]) -> None:
        _cut([c for columns, *_ in self._logs for c in columns], marks)

    def _bulk(self, rows: list[tuple]) -> None:
        values = dict(zip(ROW, map(list, zip(*rows))))
        values["default"] = [type(p) is int and 0 <= p < 1 << 63 and v == default_id(p)
                             for v, p in zip(values["event_id"], values["position"])]
        masks = {"raised": values["raised"],
                 "effect_seq is not None": [s is not None for s in values["effect_seq"]]}
        for columns, kinds, names, condition in self._logs:
            mask = masks[condition] if condition is not None else None
            chosen = (values if mask is None or all(mask)
                      else {k: list(compress(v, mask)) for k, v in values.items()})
            n = len(chosen["seq"])
            if not n:
                continue
            for c, kind, name in zip(columns, kinds, names):
                if name.startswith('"'):                    # a constant
                    c.extend([name.strip('"')] * n)
                elif kind is Ids:
                    c.extend_at(chosen[name], chosen["position"], chosen["default"])
                else:
                    c.extend(chosen[name])
