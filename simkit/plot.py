"""Figures that take a matplotlib ``Axes``: the timeline of ``resume_cursor`` against ``applied_position``,
the fate of every event, and side-by-side timelines. Matplotlib is imported by the caller's figure, not by the
simulation core.

The timeline draws what the durable checkpoint *says* (``resume_cursor``, decoded to its place in the stream by
the provider, and ``applied_position``) against what ground truth *is* (:func:`durable_prefix`: how far every
event the stream has served is durably done). The gap that matters is shaded: the durable cursor has moved past
an event that has no durable outcome (:func:`unsafe_rows`). A safe consumer never opens it.
"""
from __future__ import annotations

from bisect import bisect_right

from matplotlib.artist import Artist
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from .checker import FATES, event_fates, lost_at, outcome_since
from .model import NON_TERMINAL, REQUEST_LOST

FATE_COLORS = {
    "done before the run": "#e6efe8", "applied once": "#4c9f70", "replayed harmlessly": "#a7d5b8",
    "ignored": "#9ecae1", "quarantined": "#8c6bb1", "duplicated": "#f28e2b", "lost": "#d62728", "pending": "#bdbdbd",
}
#: Fates whose cell is dark enough for a white label.
_DARK_FATES = ("lost", "quarantined", "applied once")
CURSOR, APPLIED, TRUTH, GAP, LOST_RED, DUP_ORANGE, QUARANTINE, PAUSE = (
    "#1f77b4", "#2ca02c", "black", "#d62728", "#d62728", "#f28e2b", "#8c6bb1", "#9467bd")

#: The z-order of crash and lost-event marks: above the lines, beneath every other mark (drawn at 3), which
#: shows on top of them, e.g. the commit at a crash or the page barrier that passed a lost event.
BENEATH = 2.5
#: A label's background: lines and marks behind it do not run through the text.
LABEL_BOX = dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.85)

#: Crashes and lost events are labelled in the figure when there are at most this many of them.
ANNOTATE_AT_MOST = 4


def _terminal_times(world) -> dict[str, float]:
    """For each event id, the simulated time from which it holds a terminal outcome in ground truth."""
    time_of = {seq: t for seq, t, *_ in world.store.receipt_log}
    time_of.update((seq, t) for seq, t, *_ in world.sink.effects)
    return {eid: time_of[seq] for eid, seq in outcome_since(world).items()}


def _known_from(world) -> dict[str, float]:
    """When each event joins the stream the consumer can know: from the start, except a backfill, which joins
    when it is first served behind a position already served."""
    known = {eid: 0.0 for eid in world.provider.events}
    highest = None
    seen: set[str] = set()
    for _seq, time, _w, _cursor, _next, ids in world.provider.log:
        top = highest
        for eid in ids:
            pos = world.provider.events[eid].position
            if eid not in seen and highest is not None and pos < highest:
                known[eid] = time
            seen.add(eid)
            top = pos if top is None else max(top, pos)
        highest = top
    return known


def durable_prefix(run) -> tuple[list[float], list[int]]:
    """Ground truth's complete durable prefix as a step function ``(times, positions)``.

    At each moment: the greatest position up to which every event of the stream (a backfill only once it has
    been served) holds a terminal outcome in ground truth: a receipt, and for an ``applied`` receipt on an
    external sink the effect itself. This is what ``applied_position`` ought to say (invariant 2); a consumer's
    own claim is drawn separately. Before anything is done it is the initial ``applied_position``.
    """
    world = run.world
    events = sorted(world.provider.events.values(), key=lambda e: (e.position, e.id))
    done, known = _terminal_times(world), _known_from(world)
    initial = world.scenario.initial.applied_position
    changes = sorted({0.0, *done.values(), *known.values()})
    times, values = [], []
    for t in changes:
        prefix = None
        for e in events:
            if known[e.id] > t:
                continue
            if done.get(e.id, float("inf")) > t:
                break
            prefix = e.position
        value = prefix if prefix is not None else min(initial, events[0].position - 1 if events else initial)
        if not values or values[-1] != value:
            times.append(t)
            values.append(value)
    return times, values


