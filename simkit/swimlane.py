"""The swimlane figure: a Lamport diagram of one run.

One lane per worker, plus the provider and the store (and the external sink when there is one); arrows for
fetches, event commits, barriers and external effects; marks for crashes, pauses, rejected compare-and-swaps
and lost replies. It is drawn from the trace and the scenario's latencies alone.
"""
from __future__ import annotations

from matplotlib.lines import Line2D

_STYLE = {
    "fetch": ("provider", "#1f77b4", "fetch → page"),
    "commit": ("store", "#2ca02c", "event commit"),
    "quarantine": ("store", "#8c6bb1", "quarantine receipt"),
    "barrier": ("store", "#ff7f0e", "page barrier (CAS)"),
    "barrier_rejected": ("store", "#7f7f7f", "rejected CAS"),
    "effect": ("external sink", "#17becf", "external effect"),
}
_MARKS = {
    "crash": ("X", "black", 110, "crash"),
    "barrier_rejected": ("s", "#d62728", 60, "barrier rejected: reread state"),
}


def swimlane(ax, run, until: float | None = None, title: str | None = None):
    """Draw ``run`` as a swimlane diagram on ``ax`` (optionally only up to simulated time ``until``)."""
    df = run.trace.to_frame()
    if until is not None:
        df = df[df.time <= until]
    timing = run.world.timing
    workers = sorted(set(df.worker))
    lanes = [f"worker {w}" for w in workers] + ["provider", "store"]
    if run.world.sink.external:
        lanes.append("external sink")
    y = {name: -i for i, name in enumerate(lanes)}
    latency = {"provider": timing.fetch_latency, "store": timing.commit_latency, "external sink": timing.effect_latency}
    for name in lanes:
        ax.axhline(y[name], color="#dddddd", lw=1, zorder=0)
    used = set()
    places = df.cursor_place.tolist()
    for i, row in enumerate(df.itertuples()):
        style = _STYLE.get(row.step)
        if style is None:
            continue
        target, color, _label = style
        if row.outcome == "reply lost":
            color = "#d62728"
        end = row.time
        start = end - latency[target]
        wy, ty = y[f"worker {row.worker}"], y[target]
        ax.annotate("", xy=(start + (end - start) / 2, ty), xytext=(start, wy),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1))
        if row.outcome != "reply lost":
            ax.annotate("", xy=(end, wy), xytext=(start + (end - start) / 2, ty),
                        arrowprops=dict(arrowstyle="->", color=color, lw=1, ls="--"))
        used.add(row.step)
        if row.step == "barrier":
            regressed = i > 0 and places[i] < places[i - 1]
            ax.text(start + (end - start) / 2, ty - 0.12, f"{row.outcome}" + (" ← regression" if regressed else ""),
                    ha="right" if regressed else "center", va="top", fontsize=8 if regressed else 7,
                    color="#d62728" if regressed else color)
        elif row.step == "barrier_rejected":
            ax.annotate(f"CAS rejected: store holds {row.resume_cursor} v{row.checkpoint_version}",
                        xy=(end, ty), xytext=(0, -18), textcoords="offset points", ha="right", fontsize=8,
                        color="#d62728")
    paused = False
    for w in workers:
        rows = df[(df.worker == w) & df.step.isin(["pause", "resume", "crash", "restart"])]
        began = None
        for step, time in zip(rows.step, rows.time):
            if step in ("pause", "crash"):
                began = (step, time)
            elif began is not None:
                color = "#9467bd" if began[0] == "pause" else "#444444"
                ax.plot([began[1], time], [y[f"worker {w}"]] * 2, color=color, lw=6, alpha=0.35,
                        solid_capstyle="butt", zorder=1)
                paused |= began[0] == "pause"
                began = None
    for step, (marker, color, size, _label) in _MARKS.items():
        rows = df[df.step == step]
        if len(rows):
            ys = [y[f"worker {w}"] if step != "barrier_rejected" else y["store"] for w in rows.worker]
            ax.scatter(rows.time, ys, marker=marker, color=color, s=size, zorder=3)
            used.add(step)
    lost = df[df.outcome == "reply lost"]
    if len(lost):
        ax.scatter(lost.time, [y[f"worker {w}"] for w in lost.worker], marker="$?$", color="#d62728", s=80, zorder=3)
    handles = [Line2D([], [], color=c, label=lab) for step, (_t, c, lab) in _STYLE.items() if step in used]
    handles += [Line2D([], [], marker=m, color=c, ls="", label=lab) for step, (m, c, _s, lab) in _MARKS.items()
                if step in used]
    if len(lost):
        handles.append(Line2D([], [], marker="$?$", color="#d62728", ls="", label="reply lost (red arrow)"))
    if paused:
        handles.append(Line2D([], [], color="#9467bd", lw=6, alpha=0.35, label="paused, memory kept (stale)"))
    if "crash" in used:
        handles.append(Line2D([], [], color="#444444", lw=6, alpha=0.35, label="down until restart"))
    span = max(df.time.max(), 1.0)
    ax.set_xlim(-0.02 * span, span * 1.03)
    ax.set_yticks([y[n] for n in lanes], lanes)
    ax.set_ylim(-len(lanes) + 0.5, 0.5)
    ax.set_xlabel("simulated time")
    ax.set_title(title or f"{run.scenario} · {run.strategy}: who talked to whom, and when")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax
