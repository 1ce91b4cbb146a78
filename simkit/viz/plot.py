"""Figures that take a matplotlib ``Axes``: the timeline of the durable checkpoint against the worker's memory,
the fate of every event, side-by-side timelines, the state of one instant (the step-through widget's picture),
the crash matrix and sweep curves. Matplotlib is imported by the caller's figure, not by the simulation core.

The timeline draws what the durable checkpoint *says* (``resume_cursor``, decoded to its place in the stream by
the provider, and ``applied_position``) next to what a worker only *holds in memory* (seed 000, step 2: the
returned ``next_cursor``, from the fetch to the page barrier or the crash that ends the attempt:
:func:`held_pages`) and against what ground truth *is* (:func:`durable_prefix`: how far every event the stream
has served is durably done). Harm is drawn per event: while the durable cursor is past an event that has no
durable outcome, that event is at risk (:func:`at_risk`); a lost event's risk ends in a cross at the moment its
loss became final (:func:`loss_final`): the crash, or the page barrier, after which nothing could still apply it.
A safe consumer puts no event at risk.

This module owns those facts for plots: "held in memory", "at risk" and "lost for good at".
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from matplotlib.artist import Artist
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from simkit.judge.checker import FATES, event_fates, outcome_since
from simkit.model import NON_TERMINAL, REQUEST_LOST

FATE_COLORS = {
    "done before the run": "#e6efe8", "applied once": "#4c9f70", "replayed harmlessly": "#a7d5b8",
    "ignored": "#9ecae1", "quarantined": "#8c6bb1", "duplicated": "#f28e2b", "lost": "#d62728", "pending": "#bdbdbd",
}
#: Fates whose cell is dark enough for a white label.
_DARK_FATES = ("lost", "quarantined", "applied once")
CURSOR, APPLIED, TRUTH, GAP, LOST_RED, DUP_ORANGE, QUARANTINE, PAUSE = (
    "#1f77b4", "#2ca02c", "black", "#d62728", "#d62728", "#f28e2b", "#8c6bb1", "#9467bd")
#: An event at risk that got its outcome in the end (light), and one that was lost (the red of the loss).
AT_RISK = "#f4a3a3"

#: The z-order of crash marks: above the lines, beneath every other mark (drawn at 3), which shows on top of
#: them, e.g. the commit at a crash.
BENEATH = 2.5
#: A label's background: lines and marks behind it do not run through the text.
LABEL_BOX = dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.85)

#: Crashes and lost events are labelled in the figure when there are at most this many of them.
ANNOTATE_AT_MOST = 4
#: Tokens are labelled where they are published when they are this short (a scripted scenario's ``C7``) and there
#: are at most :data:`TOKENS_AT_MOST` publishes; otherwise only the publishes that put a lost event at risk are,
#: abbreviated to :data:`TOKEN_CHARS` characters.
SHORT_TOKEN, TOKENS_AT_MOST, TOKEN_CHARS = 4, 12, 4

#: The layers of :func:`timeline`; ``layers=`` draws some of them (to build the picture up step by step).
#: ``cursor``: the durable ``resume_cursor``, page barriers, token labels, rejected barriers, regressions;
#: ``applied``: ``applied_position`` and durable receipts; ``memory``: the ``next_cursor`` each worker holds in
#: memory, pauses; ``truth``: ground truth's durable prefix; ``events``: replays and outcomes that are not durable
#: or not final; ``crashes``; ``harm``: events at risk, lost events, duplicated effects.
LAYERS = ("cursor", "applied", "memory", "truth", "events", "crashes", "harm")


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


# -- memory, risk and loss: the facts the timeline draws ---------------------------------------------------------
@dataclass(frozen=True)
class Hold:
    """A page one worker held in memory (seed 000, step 2): from the fetch that returned it to the step that ended
    the attempt (``ended_by``: the worker's next ``fetch``, ``load``, ``crash``, ``halt`` or ``restart``, or
    ``end of run``). ``row``/``end_row`` index the trace (``end_row`` is ``None`` at the run's end)."""

    worker: int
    start: float
    end: float
    cursor: str
    next_cursor: str
    ids: tuple[str, ...]
    row: int
    end_row: int | None
    ended_by: str


#: The steps after which a worker no longer holds the page it fetched.
_ENDS = frozenset({"fetch", "load", "crash", "halt", "restart"})


def held_pages(run) -> list[Hold]:
    """Every page a worker received, with the ``next_cursor`` it then held, in the order they were fetched.

    The provider's log (ground truth) says what each response carried; the trace says which responses reached
    their worker (a lost reply or a refused cursor leaves nothing in memory) and when the attempt ended.
    """
    trace = run.trace
    served: dict[int, list] = {}
    for _seq, _t, worker, cursor, next_cursor, ids in run.world.provider.log:
        served.setdefault(worker, []).append((cursor, next_cursor, ids))
    taken: dict[int, int] = {}
    holding: dict[int, tuple] = {}         # worker -> (start, cursor, next_cursor, ids, row) of the page it holds
    holds = []
    for i, (t, w, step, outcome) in enumerate(zip(trace.time, trace.worker, trace.step, trace.outcome)):
        if step in _ENDS and w in holding:
            start, cursor, next_cursor, ids, row = holding.pop(w)
            holds.append(Hold(w, start, t, cursor, next_cursor, ids, row, i, step))
        if step == "fetch" and outcome != REQUEST_LOST:     # a request lost on its way left no log entry
            k = taken.get(w, 0)
            if k < len(served.get(w, ())):
                taken[w] = k + 1
                cursor, next_cursor, ids = served[w][k]
                if outcome.endswith(" events"):             # not a lost reply, not a refused cursor
                    holding[w] = (t, cursor, next_cursor, tuple(ids), i)
    end = trace.time[-1] if len(trace) else 0.0
    holds += [Hold(w, start, end, cursor, next_cursor, ids, row, None, "end of run")
              for w, (start, cursor, next_cursor, ids, row) in holding.items()]
    return sorted(holds, key=lambda h: h.row)


def _cursor_history(world) -> list[tuple[float, str, str]]:
    """The durable ``resume_cursor`` as ``(from time, cursor, the write's kind)``, from the store's log of writes."""
    writes = world.store.writes
    first = writes[0][4].resume_cursor if len(writes) else world.store.checkpoint.resume_cursor
    history = [(0.0, first, "initial")]
    for _seq, time, _w, kind, before, after in writes:
        if after.resume_cursor != history[-1][1]:
            history.append((time, after.resume_cursor, kind))
    return history


def at_risk(run) -> dict[str, list[tuple[float, float]]]:
    """Per event, the spans during which it was at risk: the durable ``resume_cursor`` could no longer deliver it
    while it was part of the stream (a backfill from when it was served) and had no durable outcome. Invariant 1
    forbids every such span; an event that never had one is absent. A span ends when the event gets its outcome,
    when the cursor can deliver it again, or (a lost event's last one) at the run's end: :func:`loss_final` says
    when that loss became final."""
    world = run.world
    provider = world.provider
    done, known = _terminal_times(world), _known_from(world)
    history = _cursor_history(world)
    bounds = [t for t, *_ in history[1:]] + [float("inf")]
    end = run.trace.time[-1] if len(run.trace) else 0.0
    out: dict[str, list[tuple[float, float]]] = {}
    for eid in provider.events:
        finish = done.get(eid, float("inf"))
        spans: list[tuple[float, float]] = []
        for (t0, cursor, _kind), t1 in zip(history, bounds):
            a, b = max(t0, known[eid]), min(t1, finish)
            if a >= finish or (a >= b and b != float("inf")) or provider.deliverable(eid, cursor):
                continue
            if spans and spans[-1][1] == a:
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
        if spans:
            out[eid] = [(a, min(b, max(a, end))) for a, b in spans]
    return out


def loss_final(run, risk: dict | None = None) -> dict[str, tuple[float, str]]:
    """For each lost event, when its loss became final and what made it so: the moment the durable cursor last
    moved past it (``page barrier``, or the write's kind) or, if later, the end of the last attempt that still
    held it in memory and could have applied it (``crash``, ``halt``, ``worker moved on``, ``end of run``).

    Seed 000's walkthrough with the token persisted on fetch: the barrier to ``C8`` puts ``e107`` at risk at
    t = 1.5, the worker still holds it, and the crash at t = 2 before it commits makes the loss final."""
    world = run.world
    risk = at_risk(run) if risk is None else risk
    history = _cursor_history(world)
    kind_at = {t: kind for t, _c, kind in history}
    holds = held_pages(run)
    out = {}
    for eid in run.verdict.lost:
        spans = risk.get(eid)
        if not spans:
            continue
        start = spans[-1][0]
        when, why = start, {"barrier": "page barrier"}.get(kind_at.get(start, ""), kind_at.get(start, "write"))
        for h in holds:
            # an attempt that ends with its own barrier's instant leaves the barrier final; a crash then, the crash
            if eid in h.ids and (h.end > when or (h.end == when and h.ended_by in ("crash", "halt"))):
                when, why = h.end, {"load": "worker moved on", "fetch": "worker moved on"}.get(h.ended_by, h.ended_by)
        out[eid] = (when, why)
    return out


# -- the timeline ----------------------------------------------------------------------------------------------------
def _short(token: str) -> str:
    return token if len(token) <= SHORT_TOKEN else token[:TOKEN_CHARS] + "…"


class _Canvas:
    """One timeline being drawn: its Axes, the run's trace as a frame, and the keys of the marks drawn so far (each
    artist's gid is its key: the legend and the tests read them back)."""

    def __init__(self, ax, run, annotate: bool):
        self.ax, self.run, self.annotate = ax, run, annotate
        self.df = run.trace.to_frame()
        self.place = run.world.provider.place
        self.end = float(self.df.time.iloc[-1]) if len(self.df) else 0.0
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
        """Label a mark to its right, or to its left near the right edge."""
        right = x > 0.8 * (self.end or 1.0)
        self.ax.annotate(text, (x, y), xytext=(-10 if right else 10, dy), textcoords="offset points",
                         ha="right" if right else "left", va="center", zorder=6, bbox=LABEL_BOX, **style)


def _harm(c: _Canvas, risk, final, crashes) -> None:
    """Events at risk (a bar while the durable cursor is past them with no outcome), the moment each loss became
    final (a red cross), duplicated effects. A crash at the same spot as the loss it made final is named in the
    loss's label, and ``crashes`` (index -> (y, text)) loses it."""
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
    seen, dup = {}, []
    for _seq, time, _worker, eid in c.run.world.sink.effects:
        seen[eid] = seen.get(eid, 0) + 1
        if seen[eid] == 2:
            dup.append((time, events[eid].position, eid))
    c.scatter([d[0] for d in dup], [d[1] for d in dup], "duplicated", marker="D", s=50, color=DUP_ORANGE, zorder=5)
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
    """The ``next_cursor`` each worker holds, dashed from its fetch (○) to the end of the attempt, at the place it
    would give the durable cursor; pauses (the worker goes on later with that stale memory)."""
    shown = [h for h in holds if h.next_cursor != h.cursor or h.ids]      # not a caught-up worker's own token
    c.hlines([(c.place(h.next_cursor), h.start, h.end) for h in shown], "held", colors=CURSOR, lw=1.6,
             linestyles=(0, (3, 2)), zorder=2.2)
    c.scatter([h.start for h in shown], [c.place(h.next_cursor) for h in shown], "fetch", marker="o", s=22,
              facecolors="white", edgecolors=CURSOR, linewidths=1.2, zorder=2.3)
    if c.annotate and scripted and len(shown) <= 6:
        for h in shown:
            c.ax.annotate(f"{h.next_cursor} in memory", (h.start, c.place(h.next_cursor)), xytext=(2, 5),
                          textcoords="offset points", ha="left", va="bottom", fontsize=7.5, color=CURSOR,
                          style="italic", zorder=6, bbox=LABEL_BOX)
    spans, paused = [], {}
    for row in c.df[c.df.step.isin(["pause", "resume"])].itertuples():
        if row.step == "pause":
            paused[row.worker] = (row.time, row.applied_position)
        elif row.worker in paused:
            t0, y = paused.pop(row.worker)
            spans.append((y, t0, row.time))
    spans += [(y, t0, c.end) for t0, y in paused.values()]
    c.hlines(spans, "paused", colors=PAUSE, lw=5, alpha=0.55, zorder=2)


def _cursor(c: _Canvas, history, labelled, under: bool) -> None:
    """The durable ``resume_cursor`` at its place, page barriers, rejected barriers (at the place of the token they
    tried to publish), regressions, and the ``labelled`` publishes' tokens (``under`` the step's top, or above it)."""
    df, ax = c.df, c.ax
    ax.step(df.time, df.cursor_place, where="post", color=CURSOR, lw=2.2, zorder=2.4, gid="cursor")
    c.drawn.add("cursor")
    barriers = df[(df.step == "barrier") & (df.outcome != REQUEST_LOST)]
    c.scatter(barriers.time, barriers.cursor_place, "barrier", marker="^", s=70, color=CURSOR, edgecolors="white",
              linewidths=0.8)
    rejected = df[df.step == "barrier_rejected"]
    c.scatter(rejected.time, [c.place(x) for x in rejected.outcome], "rejected", marker="v", s=60, color="#7f7f7f")
    regress = df[(df.cursor_place < df.cursor_place.shift()) | (df.checkpoint_version < df.checkpoint_version.shift())
                 | (df.applied_position < df.applied_position.shift())]
    c.scatter(regress.time, regress.cursor_place, "regression", marker="v", s=110, facecolors="none",
              edgecolors=GAP, linewidths=1.8)
    for time, cursor, _kind in labelled:
        # left of the rise to it: just under its top when the held tokens' labels take the space above, else above
        below = time > 0 and under
        ax.annotate(_short(cursor), (time, c.place(cursor)), xytext=(-4, -3) if below else (-4 if time else 2, 4),
                    textcoords="offset points", ha="right" if time > 0 else "left", va="top" if below else "bottom",
                    fontsize=8.5, color=CURSOR, fontweight="bold", zorder=6, bbox=LABEL_BOX, gid="token")


def _applied(c: _Canvas) -> None:
    df = c.df
    c.ax.step(df.time, df.applied_position, where="post", color=APPLIED, lw=2.2, zorder=2.3, gid="applied")
    c.drawn.add("applied")
    commits = df[(df.step == "commit") & df.outcome.isin(["applied", "ignored"])]
    c.scatter(commits.time, commits.position, "commit", marker="o", s=16, color=APPLIED)
    receipts = df[(df.step == "quarantine") & ~df.outcome.isin([REQUEST_LOST, "conflict"])]
    c.scatter(receipts.time, receipts.position, "quarantine receipt", marker="o", s=30, color=QUARANTINE)


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
        ("replay", df[df.step == "replay"], dict(marker="o", s=30, facecolors="none", edgecolors="#555555")),
        ("decided", df[(df.step == "handle") & (df.outcome == "quarantine")],
         dict(marker="s", s=34, facecolors="none", edgecolors=QUARANTINE)),
        ("not final", df[(df.step == "handle") & df.outcome.isin(NON_TERMINAL)],
         dict(marker="s", s=34, facecolors="none", edgecolors=DUP_ORANGE)),
    ]:
        c.scatter(rows.time, rows.position, key, **style)


