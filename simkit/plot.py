"""Figures that take a matplotlib ``Axes``: the timeline of ``resume_cursor`` against ``applied_position``,
and the fate of every event. Matplotlib is imported by the caller's figure, not by the simulation core."""
from __future__ import annotations

from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from .checker import FATES, event_fates, lost_at

FATE_COLORS = {
    "applied once": "#4c9f70", "replayed harmlessly": "#a7d5b8", "duplicated": "#f28e2b",
    "quarantined": "#8c6bb1", "lost": "#d62728", "pending": "#bdbdbd",
}


def timeline(ax, run, title: str | None = None):
    """Simulated time against stream position: where the durable cursor will fetch next (its decoded place)
    against what is durably done (``applied_position``), with crashes, barriers, commits, lost and duplicated
    events, and the window where the cursor runs ahead of the durable prefix shaded."""
    df = run.trace.to_frame()
    world = run.world
    t, place, applied = df["time"], df["cursor_place"], df["applied_position"]
    ax.step(t, place, where="post", color="#1f77b4", lw=2, label="resume_cursor (place in stream)")
    ax.step(t, applied, where="post", color="#2ca02c", lw=2, label="applied_position")
    ax.fill_between(t, applied, place, where=place > applied, step="post", color="#d62728", alpha=0.15,
                    label="cursor ahead of durable prefix")
    fetch = df[(df.step == "fetch") & df.position.notna()]
    if len(fetch):
        ax.step(fetch.time, fetch.position.cummax(), where="post", color="#7f7f7f", lw=1, ls="--",
                label="highest position observed")
    ax.axhline(world.provider.head, color="black", lw=0.8, ls=":", label="provider head")
    marks = [
        (df[df.step.isin(["commit", "quarantine"])], "position", dict(marker="o", s=14, color="#2ca02c"), "event commit"),
        (df[df.step == "barrier"], "cursor_place", dict(marker="^", s=60, color="#1f77b4"), "page barrier"),
        (df[df.step == "barrier_rejected"], "applied_position", dict(marker="v", s=60, color="#7f7f7f"), "rejected barrier"),
        (df[df.step == "crash"], "applied_position", dict(marker="X", s=90, color="black"), "crash"),
        (df[df.step == "pause"], "applied_position", dict(marker="|", s=200, color="#9467bd"), "pause"),
    ]
    for rows, column, style, label in marks:
        if len(rows):
            ax.scatter(rows.time, rows[column], zorder=3, label=label, **style)
    events = world.provider.events
    lost = lost_at(world, run.verdict)
    if lost:
        ax.scatter(list(lost.values()), [events[e].position for e in lost], marker="x", s=70, color="#d62728",
                   zorder=4, label="lost event (when it became unreachable)")
    seen, dup = {}, []
    for _seq, time, _worker, eid in world.sink.effects:
        seen[eid] = seen.get(eid, 0) + 1
        if seen[eid] == 2:
            dup.append((time, events[eid].position))
    if dup:
        ax.scatter(*zip(*dup), marker="D", s=50, color="#f28e2b", zorder=4, label="duplicated effect")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(y=0.08)
    ax.set_xlabel("simulated time")
    ax.set_ylabel("stream position")
    ax.set_title(title or f"{run.scenario} · {run.strategy}: resume_cursor vs applied_position")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax


def fates(ax, run, columns: int = 20, title: str | None = None):
    """One cell per event in source order, coloured by its fate in ground truth."""
    world = run.world
    fate = event_fates(world, run.verdict)
    ids = sorted(fate, key=lambda e: world.provider.events[e].position)
    columns = max(1, min(columns, len(ids)))
    for i, eid in enumerate(ids):
        r, c = divmod(i, columns)
        ax.add_patch(Rectangle((c, -r - 1), 0.92, 0.92, color=FATE_COLORS[fate[eid]]))
        if len(ids) <= 80:
            ax.text(c + 0.46, -r - 0.54, str(world.provider.events[eid].position), ha="center", va="center",
                    fontsize=7)
    rows = -(-len(ids) // columns)
    ax.set_xlim(0, columns)
    ax.set_ylim(-rows - 0.1, 0.1)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel("events in source order (label: position)")
    ax.set_title(title or f"{run.scenario} · {run.strategy}: event fates")
    present = [f for f in FATES if f in fate.values()]
    ax.legend(handles=[Patch(color=FATE_COLORS[f], label=f) for f in present], loc="upper left",
              bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax
