"""The swimlane figure: a Lamport diagram of one run.

One lane per worker, plus the provider and the store (and the external sink when there is one); arrows for
fetches, event commits, barriers and external effects; marks for crashes, pauses, rejected compare-and-swaps,
lost or delayed replies and requests lost on their way, with the wait for a reply up to its timeout and the
checkpoint load that follows it. Seed 001's settlement is drawn too: the reservation and each settlement of an
operation record (labelled with its transition, a downgrade of ``committed`` in red), timeouts, late replies
arriving after them, and replies that carry another request's identity. It is drawn from the trace and the
scenario's latencies alone.
"""
from __future__ import annotations

from matplotlib.lines import Line2D

from simkit.errors import ArgumentError, described
from simkit.truth.trace import REPLY_LOST, REQUEST_LOST

from .labels import ROWS_AT_MOST, LabelStack
from .style import LABEL_BOX, run_title

__all__ = ["ROWS_AT_MOST", "TRACE_ROWS_AT_MOST", "swimlane"]

_STYLE = {
    "fetch": ("provider", "#1f77b4", "fetch → page"),
    "commit": ("store", "#2ca02c", "event commit"),
    "quarantine": ("store", "#8c6bb1", "quarantine receipt"),
    "barrier": ("store", "#ff7f0e", "page barrier (CAS)"),
    "overwrite": ("store", "#ff7f0e", "page barrier, unconditional write (no CAS)"),
    "barrier_rejected": ("store", "#7f7f7f", "rejected CAS"),
    "effect": ("external sink", "#17becf", "external effect"),
    "reserve": ("store", "#bcbd22", "reserve operation record (seed 001)"),
    "settle": ("store", "#e377c2", "settle reply or timeout (seed 001)"),
    "settle_late": ("store", "#e377c2", "settle reply or timeout (seed 001)"),
    "validate": ("store", "#e377c2", "settle reply or timeout (seed 001)"),
}
_LATE, _LOST, _WAIT, _RELOAD = "#b8860b", "#d62728", "#8c564b", "#333333"
_MARKS = {
    "crash": ("X", "black", 110, "crash"),
    "barrier_rejected": ("s", _LOST, 60, "barrier rejected: reread state"),
    "timeout": ("d", _WAIT, 45, "timeout: no reply in time"),
}
_SETTLEMENTS = ("settle", "settle_late", "validate")
# the timeline's label box, tighter: arrows pass behind
_BOX = dict(LABEL_BOX, boxstyle="round,pad=0.15", alpha=0.9)


def _transition(row, foreign: bool) -> tuple[str, bool]:
    """A settlement row's transition (its typed details ``action``, ``before``, ``after``: pending →
    committed) as a short label, and whether it is a seed 001 failure: a downgrade of ``committed`` (step 5),
    or a commit on a reply that carried another request's identity (step 6)."""
    action, before, after = row.action, row.before, row.after or ""
    if row.step == "validate":          # split_validate_write's first transaction: a decision, not a state
        return f"validated: {action}" + (f" {after}" if after else ""), False
    if before == "committed" and after not in ("committed", ""):
        return f"committed → {after}: downgraded", True
    if action == "quarantine":
        return "foreign reply quarantined", False
    if foreign and after == "committed" and before != "committed":
        return f"{before} → committed on a foreign reply", True
    return (f"{before} → {after}" if after and after != before else f"{after or action} kept"), False


#: The most trace rows (requests, replies, crashes, …) :func:`swimlane` draws: every row is an arrow or a
#: label with its own artists, so memory and drawing time grow with the run; well past the bundled scenarios'
#: largest (under 1,000), and past the point where a 12-inch figure shows anything but ink. ``simkit run
#: --swimlane`` refuses above.
TRACE_ROWS_AT_MOST = 2000