def _crashes(c: _Canvas, holds) -> dict[int, tuple[float, str]]:
    """Each crash (by trace row): where it is drawn and its label. At the event being processed, or (a crash of
    the page attempt) at the place of the ``next_cursor`` the worker held, or where the durable cursor stood if it
    held nothing: the label names what the mark's height is."""
    ended = {h.end_row: h for h in holds if h.ended_by == "crash"}
    out = {}
    for i, row in c.df[c.df.step == "crash"].iterrows():
        if row.event_id:
            out[i] = (float(row.position), f"crash {row.outcome} at {row.event_id}")
        elif i in ended:
            out[i] = (float(c.place(ended[i].next_cursor)),
                      f"crash {row.outcome}, holding {_short(ended[i].next_cursor)}")
        else:
            out[i] = (float(row.cursor_place), f"crash {row.outcome}")
    return out


def _draw(ax, run, layers, annotate: bool, now) -> set[str]:
    """Draw the chosen layers of one run's timeline; return the keys of what was drawn (for the legend)."""
    c = _Canvas(ax, run, annotate)
    provider = run.world.provider
    ax.axhline(provider.head, color="#9e9e9e", lw=1, ls=(0, (1, 3)), zorder=1, gid="head")
    ax.annotate("end of stream", (0.0, provider.head), xycoords=("axes fraction", "data"), xytext=(4, 3),
                textcoords="offset points", ha="left", va="bottom", fontsize=7, color="#757575")
    if now is not None:
        ax.axvline(now, color="#424242", lw=1.2, alpha=0.7, zorder=1.5, gid="now")
    holds = held_pages(run)
    history = _cursor_history(run.world)
    tokens = [x for _t, x, _k in history] + [h.next_cursor for h in holds]
    scripted = all(len(x) <= SHORT_TOKEN for x in tokens) and len(history) <= TOKENS_AT_MOST
    risk = at_risk(run) if "harm" in layers else {}
    final = loss_final(run, risk) if risk else {}
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
        else:                           # only the publishes that put a lost event labelled in the figure at risk
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
    return c.drawn


