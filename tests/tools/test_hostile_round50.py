"""Mutation testing of the search behind ``simkit audit``, fiftieth round (a fresh tester).

How: one-token mutants made with stdlib ``ast`` (flipped comparisons, ±1 on integer constants, and/or swaps,
an operand or a statement dropped, an ``if``/``while`` condition made True or False, ``continue``/``break``
to ``pass``, max/min and any/all swapped) of ``simkit/tools/schedules.py``, ``explore.py``, ``forked.py``,
``fingerprint.py``, ``exploration.py`` (``note``/``skip``/``merge``/``digest``), ``audit_cases.py``
(``cases``, ``twins``, ``_seeds``) and ``audit.py`` (``_outcomes``, ``_tally``, ``_status``): 1045 mutants,
72 sampled (seed 50, by file), each run on a patched copy of the tree against test_fingerprint,
test_hostile_round41 and test_audit_twins (``-x``).

Score: 29 of 72 killed by those tests; 43 survived. The tests below kill 25 of the 43 (named in each test).
Of the 18 left: equivalent or killed elsewhere: ``plan.record`` dropped (cost only), ``known and`` dropped
in ``subtree`` (always passed), a child's ``os._exit`` status (read only when no result came), ``cases()``'s
default arguments (``audit`` passes its own), the kept-fault case's bounds made larger (a wider search),
``__all__`` and the alias names of explore.py (imported by other tests), ``result.replies`` (test_explore),
the schedule named in a forked run's error (test_hostile_round49). Not killed, left for a later round: the
forked ``count_all`` for kept faults under dedup, ``seen`` ignored by forked subtrees, the struck key of a
kept or forked lost reply, ``last_page``'s slice in the
fingerprint.

Found: no schedule the real search drops (no finding against main).
"""
from __future__ import annotations

import simkit
from simkit.tools.audit import _outcomes
from simkit.tools.audit_cases import cases
from simkit.tools.explore import begin, explore


def test_kept_faults_forked_and_from_scratch_visit_the_same_schedules():
    """docs/exploring.md: a schedule is a scenario's kept faults plus the explored ones, whichever way it is
    run. A scenario with a kept crash (``retry_walkthrough``, crash at before_event_commit@107) explored
    from scratch and with shared prefixes: the same schedules, the same digest, with and without dedup.
    Kills: ``Plan.at_point`` marking the pass after a kept fault as struck (``len(passes) - 0``), taking any
    fired fault for the schedule's last (``and`` → ``or``), and ``ForkPlan._fire`` skipping every subtree
    schedule (``if covered(...)`` → ``if True``) or indexing ``targets`` when it is ``None``."""
    sc = simkit.load("retry_walkthrough")
    assert sc.faults
    for dedup, schedules, digest in ((False, 57, "f5cd5c840cc3"), (True, 36, "a5d295de33ea")):
        got = []
        for share in (False, True):
            x = explore(sc, "safe", max_crashes=2, keep_faults=True, dedup=dedup, share_prefixes=share)
            got.append((x.schedules, x.digest, x.ok))
        assert got[0] == got[1]
        assert got[0][0] == schedules and got[0][1].startswith(digest) and got[0][2]


def test_an_exploration_split_over_two_processes_is_judged_once_every_group_is_in():
    """docs/exploring.md: an audit's exploration with many subtrees is dealt in groups to every process and
    judged when the last group is merged. ``rotation_before_retry`` at one crash and one lost reply has 18
    subtrees (four groups): judged over two processes as in one. Kills ``_outcomes`` counting two groups per
    merge (``entry[1] -= 2``), which judged the exploration after half its groups and then failed on the
    rest."""
    case = next(c for c in cases(1, 0) if c.kind == "explore" and c.name == "rotation_before_retry"
                and c.bounds == (1, 1, 0) and not c.ops)
    assert len(begin(case.scenario, "safe", max_crashes=1, lost_responses=1, seed=case.seed).roots) >= 16
    one = list(_outcomes(simkit.Consumer, [case], 1, None))
    assert one == [(0, "pass", None, False)]
    assert list(_outcomes(simkit.Consumer, [case], 2, None)) == one


def test_a_violation_in_every_schedule_is_merged_from_every_subtree():
    """docs/exploring.md: the first violation is the earliest in depth-first order, the digest a sum over
    every schedule, subtrees merged in. ``in_memory_quarantine`` on ``quarantine_boundary`` fails with no
    fault: 20 schedules, 20 violations, the first the fault-free run, the same run from scratch or forked.
    Kills ``Exploration.merge`` comparing a subtree's missing first violation with one found
    (``other.first_key is not None and`` dropped: a TypeError) and leaving out a subtree's digest."""
    sc = simkit.load("quarantine_boundary")
    for share in (False, True):
        x = explore(sc, "in_memory_quarantine", max_crashes=2, share_prefixes=share)
        assert (x.schedules, x.violations, x.ok) == (20, 20, False)
        assert x.first_violation[0] == () and x.digest.startswith("918567ec778e7f15")


def test_lost_requests_of_one_operation_forked_and_from_scratch():
    """docs/exploring.md: ``ops`` names the operations whose requests may be lost. One crash and one lost
    ``effect`` request on ``retry_walkthrough``: 6 schedules, the same digest run from scratch or forked.
    Kills ``ForkPlan.request_lost`` offering a lost request of any operation (``op in self.space.ops``
    dropped): its offers were not the schedule's extensions."""
    sc = simkit.load("retry_walkthrough")
    got = [explore(sc, "safe", max_crashes=1, lost_requests=1, ops=("effect",), share_prefixes=share)
           for share in (False, True)]
    assert [(x.schedules, x.digest) for x in got] == [(6, got[0].digest)] * 2
    assert got[0].digest.startswith("904b1bbdd9a5d01d")
