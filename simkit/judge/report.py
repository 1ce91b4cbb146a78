"""A verdict in words, written here and only here (docs/verdict.md): the row of the command line's table
(:func:`verdict_row`), the one-run summary (:func:`run_summary`), the cells of a notebook's table
(:func:`verdict_cells`, which :func:`simkit.viz.frames.verdict_frame` shows), the one-line form a workshop
check quotes (:func:`verdict_line`) and the counts line of ``simkit explore``'s first violation and ``simkit
shrink``'s shrunk run (:func:`counts_line`).

Which fields each shows, in what order and how each reads come from their declaration
(:mod:`simkit.judge.verdict`): a field declared after the first verdict's is read only where it failed, so
that the text of a run it does not fail stays as it was.
"""
from __future__ import annotations

from collections.abc import Sequence

from simkit.errors import echoed, printable

from .verdict import CONTEXT, FIELDS, SAFETY, Declared, count, halt_reason

__all__ = ["HEADERS", "counts_line", "run_summary", "table", "verdict_cells", "verdict_line", "verdict_row"]

#: The command line's table: the run, then the verdict's columns as its fields declare them
HEADERS = ("strategy", "ok", *dict.fromkeys(f.table for f in FIELDS if f.table))
_COLUMNS = {h: tuple(f for f in FIELDS if f.table == h) for h in HEADERS[2:]}
#: The fields :func:`verdict_line` leads with, failed or not
_HEADLINE = ("lost", "invariant_violations")


def _ids(ids: list[str], limit: int = 4) -> str:
    if not ids:
        return "0"
    shown = ", ".join(ids[:limit]) + (", …" if len(ids) > limit else "")
    return f"{len(ids)} ({shown})"


def _kinds(f: Declared, v, spaced: bool = False) -> str:
    """A field's kinds as a line lists them: ``1, 2``, ``committed_downgraded`` (``spaced``: ``committed
    downgraded``)."""
    kinds = map(str, f.kinds_of(f.of(v)))
    return ", ".join(k.replace("_", " ") for k in kinds) if spaced else ", ".join(kinds)


def _later(v) -> list[Declared]:
    """The fields declared after the first verdict's that ``v`` fails: the only lines they are read in."""
    return [f for f in FIELDS if not f.always and f.failed(f.of(v))]


def _cell(fs: tuple[Declared, ...], v) -> str:
    """A column of the command line's table: its one field's value (ids counted, the first four shown), or,
    for fields sharing a column, the first one's kinds, then the others' (``2, 5; committed_downgraded``)."""
    if len(fs) == 1:
        value = fs[0].of(v)
        return fs[0].cell(v) if fs[0].cell else _ids(value) if isinstance(value, list) else str(value)
    rest = ", ".join(k for f in fs[1:] for k in map(str, f.kinds_of(f.of(v))))
    return "; ".join(filter(None, [_kinds(fs[0], v), rest])) or "-"


def _halt(v) -> str:
    """``no``, or the reason and whether ground truth justified it (``halt_justified``, docs/verdict.md). A
    halt whose reason is empty or blank is a halt all the same (it said ``no``): ``(no reason given)``."""
    if v.halted is None:
        return "no"
    unjustified = "" if v.halt_justified else " (unjustified: the provider kept its contract)"
    return halt_reason(v.halted) + unjustified


def _listed(ids, limit: int = 6) -> str:
    """Ids in a notebook's table cell: ``-``, or the first ``limit`` and how many in all."""
    if not ids:
        return "-"
    return ", ".join(ids[:limit]) + (f", … ({len(ids)} in all)" if len(ids) > limit else "")


def _frame_cell(f: Declared, v):
    value = f.of(v)
    if f.kinds is not None:
        return _kinds(f, v) or "-"
    return _listed(value) if isinstance(value, list) else "-" if value is None else value


def verdict_cells(run) -> dict:
    """One run's verdict as the cells of a notebook's table, by column: the first verdict's fields (lists
    shown as short strings)."""
    v, cp = run.verdict, run.world.store.checkpoint
    return {
        "scenario": run.scenario, "strategy": run.strategy, "ok": v.ok,
        **{f.label: _frame_cell(f, v) for f in FIELDS if f.always}, "crashes": run.world.crashes,
        "final checkpoint": f"{cp.resume_cursor} / {cp.applied_position} / v{cp.checkpoint_version}",
    }


