"""Crash anywhere, restart, nothing is lost — as a Hypothesis state machine (``hypothesis.stateful``).

Each rule adds one fault at a pass the current schedule's run reaches (a crash at any crash point, a lost
reply or a lost request of any request), and the invariants judge the run with all of them. Hypothesis shrinks
a failure to the fewest faults: for a shortcut, the exact pass that breaks it.
"""
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

import simkit
from simkit.model import Fault


def record(scenario, strategy, faults):
    """The run of ``faults`` on ``scenario`` without its own faults, with every crash-point pass and every
    request and reply it reached recorded."""
    world = simkit.World(simkit.tools.explore.fault_free(scenario), strategy, scenario.seed, tuple(faults))
    world.faults.record = True
    world.run()
    return world, simkit.check(world)


class CrashAnywhere(RuleBasedStateMachine):
    #: generated: overlaps, backfills, empty pages, stuck tokens, lost fetches, every event behaviour
    scenario = simkit.load("default")
    strategy = simkit.Consumer
    strict = True                            # also every invariant, completion and no regression
    failing: tuple = ()  # the schedule of the last failing run (after shrinking: the minimal)

    def __init__(self):
        super().__init__()
        self.faults: tuple[Fault, ...] = ()
        self.world, self.verdict = record(self.scenario, self.strategy, ())

    @rule(data=st.data())
    def crash_at_a_pass(self, data):
        worker, point, position, n = data.draw(st.sampled_from(self.world.faults.passes), label="pass")
        self._add(Fault("crash", point, position, n, worker))

    @rule(data=st.data(), kind=st.sampled_from(["lost_response", "lost_request"]))
    def lose_a_message(self, data, kind):
        worker, op, position, n_any, n_pos, _ = data.draw(st.sampled_from(self.world.faults.replies),
                                                          label="reply")
        self._add(Fault(kind, None, position, n_pos if position is not None else n_any, worker, op=op))

    def _add(self, fault):
        self.faults += (fault,)
        self.world, self.verdict = record(self.scenario, self.strategy, self.faults)

    @invariant()
    def nothing_lost_nothing_duplicated(self):
        v = self.verdict
        if v.lost or v.duplicated:
            type(self).failing = self.faults
        assert not v.lost and not v.duplicated, (self.faults, v.lost, v.duplicated)

    @invariant()
    def judged_ok(self):
        if self.strict:
            assert self.verdict.ok, (self.faults, self.verdict)


SETTINGS = settings(max_examples=40, stateful_step_count=4, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def test_safe_survives_any_schedule_of_crashes_and_lost_messages():
    run_state_machine_as_test(CrashAnywhere, settings=SETTINGS)


def test_a_shortcut_is_shrunk_to_the_one_fault_that_breaks_it():
    """persist_token_on_fetch publishes the token on fetch: one fault before the page's events are done (a
    crash, or the lost reply of that early write, after which the worker rereads the published token) loses
    them. Hypothesis finds a failing schedule and shrinks it to that single fault."""
    class Shortcut(CrashAnywhere):
        scenario = simkit.load("shortcut_persist_token_on_fetch")           # ok without faults
        strategy = simkit.resolve("persist_token_on_fetch")
        strict = False                                                      # it breaks invariant 1 even so

    with pytest.raises(AssertionError):
        run_state_machine_as_test(Shortcut, settings=SETTINGS)
    assert len(Shortcut.failing) == 1
    sc = Shortcut.scenario
    assert simkit.tools.explore.replay(sc, "safe", Shortcut.failing).verdict.ok  # safe survives it
    assert simkit.tools.explore.replay(sc, Shortcut.strategy, Shortcut.failing).verdict.lost