def _proxy(**style):
    style.setdefault("ls", "none")
    return Line2D([], [], **style)


#: The timeline's legend, at most seven entries: (drawn keys that call for the entry, [(key, words, proxy)]).
#: An entry shows the marks of the keys drawn, side by side, and names them in order.
_LEGEND = [
    ("resume_cursor (durable)", [
        ("cursor", None, dict(color=CURSOR, lw=2.2, ls="-")),
        ("barrier", "page barrier", dict(marker="^", ms=8, color=CURSOR, mec="white")),
        ("rejected", "rejected barrier", dict(marker="v", ms=7, color="#7f7f7f")),
        ("regression", "regression", dict(marker="v", ms=9, mfc="none", mec=GAP, mew=1.8))]),
    ("next_cursor held in memory", [
        ("held", None, dict(color=CURSOR, lw=1.6, ls=(0, (3, 2)), marker="o", ms=4.5, mfc="white", mec=CURSOR,
                            markevery=[0])),
        ("paused", "worker paused", dict(color=PAUSE, lw=5, alpha=0.55, ls="-"))]),
    ("applied_position", [
        ("applied", None, dict(color=APPLIED, lw=2.2, ls="-")),
        ("commit", "event commit", dict(marker="o", ms=4.5, color=APPLIED)),
        ("quarantine receipt", "quarantine receipt", dict(marker="o", ms=6, color=QUARANTINE))]),
    ("durable prefix (ground truth)", [("truth", None, dict(color=TRUTH, lw=1.2, ls=":"))]),
    ("", [
        ("replay", "replay skipped", dict(marker="o", ms=6, mfc="none", mec="#555555")),
        ("decided", "quarantine decided in memory", dict(marker="s", ms=6, mfc="none", mec=QUARANTINE)),
        ("not final", "outcome not final", dict(marker="s", ms=6, mfc="none", mec=DUP_ORANGE))]),
    ("crash", [("crash", None, dict(marker="X", ms=10, color="black"))]),
    ("", [
        ("at risk", "at risk (cursor past it, no outcome)", dict(color=AT_RISK, lw=5, ls="-")),
        ("lost window", None, dict(color=LOST_RED, lw=5, alpha=0.5, ls="-")),
        ("lost", "lost (final at the cross)", dict(marker="x", ms=9, mew=2.4, color=LOST_RED)),
        ("duplicated", "duplicated effect", dict(marker="D", ms=6, color=DUP_ORANGE))]),
]


