"""Every figure that takes a matplotlib ``Axes``, under one name: ``from simkit.viz import plot`` then
``plot.timeline(ax, run)``, ``plot.fates``, ``plot.compare``, ``plot.instant``, ``plot.crash_matrix``,
``plot.sweep_curves`` (``plot.sweep_panels`` takes a Figure), and the facts they draw (``plot.held_pages``,
``plot.at_risk``, ``plot.loss_final``, ...: each defined once, in :mod:`simkit.truth.derived` or
:mod:`simkit.judge.facts`).

Each lives in a module of its own (the table in :mod:`simkit.viz`); this one only answers their names.
Matplotlib is imported by the caller's figure, not by the simulation core.
"""
from __future__ import annotations

from simkit.judge.checker import FATES

from .curves import (
                    CURVE_KINDS,
                    STRATEGY_COLORS,
                    SWEEP_METRICS,
                    curve_kinds,
                    sweep_curves,
                    sweep_panels,
                    sweep_shares,
)
from .facts import (
                    Hold,
                    at_risk,
                    cursor_history,
                    durable_prefix,
                    held_pages,
                    joined_at,
                    known_from,
                    loss_final,
                    outcome_times,
                    terminal_times,
                    unsafe_rows,
)
from .fates import SMALLEST_LABEL, fates
from .instant import WINDOW, Instant, WorkerMemory, instant, instant_state
from .legend import legend_entries, one_key
from .matrix import MATRIX_CMAP, UNREACHED, crash_matrix
from .style import (
                    ANNOTATE_AT_MOST,
                    APPLIED,
                    AT_RISK,
                    BENEATH,
                    CELL,
                    CURSOR,
                    DUP_ORANGE,
                    FATE_COLORS,
                    GAP,
                    LABEL_BOX,
                    LOST_RED,
                    PAUSE,
                    QUARANTINE,
                    SHORT_TOKEN,
                    TOKEN_CHARS,
                    TOKENS_AT_MOST,
                    TRUTH,
                    short_token,
)
from .timeline import LAYERS, SHARE_TIME_AT_MOST, compare, timeline

__all__ = ["ANNOTATE_AT_MOST", "APPLIED", "AT_RISK", "BENEATH", "CELL", "CURSOR", "CURVE_KINDS", "DUP_ORANGE",
           "FATES", "FATE_COLORS", "GAP", "Hold", "Instant", "LABEL_BOX", "LAYERS", "LOST_RED", "MATRIX_CMAP",
           "PAUSE", "QUARANTINE", "SHARE_TIME_AT_MOST", "SHORT_TOKEN", "SMALLEST_LABEL", "STRATEGY_COLORS",
           "SWEEP_METRICS", "TOKENS_AT_MOST", "TOKEN_CHARS", "TRUTH", "UNREACHED", "WINDOW", "WorkerMemory",
           "at_risk", "compare", "crash_matrix", "curve_kinds", "cursor_history", "durable_prefix", "fates",
           "held_pages", "instant", "instant_state", "joined_at", "known_from", "legend_entries",
           "loss_final", "one_key", "outcome_times", "short_token", "sweep_curves", "sweep_panels",
           "sweep_shares", "terminal_times", "timeline", "unsafe_rows"]