def unsafe_rows(run) -> list[bool]:
    """Per trace row: has the durable ``resume_cursor`` moved past an event (one the stream has served or will
    serve in order) that has no durable outcome yet? Invariant 1 forbids it; every lost event starts here."""
    world = run.world
    done, known = _terminal_times(world), _known_from(world)
    provider = world.provider
    windows: dict[str, tuple[list[float], list[float]]] = {}
    out = []
    for time, cursor in zip(run.trace.time, run.trace.resume_cursor):
        if cursor not in windows:
            # the moments during which some event this cursor can no longer deliver is known and not yet done
            spans = sorted((known[e], done.get(e, float("inf"))) for e in provider.events
                           if not provider.deliverable(e, cursor) and known[e] < done.get(e, float("inf")))
            starts, ends = [], []
            for a, b in spans:
                if ends and a <= ends[-1]:
                    ends[-1] = max(ends[-1], b)
                else:
                    starts.append(a)
                    ends.append(b)
            windows[cursor] = (starts, ends)
        starts, ends = windows[cursor]
        i = bisect_right(starts, time) - 1
        out.append(i >= 0 and time < ends[i])
    return out


def _step_at(times: list[float], values: list[int], at) -> list[int]:
    return [values[max(0, bisect_right(times, t) - 1)] for t in at]


