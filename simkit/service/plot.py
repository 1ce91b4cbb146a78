"""Figures of seed 004 service runs (:mod:`simkit.service.sim`);
each draws on a matplotlib ``Axes`` it is given.

:func:`scan` draws the initial memory query scan of one or more runs: the candidates in record id order, the
pages each client read, and what became of each record.

:func:`progress` draws one run over simulated time against journal sequence numbers: the journal's entries,
the server's checkpoint cursor (seed 004 "Read or create progress": it moves only by committed commands, and
by an operator's restore, "Recovery and limits"), the external effects the consumer ran, and the faults and
mistakes the checker counts. :func:`outcomes` counts how explored fault schedules ended, client by client.

Everything is read from ground truth (the service's committed commands, restores and journal; the sink's log
of effects and reconciliations; the transport log), never from what a client believes.
"""
from __future__ import annotations

from .clients import WRITE
from .verdict import Entry, effect_fate
from .verdict import acknowledged_twice as _acknowledged_twice

__all__ = [
    "EFFECT_FATES", "REASONS", "acknowledged_twice", "checkpoint_steps", "effect_fates", "failure_reasons",
    "first_scan", "outcome_counts", "outcomes", "progress", "scan", "scan_candidates",
]

CHECKPOINT, ENTRY, BACKED, RECONCILED, ORPHANED, LOST_RED, TWICE, REPLY_LOST, CONFLICT, RESTORE = (
    "#1f77b4", "#9e9e9e", "#4c9f70", "#8c6bb1", "#d62728", "#d62728", "#f28e2b", "black", "#555555",
    "#8c564b")
#: The fates of an effect the consumer ran, by what the final journal and the reconciliations say of its
#: entry.
EFFECT_FATES = {
    "backed": ("effect ran; its entry is in the final journal", BACKED, True),
    "reconciled": ("effect ran; a restore dropped its entry; reconciled", RECONCILED, False),
    "unreconciled": ("effect ran; a restore dropped its entry; NOT reconciled", ORPHANED, False),
}
#: The ways a run can fail (:class:`~simkit.service.verdict.ServiceVerdict`), in the order :func:`outcomes`
#: draws them.
REASONS = ("lost", "duplicated", "duplicate_acks", "regressions", "unreconciled", "incomplete", "missed",
           "broken_receipts")
WORKER_MARKERS = ("o", "^", "s", "D")


def _journal(run):
    return next(iter(run.world.svc.journals.values()))


def checkpoint_steps(run) -> tuple[list[float], list[int | None]]:
    """The server's checkpoint cursor sequence as a step function ``(times, sequences)`` in simulated seconds.

    It changes at every committed command, and at every restore to what the backup held (read from the
    ``before`` of the next committed command, or the final checkpoint). ``None``: no checkpoint exists (a read
    answers 404).
    """
    svc = run.world.svc
    writes = sorted(svc.writes, key=lambda w: w.seq)
    times: list[float] = [0.0]
    seqs: list[int | None] = [None]
    marks = [(w.seq, w.millis, "write", w) for w in writes] + [
        (s, m, "restore", None) for s, m in svc.restores
    ]
    for seq, millis, kind, rec in sorted(marks, key=lambda m: m[0]):
        if kind == "write":
            value = rec.after["cursor"]["sequence"]
        else:
            nxt = next((w for w in writes if w.seq > seq), None)
            if nxt is not None:
                value = None if nxt.before is None else nxt.before["cursor"]["sequence"]
            else:
                final = next(iter(svc.checkpoints.values()), None)
                value = None if final is None else final.cursor["sequence"]
        times.append(millis / 1000)
        seqs.append(value)
    return times, seqs


def acknowledged_twice(run) -> list[tuple[float, int]]:
    """``(time, sequence)`` of every command the checker counts in ``duplicate_acks``
    (:func:`simkit.service.verdict.acknowledged_twice`)."""
    return [(rec.millis / 1000, rec.after["cursor"]["sequence"]) for rec in _acknowledged_twice(run.world)]


def effect_fates(run) -> list[tuple[float, int, int, str]]:
    """``(time, worker, sequence, fate)`` for every external effect that ran; ``fate`` is a key of
    :data:`EFFECT_FATES`, as the checker decides it (:func:`simkit.service.verdict.effect_fate`)."""
    fate = effect_fate(run.world)
    return [(time, worker, truth[1], fate(tuple(truth))) for time, worker, *truth in run.world.effects]


