"""The world's quick request path in C (simkit/_native_world.c, ``World._quick``) equals the Python it
stands for.

Each run is made twice, once with the quick path and once without it (``World._quick = None``: ``handle`` and
``_commit_at_once`` in Python), and must leave the same ground truth: every log row, the receipts and
checkpoint, the sink's effect counts, the clock, the progress guard, the trace and the verdict. The runs: the
audit's bundled and corner cases under ``safe``, every shortcut, and every fourth consumer of the correct
gallery and of three hostile rounds' buggy ones; long quiet streams of every event behaviour, where the quick
path does most of the work; then the paths where it hands a request back or fails part-way.
"""
from __future__ import annotations

import dataclasses
import inspect
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mutants import round55, round58, round62
from mutants.roster import CORRECT

import simkit
from simkit import Consumer
from simkit.judge.checker import check
from simkit.model import Event
from simkit.ops import Load, Lookup
from simkit.procedure.strategies import STRATEGIES
from simkit.scenario.read import parse
from simkit.tools.audit_cases import cases
from simkit.tools.bench import generated
from simkit.truth import passes
from simkit.truth.collector import paused
from simkit.truth.columns import Codes
from simkit.world.events import EventTable
from simkit.world.quick import setup as quick_setup
from simkit.world.simulation import World

native = pytest.mark.skipif(passes.NATIVE is None, reason="simkit._native was not built (SIMKIT_NATIVE=0)")


def _buggy() -> list[type[Consumer]]:
    return [c for m in (round55, round58, round62) for _n, c in inspect.getmembers(m, inspect.isclass)
            if issubclass(c, Consumer) and c.__module__ == m.__name__]


def _run(scenario, consumer, seed: int, quick: bool, **world) -> tuple:
    """The run's ground truth and verdict, with the quick path or without it."""
    w = World(scenario, consumer, seed, **world)
    if not quick:
        w._quick = None
    with paused():
        w.run()
    store, sink, g = w.store, w.sink, w.guard
    return (list(store.receipt_log), list(store.writes), list(store.reads), list(sink.effects),
            list(sink.decisions), dict(store.receipts.items()), store.checkpoint,
            dict(sink.effect_count.items()),
            w.clock.seq, w.clock.now, (g.steps, g.at, g.instant), w.completed, w.stopped, w.stopped_early,
            w.trace.digest(), check(w).as_dict())


def test_the_quick_path_runs_where_it_stands_for_the_world():
    """Built where a compiler is (else only SIMKIT_NATIVE=0 turns it off), and used for a plain run: without
    this, the comparisons below would compare the Python with itself."""
    w = World(parse(generated(50)), STRATEGIES["safe"], 0)
    assert (w._quick is not None) == (passes.NATIVE is not None)


@native
@pytest.mark.parametrize("kind", ["bundled", "corner"])
def test_every_audit_case_leaves_the_same_ground_truth(kind):
    consumers = [simkit.resolve(s) for s in STRATEGIES] + list(CORRECT[1::4]) + _buggy()[::4]
    for case in (c for c in cases(1, 1) if c.kind == kind):
        for consumer in consumers:
            assert _run(case.scenario, consumer, case.seed, True) == _run(case.scenario, consumer, case.seed,
                                                                          False), (case.name, consumer)


GENERATED = {"ok": {}, "poison": {"poison": 0.1}, "transient": {"transient": 0.2},
             "review": {"review": 0.1}, "hold": {"hold": 0.05},
             "pages": {"overlap": 0.3, "empty_pages": 0.1, "stuck": 0.1, "page_size": 7}}


@native
@pytest.mark.parametrize("stream", GENERATED)
@pytest.mark.parametrize("sink", ["transactional", "external"])
def test_a_long_quiet_stream_leaves_the_same_ground_truth(stream, sink):
    """1,000 events, one worker, no fault: each commit of an ``ok`` event with no receipt is the quick path's;
    other behaviours' Handle, and commits of events already closed (overlaps), go to Python."""
    text = generated(1_000)
    text["generate"] = {**text["generate"], **GENERATED[stream]}
    scenario = dataclasses.replace(parse(text), sink=sink)
    for consumer in (STRATEGIES["safe"], *CORRECT[1:4]):
        assert _run(scenario, consumer, 3, True) == _run(scenario, consumer, 3, False), consumer


