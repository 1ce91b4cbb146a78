"""The requests declared once (simkit/requests.py): every table derives from the declaration, the docs
tables are its rendering, and a driver whose methods disagree with it is refused when its class is
created. A crash point added to the declaration alone fires in the simulation and in the live worker
alike."""
import dataclasses
import os
import time
from inspect import isgeneratorfunction
from pathlib import Path

import pytest

import simkit
from simkit import model, ops, requests
from simkit.live.worker import Driver as LiveDriver
from simkit.live.worker import Harness, LiveClock
from simkit.model import Event, Fault, record
from simkit.ops import DECLARED, Commit, Lookup, crash_points, lost_op
from simkit.procedure import wire
from simkit.procedure.driver import REQUESTS, Driver
from simkit.requests import Point, Request
from simkit.viz.inputs import EVENT_POINTS
from simkit.world import provider as providers
from simkit.world.simulation import World

DOCS = Path(__file__).resolve().parents[2] / "docs"
E = Event("e1", 1)


def test_the_docs_tables_are_the_declaration_rendered():
    assert requests.crash_point_table() in (DOCS / "vocabulary.md").read_text(encoding="utf-8")
    assert ops.request_table() in (DOCS / "protocol.md").read_text(encoding="utf-8")


def test_every_table_of_requests_and_points_derives_from_the_declaration():
    rows = requests.REQUESTS
    assert [r.name for r in rows] == [t.__name__.lower() for t in REQUESTS] == list(wire.REQUEST_TYPES)
    assert model.CRASH_POINTS == simkit.CRASH_POINTS == requests.CRASH_POINTS == tuple(requests.POINTS)
    assert set(model.CRASH_POINTS) == {p.name for r in rows for p in r.points}
    assert EVENT_POINTS == tuple(p for p in model.CRASH_POINTS
                                 if any(r.per_event for r in rows if p in {q.name for q in r.points}))
    lost = tuple(dict.fromkeys(r.lost for r in rows if r.lost))
    assert model.LOST_OPS == ("fetch", "effect", "checkpoint_write") == lost
    for t, r in DECLARED.items():
        assert r.per_event == ("event" in {f.name for f in dataclasses.fields(t)})
        assert lost_op(t.__new__(t)) == r.lost
        if r.quarantined is None:
            assert crash_points(t.__new__(t)) == tuple(p and p.name for p in (r.before, r.after))
    assert crash_points(Commit(E, "quarantined", 1)) == ("before_quarantine_receipt",
                                                         "after_quarantine_receipt")
    assert crash_points(Commit(E, "applied", 1)) == ("before_event_commit", "after_event_commit")
    assert crash_points(object()) == (None, None) and lost_op(object()) is None


def test_the_world_takes_time_exactly_where_the_declaration_says():
    assert World.timed == {t for t, r in DECLARED.items() if r.timed}
    assert all(isgeneratorfunction(World.dispatch[t]) == (t in World.timed) for t in REQUESTS)
    assert not Driver.timed and not LiveDriver.timed
    assert all(not isgeneratorfunction(f) for f in LiveDriver.dispatch.values())
    # the fast path: no time and no crash point to pass (and Commit's quick path, when no fault can strike)
    assert set(World._at_once) == {t for t, r in DECLARED.items() if not r.timed and not r.points} | {Commit}


def test_a_driver_whose_methods_disagree_with_the_declaration_is_refused_when_its_class_is_created():
    with pytest.raises(TypeError, match=r"PlainFetch.fetch must be a generator function"):
        class PlainFetch(World):
            def fetch(self, worker, op):
                return None
    with pytest.raises(TypeError, match=r"SlowLookup.lookup must be a plain function"):
        class SlowLookup(World):
            def lookup(self, worker, op):
                yield from ()
    with pytest.raises(TypeError, match=r"LiveFetch.fetch must be a plain function: a driver without"):
        class LiveFetch(LiveDriver):
            def fetch(self, worker, op):
                yield from ()


def test_a_request_declared_without_its_method_or_record_is_refused(monkeypatch):
    @record
    class Peek:
        cursor: str

    monkeypatch.setitem(DECLARED, Peek, Request("peek", "`page`", "peek at a page"))
    with pytest.raises(TypeError, match=r"NoPeek has no method peek\(\) for request Peek"):
        class NoPeek(Driver):
            pass
    monkeypatch.setattr(requests, "REQUESTS", requests.REQUESTS + (Request("peek", "`page`", "peek"),))
    with pytest.raises(TypeError, match=r"request 'peek' \(simkit/requests.py\) has no record Peek"):
        ops._pair()


def test_a_request_declared_to_take_time_needs_a_generator_in_the_world(monkeypatch):
    monkeypatch.setitem(DECLARED, Lookup, dataclasses.replace(DECLARED[Lookup], timed=True))
    with pytest.raises(TypeError, match=r"Probe.lookup must be a generator function"):
        class Probe(World):
            pass


AFTER_LOOKUP = Point("after_lookup", "the page's receipts were read; nothing of it processed yet")


@pytest.fixture
def after_lookup(monkeypatch):
    """A crash point added the way a newcomer adds one: in the declaration only (here, test-locally)."""
    monkeypatch.setitem(DECLARED, Lookup, dataclasses.replace(DECLARED[Lookup], after=AFTER_LOOKUP))


def walkthrough():
    return dataclasses.replace(simkit.load("retry_walkthrough"), faults=())


def test_a_crash_point_added_to_the_declaration_strikes_in_the_simulation(after_lookup):
    class Probe(World):         # a class created after the declaration changed, as every class is on import
        pass

    assert Lookup not in Probe._at_once
    world = Probe(walkthrough(), simkit.Consumer, 0, (Fault("crash", "after_lookup"),)).run()
    rows = [(s, o) for s, o in zip(world.trace.step, world.trace.outcome, strict=True) if s == "crash"]
    assert rows == [("crash", "after_lookup")] and world.crashes == 1 and world.completed


def test_a_crash_point_added_to_the_declaration_is_passed_by_the_live_worker(after_lookup, tmp_path):
    sc = walkthrough()
    h = Harness.create(tmp_path, sc, providers.build(sc, sc.seed), LiveClock(time.monotonic()))
    passes = []

    class Probe(LiveDriver):
        def _point(self, point):
            passes.append(point)

    r, w = os.pipe()
    try:
        assert Probe(h, simkit.Consumer, 1, w, None).run() == "caught_up"
    finally:
        os.close(r), os.close(w)
        h.close()
    assert passes[:2] == ["after_fetch", "after_lookup"] and passes.count("after_lookup") == 2


def test_the_quick_commit_path_calls_the_driver_hooks_it_stands_for():
    """World._commit_at_once commits through Driver.commit: a world's record_effect is honoured."""
    seen = []

    class Counting(World):
        def record_effect(self, worker, event_id):
            seen.append(event_id)
            super().record_effect(worker, event_id)

    quiet = simkit.parse({"name": "quiet", "generate": {"events": 20, "page_size": 5}})
    assert Counting._at_once[Commit] == Counting._commit_at_once
    run = Counting(quiet, simkit.Consumer, 0).run()
    plain = World(quiet, simkit.Consumer, 0).run()
    assert seen == [e[3] for e in plain.sink.effects] and len(seen) == 20
    assert run.trace.to_frame().equals(plain.trace.to_frame())


def test_a_world_with_a_commit_of_its_own_has_no_quick_commit_path():
    class OwnCommit(World):
        def commit(self, worker, op):
            return (yield from super().commit(worker, op))

    assert Commit not in OwnCommit._at_once and Commit in World._at_once