def _delayed(df, timeout: float) -> set:
    """The ``reply lost`` effect rows whose reply is only delayed: a ``late_reply`` row of the same worker and
    event arrives at least a timeout later (a reply that late is not waited for). Each late reply is matched
    to the latest such request."""
    lost = [(r.Index, r.time, r.worker, r.event_id) for r in df.itertuples()
            if r.step == "effect" and r.outcome == REPLY_LOST]
    out = set()
    for late in df[df.step == "late_reply"].itertuples():
        fits = [i for i, t, w, e in lost if i not in out and (w, e) == (late.worker, late.event_id)
                and t + timeout <= late.time + 1e-9]
        if fits:
            out.add(fits[-1])
    return out


def _waits(df, timeout: float):
    """Each request whose reply never came in time: ``(row, end of the wait, load that followed or None,
    traced)``. Every wait (:meth:`World._no_reply`, and a seed 001 call's) ends a timeout after its ``reply
    lost`` or ``request lost`` row; at that moment the worker writes the ``timeout`` row of a seed 001 call
    (``traced``), or its next row is the ``load`` by which it learns what landed."""
    out = []
    for pos, row in enumerate(df.itertuples()):
        if row.outcome != REPLY_LOST and row.outcome != REQUEST_LOST:
            continue
        later = df.iloc[pos + 1:]
        later = later[later.worker == row.worker]
        end = row.time + timeout
        at_end = later[(later.time - end).abs() < 1e-9]      # a late reply of another call may come between
        first = later.iloc[0] if len(later) else None
        reload = (
            first if first is not None and first.step == "load" and abs(first.time - end) < 1e-9 else None
        )
        out.append((row, end, reload, bool((at_end.step == "timeout").any())))
    return out


class _Lanes:
    """One swimlane being drawn: its Axes, the rows up to ``until``, each lane's
    height, the latencies, and what was drawn so far (for the legend): steps
    used, labels for :class:`_Stack`, crossed replies, unsent requests."""

    def __init__(self, ax, run, df, until):
        timing = run.world.timing
        self.ax, self.df, self.timing = ax, df, timing
        self.limit = float("inf") if until is None else until
        self.workers = sorted(set(df.worker))
        self.lanes = [f"worker {w}" for w in self.workers] + ["provider", "store"]
        if run.world.sink.external:
            self.lanes.append("external sink")
        self.y = {name: -i for i, name in enumerate(self.lanes)}
        self.latency = {"provider": timing.fetch_latency, "store": timing.commit_latency,
                        "external sink": timing.effect_latency}
        self.span = max(df.time.max(), 1.0) if len(df) else 1.0     # (until before the first row: none)
        self.used: set = set()
        self.labels: list = []          # under the store lane and over a worker's, placed by _Stack
        self.crossed: list = []         # crossed replies drawn
        self.foreign: set = set()       # events whose last reply was another's
        self.unsent: list = []          # where the requests lost on their way stop
        # barriers the store wrote without a compare-and-swap (no_version_check): (time, worker), as it logged
        # them
        self.unconditional = {(w[1], w[2]) for w in run.world.store.writes if w[3] == "overwrite"}

    def hang(self, text, x, color, size=7, ha="center", dx=0, lane="store", dy=-4):
        up = dy > 0
        t = self.ax.annotate(text, (x, self.y[lane]), xytext=(dx, dy), textcoords="offset points", ha=ha,
                             va="bottom" if up else "top", fontsize=size, color=color, bbox=_BOX, zorder=4,
                             in_layout=False)                # _Stack keeps it inside the Axes
        self.labels.append((t, dx, dy, 1 if up else -1))


