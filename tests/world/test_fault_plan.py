"""The fault plan counts only what a scripted fault can match when nothing else reads the counts (no recording
for exploration, no fingerprint, no random rate): every other pass, request and reply costs one lookup. The
faults that fire, and so the run, must be those of counting everything."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simkit
from simkit.judge.checker import check
from simkit.model import CRASH_POINTS, LOST_OPS, Fault, RandomFaults
from simkit.world.faults import FaultPlan
from simkit.world.simulation import World

SCENARIO = simkit.parse({"name": "two_workers", "workers": 2, "generate": {"events": 40, "page_size": 5}})

faults = st.lists(st.one_of(
    st.builds(Fault, st.sampled_from(["crash", "pause"]), st.sampled_from(CRASH_POINTS),
              st.one_of(st.none(), st.integers(1, 40)), st.integers(1, 3), st.integers(1, 2)),
    st.builds(lambda kind, op, position, n, worker: Fault(kind, None, position, n, worker, op=op),
              st.sampled_from(["lost_request", "lost_response"]), st.sampled_from(LOST_OPS),
              st.one_of(st.none(), st.integers(1, 40)), st.integers(1, 3), st.integers(1, 2)),
), max_size=4).map(tuple)


def _run(faults: tuple[Fault, ...], count_all: bool):
    world = World(SCENARIO, simkit.STRATEGIES["safe"], 1, faults)
    if count_all:
        world.faults.count_all()
    world.run()
    return world.faults.fired, world.trace.digest(), check(world).as_dict()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(faults)
def test_counting_only_what_faults_match_fires_the_faults_of_counting_everything(faults):
    assert _run(faults, count_all=False) == _run(faults, count_all=True)


def test_a_pass_no_fault_can_match_is_not_counted():
    """Only ``(worker, point)`` pairs, and the requests and replies of ops, that a scripted fault names are
    counted; the fault still fires at its occurrence."""
    fault = Fault("crash", "before_event_commit", None, 2, 1)
    plan = FaultPlan((fault,), RandomFaults(), 0)
    plan.record = False
    assert plan.at_point(1, "after_fetch", None) is None
    assert plan.request_lost(1, "effect", 3) is False and plan.reply_lost(1, "effect", 3) is False
    assert plan.at_point(2, "before_event_commit", 1) is None       # another worker
    assert plan.at_point(1, "before_event_commit", 1) is None
    assert plan.at_point(1, "before_event_commit", 2) is fault
    assert set(plan._counts) == {(1, "before_event_commit"), (1, "before_event_commit", 1),
                                 (1, "before_event_commit", 2)}


@pytest.mark.parametrize("turn_on", ["record", "count_all"])
def test_counting_everything_once_passes_went_uncounted_is_refused(turn_on):
    """The counts of the passes skipped are lost: recording or counting from then on would name wrong
    occurrences, so it is refused (both are set before the run)."""
    plan = FaultPlan((Fault("crash", "before_event_commit"),), RandomFaults(), 0)
    plan.record = False
    plan.at_point(1, "after_fetch", None)
    with pytest.raises(RuntimeError, match="uncounted"):
        if turn_on == "record":
            plan.record = True
        else:
            plan.count_all()