def _pause_window(run) -> tuple[float, float] | None:
    """The stretch in which the paused worker did nothing at
    all (its last call before the pause, its first after)."""
    p = run.world.sc.pause
    if not p:
        return None
    worker, at, duration = p
    active = sorted([c[0] for c in run.world.calls if c[1] == worker]
                    + [e[0] for e in run.world.effects if e[1] == worker])
    before = [t for t in active if t <= at]
    after = [t for t in active if t >= at + duration]
    return (before[-1] if before else at, after[0] if after else at + duration)


def progress(ax, run, *, until: float | None = None, title: str | None = None):
    """One service run over simulated time: journal entries, the server's checkpoint cursor, effects, faults.

    Grey dots: the final journal's entries at the time they were committed. Blue steps: the checkpoint's
    cursor (:func:`checkpoint_steps`), a dot per committed command. Coloured markers: effects by fate
    (:func:`effect_fates`), one marker shape per worker. Red crosses: entries the checker counts ``lost`` (at
    or below the final checkpoint, never applied). Orange squares: pages acknowledged twice
    (:func:`acknowledged_twice`). Black triangles: checkpoint writes whose reply was lost. Grey ticks along
    the bottom: 409 replies. A brown line marks a restore; grey shading a paused worker. Returns ``ax``.
    """
    world, v = run.world, run.verdict
    journal = _journal(run)
    times, seqs = checkpoint_steps(run)
    last = max(times + [e[0] for e in world.effects]
               + [e.committed_at_millis / 1000 for e in journal.entries])
    until = last + 4 if until is None else until
    ax.scatter([e.committed_at_millis / 1000 for e in journal.entries], [e.sequence for e in journal.entries],
               s=14, color=ENTRY, zorder=2, label="journal entry (final journal), when committed")
    step_t = times + [until]
    step_y = [float("nan") if s is None else s for s in seqs] + [
        float("nan") if seqs[-1] is None else seqs[-1]
    ]
    ax.step(step_t, step_y, where="post", color=CHECKPOINT, lw=2, zorder=3, label="server checkpoint cursor")
    ax.scatter([w.millis / 1000 for w in world.svc.writes],
               [w.after["cursor"]["sequence"] for w in world.svc.writes],
               s=22, color=CHECKPOINT, zorder=4, label="checkpoint command committed")
    _effects(ax, run)
    _mistakes(ax, run, times, seqs)
    _restores_and_pause(ax, run)
    ax.set_xlim(-1, until)
    ax.set_ylim(0, max(journal.head, max((s for s in seqs if s is not None), default=0)) + 2.5)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("journal sequence")
    ax.set_title(title or f"{run.scenario} · {run.client} · contract v{run.version}: "
                          f"{'ok' if v.ok else 'NOT ok'}")
    ax.grid(alpha=0.25)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
    return ax


def _effects(ax, run) -> None:
    """The effects that ran, coloured by fate, one marker shape per worker."""
    world = run.world
    workers = sorted({e[1] for e in world.effects})
    fates = effect_fates(run)
    for fate, (label, color, filled) in EFFECT_FATES.items():
        for w in workers:
            pts = [(t, s) for t, wk, s, f in fates if f == fate and wk == w]
            if not pts:
                continue
            ax.scatter(*zip(*pts), s=36, marker=WORKER_MARKERS[(w - 1) % len(WORKER_MARKERS)], zorder=5,
                       color=color if filled else "none", edgecolors=color, linewidths=1.5,
                       label=label + (f" (worker {w})" if len(workers) > 1 else ""))