def _arrow(s: _Lanes, row, delayed) -> tuple[float, float, str, bool, bool] | None:
    """A request's arrow to its lane and its reply's back;
    ``(start, end, colour, reply lost, request lost)``."""
    ax, y = s.ax, s.y
    if row.step == "late_reply":        # leaves the sink unseen, long after its request; arrives now
        ax.annotate("", xy=(row.time, y[f"worker {row.worker}"]),
                    xytext=(row.time - s.latency["external sink"], y["external sink"]),
                    arrowprops=dict(arrowstyle="->", color=_LATE, lw=1.4, ls=":"))
        s.used.add(row.step)
        return None
    style = _STYLE.get(row.step)
    if style is None:
        return None
    target, color, _label = style
    lost = row.outcome == REPLY_LOST and row.Index not in delayed
    never = row.outcome == REQUEST_LOST
    if lost or never:
        color = _LOST
    end = row.time
    start = end - s.latency[target]
    wy, ty = y[f"worker {row.worker}"], y[target]
    if never:                           # most of the way to the target, and no further
        tip = (start + 0.7 * (end - start) / 2, wy + 0.7 * (ty - wy))
        ax.plot([start, tip[0]], [wy, tip[1]], color=color, lw=1)
        s.unsent.append(tip)
    else:
        ax.annotate("", xy=(start + (end - start) / 2, ty), xytext=(start, wy),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1))
    if row.outcome != REPLY_LOST and not never:
        other = row.crossed is not None             # the reply carried another request's identity
        ax.annotate("", xy=(end, wy), xytext=(start + (end - start) / 2, ty),
                    arrowprops=dict(arrowstyle="->", color=_LOST if other else color, lw=1, ls="--"))
        if other:
            s.crossed.append((end, wy))
    if row.step == "effect":
        (s.foreign.add if row.crossed is not None else s.foreign.discard)(row.event_id)
    unconditional = row.step == "barrier" and (row.time, row.worker) in s.unconditional
    s.used.add("overwrite" if unconditional else row.step)
    return start, end, color, lost, never


def _cut(cursor: str) -> str:
    """A cursor as a label quotes it: whole up to 40 characters, else its start and "…" (a consumer may
    publish megabytes of one: laid out whole, a 1 MB cursor took 22 s and 800 MB)."""
    return cursor if len(cursor) <= 40 else cursor[:40] + "…"


def _label(s: _Lanes, row, start, end, color, lost, never, regressed) -> None:
    """The label under the store lane of a settlement, a barrier or a rejected barrier."""
    if row.step in _SETTLEMENTS:
        text, failed = _transition(row, row.event_id in s.foreign)
        s.hang(text, start + (end - start) / 2, _LOST if failed else color, 8 if failed else 7)
    elif row.step == "barrier":
        if lost:  # the compare-and-swap landed before its reply was lost: the row holds it
            text = f"{_cut(row.resume_cursor)} (durable), reply lost"
        elif never:                     # it never reached the store: the row holds what the store still has
            text = f"request lost: store still holds {_cut(row.resume_cursor)} v{row.checkpoint_version}"
        else:
            text = _cut(f"{row.outcome}") + (" ← regression" if regressed else "")
        s.hang(text, start + (end - start) / 2, _LOST if regressed else color, 8 if regressed else 7,
               "right" if regressed else "center")
    elif row.step == "barrier_rejected":
        s.hang(f"CAS rejected: store holds {_cut(row.resume_cursor)} v{row.checkpoint_version}", end, _LOST,
               8, "right", -6)                      # clear of the rejection's mark at the lane


def _messages(s: _Lanes, delayed) -> None:
    """Every request and reply, with its label."""
    places = s.df.cursor_place.tolist()
    for i, row in enumerate(s.df.itertuples()):
        drawn = _arrow(s, row, delayed)
        if drawn is not None:
            _label(s, row, *drawn, regressed=row.step == "barrier" and i > 0 and places[i] < places[i - 1])


def _downtime(s: _Lanes) -> bool:
    """Pauses and the time from a crash to its restart, along
    each worker's lane; whether any pause was drawn."""
    df, paused = s.df, False
    for w in s.workers:
        rows = df[(df.worker == w) & df.step.isin(["pause", "resume", "crash", "restart"])]
        began = None
        for step, time in zip(rows.step, rows.time):
            if step in ("pause", "crash"):
                began = (step, time)
            elif began is not None:
                color = "#9467bd" if began[0] == "pause" else "#444444"
                s.ax.plot([began[1], time], [s.y[f"worker {w}"]] * 2, color=color, lw=6, alpha=0.35,
                          solid_capstyle="butt", zorder=1)
                paused |= began[0] == "pause"
                began = None
    return paused