@native
def test_a_stream_longer_than_a_guard_chunk_counts_the_same_steps():
    """The progress guard is called every GUARD_CHUNK requests, whichever path executed them."""
    scenario = parse(generated(1_700))
    assert _run(scenario, STRATEGIES["safe"], 0, True) == _run(scenario, STRATEGIES["safe"], 0, False)


class _Refusing:
    """A journal whose row raises: the commit fails after the store kept its receipt (World._journaled)."""

    def __init__(self, error: BaseException):
        self.error = error

    def __call__(self, *row):
        raise self.error


@native
@pytest.mark.parametrize("error", [TypeError("refused"), MemoryError()])
def test_a_commit_that_fails_part_way_fails_as_in_python(error):
    """The quick path hands the exception back (``failed``): World._failed raises it as the at-once path
    does, and the state it leaves is the Python's."""
    outcomes = []
    for fast in (True, False):
        w = World(parse(generated(30)), STRATEGIES["safe"], 0)
        w._journal = _Refusing(error)
        if not fast:
            w._quick = None
        with paused(), pytest.raises(type(error)) as raised:
            w.run()
        outcomes.append((type(raised.value), str(raised.value), dict(w.store.receipts.items()),
                         w.store.checkpoint, w.clock.seq, w.clock.now))
    assert outcomes[0] == outcomes[1]


class _Returns(Consumer):
    """A consumer whose run returns a value half-way (step 7's "stop", early)."""

    def run(self):
        inner, result = super().run(), None
        for _ in range(24):
            try:
                request = inner.send(result)
            except StopIteration:
                return None
            result = yield request
        return "early"


@native
def test_a_life_that_returns_part_way_stops_as_in_python():
    scenario = parse(generated(40))
    assert _run(scenario, _Returns, 0, True) == _run(scenario, _Returns, 0, False)
    assert _run(scenario, _Returns, 0, True)[-1]["ok"] is False


MAX = 2**63 - 1
#: what a consumer may ask a Lookup of: default ids with and without receipts, a receipt kept by a named id
#: at a default id's position, ids that only look default (``e007``), an id at another's position, the last
#: position
LOOKED = (tuple(Event(f"e{p}", p, "ok") for p in range(12)),
          (Event("x5", 5, "ok"), Event("e5", 5, "ok"), Event("e007", 7, "ok"), Event("e9", 10, "ok"),
           Event(f"e{MAX}", MAX, "ok"), Event("e3", 3, "ok"), Event("x5", 6, "ok")),
          ())


@native
def test_a_lookup_answers_as_the_stores_own():
    """Where the usual case covers an event (a default id, no receipt kept by id) the C reads the store's
    slots; any other it asks the store's own methods: the same two dictionaries, in the same order."""
    w = World(parse(generated(12)), STRATEGIES["safe"], 0)
    for eid, position, outcome in (("e3", 3, "applied"), ("x5", 5, "quarantined"), ("e7", 7, "retry_later"),
                                   (f"e{MAX}", MAX, "ignored")):
        w.store.commit_event(1, eid, position, outcome, 0)
    got = []

    def asks():
        for events in LOOKED:
            got.append((yield Lookup(events)))
        yield Load()                                # not the quick path's: handed back

    op, left, failed = w._quick(w, asks(), None, 100, 1)
    assert type(op) is Load and failed is None and left == 100 - len(LOOKED) - 1
    want = [w.store.lookup(events) for events in LOOKED]
    assert [(list(a.items()), list(b.items())) for a, b in got] == [(list(a.items()), list(b.items()))
                                                                    for a, b in want]
    assert want[1] == ({"x5": "quarantined", f"e{MAX}": "ignored", "e3": "applied"},
                       {5: "x5", MAX: f"e{MAX}", 3: "e3"})


@native
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-3, 50), max_size=30),
       st.lists(st.sampled_from(["ok", "poison"]) | st.integers(0, 400).map(str), max_size=30),
       st.lists(st.integers(-40, 40), max_size=30), st.sampled_from([list, tuple, range]))
