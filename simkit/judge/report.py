"""A verdict in words, written here and only here (docs/verdict.md): the row of the command line's table
(:func:`verdict_row`), the one-run summary (:func:`run_summary`), the cells of a notebook's table
(:func:`verdict_cells`, which :func:`simkit.viz.frames.verdict_frame` shows), the one-line form a workshop check
quotes (:func:`verdict_line`) and the counts line of ``simkit explore``'s first violation and ``simkit shrink``'s
shrunk run (:func:`counts_line`)."""
from __future__ import annotations

__all__ = ["HEADERS", "counts_line", "run_summary", "table", "verdict_cells", "verdict_line", "verdict_row"]

HEADERS = ("strategy", "ok", "lost", "duplicated", "regressions", "invariants broken", "halted")


def _ids(ids: list[str], limit: int = 4) -> str:
    if not ids:
        return "0"
    shown = ", ".join(ids[:limit]) + (", …" if len(ids) > limit else "")
    return f"{len(ids)} ({shown})"


def _kinds(v) -> list[str]:
    """The kinds of seed 001 settlement violations a verdict reports."""
    return sorted({x["kind"] for x in getattr(v, "settlement_violations", [])})


def _broken(v) -> str:
    """Invariants broken, then the kinds of seed 001 settlement violations and ``unhalted`` (step 3)."""
    other = _kinds(v) + (["unhalted"] if getattr(v, "unhalted", None) else [])
    return "; ".join(filter(None, [", ".join(map(str, v.invariants_broken)), ", ".join(other)])) or "-"


def _settlement(v) -> str:
    """Seed 001's settlement violations and step 3's missing halts, beside the invariants, when there are any
    (they too make a run not ok)."""
    found = getattr(v, "settlement_violations", [])
    line = f"   settlement violations: {len(found)} ({', '.join(_kinds(v))})" if found else ""
    return line + (f"   unhalted: {len(v.unhalted)}" if getattr(v, "unhalted", None) else "")


def _halt(v) -> str:
    """``no``, or the reason and whether ground truth justified it (``halt_justified``, docs/verdict.md)."""
    if not v.halted:
        return "no"
    return v.halted + ("" if v.halt_justified else " (unjustified: the provider kept its contract)")


def _listed(ids, limit: int = 6) -> str:
    """Ids in a notebook's table cell: ``-``, or the first ``limit`` and how many in all."""
    if not ids:
        return "-"
    return ", ".join(ids[:limit]) + (f", … ({len(ids)} in all)" if len(ids) > limit else "")


def verdict_cells(run) -> dict:
    """One run's verdict as the cells of a notebook's table, by column (lists shown as short strings)."""
    v, cp = run.verdict, run.world.store.checkpoint
    return {
        "scenario": run.scenario, "strategy": run.strategy, "ok": v.ok, "lost": _listed(v.lost),
        "duplicated": _listed(v.duplicated), "regressions": v.regressions,
        "invariants broken": ", ".join(map(str, v.invariants_broken)) or "-", "halted": v.halted or "-",
        "pending": _listed(v.pending), "completed": v.completed, "crashes": run.world.crashes,
        "final checkpoint": f"{cp.resume_cursor} / {cp.applied_position} / v{cp.checkpoint_version}",
    }


def verdict_line(verdict) -> str:
    """A verdict in one line: the safety fields (lost, invariants; duplicated, regressions and settlement
    violations when there are any), then liveness (completed) and what explains it (halted, pending)."""
    parts = [f"lost {len(verdict.lost)}", f"invariants {verdict.invariants_broken}"]
    if verdict.duplicated:
        parts.append(f"duplicated {len(verdict.duplicated)}")
    if verdict.regressions:
        parts.append(f"regressions {verdict.regressions}")
    if verdict.settlement_violations:
        parts.append(f"settlement violations {len(verdict.settlement_violations)}")
    if getattr(verdict, "unhalted", None):
        parts.append(f"unhalted {len(verdict.unhalted)}")
    parts += [f"completed {verdict.completed}", f"halted {verdict.halted}", f"pending {len(verdict.pending)}"]
    return ", ".join(parts)


