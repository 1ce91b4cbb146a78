"""The judge: a verdict from ground truth only, never from a consumer's own bookkeeping.

============  ==========================================================================================
module        owns
============  ==========================================================================================
checker       :func:`check` and :class:`Verdict`: lost, duplicated, regressions, invariants, completion
claims        a consumer's claims against ground truth: receipts against decisions, halts against pages
============  ==========================================================================================
"""