def test_a_page_is_built_as_the_table_builds_each_event(positions, behaviors, rows, kind):
    """``EventTable.events`` in C (``simkit._native.events_of``) is :meth:`EventTable.event` of each row:
    positions anywhere in 64 bits, behaviours past one byte of codes; a row that is not an index of both
    columns from 0 is left to the Python (``None``), which indexes or raises as it does."""
    n = min(len(positions), len(behaviors))
    table = EventTable(array("q", positions[:n]), Codes(behaviors[:n]))
    table.ids = None                            # (what a table of default ids holds; unordered ones too)
    rows = range(len(rows)) if kind is range else kind(rows)
    got = passes.NATIVE.events_of(table.positions, table.behaviors.codes, table.behaviors.table, rows, Event)
    if got is None:
        assert any(not 0 <= r < n for r in rows)
    else:
        assert got == tuple(map(table.event, rows)) and all(type(e) is Event for e in got)


# -- what the C reads and builds by offset: a request's rules, and simkit's own records ----------------
_VALUES = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                    st.sampled_from(["ok", "poison", "applied", "ignored", "quarantined", "e10", "bogus"]),
                    st.integers(min_value=-2, max_value=3),
                    st.sampled_from([2**63 - 1, 2**63, -2**63, 2**64]))


class _Str(str):
    """A str subclass: of the rules' words, not a ``str``."""


class _Int(int):
    """An int subclass: not an ``int``."""


class _Event(Event):
    """An event subclass: not an ``Event``."""

    __slots__ = ()


_ODD = st.one_of(_VALUES, _VALUES.filter(lambda v: type(v) is str).map(_Str),
                 _VALUES.filter(lambda v: type(v) is int).map(_Int))


#: a value of every kind a field may be given wrongly: types, subclasses, and every bound of the rules
_ODD_VALUES = [None, True, False, 0, 1, -1, 10, 2**63 - 1, 2**63, -2**63, 2**64, 1.0, float("inf"), "", "ok",
               "applied", "poison", "e10", "bogus", _Int(1), _Int(-1), _Str("ok"), _Str("applied"), (), Event]


def _request(handle: bool, odd: str | None = None, value=None):
    """A well-formed ``Handle`` or ``Commit``, its field ``odd`` (its event's too) given ``value``."""
    from simkit.ops import Commit, Handle
    fields = {"event": Event, "id": "e10", "position": 10, "behavior": "ok", "outcome": "applied",
              "applied": 10, "effect": False}
    if odd is not None:
        fields[odd] = value
    kind = fields["event"]
    event = kind(fields["id"], fields["position"], fields["behavior"]) if kind in (Event, _Event) else kind
    if handle:
        return Handle(event)
    return Commit(event, fields["outcome"], fields["applied"], fields["effect"])


@native
def test_each_field_given_each_odd_value_is_judged_as_python_judges_it():
    """Every field of ``Handle`` and ``Commit`` (its event's too), one at a time, given each odd value: the C
    answers "keeps every rule" exactly where the Python test answers True."""
    from simkit.ops import WELL_FORMED
    for handle, names in ((True, ("event", "id", "position", "behavior")),
                          (False, ("event", "id", "position", "outcome", "applied", "effect"))):
        for name in names:
            for value in (*_ODD_VALUES, _Event) if name == "event" else _ODD_VALUES:
                op = _request(handle, name, value)
                assert passes.NATIVE.well(op) == WELL_FORMED[type(op)](op), (type(op).__name__, name, value)


@st.composite
def _requests(draw):
    """A ``Handle`` or ``Commit`` with any number of its fields made odd."""
    from simkit.ops import Commit, Handle
    if draw(st.booleans()):
        return Handle(_event(draw))
    return Commit(_event(draw), draw(st.one_of(st.sampled_from(["applied", "ignored"]), _ODD)),
                  draw(st.one_of(st.integers(0, 10), _ODD)), draw(st.one_of(st.booleans(), _ODD)))


def _event(draw) -> object:
    kind = draw(st.sampled_from([Event, Event, Event, _Event, None]))
    if kind is None:
        return draw(_VALUES)
    return kind(draw(st.one_of(st.just("e10"), _ODD)), draw(st.one_of(st.just(10), _ODD)),
                draw(st.one_of(st.sampled_from(["ok", "poison"]), _ODD)))