def counts_line(verdict, brief: bool = False) -> str:
    """A verdict's counts on one line; ``verdict`` is a verdict or its ``--json`` object (``Verdict.as_dict``).
    ``lost: 0   duplicated: 1   regressions: 0   invariants broken: 4   completed: yes``, then the kinds of seed 001
    settlement violations when there are any (``simkit explore``'s first violation); ``brief``: ``lost 1
    duplicated 0   regressions 0   invariants broken: 1`` (``simkit shrink``'s shrunk run)."""
    d = verdict if isinstance(verdict, dict) else verdict.as_dict()
    inv = ", ".join(str(i) for i in sorted({x["invariant"] for x in d["invariant_violations"]})) or "none"
    sep = " " if brief else ": "
    line = (f"lost{sep}{len(d['lost'])}   duplicated{sep}{len(d['duplicated'])}   regressions{sep}{d['regressions']}"
            f"   invariants broken: {inv}")
    if brief:
        return line
    settled = ", ".join(sorted({x["kind"].replace("_", " ") for x in d.get("settlement_violations", ())}))
    line += f"   completed: {'yes' if d['completed'] else 'no'}"
    line += f"   settlement: {settled}" if settled else ""
    return line + (f"   unhalted: {len(d['unhalted'])}" if d.get("unhalted") else "")


def verdict_row(run) -> tuple[str, ...]:
    """One run's verdict as a row of the command line's table (:data:`HEADERS`)."""
    v = run.verdict
    return (run.strategy, "yes" if v.ok else "NO", _ids(v.lost), _ids(v.duplicated), str(v.regressions),
            _broken(v), (v.halted + (" (unjustified)" if v.halt_justified is False else "")) if v.halted else "-")


def table(rows: list[tuple[str, ...]], headers: tuple[str, ...] = HEADERS) -> str:
    """A fixed-width table."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def run_summary(run) -> str:
    """A few lines describing one run's verdict."""
    d = run.as_dict()
    v = run.verdict
    world = getattr(run, "world", None)
    external = getattr(getattr(world, "sink", None), "external", False)
    settlement = f" · settlement {world.settlement}" if external and hasattr(world, "settlement") else ""
    lines = [
        f"{run.scenario} · {run.strategy}{settlement} · seed {run.seed}: {'ok' if v.ok else 'NOT ok'}",
        f"  lost: {_ids(v.lost, 10)}   duplicated: {_ids(v.duplicated, 10)}   regressions: {v.regressions}",
        f"  invariants broken: {', '.join(map(str, v.invariants_broken)) or 'none'}{_settlement(v)}"
        f"   halted: {_halt(v)}   pending: {_ids(v.pending, 10)}   completed: {'yes' if v.completed else 'no'}",
        f"  final checkpoint: {d['final_checkpoint']}   crashes: {d['crashes']}   fetches: {d['fetches']}"
        f"   effects: {d['effects']}",
    ]
    if d.get("stopped"):
        lines.append(f"  stopped: {d['stopped']}")
    for x in v.invariant_violations[:8]:
        lines.append(f"  invariant {x['invariant']} at t={x['time']:g} (worker {x['worker']}): {x['detail']}")
    if len(v.invariant_violations) > 8:
        lines.append(f"  … and {len(v.invariant_violations) - 8} more invariant violations")
    for x in getattr(v, "settlement_violations", []):
        lines.append(f"  {x['kind']} at t={x['time']:g} (worker {x['worker']}): {x['detail']}")
    for x in getattr(v, "unhalted", []):
        lines.append(f"  unhalted at t={x['time']:g} (worker {x['worker']}): {x['detail']}")
    return "\n".join(lines)
