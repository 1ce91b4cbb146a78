"""Plain-text tables of verdicts for the command line."""
from __future__ import annotations

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
    """Invariants broken, then the kinds of seed 001 settlement violations."""
    return "; ".join(filter(None, [", ".join(map(str, v.invariants_broken)), ", ".join(_kinds(v))])) or "-"


def _settlement(v) -> str:
    """Seed 001's settlement violations, beside the invariants, when there are any (they too make a run not ok)."""
    found = getattr(v, "settlement_violations", [])
    return f"   settlement violations: {len(found)} ({', '.join(_kinds(v))})" if found else ""


def _halt(v) -> str:
    """``no``, or the reason and whether ground truth justified it (CONTRACT §4 ``halt_justified``)."""
    if not v.halted:
        return "no"
    return v.halted + ("" if v.halt_justified else " (unjustified: the provider kept its contract)")


def verdict_row(run) -> tuple[str, ...]:
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
    return "\n".join(lines)
