"""Ground truth: what happened in a run, recorded by the world and read by the judge and the figures.

============  ==========================================================================================
module        owns
============  ==========================================================================================
log           the column-stored logs: provider reads, store writes, receipts, decisions, effects
trace         the run's trace: one row per step, and its digest
journal       one committed event's rows in the effect, receipt, write and trace logs, written in one call
ground        :class:`GroundTruth`: the frozen value the judge reads, built by the world and by ``live``
derived       facts from ground truth alone: late events, the effects count, cursor history, held pages
columns       columns that keep no object per row: typed integers, coded values, ids as positions
clock         simulated time and the sequence that orders same-instant log entries
collector     Python's garbage collector paused while a run builds its logs
============  ==========================================================================================
"""

__all__: list[str] = []