def legend_entries(drawn) -> tuple[list, list[str]]:
    """The grouped legend of the marks ``drawn`` (keys :func:`timeline` reports): at most seven entries, each a
    tuple of handles and its label."""
    handles, texts = [], []
    for name, parts in _LEGEND:
        present = [(words, style) for key, words, style in parts if key in drawn]
        if not present:
            continue
        words = [w for w, _ in present if w]
        text = name + (" · " + ", ".join(words) if name and words else ", ".join(words))
        handles.append(tuple(_proxy(**style) for _, style in present))
        texts.append(text)
    return handles, texts


def _legend(where, drawn, **kw):
    handles, texts = legend_entries(drawn)
    return where.legend(handles, texts, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.4)},
                        handlelength=3.2, fontsize="small", **kw)


def timeline(ax, run, title: str | None = None, legend: bool = True, annotate: bool = True, layers=None,
             now: float | None = None):
    """Simulated time against stream position: the durable checkpoint beside the worker's memory.

    Solid: the durable ``resume_cursor`` (its decoded place: the highest position it can no longer deliver; ▲ at
    each page barrier, labelled with the token published where tokens are short) and ``applied_position`` (●
    at each event commit). Dashed: the ``next_cursor`` a worker holds in memory, from the fetch (○) to the
    barrier that publishes it or the crash that forgets it (:func:`held_pages`). Dotted: ground truth's durable
    prefix (:func:`durable_prefix`). Marks: replays, outcomes decided in memory or not final, crashes (✖ at the
    event being processed, or at the ``next_cursor`` held when the crash belongs to the page attempt), pauses.
    Harm, per event: a bar at its position while it is at risk (:func:`at_risk`), red ending in a red cross at the
    moment its loss became final (:func:`loss_final`); orange ◆ duplicated effects.

    ``layers``: which of :data:`LAYERS` to draw (default all), to build the picture up a layer at a time; the
    legend lists only what is drawn, grouped in at most seven entries. ``now``: a time to mark with a vertical
    line. With ``annotate``, tokens, a few crashes and lost events are labelled in the figure. Returns ``ax``.
    """
    drawn = _timeline(ax, run, title, annotate, layers, now)
    if legend and drawn:
        _legend(ax, drawn, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def _timeline(ax, run, title, annotate, layers, now) -> set[str]:
    layers = LAYERS if layers is None else tuple(layers)
    unknown = [x for x in layers if x not in LAYERS]
    if unknown:
        raise ValueError(f"layers {unknown}: use some of {', '.join(LAYERS)}")
    drawn = _draw(ax, run, layers, annotate, now)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.margins(x=0.03, y=0.1)
    ax.set_xlabel("simulated time")
    ax.set_ylabel("stream position")
    ax.set_title(title or f"{run.strategy} on {run.scenario} (seed {run.seed})\n"
                          "durable checkpoint (solid) and worker memory (dashed)")
    return drawn


def compare(axes, runs, titles=None, annotate: bool = True, layers=None):
    """One timeline per run, side by side, sharing both axes (time and position), with one legend under the
    figure for the marks of all of them.

    ``axes`` is a sequence of Axes, one per run (e.g. ``plt.subplots(1, 2)[1]``).
    """
    axes = list(axes)
    titles = list(titles) if titles is not None else [None] * len(runs)
    drawn: set[str] = set()
    for ax, run, title in zip(axes, runs, titles):
        drawn |= _timeline(ax, run, title, annotate, layers, None)
    for ax in axes[1:]:
        if not ax.get_shared_x_axes().joined(ax, axes[0]):
            try:
                ax.sharex(axes[0])
            except ValueError:                        # already shared with another Axes: limits alone
                pass
    for get, set_ in (("get_xlim", "set_xlim"), ("get_ylim", "set_ylim")):
        lows, highs = zip(*(getattr(ax, get)() for ax in axes))
        for ax in axes:
            getattr(ax, set_)(min(lows), max(highs))
    fig = axes[0].figure
    where = dict(loc="outside lower center") if fig.get_layout_engine() is not None else dict(
        loc="upper center", bbox_to_anchor=(0.5, 0.0))
    _legend(fig, drawn, ncol=min(4, len(legend_entries(drawn)[0])), frameon=False, **where)
    return axes


# -- one instant: the step-through widget's picture ------------------------------------------------------------------
@dataclass(frozen=True)
class WorkerMemory:
    """What one worker holds at an instant: ``status`` in words, the attempt identity it loaded
    (``resume_cursor``, ``checkpoint_version``), the page in hand (a :class:`Hold`), the event it is at, and what
    it did with each event of the page so far. A crash empties it; the durable store keeps what it had."""

    worker: int
    status: str
    attempt: tuple[str, int] | None
    page: Hold | None
    at: str | None
    done: dict[str, str]


@dataclass(frozen=True)
class Instant:
    """The state after one trace row: the durable checkpoint and receipts (ground truth) and each worker's memory."""

    row: int
    time: float
    what: str
    resume_cursor: str
    applied_position: int
    checkpoint_version: int
    receipts: dict[str, str]
    workers: tuple[WorkerMemory, ...]


#: What a worker's step did with an event in hand, in a word (the memory row of :func:`instant`).
_DID = {"replay": "replay", "commit": "commit", "quarantine": "receipt", "effect": "effect", "reserve": "reserve",
        "settle": "settle", "crash": "crash"}
#: A worker's status after each kind of step.
_STATUS = {"load": "loaded the checkpoint (its attempt identity)", "crash": "crashed: its memory is gone",
           "restart": "restarted: nothing in memory", "barrier": "published next_cursor at the page barrier",
           "barrier_rejected": "barrier rejected: rereads the checkpoint", "halt": "halted for investigation",
           "caught_up": "caught up", "pause": "paused (its memory goes stale)", "blocked": "blocked: outcome not final"}


def _describe(row) -> str:
    words = [f"worker {row.worker}", row.step] + [x for x in (row.event_id, row.outcome) if x]
    return " ".join(str(w) for w in words)


def instant_state(run, row: int) -> Instant:
    """The durable state and every worker's memory just after trace row ``row`` (0 ≤ row < len(trace))."""
    df = run.trace.to_frame()
    if not 0 <= row < len(df):
        raise IndexError(f"row {row}: the trace has rows 0 to {len(df) - 1}")
    now = df.iloc[row]
    reported = {}                                    # (event, time) -> the first row that reports its durable write
    for i, r in df[df.step.isin(["commit", "quarantine"])].iterrows():
        reported.setdefault((r.event_id, r.time), i)
    receipts = {}
    for _seq, time, _w, eid, outcome in run.world.store.receipt_log:
        at = reported.get((eid, time))
        if (time <= now.time) if at is None else at <= row:
            receipts[eid] = outcome
    holds = held_pages(run)
    workers = []
    for w in range(1, run.world.scenario.workers + 1):
        mine = df.iloc[: row + 1]
        mine = mine[mine.worker == w]
        status, attempt = "starting", None
        for r in mine.itertuples():
            if r.step in _STATUS:
                status = _STATUS[r.step]
            if r.step == "load":
                attempt = (r.resume_cursor, int(r.checkpoint_version))
            elif r.step in ("crash", "restart"):
                attempt = None
            elif r.step == "fetch":
                status = "holds a page" if r.outcome.endswith(" events") else f"fetch: {r.outcome}"
        page = next((h for h in holds if h.worker == w and h.row <= row and (h.end_row is None or h.end_row > row)),
                    None)
        at, done = None, {}
        if page is not None:
            for r in mine[mine.index > page.row].itertuples():
                if r.event_id in page.ids:
                    at = r.event_id
                    done[r.event_id] = _DID.get(r.step, r.outcome if r.step == "handle" else r.step)
            status = (f"holds the page of {_short(page.cursor)}" + (f", at {at}" if at else "")
                      if status == "holds a page" else status)
        workers.append(WorkerMemory(w, status, attempt, page, at, done))
    return Instant(row, float(now.time), _describe(now), now.resume_cursor, int(now.applied_position),
                   int(now.checkpoint_version), receipts, tuple(workers))


#: An instant's window: at most this many events of the stream, around the page in hand.
WINDOW = 16
_RECEIPT_COLORS = {"applied": "#4c9f70", "ignored": "#9ecae1", "quarantined": "#8c6bb1"}


def instant(ax, run, row: int, title: str | None = None):
    """The state after trace row ``row``, memory beside durable state (the step-through widget's picture).

    One column per event in source order (at most :data:`WINDOW`, around the page in hand). Top row, durable: each
    event's receipt (green applied, purple quarantined, orange not final, white none), the durable
    ``resume_cursor`` (blue line before the first event it can still deliver) and ``applied_position`` (green
    line). One row per worker, memory: the page in hand (framed cells, what was done with each so far, the event it
    is at framed thick), the ``next_cursor`` it holds (dashed blue line) and its status. Returns ``ax``.
    """
    state = instant_state(run, row)
    events = sorted(run.world.provider.events.values(), key=lambda e: (e.position, e.id))
    place = run.world.provider.place
    focus = [h for w in state.workers if (h := w.page) is not None and h.ids]
    if len(events) > WINDOW:
        ids = [e.id for e in events]
        centre = min(ids.index(i) for h in focus for i in h.ids) if focus else next(
            (k for k, e in enumerate(events) if e.position > place(state.resume_cursor)), len(events) - 1)
        start = max(0, min(centre - 2, len(events) - WINDOW))
        events = events[start:start + WINDOW]
    n, k = len(events), len(state.workers)

    def boundary(p):                                 # the x between the last column at or below p and the next
        return sum(e.position <= p for e in events) - 0.04

    for j, e in enumerate(events):
        outcome = state.receipts.get(e.id)
        color = _RECEIPT_COLORS.get(outcome, "#fdd49e" if outcome else "white")
        ax.add_patch(Rectangle((j, 0), CELL, CELL, facecolor=color, edgecolor="#9e9e9e", lw=0.8))
        ax.text(j + CELL / 2, CELL / 2, str(e.position), ha="center", va="center", fontsize=8,
                color="white" if outcome in ("applied", "quarantined") else "black")
    for y0, x, color, text, ls in [(1.5, boundary(place(state.resume_cursor)), CURSOR,
                                    f"resume_cursor {_short(state.resume_cursor)}", "-"),
                                   (1.1, boundary(state.applied_position), APPLIED,
                                    f"applied_position {state.applied_position}", "-")]:
        ax.plot([x, x], [-0.08, CELL + 0.08], color=color, lw=2.6, ls=ls, zorder=4)
        ax.annotate(text, (x, CELL + 0.08), xytext=(x, y0), textcoords="data", ha="center", va="bottom",
                    fontsize=8, color=color, fontweight="bold", arrowprops=dict(arrowstyle="-", color=color, lw=0.8))
    for i, w in enumerate(state.workers):
        y = -1.6 * (i + 1)
        page = w.page
        for j, e in enumerate(events):
            if page is None or e.id not in page.ids:
                continue
            here = e.id == w.at
            ax.add_patch(Rectangle((j, y), CELL, CELL, facecolor="#deebf7", edgecolor=CURSOR, lw=2.6 if here else 1))
            ax.text(j + CELL / 2, y + 0.62, str(e.position), ha="center", va="center", fontsize=8)
            ax.text(j + CELL / 2, y + 0.25, w.done.get(e.id, ""), ha="center", va="center", fontsize=6.5,
                    color="#424242")
        if page is None or not any(e.id in page.ids for e in events):
            ax.text(n / 2, y + CELL / 2, "no page in memory", ha="center", va="center", fontsize=8, color="#9e9e9e",
                    style="italic")
        if page is not None:
            x = boundary(place(page.next_cursor))
            ax.plot([x, x], [y - 0.08, y + CELL + 0.08], color=CURSOR, lw=2, ls=(0, (3, 2)), zorder=4)
            where = "published" if page.next_cursor == state.resume_cursor else "memory only"
            ax.text(x, y - 0.15, f"next_cursor {_short(page.next_cursor)} ({where})", ha="center", va="top",
                    fontsize=7.5, color=CURSOR, style="italic")
        attempt = f"attempt {_short(w.attempt[0])} v{w.attempt[1]}" if w.attempt else "no attempt"
        ax.text(-0.3, y + CELL / 2, f"worker {w.worker} memory\n{attempt}", ha="right", va="center", fontsize=8)
        ax.text(n + 0.2, y + CELL / 2, w.status, ha="left", va="center", fontsize=8, color="#424242", wrap=True)
    ax.text(-0.3, CELL / 2, f"durable (store)\ncheckpoint v{state.checkpoint_version}", ha="right", va="center",
            fontsize=8)
    ax.set_xlim(-0.2, n + 0.1)
    ax.set_ylim(-1.6 * k - 0.75, 2.0)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    shown = f"positions {events[0].position}–{events[-1].position}" if events else "no events"
    ax.set_xlabel(f"events in source order ({shown}" + (f", {WINDOW} of {len(run.world.provider.events)})"
                                                        if len(run.world.provider.events) > n else ")"))
    ax.set_title(title or f"t = {state.time:g}, after row {state.row}: {state.what}", fontsize=10)
    return ax


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
    """One cell per event in source order, coloured by its fate in ground truth (:func:`simkit.judge.checker.event_fates`),
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


def crash_matrix(ax, table, schedules=None, title: str | None = None, label: str = "violating single-crash schedules",
                 better=None):
    """A heatmap of crash point (rows) × strategy (columns) over single-crash schedules.

    ``table`` is a pandas DataFrame indexed by crash point with one column per strategy. ``schedules``, a frame
    of the same shape, is how many single-crash schedules were run in each cell; a cell with none run (the
    strategy never passes that point) is grey and reads ``not reached``.

    With ``better`` (a frame of the same shape, needs ``schedules``), ``table`` counts the schedules that came out
    *worse* than the strategy's fault-free run and ``better`` those that came out *better* (e.g. a crash whose
    retry halted on seed 000's gap check before an event was lost: :func:`simkit.viz.widgets.crash_effects`). The
    palette diverges: red by the share worse, blue by the share better when none is worse, white when every
    schedule ended as the fault-free run did; cells read ``2/3 worse``, ``1/2 better``, ``3/3 same``, and the
    colour bar says which side is which.

    Without ``better``: ``table`` is a count of ``label`` (violations, say), read ``violating/run`` and shaded red
    by that share (0–100 %, so 2/2 is as dark as 3/3); without ``schedules`` either, the colour is the count.
    """
    import matplotlib
    import numpy as np
    from matplotlib.ticker import PercentFormatter

    values = table.to_numpy(dtype=float)
    runs = None if schedules is None else schedules.reindex(index=table.index, columns=table.columns).to_numpy(
        dtype=float)
    if better is not None:
        if runs is None:
            raise ValueError("better needs schedules: a share of the schedules run in each cell")
        return _diverging(ax, table, values, runs,
                          better.reindex(index=table.index, columns=table.columns).to_numpy(dtype=float), title)
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
    _matrix_axes(ax, table, title)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if runs is None:
        bar.set_label(label)
        bar.locator = MaxNLocator(integer=True)
    else:
        bar.set_label(f"{label}\n(share of the schedules run in the cell)")
        bar.formatter = PercentFormatter(1.0)
    bar.update_ticks()
    return ax


def _matrix_axes(ax, table, title):
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=35, ha="right")
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    ax.set_xlabel("strategy")
    ax.set_ylabel("crash point")
    ax.set_title(title or "crash matrix: one crash at every pass of every crash point")


def _diverging(ax, table, worse, runs, better, title):
    """:func:`crash_matrix` with ``better``: worse (red), same (white), better (blue) than the fault-free run."""
    import matplotlib
    import numpy as np

    share_worse = np.divide(worse, runs, out=np.zeros_like(worse), where=runs > 0)
    share_better = np.divide(better, runs, out=np.zeros_like(better), where=runs > 0)
    shade = np.where(worse > 0, share_worse, -share_better)     # any schedule worse: the cell is red
    cmap = matplotlib.colormaps[MATRIX_CMAP].with_extremes(bad=UNREACHED)
    image = ax.imshow(np.ma.masked_where(runs == 0, shade), cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    for (r, c), n in np.ndenumerate(runs):
        w, b = int(worse[r, c]), int(better[r, c])
        if n == 0:
            text = "not\nreached"
        elif w and b:
            text = f"{w} worse, {b} better\nof {n:g}"
        elif w or b:
            text = f"{w or b}/{n:g} " + ("worse" if w else "better")
        else:
            text = f"{n:g}/{n:g} same"
        color = "#616161" if n == 0 or not (w or b) else "white" if abs(shade[r, c]) > 0.6 else "black"
        ax.text(c, r, text, ha="center", va="center", fontsize=7.5, color=color)
    _matrix_axes(ax, table, title)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_ticks([-1, -0.5, 0, 0.5, 1], labels=["all better", "half better", "same as\nfault-free", "half worse",
                                                   "all worse"])
    bar.set_label("single-crash schedules against the strategy's fault-free run\n"
                  "(share of the schedules run in the cell; red: worse, blue: better)")
    ax.legend(handles=[Patch(facecolor=UNREACHED, label="not reached\n(no schedule)")], loc="upper right",
              bbox_to_anchor=(-0.01, -0.01), fontsize="small", frameon=False)
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
    """Per (strategy, crash rate) of a sweep's tidy table (:data:`simkit.tools.sweep.COLUMNS`): how many runs, how many
    with ``metric`` above 0 (``hits``), their ``share`` and its Wilson interval (``low``, ``high``).

    Strategies keep their first-seen order, crash rates ascend. Raises ``ValueError`` for an unknown metric.
    """
    import pandas as pd

    from simkit.tools.sweep import wilson

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

    ``table`` is a sweep's tidy table (:meth:`simkit.tools.sweep.Sweep.frame`, or the CSV ``simkit sweep --out``
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