def timeline(ax, run, title: str | None = None, legend: bool = True, annotate: bool = True):
    """Simulated time against stream position.

    Lines: the durable ``resume_cursor`` (its decoded place: the highest position it can no longer deliver),
    the durable ``applied_position``, ground truth's durable prefix (:func:`durable_prefix`), the highest
    position fetched so far, and the provider head. Shaded: the cursor has moved past an event with no durable
    outcome. Marks: event commits and durable quarantine receipts, replays, in-memory quarantine decisions and
    non-terminal outcomes, page barriers (accepted, rejected), checkpoint regressions, crashes, pauses, lost
    events (red, when they became unreachable) and duplicated effects (orange). With ``annotate``, a few
    crashes and lost events are also labelled in the figure.
    """
    df = run.trace.to_frame()
    world = run.world
    t, place, applied = df["time"], df["cursor_place"], df["applied_position"]
    truth_t, truth_v = durable_prefix(run)
    end = float(t.iloc[-1]) if len(t) else 0.0
    truth_rows = _step_at(truth_t, truth_v, t)
    gap = unsafe_rows(run)
    if any(gap):
        ax.fill_between(t, truth_rows, place, where=gap, step="post", color=GAP, alpha=0.18, lw=0,
                        label="cursor past events with no durable outcome")
    ax.axhline(world.provider.head, color="#9e9e9e", lw=1, ls=(0, (1, 3)), label="provider head (end of stream)")
    fetch = df[(df.step == "fetch") & df.position.notna()]
    if len(fetch):
        ax.step(list(fetch.time) + [end], list(fetch.position.cummax()) + [fetch.position.max()], where="post",
                color="#7f7f7f", lw=1, ls="--", label="highest position fetched so far")
    ax.step(t, place, where="post", color=CURSOR, lw=2.2, label="resume_cursor (its place in the stream)")
    ax.step(t, applied, where="post", color=APPLIED, lw=2.2, label="applied_position")
    ax.step(truth_t + [end], truth_v + [truth_v[-1]], where="post", color=TRUTH, lw=1.2, ls=":",
            label="durable prefix in ground truth")

    regress = df[(df.cursor_place < df.cursor_place.shift()) | (df.checkpoint_version < df.checkpoint_version.shift())
                 | (df.applied_position < df.applied_position.shift())]
    marks = [
        (df[(df.step == "commit") & (df.outcome == "applied")], "position",
         dict(marker="o", s=16, color=APPLIED), "event commit (receipt + applied_position)"),
        (df[(df.step == "quarantine") & (df.outcome != REQUEST_LOST)], "position",
         dict(marker="o", s=30, color=QUARANTINE),
         "durable quarantine receipt"),
        (df[df.step == "replay"], "position", dict(marker="o", s=30, facecolors="none", edgecolors="#555555"),
         "replay (already done: skipped)"),
        (df[(df.step == "handle") & (df.outcome == "quarantine")], "position",
         dict(marker="s", s=34, facecolors="none", edgecolors=QUARANTINE), "quarantine decided (in memory)"),
        (df[(df.step == "handle") & df.outcome.isin(NON_TERMINAL)], "position",
         dict(marker="s", s=34, facecolors="none", edgecolors=DUP_ORANGE), "non-terminal outcome"),
        (df[(df.step == "barrier") & (df.outcome != REQUEST_LOST)], "cursor_place",
         dict(marker="^", s=70, color=CURSOR, edgecolors="white", linewidths=0.8), "page barrier"),
        (df[df.step == "barrier_rejected"], "applied_position", dict(marker="v", s=60, color="#7f7f7f"),
         "rejected barrier (stale attempt)"),
        (regress, "cursor_place", dict(marker="v", s=110, facecolors="none", edgecolors=GAP, linewidths=1.8),
         "checkpoint regression"),
        # beneath the other marks and larger than them: a commit or barrier at the crash shows on top of it
        (df[df.step == "crash"], "applied_position", dict(marker="X", s=130, color="black", zorder=BENEATH),
         "crash"),
    ]
    for rows, column, style, label in marks:
        if len(rows):
            ax.scatter(rows.time, rows[column], **{"zorder": 3, **style}, label=label)

    spans, paused = [], {}
    for row in df[df.step.isin(["pause", "resume"])].itertuples():
        if row.step == "pause":
            paused[row.worker] = (row.time, row.applied_position)
        elif row.worker in paused:
            spans.append((*paused.pop(row.worker), row.time))
    spans += [(t0, y, end) for t0, y in paused.values()]
    for i, (t0, y, t1) in enumerate(spans):
        ax.plot([t0, t1], [y, y], color=PAUSE, lw=5, alpha=0.55, solid_capstyle="butt", zorder=2,
                label="worker paused (stale memory)" if i == 0 else None)

    events = world.provider.events
    lost = lost_at(world, run.verdict)
    if lost:
        # beneath the other marks and larger: the page barrier that passed the event shows inside the cross
        ax.scatter(list(lost.values()), [events[e].position for e in lost], marker="x", s=200, color=LOST_RED,
                   linewidths=2.2, zorder=BENEATH, label="lost event (when it became unreachable)")
    seen, dup = {}, []
    for _seq, time, _worker, eid in world.sink.effects:
        seen[eid] = seen.get(eid, 0) + 1
        if seen[eid] == 2:
            dup.append((time, events[eid].position, eid))
    if dup:
        ax.scatter([d[0] for d in dup], [d[1] for d in dup], marker="D", s=50, color=DUP_ORANGE, zorder=5,
                   label="duplicated effect (second run)")

    if annotate:
        span = end or 1.0

        def label(text, x, y, dy, **style):
            """Label a mark to its right, or to its left near the right edge."""
            right = x > 0.8 * span
            ax.annotate(text, (x, y), xytext=(-10 if right else 10, dy), textcoords="offset points",
                        ha="right" if right else "left", zorder=6, bbox=LABEL_BOX, **style)

        crashes = df[df.step == "crash"]
        if 0 < len(crashes) <= ANNOTATE_AT_MOST:
            for _, row in crashes.iterrows():
                what = f"crash {row.outcome}" + (f" ({row.event_id})" if row.event_id else "")
                label(what, row.time, row.applied_position, -14, fontsize=8)
        if 0 < len(lost) <= ANNOTATE_AT_MOST:
            for eid, when in lost.items():
                label(f"{eid} lost", when, events[eid].position, 6, fontsize=9, color=LOST_RED, fontweight="bold")
        if 0 < len(dup) <= ANNOTATE_AT_MOST:
            for when, pos, eid in dup:
                label(f"{eid} twice", when, pos, 6, fontsize=9, color=DUP_ORANGE, fontweight="bold")

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(x=0.03, y=0.1)
    ax.set_xlabel("simulated time")
    ax.set_ylabel("stream position")
    ax.set_title(title or f"{run.strategy} on {run.scenario} (seed {run.seed})\nresume_cursor vs applied_position")
    if legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax


def compare(axes, runs, titles=None, annotate: bool = True):
    """One timeline per run, side by side on a shared position scale, with a single legend under the figure.

    ``axes`` is a sequence of Axes, one per run (e.g. ``plt.subplots(1, 2)[1]``).
    """
    axes = list(axes)
    titles = list(titles) if titles is not None else [None] * len(runs)
    for ax, run, title in zip(axes, runs, titles):
        timeline(ax, run, title=title, legend=False, annotate=annotate)
    lows, highs = zip(*(ax.get_ylim() for ax in axes))
    for ax in axes:
        ax.set_ylim(min(lows), max(highs))
    handles: dict[str, object] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, h)
    fig = axes[0].figure
    where = dict(loc="outside lower center") if fig.get_layout_engine() is not None else dict(
        loc="upper center", bbox_to_anchor=(0.5, 0.0))
    fig.legend(list(handles.values()), list(handles), ncol=min(3, len(handles)), fontsize="small",
               frameon=False, **where)
    return axes


