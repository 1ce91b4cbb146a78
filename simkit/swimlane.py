"""The swimlane figure: a Lamport diagram of one run.

One lane per worker, plus the provider and the store (and the external sink when there is one); arrows for
fetches, event commits, barriers and external effects; marks for crashes, pauses, rejected compare-and-swaps
and lost replies. Seed 001's settlement is drawn too: the reservation and each settlement of an operation record
(labelled with its transition, a downgrade of ``committed`` in red), timeouts, late replies arriving after
them, and replies that carry another request's identity. It is drawn from the trace and the scenario's latencies
alone.
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
    "reserve": ("store", "#bcbd22", "reserve operation record (seed 001)"),
    "settle": ("store", "#e377c2", "settle reply or timeout (seed 001)"),
    "settle_late": ("store", "#e377c2", "settle reply or timeout (seed 001)"),
    "validate": ("store", "#e377c2", "settle reply or timeout (seed 001)"),
}
_MARKS = {
    "crash": ("X", "black", 110, "crash"),
    "barrier_rejected": ("s", "#d62728", 60, "barrier rejected: reread state"),
    "timeout": ("d", "#8c564b", 45, "timeout: no reply in time"),
}
_SETTLEMENTS = ("settle", "settle_late", "validate")
_LATE = "#b8860b"
_ROWS = 4                               # settlement labels take this many text rows in turn, never overlapping


def _transition(step: str, outcome: str, foreign: bool) -> tuple[str, bool]:
    """``settle: pending -> committed`` as a short label, and whether it is a seed 001 failure: a downgrade of
    ``committed`` (step 5), or a commit on a reply that carried another request's identity (step 6)."""
    if step == "validate":              # split_validate_write's first transaction: a decision, not a state
        return f"validated: {outcome}", False
    action, _, change = outcome.partition(": ")
    before, _, after = change.partition(" -> ")
    if before == "committed" and after not in ("committed", ""):
        return f"committed → {after}: downgraded", True
    if action == "quarantine":
        return "foreign reply quarantined", False
    if foreign and after == "committed" and before != "committed":
        return f"{before} → committed on a foreign reply", True
    return (f"{before} → {after}" if after and after != before else f"{after or action} kept"), False


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
    span = max(df.time.max(), 1.0)
    settled = 0                         # settlement labels drawn so far
    crossed, foreign = [], set()        # crossed replies drawn; events whose last reply was another's
    for i, row in enumerate(df.itertuples()):
        if row.step == "late_reply":    # leaves the sink unseen, long after its request; arrives now
            ax.annotate("", xy=(row.time, y[f"worker {row.worker}"]),
                        xytext=(row.time - latency["external sink"], y["external sink"]),
                        arrowprops=dict(arrowstyle="->", color=_LATE, lw=1.4, ls=":"))
            used.add(row.step)
            continue
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
            other = row.outcome.startswith("crossed reply")
            ax.annotate("", xy=(end, wy), xytext=(start + (end - start) / 2, ty),
                        arrowprops=dict(arrowstyle="->", color="#d62728" if other else color, lw=1, ls="--"))
            if other:
                crossed.append((end, wy))
        if row.step == "effect":
            (foreign.add if row.outcome.startswith("crossed reply") else foreign.discard)(row.event_id)
        used.add(row.step)
        if row.step in _SETTLEMENTS:
            text, failed = _transition(row.step, row.outcome, row.event_id in foreign)
            depth, settled = settled % _ROWS, settled + 1
            ax.text(start + (end - start) / 2, ty - 0.3 - 0.13 * depth, text, ha="center", va="top",
                    fontsize=8 if failed else 7, color="#d62728" if failed else color)
        elif row.step == "barrier":
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
            ys = [y["store"] if step == "barrier_rejected" else y[f"worker {w}"] + (0.15 if step == "timeout" else 0)
                  for w in rows.worker]           # a timeout can fall at a crash: drawn just above it
            ax.scatter(rows.time, ys, marker=marker, color=color, s=size, zorder=3)
            used.add(step)
    lost = df[df.outcome == "reply lost"]
    if len(lost):
        ax.scatter(lost.time, [y[f"worker {w}"] for w in lost.worker], marker="$?$", color="#d62728", s=80, zorder=3)
    if crossed:
        ax.scatter(*zip(*crossed), marker="$\\neq$", color="#d62728", s=90, zorder=3)
    colors = {lab: c for step, (_t, c, lab) in _STYLE.items() if step in used}
    handles = [Line2D([], [], color=c, label=lab) for lab, c in colors.items()]
    handles += [Line2D([], [], marker=m, color=c, ls="", label=lab) for step, (m, c, _s, lab) in _MARKS.items()
                if step in used]
    if len(lost):
        handles.append(Line2D([], [], marker="$?$", color="#d62728", ls="", label="reply lost (red arrow)"))
    if crossed:
        handles.append(Line2D([], [], marker="$\\neq$", color="#d62728", ls="--",
                              label="reply carries another request's identity"))
    if "late_reply" in used:
        handles.append(Line2D([], [], color=_LATE, ls=":", lw=1.4, label="late reply arrives (after the timeout)"))
    if paused:
        handles.append(Line2D([], [], color="#9467bd", lw=6, alpha=0.35, label="paused, memory kept (stale)"))
    if "crash" in used:
        handles.append(Line2D([], [], color="#444444", lw=6, alpha=0.35, label="down until restart"))
    ax.set_xlim(-0.02 * span, span * 1.03)
    ax.set_yticks([y[n] for n in lanes], lanes)
    ax.set_ylim(-len(lanes) + 0.5, 0.5)
    ax.set_xlabel("simulated time")
    ax.set_title(title or f"{run.scenario} · {run.strategy}: who talked to whom, and when")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax
