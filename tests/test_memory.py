"""A run's memory per event stays within budget: a guard on the columnar ground truth and the lean provider.

``tracemalloc`` counts bytes allocated, not time, so these bounds do not depend on how busy the machine is. On the
code this test was written for, a 20,000-event ``safe`` run kept 535 bytes per event (832 with ground-truth logs
as lists of tuples) and its check needed 84 more at its peak.
"""
import tracemalloc

import pytest

import simkit.tools.bench as bench
from simkit.judge.checker import check
from simkit.scenario.read import parse
from simkit.procedure.strategies import STRATEGIES
from simkit.world.simulation import World

EVENTS = 20_000


@pytest.fixture(scope="module")
def measured():
    scenario = parse(bench.generated(EVENTS))
    tracemalloc.start()
    try:
        world = World(scenario, STRATEGIES["safe"], 0).run()
        kept = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        verdict = check(world)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert verdict.ok and len(world.provider.events) == EVENTS
    return kept / EVENTS, (peak - kept) / EVENTS


def test_a_run_keeps_at_most_600_bytes_per_event(measured):
    kept, _check = measured
    assert kept <= 600, f"{kept:.0f} bytes per event"


def test_its_check_needs_at_most_150_more_bytes_per_event(measured):
    _kept, check_peak = measured
    assert check_peak <= 150, f"{check_peak:.0f} bytes per event"