class _FitLabels(Artist):
    """Sizes the fates grid's position labels to its cells when the figure is drawn (after any layout engine
    has placed the Axes): as large as fits, at most ``largest`` points; below :data:`SMALLEST_LABEL` the labels
    are hidden and the x label says what the grid shows instead."""

    def __init__(self, texts, chars: int, largest: float, labelled: str, unlabelled: str):
        super().__init__()
        self.texts, self.chars, self.largest = texts, chars, largest
        self.labelled, self.unlabelled = labelled, unlabelled
        self.set_in_layout(False)
        self.set_zorder(0)                    # drawn before the labels it sizes

    def draw(self, renderer):
        ax = self.axes
        (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (CELL, CELL)])
        cell = min(abs(x1 - x0), abs(y1 - y0)) / renderer.points_to_pixels(1.0)       # in points
        size = min(self.largest, 0.85 * cell / (0.62 * self.chars), 0.6 * cell)
        for t in self.texts:
            t.set_fontsize(size)
            t.set_visible(size >= SMALLEST_LABEL)
        ax.xaxis.label.set_text(self.labelled if size >= SMALLEST_LABEL else self.unlabelled)


def _fate_style(fate: str) -> dict:
    """A fate's cell: its colour; the pale cell of an event done before the run gets a green edge."""
    if fate == "done before the run":
        return dict(facecolor=FATE_COLORS[fate], edgecolor=FATE_COLORS["replayed harmlessly"], linewidth=1.2)
    return dict(color=FATE_COLORS[fate])


#: A fates cell's side (the grid's pitch is 1), and the smallest position label drawn in it, in points.
CELL, SMALLEST_LABEL = 0.92, 4.5