def _waits_drawn(s: _Lanes, waits) -> tuple[bool, list, list]:
    """Each wait for a reply along its worker's lane; the
    timeouts with no trace row, and the loads after them."""
    waited, timeouts, reloads = False, [], []
    for row, end, reload, traced in waits:
        if row.time > s.limit:
            continue
        wy = s.y[f"worker {row.worker}"]
        s.ax.plot([row.time, min(end, s.limit, s.span)], [wy, wy], color=_WAIT, lw=1.6, ls=(0, (1, 2)),
                  zorder=2, gid="wait")
        waited = True
        if not traced and end <= s.limit:                   # no trace row: the timeout is the wait's end
            timeouts.append((end, row.worker))
        if reload is not None and end <= s.limit:
            reloads.append((end, wy))
            s.hang(f"load: store holds {_cut(reload.resume_cursor)} v{reload.checkpoint_version}", end,
                   _RELOAD, ha="left", dx=6, lane=f"worker {row.worker}", dy=7)
    return waited, timeouts, reloads


def _marks(s: _Lanes, timeouts, reloads, delayed):
    """Crashes, rejections, timeouts, loads, lost and delayed replies, crossed replies, unsent requests;
    returns the rows of lost and of delayed replies."""
    ax, df, y = s.ax, s.df, s.y
    for step, (marker, color, size, _label) in _MARKS.items():
        rows = df[df.step == step]
        times, lane = list(rows.time), list(rows.worker)
        if step == "timeout":
            times, lane = times + [t for t, _w in timeouts], lane + [w for _t, w in timeouts]
        if times:
            ys = [y["store"] if step == "barrier_rejected" else y[f"worker {w}"]
                  + (0.15 if step == "timeout" else 0)
                  for w in lane]                  # a timeout can fall at a crash: drawn just above it
            ax.scatter(times, ys, marker=marker, color=color, s=size, zorder=3, gid=step)
            s.used.add(step)
    if reloads:
        ax.scatter(*zip(*reloads), marker="o", s=40, facecolors="white", edgecolors=_RELOAD, linewidths=1.5,
                   zorder=3)
    lost = df[(df.outcome == REPLY_LOST) & ~df.index.isin(delayed)]
    late = df[df.index.isin(delayed)]
    if len(lost):
        ax.scatter(lost.time, [y[f"worker {w}"] for w in lost.worker], marker="$?$", color=_LOST, s=80,
                   zorder=3, gid="reply lost")
    if len(late):
        ax.scatter(late.time, [y[f"worker {w}"] for w in late.worker], marker="$◷$", color=_LATE, s=110,
                   zorder=3, gid="reply delayed")
    if s.crossed:
        ax.scatter(*zip(*s.crossed), marker="$\\neq$", color=_LOST, s=90, zorder=3)
    if s.unsent:
        ax.scatter(*zip(*s.unsent), marker="x", color=_LOST, s=45, linewidths=1.5, zorder=3,
                   gid="request lost")
    return lost, late


