"""The timeline: simulated time against stream position, the durable checkpoint (``resume_cursor`` decoded to
its place by the provider, ``applied_position``) next to what a worker only holds in memory (seed 000, step 2)
and against ground truth's durable prefix, with harm drawn per event (invariant 1, docs/verdict.md); and
timelines side by side (:func:`compare`). The facts drawn are defined once, in :mod:`simkit.judge.facts` and
:mod:`simkit.truth.derived`.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from numbers import Real

import numpy as np
from matplotlib.ticker import MaxNLocator

from simkit.errors import ArgumentError, described
from simkit.judge.facts import at_risk, durable_prefix, loss_final
from simkit.model import NON_TERMINAL, REQUEST_LOST
from simkit.truth.derived import cursor_history, held_pages

from .legend import draw_legend, legend_entries
from .rows import Rows, fell
from .style import (
    ANNOTATE_AT_MOST,
    APPLIED,
    AT_RISK,
    BENEATH,
    CURSOR,
    DUP_ORANGE,
    GAP,
    LABEL_BOX,
    LOST_RED,
    PAUSE,
    QUARANTINE,
    SHORT_TOKEN,
    TOKENS_AT_MOST,
    TRUTH,
    run_title,
    short_token,
)

__all__ = ["LAYERS", "SHARE_TIME_AT_MOST", "compare", "timeline", "timeline_legend"]

#: The layers of :func:`timeline`; ``layers=`` draws some of them (to build the picture up step by step).
#: ``cursor``: the durable ``resume_cursor``, page barriers, token labels, rejected barriers, regressions;
#: ``applied``: ``applied_position`` and durable receipts; ``memory``: the ``next_cursor`` each worker holds
#: in memory, pauses; ``truth``: ground truth's durable prefix; ``events``: replays and outcomes that are not
#: durable or not final; ``crashes``; ``harm``: events at risk, lost events, duplicated effects.
LAYERS = ("cursor", "applied", "memory", "truth", "events", "crashes", "harm")


class _Canvas:
    """One timeline being drawn: its Axes, the run's trace as columns
    (:class:`~simkit.viz.rows.Rows`), and the keys of the marks drawn so far
    (each artist's gid is its key: the legend and the tests read them back)."""

    def __init__(self, ax, run, annotate: bool, span: float | None = None):
        self.ax, self.run, self.annotate = ax, run, annotate
        self.df = Rows(run.trace)
        self.place = run.world.provider.place
        self.end = _end(run)
        #: the end of the time axis the run is drawn on: its own end, or the longest run's on a shared one
        self.span = self.end if span is None else span
        self.drawn: set[str] = set()

    def scatter(self, xs, ys, key, **style):
        if len(xs):
            self.ax.scatter(list(xs), list(ys), gid=key, **{"zorder": 3, **style})
            self.drawn.add(key)

    def hlines(self, rows, key, **style):
        """Horizontal bars ``(y, from, to)``: held cursors, pauses, events at risk."""
        rows = [r for r in rows if r[2] > r[1]]
        if rows:
            ys, starts, ends = zip(*rows)
            self.ax.hlines(ys, starts, ends, gid=key, **style)
            self.drawn.add(key)

    def label(self, text, x, y, dy, **style):
        """Label a mark to its right, or to its left near the right end of the time axis."""
        right = x > 0.8 * (self.span or 1.0)
        self.ax.annotate(text, (x, y), xytext=(-10 if right else 10, dy), textcoords="offset points",
                         ha="right" if right else "left", va="center", zorder=6, bbox=LABEL_BOX, **style)


def _harm(c: _Canvas, risk, final, crashes) -> None:
    """Events at risk (a bar while the durable cursor is past them with no outcome), the moment each loss
    became final (a red cross), duplicated effects. A crash at the same spot as the loss it made final is
    named in the loss's label, and ``crashes`` (index -> (y, text)) loses it."""
    events = c.run.world.provider.events
    survived, doomed = [], []
    for eid, spans in risk.items():
        for a, b in spans:
            if eid in final:
                doomed.append((events[eid].position, a, min(b, final[eid][0])))
            else:
                survived.append((events[eid].position, a, b))
    c.hlines(survived, "at risk", colors=AT_RISK, lw=5, alpha=0.8, zorder=2.6)
    c.hlines(doomed, "lost window", colors=LOST_RED, lw=5, alpha=0.5, zorder=2.6)
    few = len(final) <= 2 * ANNOTATE_AT_MOST
    c.scatter([w for w, _ in final.values()], [events[e].position for e in final], "lost", marker="x",
              s=150 if few else 70, color=LOST_RED, linewidths=2.4 if few else 1.8, zorder=4)
    seen, dup = dict[str, int](), []
    for _seq, time, _worker, eid in c.run.world.sink.effects:
        seen[eid] = seen.get(eid, 0) + 1
        if seen[eid] == 2:
            dup.append((time, events[eid].position, eid))
    c.scatter([d[0] for d in dup], [d[1] for d in dup], "duplicated", marker="D", s=50, color=DUP_ORANGE,
              zorder=5)
    if c.annotate and 0 < len(final) <= ANNOTATE_AT_MOST:
        for eid, (when, why) in final.items():
            y = events[eid].position
            at = [i for i, (cy, _text) in crashes.items() if cy == y and c.df.time[i] == when]
            if at:
                why = f"crash {c.df.outcome[at[0]]}"
                del crashes[at[0]]
            c.label(f"{eid} lost ({why})", when, y, -12, fontsize=9, color=LOST_RED, fontweight="bold")
    if c.annotate and 0 < len(dup) <= ANNOTATE_AT_MOST:
        for when, pos, eid in dup:
            c.label(f"{eid} twice", when, pos, -12, fontsize=9, color=DUP_ORANGE, fontweight="bold")


def _memory(c: _Canvas, holds, scripted: bool) -> None:
    """The ``next_cursor`` each worker holds, dashed from its fetch (○) to the end of the attempt, at the
    place it would give the durable cursor; pauses (the worker goes on later with that stale memory)."""
    shown = [h for h in holds if h.next_cursor != h.cursor or h.ids]      # not a caught-up worker's own token
    c.hlines([(c.place(h.next_cursor), h.start, h.end) for h in shown], "held", colors=CURSOR, lw=1.6,
             linestyles=(0, (3, 2)), zorder=2.2)
    c.scatter([h.start for h in shown], [c.place(h.next_cursor) for h in shown], "fetch", marker="o", s=22,
              facecolors="white", edgecolors=CURSOR, linewidths=1.2, zorder=2.3)
    if c.annotate and scripted and len(shown) <= 6:
        for h in {h.next_cursor: h for h in reversed(shown)}.values():     # each token once, where first held
            c.ax.annotate(f"{h.next_cursor} in memory", (h.start, c.place(h.next_cursor)), xytext=(2, 5),
                          textcoords="offset points", ha="left", va="bottom", fontsize=7.5, color=CURSOR,
                          style="italic", zorder=6, bbox=LABEL_BOX)
    spans, paused = [], {}
    df = c.df
    for i in np.flatnonzero(df.isin("step", ("pause", "resume"))):
        worker = df.worker[i]
        if df.step[i] == "pause":
            paused[worker] = (df.time[i], df.applied_position[i])
        elif worker in paused:
            t0, y = paused.pop(worker)
            spans.append((y, t0, df.time[i]))
    spans += [(y, t0, c.end) for t0, y in paused.values()]
    c.hlines(spans, "paused", colors=PAUSE, lw=5, alpha=0.55, zorder=2)


def _cursor(c: _Canvas, history, labelled, under: bool) -> None:
    """The durable ``resume_cursor`` at its place, page barriers, rejected
    barriers (at the place of the token they tried to publish), regressions, and
    the ``labelled`` publishes' tokens (``under`` the step's top, or above it)."""
    df, ax = c.df, c.ax
    ax.step(df.time, df.cursor_place, where="post", color=CURSOR, lw=2.2, zorder=2.4, gid="cursor")
    c.drawn.add("cursor")
    barriers = (df.step == "barrier") & (df.outcome != REQUEST_LOST)
    c.scatter(df.time[barriers], df.cursor_place[barriers], "barrier", marker="^", s=70, color=CURSOR,
              edgecolors="white", linewidths=0.8)
    rejected = df.step == "barrier_rejected"
    c.scatter(df.time[rejected], [c.place(x) for x in df.outcome[rejected]], "rejected", marker="v", s=60,
              color="#7f7f7f")
    regress = fell(df.cursor_place) | fell(df.checkpoint_version) | fell(df.applied_position)
    c.scatter(df.time[regress], df.cursor_place[regress], "regression", marker="v", s=110, facecolors="none",
              edgecolors=GAP, linewidths=1.8)
    for time, cursor, _kind in labelled:
        # left of the rise to it: just under its top when the held tokens' labels take the space above, else
        # above
        below = time > 0 and under
        ax.annotate(short_token(cursor), (time, c.place(cursor)), xytext=(-4, -3) if below
                    else (-4 if time else 2, 4),
                    textcoords="offset points", ha="right" if time > 0 else "left", va="top" if below
                    else "bottom",
                    fontsize=8.5, color=CURSOR, fontweight="bold", zorder=6, bbox=LABEL_BOX, gid="token")


def _applied(c: _Canvas) -> None:
    df = c.df
    c.ax.step(df.time, df.applied_position, where="post", color=APPLIED, lw=2.2, zorder=2.3, gid="applied")
    c.drawn.add("applied")
    commits = (df.step == "commit") & df.isin("outcome", ["applied", "ignored"])
    c.scatter(df.time[commits], df.position[commits], "commit", marker="o", s=16, color=APPLIED)
    receipts = (df.step == "quarantine") & ~df.isin("outcome", [REQUEST_LOST, "conflict"])
    c.scatter(df.time[receipts], df.position[receipts], "quarantine receipt", marker="o", s=30,
              color=QUARANTINE)


def _truth(c: _Canvas) -> None:
    times, values = durable_prefix(c.run)
    c.ax.step(times + [c.end], values + [values[-1]], where="post", color=TRUTH, lw=1.2, ls=":", zorder=2.5,
              gid="truth")
    c.drawn.add("truth")


def _events(c: _Canvas) -> None:
    """What a worker did with events in hand that left no durable outcome: replays it skipped, quarantines
    decided in memory only, outcomes that are not final."""
    df = c.df
    for key, rows, style in [
        ("replay", df.step == "replay", dict(marker="o", s=30, facecolors="none", edgecolors="#555555")),
        ("decided", (df.step == "handle") & (df.outcome == "quarantine"),
         dict(marker="s", s=34, facecolors="none", edgecolors=QUARANTINE)),
        ("not final", (df.step == "handle") & df.isin("outcome", NON_TERMINAL),
         dict(marker="s", s=34, facecolors="none", edgecolors=DUP_ORANGE)),
    ]:
        c.scatter(df.time[rows], df.position[rows], key, **style)


def _crashes(c: _Canvas, holds) -> dict[int, tuple[float, str]]:
    """Each crash (by trace row): where it is drawn and its label. At the event being processed, or (a crash
    of the page attempt) at the place of the ``next_cursor`` the worker held, or where the durable cursor
    stood if it held nothing: the label names what the mark's height is."""
    ended = {h.end_row: h for h in holds if h.ended_by == "crash"}
    out, df = {}, c.df
    for i in map(int, np.flatnonzero(df.step == "crash")):
        if df.event_id[i]:
            out[i] = (float(df.position[i]), f"crash {df.outcome[i]} at {df.event_id[i]}")
        elif i in ended:
            out[i] = (float(c.place(ended[i].next_cursor)),
                      f"crash {df.outcome[i]}, holding {short_token(ended[i].next_cursor)}")
        else:
            out[i] = (float(df.cursor_place[i]), f"crash {df.outcome[i]}")
    return out


def _end(run) -> float:
    """The moment of the run's last trace row: where its timeline ends."""
    return float(run.trace.time[-1]) if len(run.trace) else 0.0


def _draw(ax, run, layers, annotate: bool, now, span=None) -> set[str]:
    """Draw the chosen layers of one run's timeline (on a time axis that ends at ``span``, if given); return
    the keys of what was drawn (for the legend)."""
    c = _Canvas(ax, run, annotate, span)
    provider = run.world.provider
    ax.axhline(provider.head, color="#9e9e9e", lw=1, ls=(0, (1, 3)), zorder=1, gid="head")
    ax.annotate("end of stream", (1.0, provider.head), xycoords=("axes fraction", "data"), xytext=(-4, 3),
                textcoords="offset points", ha="right", va="bottom", fontsize=7, color="#757575", zorder=6,
                bbox=LABEL_BOX)           # at the right, where no run's first page is fetched or labelled
    if now is not None:
        ax.axvline(now, color="#424242", lw=1.2, alpha=0.7, zorder=1.5, gid="now")
    with _scaled_once(ax):
        _marks(c, layers, annotate)
    return c.drawn


@contextmanager
def _scaled_once(ax):
    """Inside the block, the Axes' view is not rescaled as each mark is added (matplotlib rescales it over
    every mark so far each time a collection is added: a seventh of drawing a timeline); after it, it
    autoscales as it did before, once, when its limits are next read. The limits come out the same: they are
    computed from the data limits, which every mark still updates."""
    on = ax.get_autoscalex_on(), ax.get_autoscaley_on()
    ax.set_autoscale_on(False)
    try:
        yield
    finally:
        ax.set_autoscalex_on(on[0])
        ax.set_autoscaley_on(on[1])


def _marks(c: _Canvas, layers, annotate: bool) -> None:
    run = c.run
    holds = held_pages(run)
    history = cursor_history(run)
    tokens = [x for _t, x, _k in history] + [h.next_cursor for h in holds]
    scripted = all(len(x) <= SHORT_TOKEN for x in tokens) and len(history) <= TOKENS_AT_MOST
    risk = at_risk(run) if "harm" in layers else {}
    final = loss_final(run, run.verdict.lost, risk) if risk else {}
    crashes = _crashes(c, holds) if "crashes" in layers else {}
    drawn_crashes = dict(crashes)
    if "harm" in layers:
        _harm(c, risk, final, crashes)
    if "memory" in layers:
        _memory(c, holds, scripted)
    if "cursor" in layers:
        if not annotate:
            labelled = []
        elif scripted:
            labelled = history
        else:  # only the publishes that put a lost event labelled in the figure at risk
            starts = {risk[e][-1][0] for e in final} if len(final) <= ANNOTATE_AT_MOST else set()
            labelled = [h for h in history if h[0] in starts]
        _cursor(c, history, labelled, under=scripted and "memory" in layers)
    if "applied" in layers:
        _applied(c)
    if "truth" in layers:
        _truth(c)
    if "events" in layers:
        _events(c)
    if drawn_crashes:
        # beneath the other marks and larger than them: a commit at the crash shows on top of it
        c.scatter(c.df.time[list(drawn_crashes)], [y for y, _ in drawn_crashes.values()], "crash", marker="X",
                  s=130, color="black", zorder=BENEATH)
        if annotate and len(drawn_crashes) <= ANNOTATE_AT_MOST:
            for i, (y, text) in crashes.items():        # those not named in a loss's label
                c.label(text, c.df.time[i], y, -12, fontsize=8)


def timeline(ax, run, title: str | None = None, legend: bool = True, annotate: bool = True, layers=None,
             now: float | None = None):
    """Simulated time against stream position: the durable checkpoint beside the worker's memory.

    Solid: the durable ``resume_cursor`` (its decoded place: the highest position it can no longer deliver; ▲
    at each page barrier, labelled with the token published where tokens are short) and ``applied_position``
    (● at each event commit). Dashed: the ``next_cursor`` a worker holds in memory, from the fetch (○) to the
    barrier that publishes it or the crash that forgets it (:func:`held_pages`). Dotted: ground truth's
    durable prefix (:func:`durable_prefix`). Marks: replays, outcomes decided in memory or not final, crashes
    (✖ at the event being processed, or at the ``next_cursor`` held when the crash belongs to the page
    attempt), pauses. Harm, per event: a bar at its position while it is at risk (:func:`at_risk`), red ending
    in a red cross at the moment its loss became final (:func:`loss_final`); orange ◆ duplicated effects.

    ``layers``: which of :data:`LAYERS` to draw (default all), to build the picture up a layer at a time; the
    legend lists only what is drawn, grouped in at most seven entries. ``now``: a time to mark with a vertical
    line. With ``annotate``, tokens, a few crashes and lost events are labelled in the figure. Returns ``ax``.
    """
    drawn = _timeline(ax, run, title, annotate, layers, now)
    if legend and drawn:
        timeline_legend(ax, drawn)
    return ax


def timeline_legend(ax, drawn):
    """The legend of one timeline, right of its Axes: the marks ``drawn`` (keys), grouped."""
    return draw_legend(ax, drawn, loc="upper left", bbox_to_anchor=(1.01, 1))


def _timeline(ax, run, title, annotate, layers, now, span=None) -> set[str]:
    # one layer's name is a layer, not its letters ("cursor" was refused as layers ['c', 'u', ...])
    layers = LAYERS if layers is None else (layers,) if isinstance(layers, str) else tuple(layers)
    unknown = [x for x in layers if x not in LAYERS]
    if unknown:
        raise ArgumentError(f"layers {unknown}: use some of {', '.join(LAYERS)}", param="layers")
    # nan drew no line and said nothing (a bool is no time); a time, as the trace's (a numpy float) is
    if now is not None and (isinstance(now, bool) or not isinstance(now, Real) or not math.isfinite(now)):
        raise ArgumentError(f"now {described(now)}: must be a finite simulated time (a number), or None",
                            param="now")
    drawn = _draw(ax, run, layers, annotate, now, span)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(x=0.03, y=0.1)
    ax.set_xlabel("simulated time")
    ax.set_ylabel("stream position")
    ax.set_title(title or f"{run_title(run)} (seed {run.seed})\n"
                          "durable checkpoint (solid) and worker memory (dashed)")
    return drawn


#: :func:`compare` shares the time axis only when the longest run lasts at most this many times the shortest:
#: on a shared axis a much shorter run is squeezed into a sliver of its panel, its labels pushed out of it.
SHARE_TIME_AT_MOST = 4.0


def compare(axes, runs, titles=None, annotate: bool = True, layers=None):
    """One timeline per run, side by side, sharing the position axis, and the time axis when the runs last
    comparably long (the longest at most :data:`SHARE_TIME_AT_MOST` times the shortest; else each panel has
    its own time scale, and says so), with one legend under the figure for the marks of all of them.

    ``axes`` is a sequence of Axes, one per run (e.g. ``plt.subplots(1, 2)[1]``).
    """
    axes = list(axes)
    titles = list(titles) if titles is not None else [None] * len(runs)
    ends = [_end(run) for run in runs]
    shared = max(ends, default=0.0) <= SHARE_TIME_AT_MOST * min(ends, default=0.0) or all(
        ax.get_shared_x_axes().joined(ax, axes[0]) for ax in axes[1:])     # the caller's own sharing stands
    drawn: set[str] = set()
    for ax, run, title in zip(axes, runs, titles):
        drawn |= _timeline(ax, run, title, annotate, layers, None, max(ends) if shared else None)
    limits = ([("get_xlim", "set_xlim")] if shared else []) + [("get_ylim", "set_ylim")]
    spans = {get: list(zip(*(getattr(ax, get)() for ax in axes))) for get, _ in limits}
    for ax in axes[1:] if shared else ():  # after reading each panel's own span: sharing adopts the first's
        if not ax.get_shared_x_axes().joined(ax, axes[0]):
            try:
                ax.sharex(axes[0])
            except ValueError:                        # already shared with another Axes: limits alone
                pass
    for get, set_ in limits:
        lows, highs = spans[get]
        for ax in axes:
            getattr(ax, set_)(min(lows), max(highs))
    for ax in () if shared else axes:
        ax.set_xlabel("simulated time (this run's own scale)")
    fig = axes[0].figure
    where = dict(loc="outside lower center") if fig.get_layout_engine() is not None else dict(
        loc="upper center", bbox_to_anchor=(0.5, 0.0))
    draw_legend(fig, drawn, ncol=min(4, len(legend_entries(drawn)[0])), frameon=False, **where)
    return axes
