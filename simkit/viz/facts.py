"""The facts the figures draw, under the names the views have always used (``plot.held_pages``,
``plot.at_risk``,
...). Each is defined once, beside ground truth: the pages each worker held in memory, the durable cursor's
history and when each event joined the stream in :mod:`simkit.truth.derived`; when each event got its outcome,
the durable prefix, the spans an event was at risk, the trace rows where the durable cursor was unsafe and
when a loss became final in :mod:`simkit.judge.facts`. Only the view's reading of a loss is here:
:func:`loss_final` of the run's own verdict.

Each takes a Run (or anything :func:`~simkit.truth.ground.as_truth` reads).
"""
from __future__ import annotations

from simkit.judge import facts as _judged
from simkit.judge.facts import at_risk, durable_prefix, outcome_times, unsafe_rows
from simkit.truth.derived import Hold, cursor_history, held_pages, joined_at

__all__ = ["Hold", "at_risk", "cursor_history", "durable_prefix", "held_pages", "joined_at", "known_from",
           "loss_final", "outcome_times", "terminal_times", "unsafe_rows"]

#: The old names of :func:`~simkit.truth.derived.joined_at` and :func:`~simkit.judge.facts.outcome_times`.
known_from, terminal_times = joined_at, outcome_times


def loss_final(run, risk: dict | None = None) -> dict[str, tuple[float, str]]:
    """For each event the run's verdict lost, when its loss became final and what made it so
    (:func:`simkit.judge.facts.loss_final`); ``risk``, :func:`at_risk`'s answer if the caller has it."""
    return _judged.loss_final(run, run.verdict.lost, risk)
