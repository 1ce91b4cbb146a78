"""One instant of a run: the durable state and every worker's memory just after a trace row
(:func:`instant_state`), and its picture (:func:`instant`, the step-through widget's): memory beside durable
state (seed 000, step 2)."""
from __future__ import annotations

import numbers
from dataclasses import dataclass

from matplotlib.patches import Rectangle

from simkit.errors import SimkitError, described
from simkit.truth.derived import Hold, held_pages
from simkit.truth.trace import is_fetched

from .style import APPLIED, CELL, CURSOR, short_token

__all__ = ["Instant", "RowError", "WINDOW", "WorkerMemory", "instant", "instant_state", "trace_row"]


@dataclass(frozen=True)
class WorkerMemory:
    """What one worker holds at an instant: ``status`` in words, the attempt
    identity it loaded (``resume_cursor``, ``checkpoint_version``), the page in
    hand (a :class:`Hold`), the event it is at, and what it did with each event of
    the page so far. A crash empties it; the durable store keeps what it had."""

    worker: int
    status: str
    attempt: tuple[str, int] | None
    page: Hold | None
    at: str | None
    done: dict[str, str]


@dataclass(frozen=True)
class Instant:
    """The state after one trace row: the durable checkpoint
    and receipts (ground truth) and each worker's memory."""

    row: int
    time: float
    what: str
    resume_cursor: str
    applied_position: int
    checkpoint_version: int
    receipts: dict[str, str]
    workers: tuple[WorkerMemory, ...]


#: What a worker's step did with an event in hand, in a word (the memory row of :func:`instant`).
_DID = {"replay": "replay", "commit": "commit", "quarantine": "receipt", "effect": "effect",
        "reserve": "reserve", "settle": "settle", "crash": "crash"}
#: A worker's status after each kind of step.
_STATUS = {"load": "loaded the checkpoint (its attempt identity)", "crash": "crashed: its memory is gone",
           "restart": "restarted: nothing in memory", "barrier": "published next_cursor at the page barrier",
           "barrier_rejected": "barrier rejected: rereads the checkpoint", "halt": "halted for investigation",
           "caught_up": "caught up", "pause": "paused (its memory goes stale)",
           "blocked": "blocked: outcome not final"}


class RowError(SimkitError, IndexError):
    """A trace row the run does not have: one line naming it (a ``SimkitError``), an ``IndexError`` as a
    sequence's."""


def trace_row(run, row) -> int:
    """``row`` as a row of ``run``'s trace (0 to its last), or :class:`RowError`: ``-1`` is no "last row" and
    ``"2"`` no row (a crash at ``-1`` struck at the first pass, ``"2"`` was a ``TypeError``)."""
    last = len(run.trace) - 1
    row = int(row) if isinstance(row, float) and row.is_integer() else row    # 2.0, as exercises take it
    if not isinstance(row, numbers.Integral) or isinstance(row, bool) or not 0 <= int(row) <= last:
        raise RowError(f"row {described(row)}: the trace has rows 0 to {last}", param="row")
    return int(row)


def _describe(row) -> str:
    words = [f"worker {row.worker}", row.step] + [x for x in (row.event_id, row.outcome) if x]
    return " ".join(str(w) for w in words)


def instant_state(run, row: int) -> Instant:
    """The durable state and every worker's memory just after trace row ``row`` (0 ≤ row < len(trace))."""
    row = trace_row(run, row)
    df = run.trace.to_frame()
    now = df.iloc[row]
    reported: dict[tuple, int] = {}  # (event, time) -> the first row that reports its durable write
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
                status = "holds a page" if is_fetched(r.step, r.outcome) else f"fetch: {r.outcome}"
        page = next((h for h in holds if h.worker == w and h.row <= row
                     and (h.end_row is None or h.end_row > row)),
                    None)
        at, done = None, {}
        if page is not None:
            for r in mine[mine.index > page.row].itertuples():
                if r.event_id in page.ids:
                    at = r.event_id
                    done[r.event_id] = _DID.get(r.step, r.outcome if r.step == "handle" else r.step)
            status = (f"holds the page of {short_token(page.cursor)}" + (f", at {at}" if at else "")
                      if status == "holds a page" else status)
        workers.append(WorkerMemory(w, status, attempt, page, at, done))
    return Instant(row, float(now.time), _describe(now), now.resume_cursor, int(now.applied_position),
                   int(now.checkpoint_version), receipts, tuple(workers))


#: An instant's window: at most this many events of the stream, around the page in hand.
WINDOW = 16
_RECEIPT_COLORS = {"applied": "#4c9f70", "ignored": "#9ecae1", "quarantined": "#8c6bb1"}


