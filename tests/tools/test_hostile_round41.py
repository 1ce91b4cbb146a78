"""Hostile input, forty-first round (a fresh tester): the tools that search for failures (``explore``,
``shrink``, ``audit``, ``sweep``) checked against an independent search.

Found: ``explore --store sqlite`` ran every schedule that ``--store memory`` skips as equivalent (a store on
SQLite had no fingerprint), so one exploration of one scenario, strategy and bounds reported other counts by
store (``shortcut_success_before_effect``, two crashes: 99 schedules and 29 violations against 85 and 27).
The SQLite store is now fingerprinted by the same answers as the in-memory one, and both agree.

Held: a brute-force enumerator (every set of up to one crash, one lost reply or one lost request, then two
crashes, from every point, position and occurrence, through ``simkit.simulate``, runs told apart by their
trace) against ``explore --no-dedup`` on ``retry_walkthrough``, ``quarantine_boundary``, ``ignored_event``,
``gap_behind_applied``, ``overlap_new_identity`` and the shortcut scenarios: the same runs, none missing, none
replaying otherwise; hundreds of seeded random-fault runs (crashes, pauses, lost replies and requests; one
and two workers; ``default``, ``fence_race``, ``shortcut_no_version_check``, ``shortcut_success_before_effect``)
whose fired faults, within the bounds, were each an explored schedule with the same verdict; deduplication
against ``--no-dedup`` for ``safe``, the shortcuts and the mutant gallery on the small bundled scenarios (the
same ok, the same number of faults in the first violation); shared prefixes against runs from scratch (an
``exec:`` consumer too); ``--json`` under three ``PYTHONHASHSEED``; ``shrink`` of every shortcut on the
gauntlet: smaller, 1-minimal (one more round of reductions changes nothing) and its TOML replaying to the
same failure; bounds at and past their limits (``--max-crashes`` of 20 digits, ``--budget`` 0, -1, nan,
1e-300, ``--jobs`` 0 and 10**14, ``--pause-duration`` 0 and -1, ``--seeds`` 0, ``--crash-rate`` 1 and 1.5).

Left alone: ``explore()`` from Python has no budget: a consumer that polls without backing off passes
``after_fetch`` ten thousand times in a run, and its one-crash exploration is ten thousand runs (the command
stops at ``--budget``).
"""
from __future__ import annotations

import dataclasses

import simkit
from simkit.tools.explore import explore


def test_explore_on_sqlite_skips_what_explore_in_memory_skips():
    """docs/exploring.md: schedules whose last crash leaves a state already explored are skipped; the store
    the scenario is kept in is no part of that state's meaning. ``--store sqlite`` deduplicated nothing."""
    sc = simkit.load("shortcut_success_before_effect")
    results = []
    for store in ("memory", "sqlite"):
        x = explore(dataclasses.replace(sc, store=store), "safe", max_crashes=2, share_prefixes=False)
        d = x.as_dict()
        d.pop("first_violation")
        results.append((d, x.digest, x.first_violation[0]))
    assert results[0] == results[1]
    assert results[0][0]["deduplicated"] > 0