def _mistakes(ax, run, times, seqs) -> None:
    """What the checker counts (lost entries, pages
    acknowledged twice) and the faults (lost replies, 409s)."""
    world, journal = run.world, _journal(run)
    by_entry = {Entry.of(e.journal_id, e.sequence): e for e in journal.entries}
    lost = [by_entry[x] for x in run.verdict.entries("lost") if x in by_entry]
    if lost:
        ax.scatter([e.committed_at_millis / 1000 for e in lost], [e.sequence for e in lost], s=110,
                   marker="X",
                   color=LOST_RED, zorder=6, label="lost: at or below the checkpoint, never applied")
    twice = acknowledged_twice(run)
    if twice:
        ax.scatter(*zip(*twice), s=110, marker="s", color="none", edgecolors=TWICE, linewidths=2, zorder=6,
                   label="page acknowledged twice")
    lost_replies = [c[0] for c in world.calls if c[2] == WRITE and c[3] == "lost"]
    if lost_replies:
        at = [_value_at(times, seqs, t) for t in lost_replies]
        ax.scatter(lost_replies, [a + 0.9 for a in at], s=60, marker="v", color=REPLY_LOST, zorder=7,
                   label="checkpoint write reply lost")
    conflicts = [c[0] for c in world.calls if c[3] == 409]
    if conflicts:
        ax.plot(conflicts, [0.6] * len(conflicts), "|", ms=14, mew=1.8, color=CONFLICT, label="409 reply")


def _restores_and_pause(ax, run) -> None:
    """A line per restore, and shading where the paused worker was silent."""
    world = run.world
    for _seq, millis in world.svc.restores:
        backup_at = world.sc.backup_at
        ax.axvline(millis / 1000, color=RESTORE, ls="--", lw=1.5,
                   label=f"restore of the backup taken at t={backup_at:g}" if backup_at is not None
                   else "restore")
    window = _pause_window(run)
    if window:
        ax.axvspan(*window, color="#bdbdbd", alpha=0.35, lw=0,
                   label=f"worker {world.sc.pause[0]} silent (back-off, then paused), cursor in memory")


def _value_at(times, seqs, t) -> float:
    """The step function's value at ``t`` (0 where no checkpoint exists)."""
    value = None
    for ti, si in zip(times, seqs):
        if ti <= t:
            value = si
    return 0.0 if value is None else float(value)


def failure_reasons(verdict) -> tuple[str, ...]:
    """The names in :data:`REASONS` this verdict fails on, or ``("ok",)``."""
    out = [r for r in ("lost", "duplicated") if getattr(verdict, r)]
    out += [r for r in ("duplicate_acks", "regressions") if getattr(verdict, r)]
    out += ["unreconciled"] if verdict.unreconciled else []
    out += [] if verdict.completed else ["incomplete"]
    out += [r for r in ("missed", "broken_receipts") if getattr(verdict, r)]
    return tuple(out) or ("ok",)


def outcome_counts(runs) -> dict[str, int]:
    """How many runs are ``ok`` and how many fail on each reason (a run failing on two counts under both)."""
    counts = dict.fromkeys(("ok",) + REASONS, 0)
    for r in runs:
        for reason in failure_reasons(r.verdict):
            counts[reason] += 1
    return counts


def outcomes(ax, runs_by_client: dict, *, title: str | None = None):
    """Grouped bars: for each client (key) the explored runs (value) that were
    ``ok``, and those failing on each reason that occurs at all. Seed 004's rules
    decide the reasons; :func:`failure_reasons` names them. Returns ``ax``."""
    counts = {name: outcome_counts(runs) for name, runs in runs_by_client.items()}
    shown = ["ok"] + [r for r in REASONS if any(c[r] for c in counts.values())]
    width = 0.8 / max(len(counts), 1)
    colors = {"correct": BACKED, "new_key_retry": TWICE, "reset_on_409": LOST_RED,
              "stop_on_empty_page": RECONCILED}
    for i, (name, c) in enumerate(counts.items()):
        xs = [k + (i - (len(counts) - 1) / 2) * width for k in range(len(shown))]
        total = len(runs_by_client[name])
        bars = ax.bar(xs, [c[r] for r in shown], width, color=colors.get(name),
                      label=f"{name} ({total} schedules)")
        ax.bar_label(bars, fontsize="small", padding=1)
    ax.set_xticks(range(len(shown)), [r.replace("_", " ") for r in shown])
    ax.set_xlabel("outcome (a run failing for two reasons counts under both)")
    ax.set_ylabel("explored schedules")
    ax.set_ylim(0, max(max(c.values()) for c in counts.values()) * 1.4 + 1)
    ax.set_title(title or "outcomes across explored fault schedules")
    ax.legend(loc="upper right", fontsize="small")
    return ax