@native
@settings(max_examples=600, deadline=None)
@given(_requests())
def test_the_c_finds_a_request_well_formed_only_where_its_python_test_does(op):
    """The C's reading of a request's rules answers only "keeps every rule", and only where the Python test
    (``WELL_FORMED``, the rules' one home) answers True; a well-formed request it finds so (else it would only
    cost time: the Python test is asked)."""
    from simkit.ops import WELL_FORMED
    python = WELL_FORMED[type(op)](op)
    assert passes.NATIVE.well(op) == python


@native
def test_a_changed_record_class_is_read_and_built_by_python_again(monkeypatch):
    """The C reads a record's fields by offset only while its class is as it was at world_setup: a class
    given a new attribute (its version tag cleared) is read by getattr, so a property put in place of a
    field is what the C sees, as Python sees it."""
    from simkit.ops import Commit, Handle
    e = Event("e10", 10, "ok")
    assert passes.NATIVE.well(Handle(e))
    try:
        monkeypatch.setattr(Handle, "marker", 1, raising=False)
        assert not passes.NATIVE.well(Handle(e))      # (the Python test answers: the C does not read it)
        assert passes.NATIVE.well(Commit(e, "applied", 10))
    finally:
        monkeypatch.undo()
        quick_setup()
    assert passes.NATIVE.well(Handle(e))


@native
def test_a_run_with_a_changed_checkpoint_class_keeps_the_same_ground_truth(monkeypatch):
    """A ``Checkpoint`` class changed at run time (here: a marker attribute) is built by calling it, as the
    Python does; the run's ground truth is the same as without the quick path."""
    from simkit.model import Checkpoint
    sc = parse(generated(300))
    try:
        monkeypatch.setattr(Checkpoint, "marker", 1, raising=False)
        assert _run(sc, STRATEGIES["safe"], 0, True) == _run(sc, STRATEGIES["safe"], 0, False)
    finally:
        monkeypatch.undo()
        quick_setup()


class _Twin:
    """A class laid out as ``Event`` is: its descriptors' offsets are ``Event``'s."""

    __slots__ = ("id", "position", "behavior")


@native
def test_a_record_changed_before_the_c_is_set_up_is_read_and_built_as_python_does(monkeypatch):
    """world_setup takes only what is still the record's own: a field whose descriptor is another class's
    (Python refuses it) is not read by offset, and an ``__init__`` replaced is called to build the record
    (review of the offset reads)."""
    from simkit.ops import WELL_FORMED, Handle
    calls = []
    init = Event.__init__

    def counted(self, *fields):
        calls.append(fields)
        init(self, *fields)

    try:
        monkeypatch.setattr(Event, "behavior", _Twin.__dict__["behavior"])
        quick_setup()
        op = Handle(Event("e1", 1, "ok"))
        with pytest.raises(TypeError):
            WELL_FORMED[Handle](op)
        assert not passes.NATIVE.well(op)
        monkeypatch.undo()
        monkeypatch.setattr(Event, "__init__", counted)
        quick_setup()
        rows = list(range(5))
        page = passes.NATIVE.events_of(array("q", rows), array("B", [0] * 5), ["ok"], rows, Event)
        assert len(calls) == 5 and page == tuple(Event(f"e{p}", p, "ok") for p in range(5))
    finally:
        monkeypatch.undo()
        quick_setup()


@native
def test_a_part_with_a_setattr_of_its_own_is_written_through_it(monkeypatch):
    """A slotted part whose class has a ``__setattr__`` of its own (here the clock's) is written through it,
    as Python writes it: the C writes by offset only where setattr is the generic one."""
    from simkit.truth.clock import Clock
    sets = []

    def setattr_(self, name, v):
        sets.append(name)
        object.__setattr__(self, name, v)

    try:
        monkeypatch.setattr(Clock, "__setattr__", setattr_, raising=False)
        quick_setup()
        counts = []
        for fast in (True, False):
            sets.clear()
            _run(parse(generated(50)), STRATEGIES["safe"], 0, fast)
            counts.append(len(sets))
        assert counts[0] == counts[1] > 0
    finally:
        monkeypatch.undo()
        quick_setup()