def _window(run, state) -> list:
    """The events an instant shows: all, or :data:`WINDOW`
    of them around the page in hand (else the cursor)."""
    events = sorted(run.world.provider.events.values(), key=lambda e: (e.position, e.id))
    place = run.world.provider.place
    focus = [h for w in state.workers if (h := w.page) is not None and h.ids]
    if len(events) > WINDOW:
        ids = [e.id for e in events]
        centre = min(ids.index(i) for h in focus for i in h.ids) if focus else next(
            (k for k, e in enumerate(events) if e.position > place(state.resume_cursor)), len(events) - 1)
        start = max(0, min(centre - 2, len(events) - WINDOW))
        events = events[start:start + WINDOW]
    return events


def _boundary(events, p) -> float:
    """The x between the last column at or below position ``p`` and the next."""
    return sum(e.position <= p for e in events) - 0.04


def _durable_row(ax, state, events, place) -> None:
    """Top row: each event's receipt, and the durable ``resume_cursor`` and ``applied_position`` as lines."""
    for j, e in enumerate(events):
        outcome = state.receipts.get(e.id)
        color = _RECEIPT_COLORS.get(outcome, "#fdd49e" if outcome else "white")
        ax.add_patch(Rectangle((j, 0), CELL, CELL, facecolor=color, edgecolor="#9e9e9e", lw=0.8))
        ax.text(j + CELL / 2, CELL / 2, str(e.position), ha="center", va="center", fontsize=8,
                color="white" if outcome in ("applied", "quarantined") else "black")
    for y0, x, color, text, ls in [(1.5, _boundary(events, place(state.resume_cursor)), CURSOR,
                                    f"resume_cursor {short_token(state.resume_cursor)}", "-"),
                                   (1.1, _boundary(events, state.applied_position), APPLIED,
                                    f"applied_position {state.applied_position}", "-")]:
        ax.plot([x, x], [-0.08, CELL + 0.08], color=color, lw=2.6, ls=ls, zorder=4)
        ax.annotate(text, (x, CELL + 0.08), xytext=(x, y0), textcoords="data", ha="center", va="bottom",
                    fontsize=8, color=color, fontweight="bold",
                    arrowprops=dict(arrowstyle="-", color=color, lw=0.8))


def _worker_row(ax, state, events, place, w: WorkerMemory, y: float) -> None:
    """One worker's memory at height ``y``: the page in hand,
    the ``next_cursor`` it holds, its attempt and status."""
    n, page = len(events), w.page
    for j, e in enumerate(events):
        if page is None or e.id not in page.ids:
            continue
        here = e.id == w.at
        ax.add_patch(Rectangle((j, y), CELL, CELL, facecolor="#deebf7", edgecolor=CURSOR, lw=2.6 if here
                               else 1))
        ax.text(j + CELL / 2, y + 0.62, str(e.position), ha="center", va="center", fontsize=8)
        ax.text(j + CELL / 2, y + 0.25, w.done.get(e.id, ""), ha="center", va="center", fontsize=6.5,
                color="#424242")
    if page is None or not any(e.id in page.ids for e in events):
        ax.text(n / 2, y + CELL / 2, "no page in memory", ha="center", va="center", fontsize=8,
                color="#9e9e9e",
                style="italic")
    if page is not None:
        x = _boundary(events, place(page.next_cursor))
        ax.plot([x, x], [y - 0.08, y + CELL + 0.08], color=CURSOR, lw=2, ls=(0, (3, 2)), zorder=4)
        where = "published" if page.next_cursor == state.resume_cursor else "memory only"
        ax.text(x, y - 0.15, f"next_cursor {short_token(page.next_cursor)} ({where})", ha="center", va="top",
                fontsize=7.5, color=CURSOR, style="italic")
    attempt = f"attempt {short_token(w.attempt[0])} v{w.attempt[1]}" if w.attempt else "no attempt"
    ax.text(-0.3, y + CELL / 2, f"worker {w.worker} memory\n{attempt}", ha="right", va="center", fontsize=8)
    ax.text(n + 0.2, y + CELL / 2, w.status, ha="left", va="center", fontsize=8, color="#424242", wrap=True)


def instant(ax, run, row: int, title: str | None = None):
    """The state after trace row ``row``, memory beside durable state (the step-through widget's picture).

    One column per event in source order (at most :data:`WINDOW`, around the page in hand). Top row, durable:
    each event's receipt (green applied, purple quarantined, orange not final, white none), the durable
    ``resume_cursor`` (blue line before the first event it can still deliver) and ``applied_position`` (green
    line). One row per worker, memory: the page in hand (framed cells, what was done with each so far, the
    event it is at framed thick), the ``next_cursor`` it holds (dashed blue line) and its status. Returns
    ``ax``.
    """
    state = instant_state(run, row)
    events = _window(run, state)
    place = run.world.provider.place
    n, k = len(events), len(state.workers)
    _durable_row(ax, state, events, place)
    for i, w in enumerate(state.workers):
        _worker_row(ax, state, events, place, w, -1.6 * (i + 1))
    ax.text(-0.3, CELL / 2, f"durable (store)\ncheckpoint v{state.checkpoint_version}", ha="right",
            va="center", fontsize=8)
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