SCAN_FATES = {
    "scanned": ("available: applied from a scan page", BACKED, "o", True),
    "feed": ("available: never scanned, its state came from the feed", CHECKPOINT, "o", False),
    "missed": ("available: never received (missed)", LOST_RED, "X", True),
    "unavailable": ("deleted or private to another subject", ENTRY, "x", True),
}


def scan_candidates(run) -> list:
    """The namespace's records when worker 1's first scan began, in record id order (the scan's candidates):
    the records from before the journal and those whose first journal entry was committed before that page."""
    world = run.world
    first = next((t for t, w, _after, _page in world.scan_pages if w == 1), None)
    if first is None:
        return []
    born: dict[str, float] = {}
    for e in _journal(run).entries:
        born.setdefault(e.record_id, e.committed_at_millis / 1000)
    records = next(iter(world.svc.records.values()))
    return sorted(rid for rid in records if born.get(rid, 0.0) < first)


def first_scan(run) -> list:
    """Worker 1's pages up to the one it took for the last
    (``(next_after sent, page)``): one scan, read once."""
    pages: list[tuple] = []
    for _t, w, after, page in run.world.scan_pages:
        if w != 1:
            continue
        if after is None and pages:
            break
        pages.append((after, page))
    return pages


def scan(ax, runs, *, title: str | None = None):
    """The initial scan of each run, one row per run: the candidates in record id order (x), each marked by
    what became of it (:data:`SCAN_FATES`, from ground truth: the final store, the scan's applied records, the
    verdict's ``missed``), and a band per query page the client read, labelled with what the page held. A
    run's row ends where its scan stopped; "…" marks a page that went on past the candidates, into records
    created since the scan began (not drawn). Returns ``ax``."""
    rows = list(runs)
    candidates = scan_candidates(rows[0]) if rows else []
    where = {rid: i for i, rid in enumerate(candidates)}
    shown = set()
    for y, run in enumerate(rows):
        records = next(iter(run.world.svc.records.values()))
        applied = {rid for _t, _w, rid, _rev in run.world.record_effects}
        missed = set(run.verdict.missed)
        for k, (after, page) in enumerate(first_scan(run)):
            start = 0 if after is None else next((i for i, rid in enumerate(candidates) if rid > after),
                                                  len(candidates))
            if start >= len(candidates):
                break  # the rest of the scan read records created since it began
            beyond = page["next_after"] is None or page["next_after"] not in where
            end = len(candidates) if beyond else where[page["next_after"]] + 1
            found = len(page["records"])
            ax.add_patch(_band(start - 0.45, y - 0.32, end - start - 0.1, 0.64, k))
            text = (f"p{k + 1}: {found} found" if found else f"p{k + 1}: empty") + (" …" if beyond else "")
            ax.text((start + end - 1) / 2, y + 0.36 + 0.13 * (k % 2), text, ha="center", va="top",
                    fontsize="x-small", color="#333333" if found else LOST_RED)
        for i, rid in enumerate(candidates):
            rec = records.get(rid)
            fate = ("unavailable" if rec is None or not rec.available_to("dev") else "missed" if rid in missed
                    else "scanned" if rid in applied else "feed")
            label, color, marker, filled = SCAN_FATES[fate]
            style = (
                {"color": color}
                if marker == "x"
                else {"color": color if filled else "none", "edgecolors": color}
            )
            ax.scatter([i], [y], s=46, marker=marker, zorder=3, linewidths=1.5, label=None if fate in shown
                       else label,
                       **style)
            shown.add(fate)
    ax.set_yticks(range(len(rows)), [f"{r.client}\n{'ok' if r.verdict.ok else 'NOT ok'}" for r in rows])
    ax.set_ylim(len(rows) - 0.3, -0.6)
    ax.set_xticks(range(len(candidates)), candidates, rotation=90, fontsize="x-small")
    ax.set_xlim(-0.8, len(candidates) - 0.2)
    ax.set_xlabel("candidate records in record id order (the scan's order); bands: the query pages each "
                  "client read")
    ax.set_title(title or "the initial memory query scan: pages, and what became of each record")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
    return ax


def _band(x, y, w, h, k):
    from matplotlib.patches import Rectangle
    return Rectangle((x, y), w, h, facecolor="#e8eef7" if k % 2 == 0 else "#f6efe2", edgecolor="#9aa7b8",
                     lw=0.8, zorder=1)