def _handles(s: _Lanes, waited, reloads, lost, late, paused) -> list:
    """The legend: the arrows and marks drawn."""
    used = s.used
    colors = {lab: c for step, (_t, c, lab) in _STYLE.items() if step in used}
    handles = [Line2D([], [], color=c, label=lab) for lab, c in colors.items()]
    handles += [Line2D([], [], marker=m, color=c, ls="", label=lab)
                for step, (m, c, _s, lab) in _MARKS.items()
                if step in used]
    extra: list[tuple[object, dict]] = [
        (waited, dict(color=_WAIT, lw=1.6, ls=(0, (1, 2)), label="waiting for a reply (until the timeout)")),
        (reloads, dict(marker="o", color=_RELOAD, markerfacecolor="white", ls="",
                       label="load: reread the checkpoint")),
        (len(lost), dict(marker="$?$", color=_LOST, ls="", label="reply lost (red arrow)")),
        (s.unsent, dict(marker="x", color=_LOST, markeredgewidth=1.5,
                        label="request lost on its way (never arrived: nothing written)")),
        (len(late), dict(marker="$◷$", color=_LATE, ls="", markersize=9,
                         label="reply delayed (arrives after the timeout)")),
        (s.crossed, dict(marker="$\\neq$", color=_LOST, ls="--",
                         label="reply carries another request's identity")),
        ("late_reply" in used, dict(color=_LATE, ls=":", lw=1.4,
                                    label="late reply arrives (after the timeout)")),
        (paused, dict(color="#9467bd", lw=6, alpha=0.35, label="paused, memory kept (stale)")),
        ("crash" in used, dict(color="#444444", lw=6, alpha=0.35, label="down until restart")),
    ]
    return handles + [Line2D([], [], **style) for shown, style in extra if shown]


def swimlane(ax, run, until: float | None = None, title: str | None = None):
    """Draw ``run`` as a swimlane diagram on ``ax`` (optionally only up to simulated time ``until``).

    A request whose reply is lost ends in a red arrow and "?"; one whose reply is only delayed (a
    ``late_reply`` row follows) in a ◷, its reply arriving later as a dotted arrow. A request lost on its way
    is a red line that stops short of its target at a ×: it never arrives, so it has no reply and writes
    nothing. The wait for a reply that does not come is drawn along the worker's lane up to its timeout; when
    a checkpoint load follows, it says what the store holds. A lost barrier reply is labelled with the
    checkpoint the compare-and-swap made durable, a lost barrier request with the checkpoint the store still
    holds. A run of more than :data:`TRACE_ROWS_AT_MOST` trace rows is refused (``ValueError``), not drawn, as
    is an ``until`` that is no number (NaN, a string); one before the run's first row draws empty lanes.
    Labels under the store lane and the loads' over a worker's are stacked so none overlaps another, each on a
    white box, in at most :data:`ROWS_AT_MOST` rows inside the Axes; those that do not fit are left out, and a
    note says how many (:class:`_Stack`).
    """
    if until is not None and (type(until) not in (int, float) or until != until):
        # (NaN was matplotlib's "Axis limits cannot be NaN or Inf")
        raise ArgumentError(f"until {described(until)}: must be a number of simulated time (an int or a "
                            "float, not NaN)", param="until")
    if len(run.trace) > TRACE_ROWS_AT_MOST:
        raise ValueError(f"run: {len(run.trace)} trace rows; a swimlane draws at most {TRACE_ROWS_AT_MOST}")
    full = run.trace.to_frame()
    timeout = run.world.timing.timeout
    delayed, waits = _delayed(full, timeout), _waits(full, timeout)
    s = _Lanes(ax, run, full if until is None else full[full.time <= until], until)
    for name in s.lanes:
        ax.axhline(s.y[name], color="#dddddd", lw=1, zorder=0)
    _messages(s, delayed)
    paused = _downtime(s)
    waited, timeouts, reloads = _waits_drawn(s, waits)
    note = ax.annotate("", (0.995, 0.015), xycoords="axes fraction", ha="right", va="bottom", fontsize=7,
                       color="#555555", style="italic", visible=False, in_layout=False, gid="labels left out")
    ax.add_artist(LabelStack(s.labels, note))
    lost, late = _marks(s, timeouts, reloads, delayed)
    handles = _handles(s, waited, reloads, lost, late, paused)
    ax.set_xlim(-0.02 * s.span, s.span * 1.03)
    ax.set_yticks([s.y[n] for n in s.lanes], s.lanes)
    ax.set_ylim(-len(s.lanes) + 0.5, 0.5)
    ax.set_xlabel("simulated time")
    ax.set_title(title or f"{run_title(run)}: who talked to whom, and when")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return ax
