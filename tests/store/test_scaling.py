"""Costs that grew with the square of the input (issue 32): each is now a lookup.

Measured (4 workers, an idempotent sink, ``store = "sqlite"``, loaded machine): 2,500 / 5,000 events took 64 /
198 s before the index, 10.8 / 18.6 s after; 10,000 events and 10,000 scripted faults that never fire, 96 s
before the fault plan's index, 3.8 s after.
"""
from __future__ import annotations

import sqlite3

import simkit
from simkit.model import Fault, RandomFaults
from simkit.store import sql
from simkit.world.faults import FaultPlan


def test_the_greatest_generation_is_read_from_an_index():
    """``SQLiteLedger.reserve`` reads ``max(generation)`` of the whole history in every reservation: without
    the index, a scan each time."""
    db = sqlite3.connect(":memory:")
    db.executescript(sql.SCHEMA)
    plan = " ".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN SELECT coalesce(max(generation), 0) "
                                              "FROM operation_history"))
    assert "USING COVERING INDEX operation_history_generation" in plan, plan


def test_a_crash_point_pass_looks_up_its_faults_instead_of_scanning_them():
    """A pass compared itself with every scripted fault: events x faults."""
    faults = tuple(Fault("crash", "before_event_commit", 10 * i, 5) for i in range(1, 20_001))
    plan = FaultPlan(faults, RandomFaults(), 0)
    plan.record = False
    looked = []

    class Spy(dict):
        def get(self, key, default=None):
            looked.append(key)
            return super().get(key, default)

    plan._index = Spy(plan._index)
    for pos in range(10, 200_010, 10):
        assert plan.at_point(1, "before_event_commit", pos) is None
    assert len(looked) <= 2 * 20_000


def test_the_first_matching_fault_in_the_scenarios_order_fires():
    """Two faults that strike the same pass, one naming the position and one naming none: the first in the
    scenario's order fires, as when the plan scanned them in order; the other fires at its own next match."""
    by_position = Fault("crash", "after_fetch", None, 2)
    anywhere = Fault("pause", "before_event_commit", None, 2)
    here = Fault("crash", "before_event_commit", 20, 1)
    plan = FaultPlan((by_position, anywhere, here), RandomFaults(), 0)
    assert plan.at_point(1, "before_event_commit", 10) is None
    assert plan.at_point(1, "before_event_commit", 20) is anywhere  # second pass of the point; first at 20
    assert plan.at_point(1, "after_fetch", None) is None
    assert plan.at_point(1, "after_fetch", None) is by_position
    assert plan.remaining()[0] == (here,)


def test_many_never_firing_faults_leave_the_verdict_alone():
    data = {"generate": {"events": 200},
            "faults": [{"kind": "crash", "point": "before_event_commit", "position": 10 * i, "occurrence": 9}
                       for i in range(1, 201)]}
    assert simkit.simulate(simkit.parse(data)).verdict.ok