def verdict_line(verdict) -> str:
    """A verdict in one line: the safety fields (lost, invariants; the others when they failed), then
    liveness (completed) and what explains it (halted, pending)."""
    parts = [f"lost {len(verdict.lost)}", f"invariants {verdict.invariants_broken}"]
    parts += [f"{f.label} {count(f.of(verdict))}" for f in FIELDS
              if f.property == SAFETY and f.name not in _HEADLINE and f.failed(f.of(verdict))]
    halted = None if verdict.halted is None else halt_reason(verdict.halted)
    parts += [f"completed {verdict.completed}", f"halted {halted}", f"pending {len(verdict.pending)}"]
    return ", ".join(parts)


def counts_line(verdict, brief: bool = False) -> str:
    """A verdict's counts on one line; ``verdict`` is a verdict or its ``--json`` object
    (``Verdict.as_dict``). ``lost: 0   duplicated: 1   regressions: 0   invariants broken: 4   completed:
    yes``, then each later field that failed (``settlement: committed downgraded``): ``simkit explore``'s
    first violation. ``brief``, the first safety fields only, ``lost 1   duplicated 0   regressions 0
    invariants broken: 1``: ``simkit shrink``'s shrunk run."""
    parts = []
    for f in FIELDS:
        value = f.of(verdict)
        shown = f.always and f.property == SAFETY if brief else f.always or f.failed(value)
        if f.property == CONTEXT or not shown:
            continue
        if f.kinds is not None:
            parts.append(f"{f.short}: {_kinds(f, verdict, spaced=True) or 'none'}")
        elif isinstance(value, bool):
            parts.append(f"{f.short}: {'yes' if value else 'no'}")
        else:
            parts.append(f"{f.short}{' ' if brief else ': '}{count(value)}")
    return "   ".join(parts)


def verdict_row(run) -> tuple[str, ...]:
    """One run's verdict as a row of the command line's table (:data:`HEADERS`)."""
    v = run.verdict
    return (run.strategy, "yes" if v.ok else "NO", *(_cell(fs, v) for fs in _COLUMNS.values()))


def table(rows: Sequence[Sequence[str]], headers: tuple[str, ...] = HEADERS) -> str:
    """A fixed-width table."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def _cut(text: str) -> str:
    """``text`` as it is, or past 1,000 characters its start and length, as a halt's reason (a consumer's
    cursor is any text, megabytes of it included, and the final checkpoint and invariant 3 quote it)."""
    return text if len(text) <= 1000 else echoed(text, 1000)


def run_summary(run) -> str:
    """A few lines describing one run's verdict: what became of events, which rules were broken, whether it
    completed, then each violation on a line of its own."""
    d = run.as_dict()
    v = run.verdict
    world = getattr(run, "world", None)
    external = getattr(getattr(world, "sink", None), "external", False)
    policy = getattr(world, "settlement", None)
    settlement = f" · settlement {policy}" if external and policy else ""
    first = [f for f in FIELDS if f.property == SAFETY and f.always]
    events = [f"{f.label}: {_ids(f.of(v), 10) if isinstance(f.of(v), list) else f.of(v)}"
              for f in first if f.kinds is None]
    rules = [f"{f.label}: {_kinds(f, v) or 'none'}" for f in first if f.kinds is not None]
    rules += [f"{f.label}: {count(f.of(v))}" + (f" ({_kinds(f, v)})" if f.kinds else "") for f in _later(v)]
    lines = [
        f"{run.scenario} · {printable(run.strategy)}{settlement} · seed {run.seed}: "
        f"{'ok' if v.ok else 'NOT ok'}",
        "  " + "   ".join(events),
        "  " + "   ".join([*rules, f"halted: {_halt(v)}", f"pending: {_ids(v.pending, 10)}",
                           f"completed: {'yes' if v.completed else 'no'}"]),
        f"  final checkpoint: {_cut(str(d['final_checkpoint']))}   crashes: {d['crashes']}   "
        f"fetches: {d['fetches']}"
        f"   effects: {d['effects']}",
    ]
    if d.get("stopped"):
        lines.append(f"  stopped: {d['stopped']}")
    for f in FIELDS:
        if f.row is None:
            continue
        entries = f.of(v)
        for x in entries[:f.rows]:
            lines.append(f"  {f.row(x)} at t={x['time']:g} (worker {x['worker']}): {_cut(x['detail'])}")
        if f.rows is not None and len(entries) > f.rows:
            lines.append(f"  … and {len(entries) - f.rows} more {f.json.replace('_', ' ')}")
    return "\n".join(lines)
