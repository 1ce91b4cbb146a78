"""The driver protocol (simkit.procedure.driver): one method
per request, one table per class, shared logic once."""
from inspect import isgeneratorfunction

import pytest

import simkit
from simkit.live.worker import Driver as LiveDriver
from simkit.model import RandomFaults
from simkit.ops import Commit, Halt, Handle, Load, Lookup, Skip
from simkit.procedure.driver import REQUESTS, Driver, at_once
from simkit.truth.trace import CROSSED_REPLY, DETAILS, transition_outcome, validated_outcome
from simkit.world.faults import FaultPlan
from simkit.world.simulation import LATER, World


@pytest.mark.parametrize("cls", [Driver, World, LiveDriver], ids=["base", "world", "live"])
def test_every_request_has_a_method_of_its_class(cls):
    assert set(cls.dispatch) == set(REQUESTS)
    for t, function in cls.dispatch.items():
        assert function is getattr(cls, t.__name__.lower())


def test_the_world_takes_time_where_the_live_worker_sleeps():
    """The world's timed requests are its generator functions; the live worker has none: it sleeps instead."""
    assert not LiveDriver.timed and not Driver.timed
    assert World.timed == {t for t, f in World.dispatch.items() if isgeneratorfunction(f)}
    assert set(World._at_once) == {Load, Lookup, Skip, Handle, Halt, Commit}
    assert World._at_once[Commit] is World._commit_at_once


def test_a_subclass_gets_tables_of_its_own_methods():
    class Quiet(World):
        def skip(self, worker, op):
            return None

    assert Quiet.dispatch[Skip] is Quiet.skip and Quiet._at_once[Skip] is Quiet.skip
    assert World.dispatch[Skip] is World.skip


def test_at_once_returns_a_generator_s_value_and_refuses_to_wait():
    def done():
        return 7
        yield  # pragma: no cover

    def waits():
        yield 1

    assert at_once(done()) == 7
    with pytest.raises(RuntimeError):
        at_once(waits())


def test_the_quick_commit_path_defers_when_a_fault_can_strike():
    world = World(simkit.load("retry_walkthrough"), simkit.Consumer, 0)
    assert not world.faults.quiet                   # scripted faults are waiting
    event = next(iter(world.provider.events.values()))
    assert world._commit_at_once(1, Commit(event, "applied", event.position, True)) is LATER


def test_fault_plan_quiet_follows_record_and_spent_faults():
    plan = FaultPlan((), RandomFaults(crash=1.0, max_faults=1), 0)
    plan.record = False
    assert not plan.quiet and plan.at_point(1, "after_fetch", None) is not None
    assert plan.quiet and plan.idle()               # the one random fault is spent
    plan.record = True
    assert not plan.quiet


def test_trace_details_are_typed_where_readers_used_to_parse():
    run = simkit.simulate(simkit.load("misbound_response"), settlement="split_validate_write")
    trace, frame = run.trace, run.trace.to_frame()
    assert list(frame.columns[-len(DETAILS):]) == list(DETAILS)
    settled = [i for i, s in enumerate(trace.step) if s in ("settle", "settle_late")]
    validated = [i for i, s in enumerate(trace.step) if s == "validate"]
    assert settled and validated
    for i in settled:
        d = trace.detail(i)
        assert trace.outcome[i] == transition_outcome(d["action"], d["before"], d["after"])
    for i in validated:
        d = trace.detail(i)
        assert trace.outcome[i] == validated_outcome(d["action"], d["after"]) and d["before"] is None
    for i, outcome in enumerate(trace.outcome):
        assert (trace.detail(i)["crossed"] is not None) == outcome.startswith(CROSSED_REPLY)
    assert run.world.late_replies == 0
