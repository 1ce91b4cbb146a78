"""Hostile input, forty-first round (a fresh tester): the tools that search for failures (``explore``,
``shrink``, ``audit``, ``sweep``) checked against an independent search.

Found:
1. ``explore --store sqlite`` ran every schedule that ``--store memory`` skips as equivalent (a store on
   SQLite had no fingerprint): one exploration reported other counts by store (``shortcut_success_before_
   effect``, two crashes: 99 schedules and 29 violations against 85 and 27). The SQLite store is now
   fingerprinted by the answers the in-memory one gives, and both agree.
2. ``audit`` on an ``unsafe`` sink left out lost ``effect`` requests along with the lost ``effect`` replies
   it excuses: its case "≤3 lost requests of effect" ran the fault-free run alone and passed
   ``TimeoutMeansSuccess`` (a timed-out call taken for done). Replies alone are spared now (``reply_ops``).

Held: a brute-force enumerator (every set of up to one crash, one lost reply or one lost request, and of two
crashes, at every point, position and occurrence, through ``simkit.simulate``, runs told apart by their
trace) against ``explore --no-dedup`` on ``retry_walkthrough``, ``quarantine_boundary``, ``ignored_event``,
``gap_behind_applied``, ``overlap_new_identity`` and shortcut scenarios: the same runs, none missing, none
replaying otherwise; hundreds of seeded random-fault runs (crashes, pauses, lost replies and requests; one
and two workers; ``fence_race``, ``shortcut_no_version_check``, ``shortcut_success_before_effect``) whose
fired faults, within the bounds, were each an explored schedule with the same verdict; deduplication
against ``--no-dedup`` for ``safe``, the shortcuts and gallery mutants on the small bundled scenarios (the
same ok, the same number of faults in the first violation); shared prefixes against runs from scratch (an
``exec:`` consumer too); ``--json`` under three ``PYTHONHASHSEED``; sweep rows by ``--jobs`` and store;
``shrink`` of every shortcut on the gauntlet: smaller, 1-minimal (one more round of reductions changes
nothing), its TOML replaying to the same failure; bounds at and past their limits (``--max-crashes`` of 20
digits, ``--budget`` 0, -1, nan, 1e-300, ``--jobs`` 0 and 10**14, ``--pause-duration`` 0 and -1,
``--seeds`` 0, ``--crash-rate`` 1 and 1.5).

Left alone: ``explore()`` from Python has no budget: a consumer that polls without backing off passes
``after_fetch`` ten thousand times a run, and its one-crash exploration is ten thousand runs (the command
stops at ``--budget``).
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import simkit
from simkit.tools.audit import _try
from simkit.tools.audit_cases import cases
from simkit.tools.explore import begin, explore

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the gallery is
from mutants.memory import TimeoutMeansSuccess  # noqa: E402


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


def test_the_audit_explores_lost_effect_requests_on_an_unsafe_sink():
    """docs/verdict.md, "simkit audit": on an ``unsafe`` sink exploration leaves out exactly a crash at
    ``after_effect`` and a lost ``effect`` reply. It left out lost ``effect`` requests too (the request never
    arrived: nothing to duplicate), so the case "≤3 lost requests of effect" ran the fault-free run alone and
    passed every consumer."""
    found = [c for c in cases(1, 0) if c.kind == "explore" and c.scenario.sink == "unsafe"
             and c.ops == ("effect",)]
    assert found and _try(found[0], TimeoutMeansSuccess)[1] is not None  # a timed-out call taken for done
    for case in found:
        split = begin(case.scenario, "safe", max_crashes=0, lost_requests=3, seed=case.seed, ops=("effect",),
                      reply_ops=())
        assert split.result.schedules > 1 and split.result.ok
        assert _try(case, simkit.Consumer)[1] is None