def fates(ax, run, columns: int = 20, title: str | None = None, highlight=()):
    """One cell per event in source order, coloured by its fate in ground truth (:func:`simkit.checker.event_fates`),
    labelled with its position in a font sized to the cells as drawn (when they are too small for any, the x label
    gives the positions' range). The grid sits at the top of its Axes: room the layout leaves over goes below it.
    ``highlight``: ids whose cells get a thick black frame (the events a crash changed, say)."""
    world = run.world
    fate = event_fates(world, run.verdict)
    ids = sorted(fate, key=lambda e: world.provider.events[e].position)
    columns = max(1, min(columns, len(ids)))
    texts = []
    for i, eid in enumerate(ids):
        r, c = divmod(i, columns)
        style = _fate_style(fate[eid])
        if eid in highlight:
            style = dict(facecolor=FATE_COLORS[fate[eid]], edgecolor="black", linewidth=2.5)
        ax.add_patch(Rectangle((c, -r - 1), CELL, CELL, **style))
        texts.append(ax.text(c + CELL / 2, -r - 1 + CELL / 2, str(world.provider.events[eid].position),
                             ha="center", va="center", color="white" if fate[eid] in _DARK_FATES else "black"))
    rows = -(-len(ids) // columns)
    ax.set_xlim(0, columns)
    ax.set_ylim(-rows - 0.1, 0.1)
    ax.set_aspect("equal")
    ax.set_anchor("N")
    ax.set_xticks([])
    ax.set_yticks([])
    positions = [world.provider.events[e].position for e in ids]
    labelled = "events in source order (label: position)"
    unlabelled = f"events in source order (positions {positions[0]}–{positions[-1]})" if ids else labelled
    ax.set_xlabel(labelled)
    if texts:
        ax.add_artist(_FitLabels(texts, max(len(t.get_text()) for t in texts), 9 if len(ids) <= 20 else 8,
                                 labelled, unlabelled))
    ax.set_ylabel(f"{columns} per row" if rows > 1 else "")
    ax.set_title(title or f"{run.strategy} on {run.scenario}: event fates")
    present = [f for f in FATES if f in fate.values()]
    ax.legend(handles=[Patch(**_fate_style(f), label=f) for f in present], loc="upper left",
              bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax


#: The crash matrix's diverging palette: blue where a crash made the run better than the fault-free one, white where
#: it changed nothing, red where it made it worse; a cell with no schedule is grey.
MATRIX_CMAP, UNREACHED = "RdBu_r", "#d9d9d9"


def crash_matrix(ax, table, schedules=None, title: str | None = None, label: str = "violating single-crash schedules"):
    """A heatmap of crash point (rows) × strategy (columns): how many single-crash schedules violate.

    ``table`` is a pandas DataFrame indexed by crash point with one column per strategy. ``schedules``, a frame
    of the same shape, is how many single-crash schedules were run in each cell: cells read ``violating/run`` and
    are coloured by that share (0–100 %, so 2/2 is as dark as 3/3), and a cell with none run (the strategy never
    passes that point) is grey and reads ``not reached``. Without ``schedules`` the colour is the count itself.
    ``label`` names what is counted; the colour bar says whether it shows a share or a count of it.
    """
    import matplotlib
    import numpy as np
    from matplotlib.ticker import PercentFormatter

    values = table.to_numpy(dtype=float)
    runs = None if schedules is None else schedules.reindex(index=table.index, columns=table.columns).to_numpy(
        dtype=float)
    if runs is None:
        shade, top = values, max(1.0, float(np.nanmax(values)) if values.size else 1.0)
        shown = np.ma.masked_invalid(shade)
    else:
        shade, top = np.divide(values, runs, out=np.zeros_like(values), where=runs > 0), 1.0
        shown = np.ma.masked_where(runs == 0, shade)
    cmap = matplotlib.colormaps["Reds"].with_extremes(bad="#e0e0e0")
    image = ax.imshow(shown, cmap=cmap, vmin=0, vmax=top, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        if runs is not None and runs[r, c] == 0:
            text, color = "not\nreached", "#616161"
        else:
            text = f"{v:g}" if runs is None else f"{v:g}/{runs[r, c]:g}"
            color = "white" if shade[r, c] > 0.6 * top else "black"
        ax.text(c, r, text, ha="center", va="center", fontsize=8, color=color)
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=35, ha="right")
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    ax.set_xlabel("strategy")
    ax.set_ylabel("crash point")
    ax.set_title(title or "crash matrix: one crash at every pass of every crash point")
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if runs is None:
        bar.set_label(label)
        bar.locator = MaxNLocator(integer=True)
    else:
        bar.set_label(f"{label}\n(share of the schedules run in the cell)")
        bar.formatter = PercentFormatter(1.0)
    bar.update_ticks()
    return ax


#: Sweep curve colours: ``safe`` black (drawn on top of the others), each shortcut a hue of its own. A user's own
#: strategy takes the next of ``_EXTRA_COLORS``.
STRATEGY_COLORS = {
    "safe": "black", "persist_token_on_fetch": "#1f77b4", "max_position_watermark": "#ff7f0e",
    "compare_tokens": "#2ca02c", "no_version_check": "#d62728", "watermark_only_dedup": "#9467bd",
    "success_before_effect": "#8c564b", "in_memory_quarantine": "#17becf",
}
_EXTRA_COLORS = ("#e377c2", "#bcbd22", "#7f7f7f")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "<", ">", "p")
#: What :func:`sweep_curves` can plot: a column of the sweep's tidy table, and what a run with it above 0 did.
SWEEP_METRICS = {"lost": "runs that lost at least one event", "duplicated": "runs that duplicated an effect"}


def sweep_shares(table, metric: str = "lost", confidence: float = 0.95):
    """Per (strategy, crash rate) of a sweep's tidy table (:data:`simkit.sweep.COLUMNS`): how many runs, how many
    with ``metric`` above 0 (``hits``), their ``share`` and its Wilson interval (``low``, ``high``).

    Strategies keep their first-seen order, crash rates ascend. Raises ``ValueError`` for an unknown metric.
    """
    import pandas as pd

    from .sweep import wilson

    if metric not in SWEEP_METRICS:
        raise ValueError(f"metric {metric!r}: use one of {', '.join(SWEEP_METRICS)}")
    order = {s: i for i, s in enumerate(dict.fromkeys(table["strategy"]))}
    rows = []
    for (strategy, rate), group in table.groupby(["strategy", "crash_rate"], sort=False):
        n, k = len(group), int((group[metric] > 0).sum())
        low, high = wilson(k, n, confidence)
        rows.append({"strategy": strategy, "crash_rate": float(rate), "runs": n, "hits": k, "share": k / n,
                     "low": low, "high": high})
    rows.sort(key=lambda r: (order[r["strategy"]], r["crash_rate"]))
    return pd.DataFrame(rows, columns=["strategy", "crash_rate", "runs", "hits", "share", "low", "high"])


def sweep_curves(ax, table, metric: str = "lost", confidence: float = 0.95, title: str | None = None,
                 xscale: str = "symlog", legend: bool = True):
    """The share of runs that lost at least one event (``metric="lost"``) or duplicated an effect
    (``"duplicated"``) against crash rate, one line per strategy, its Wilson interval shaded.

    ``table`` is a sweep's tidy table (:meth:`simkit.sweep.Sweep.frame`, or the CSV ``simkit sweep --out``
    writes). The x axis is symmetric-log (linear up to the smallest positive rate, so rate 0 has a place) with a
    tick at every rate swept; ``xscale="linear"`` for a plain one. ``safe`` is black and drawn on top; the other
    strategies differ in colour and in hollow marker, so curves that coincide (at 0 or at 100 %) stay visible.
    Each line is labelled with its strategy, and a curve that coincides with one drawn before says so in its label
    (``"compare_tokens (same curve as max_position_watermark)"``: the same share on this metric, nothing more; a
    strategy on the ``safe`` curve can still fail otherwise); each band's gid is ``"wilson <strategy>"``.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, PercentFormatter

    shares = sweep_shares(table, metric, confidence)
    colors = dict(STRATEGY_COLORS)
    extra = iter(_EXTRA_COLORS * (1 + len(shares) // len(_EXTRA_COLORS)))
    strategies = list(dict.fromkeys(shares["strategy"]))
    handles = []
    drawn: dict[tuple, str] = {}        # a curve already drawn -> its strategy: a coinciding one says so
    for i, strategy in enumerate(strategies):
        s = shares[shares["strategy"] == strategy]
        curve = tuple(zip(s["crash_rate"], s["share"]))
        label = strategy if curve not in drawn else f"{strategy} (same curve as {drawn[curve]})"
        drawn.setdefault(curve, strategy)
        color = colors.get(strategy) or colors.setdefault(strategy, next(extra))
        safe = strategy == "safe"
        z = 10 if safe else 3 + i / 100
        ax.fill_between(s["crash_rate"], s["low"], s["high"], color="#9e9e9e" if safe else color,
                        alpha=0.3 if safe else 0.12, lw=0, zorder=z - 1, gid=f"wilson {strategy}")
        style = dict(color=color, lw=2.4 if safe else 1.6, marker="o" if safe else _MARKERS[i % len(_MARKERS)],
                     markersize=5 if safe else 8, zorder=z)
        if not safe:
            style.update(markerfacecolor="none", markeredgewidth=1.4)
        (line,) = ax.plot(s["crash_rate"], s["share"], label=label, **style)
        handles.append(line)
    rates = sorted(set(shares["crash_rate"]))
    positive = [r for r in rates if r > 0]
    if xscale == "symlog" and positive:
        ax.set_xscale("symlog", linthresh=min(positive), linscale=0.5)
    else:
        ax.set_xscale(xscale if xscale != "symlog" else "linear")
    ax.xaxis.set_major_locator(FixedLocator(rates))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xticks(rates, [f"{r:g}" for r in rates])
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(-0.03, 1.03)
    ax.grid(True, color="#e0e0e0", lw=0.8, zorder=0)
    ax.set_xlabel("crash rate (chance of a crash at each crash-point pass)")
    ax.set_ylabel(SWEEP_METRICS[metric])
    runs = sorted(set(shares["runs"]))
    per = f"{runs[0]} runs per point" if len(runs) == 1 else f"{runs[0]}-{runs[-1]} runs per point"
    scenarios = ", ".join(dict.fromkeys(map(str, table["scenario"])))
    ax.set_title(title or f"{scenarios}: {SWEEP_METRICS[metric]}, by crash rate\n"
                          f"({per}; shaded: {confidence:.0%} Wilson interval)")
    if legend:
        band = Line2D([], [], color="#9e9e9e", lw=8, alpha=0.4, label=f"{confidence:.0%} Wilson interval")
        ax.legend(handles=handles + [band], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small",
                  title="strategy")
    return ax
