"""What ``simkit live`` and explore's fingerprints ask of the world's parts, through their public methods
(docs/architecture.md, "No reach-ins"): the handler's memory and the service's kept where the caller says, the
initial durable state built in one place, each part's state as plain values."""
import simkit
from simkit.model import Event, Reservation
from simkit.procedure.consumer import Consumer
from simkit.world.external import ExternalService
from simkit.world.simulation import World
from simkit.world.sink import Sink


def test_the_handler_keeps_its_memory_in_the_mappings_it_is_given():
    calls, seen = {}, {}
    sink = Sink("transactional")
    sink.keep_handler_state(calls, seen)
    review = Event("e1", 1, "review")
    assert sink.decide(1, review) == "operator_review"
    assert calls == {"e1": 1} and seen == {"e1": 0.0}
    assert sink.handler_state({"e1": review}) == ({}, {"e1": 0.0})


def test_the_service_remembers_what_it_ran_in_the_set_it_is_given():
    ran: set = set()
    service = ExternalService(Sink("idempotent"))
    service.keep_ran(ran)
    call = Reservation("e1", "f" * 64, "P1", 1)
    service.execute(1, call)
    service.execute(1, call)
    assert ran == {("e1", "f" * 64)}
    assert [r.fate for r in service.requests] == ["ran", "deduplicated"]
    assert service.state() == (tuple(service.requests), frozenset(ran))


def test_initial_receipts_and_their_effects_are_the_durable_state_at_time_0():
    sc = simkit.parse({"name": "initial", "pages": [{"cursor": "C1", "positions": [1, 2, 3],
                                                     "next_cursor": "C2"},
                                                    {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
                       "initial": {"applied_position": 2, "checkpoint_version": 4, "receipts": [1, 2]}})
    world = World(sc, Consumer, 0)
    start, receipts = sc.initial.durable(world.provider.events.values(), world.provider.start)
    assert (start.resume_cursor, start.applied_position, start.checkpoint_version) == ("C1", 2, 4)
    assert receipts == {"e1": ("applied", 1), "e2": ("applied", 2)}
    assert world.store.checkpoint == start and dict(world.store.receipts.items()) == receipts
    assert list(world.sink.effects) == [(0, 0.0, 0, "e1"), (0, 0.0, 0, "e2")]
    assert dict(world.sink.effect_count.items()) == {"e1": 1, "e2": 1}
    assert world.run().ground_truth() is not None


def test_a_sinks_state_is_its_effects_its_handlers_memory_and_the_latest_decisions():
    sink = Sink("idempotent")
    hold = Event("e2", 2, "hold")
    sink.record_initial("e1")
    assert sink.decide(1, hold) == "reversible_hold"
    sink.effect(1, "e1")                            # deduplicated by event id
    assert sink.state({"e2": hold}) == ({"e1": 1}, {}, {"e2": 0.0}, {"e2": "reversible_hold"})


def test_the_worlds_own_state_is_plain_values():
    world = World(simkit.load("retry_walkthrough"), Consumer, 0).run()
    status, finished, fetched, halts, guard, service = world.state()
    assert status == finished == {1: "caught_up"} and fetched == {1: "C8"} and halts == []
    assert guard == (0, -1.0, 0) and service == ((), frozenset())
