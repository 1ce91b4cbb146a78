"""The judge: a verdict from ground truth only, never from a consumer's own bookkeeping.

============  ==========================================================================================
module        owns
============  ==========================================================================================
checker       :func:`check` and :class:`Verdict` from a GroundTruth: lost, duplicated, regressions, invariants
claims        a consumer's claims against ground truth: receipts against decisions, halts against pages
outcomes      when each event holds a terminal outcome (a receipt ordered, an ``applied`` one with its effect)
facts         facts for the figures: event fates, the durable prefix, spans at risk, when a loss became final
report        the verdict in words, written only here: table rows, the one-run summary, the one-line form
============  ==========================================================================================
"""

__all__: list[str] = []
