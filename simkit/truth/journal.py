"""One committed event, one call: the rows a commit leaves in four logs, written together.

An event's commit writes its effect (for a transactional sink: :class:`~simkit.truth.log.EffectLog`), its
receipt (:class:`~simkit.truth.log.ReceiptLog`), the checkpoint change if ``applied_position`` rose
(:class:`~simkit.truth.log.WriteLog`) and its trace row (:class:`~simkit.truth.trace.Trace`). Each log's own
``add`` would bind its columns, test the event id's form and read the worker's range again; :func:`journal`
gives one function that does the shared work once and inlines every column's append (its kind's ``APPEND``):
compiled (``simkit._native.Journal``) where the native module was built, else generated from the same table.
The rows are the very rows the four ``add`` calls write (tests/truth/test_journal.py), and a value a column
refuses undoes the commit's rows in every log.
"""
from __future__ import annotations

from ast import literal_eval
from collections.abc import Callable
from textwrap import indent

from simkit._codegen import compile_function
from simkit.model import default_id, default_position

from . import passes
from .columns import Codes, Column, Ids, Ints
from .log import EffectLog, ReceiptLog, WriteLog
from .trace import COLUMNS, KINDS, Trace

__all__ = ["journal", "ROW"]

#: The arguments of the function :func:`journal` returns, in order: the effect's sequence number (``None``: no
#: effect), the receipt's (the checkpoint change's too), the time, the worker, the event, the receipt's
#: outcome, the trace row's step, the durable checkpoint after the commit and its cursor's place, and whether
#: ``applied_position`` rose (then the change is a ``commit`` write from the same cursor and version).
ROW = ("effect_seq", "seq", "now", "worker", "event_id", "position", "outcome", "step", "cursor", "applied",
       "version", "place", "raised")

#: log prefix -> its kinds, the values of its columns, and the condition of its row (``None``: always)
_LOGS: dict[str, tuple[tuple[type[Column], ...], tuple[str, ...], tuple[str, str] | None]] = {
    "e": (EffectLog.KINDS, ("effect_seq", "now", "worker", "event_id"), ("effect_seq", " is not None")),
    "r": (ReceiptLog.KINDS, ("seq", "now", "worker", "event_id", "outcome"), None),
    "w": (WriteLog.KINDS, ("seq", "now", "worker", '"commit"', "cursor", "applied", "version"),
          ("raised", "")),
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
        if condition is not None:
            lines = [f"if {''.join(condition)}:", *("    " + x for x in lines)]
        body.extend(lines)
    before = f"{', '.join(f'n{log}' for log in logs)} = {', '.join(f'len({log}0)' for log in logs)}"
    undo = "\n".join(f"_cut(({', '.join(f'{log}{i}' for i in range(len(k)))},), n{log})"
                     for log, (k, _v, _c) in logs.items())
    row = (f"def row({', '.join(ROW)}):\n    {before}\n    try:\n" + indent("\n".join(body), "        ")
           + "\n    except BaseException:\n" + indent(undo, "        ") + "\n        raise\n")
    return f"def bind({', '.join(logs)}):\n" + indent("\n".join(names) + "\n" + row + "return row\n", "    ")


def _cut(columns, n: int) -> None:
    """Cut every column back to ``n`` rows: the commit's rows are undone."""
    for c in columns:
        del c[n:]


_GLOBALS = {"default_id": default_id, "default_position": default_position, "_cut": _cut}
_BIND = compile_function(_source(_LOGS), "bind", "journal.bind", __name__, _GLOBALS)
#: the same, for a world that keeps no trace (an explored schedule's: nothing reads it)
_BIND_UNTRACED = compile_function(_source({k: v for k, v in _LOGS.items() if k != "t"}), "bind",
                                  "journal.bind_untraced", __name__, _GLOBALS)


#: each column's kind as the compiled journal (``simkit._native.Journal``, simkit/_native.c) numbers them
_NATIVE_KINDS = {Ints: 1, Codes: 2, Ids: 3}
#: what :func:`~simkit.model.default_id` puts before a position's digits
_PREFIX = default_id(0).removesuffix("0")
assert default_id(1234) == f"{_PREFIX}1234"


def _shape(logs: dict) -> tuple:
    """Each log's row condition and each column's (kind, value) as the compiled journal takes them: a value is
    the index of a :data:`ROW` argument, or a constant."""
    return tuple(
        (None if condition is None else (ROW.index(condition[0]), not condition[1]),
         tuple((_NATIVE_KINDS.get(k, 0), ROW.index(v) if v in ROW else literal_eval(v))
               for k, v in zip(kinds, values)))
        for kinds, values, condition in logs.values())


#: :func:`_shape` of :data:`_LOGS`, and of its logs but the trace: the same for every world, built once
_SHAPES = {True: _shape(_LOGS), False: _shape({k: v for k, v in _LOGS.items() if k != "t"})}


def _native(traced: bool, columns: tuple) -> Callable[..., None]:
    """The compiled journal of these logs' columns, from the table the generated one is (:data:`_LOGS`)."""
    spec = tuple((when, tuple((c, *kv) for c, kv in zip(cols, kinds)))
                 for (when, kinds), cols in zip(_SHAPES[traced], columns))
    return passes.NATIVE.Journal(spec, _PREFIX)


def journal(effects: EffectLog, receipts: ReceiptLog, writes: WriteLog,
            trace: Trace | None) -> Callable[..., None]:
    """The function that writes one commit's rows to these logs (``trace`` ``None``: to the other three),
    called with :data:`ROW`'s arguments: compiled where :mod:`simkit.truth.passes` found the native module,
    else generated. It binds the logs' columns now: the logs must keep them (each keeps its columns for its
    life)."""
    if passes.NATIVE is not None:
        columns = (effects.columns, receipts.columns, writes.columns)
        if trace is None:
            return _native(False, columns)
        return _native(True, (*columns, tuple(getattr(trace, c) for c in COLUMNS)))
    if trace is None:
        return _BIND_UNTRACED(effects.columns, receipts.columns, writes.columns)
    return _BIND(effects.columns, receipts.columns, writes.columns, tuple(getattr(trace, c) for c in COLUMNS))
