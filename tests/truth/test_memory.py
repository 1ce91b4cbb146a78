"""A run's memory per event stays within budget: a guard on the columnar ground truth and the event table.

``tracemalloc`` counts bytes allocated, not time, so these bounds do not depend on how busy the machine is. A
20,000-event ``safe`` run kept 535 bytes per event with an Event, an id string and dictionary entries per
event (832 with ground-truth logs as lists of tuples), and its check needed about 100 more at its peak. With
no object per event (ids derived from positions, receipts and effect counts by position, coded columns) it
keeps 212, and its check needed 281 more while it built every id string and Event the run no longer keeps (the
stream in position order and an index by id). Reading the stream from the event table's typed positions,
ranking a default id by its position and keeping a response as its row rather than its page's ids, the check
needs about 16.
"""
import tracemalloc

import pytest

import simkit
import simkit.tools.bench as bench
from simkit.judge.checker import check
from simkit.model import Checkpoint, Event
from simkit.procedure.strategies import STRATEGIES
from simkit.scenario.read import parse
from simkit.store.limits import Unstorable
from simkit.store.memory import MemoryStore, Receipts
from simkit.store.sqlite import make_store
from simkit.truth.columns import DENSITY, SPAN, IdMap
from simkit.world.events import EventTable
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


def test_a_run_keeps_at_most_240_bytes_per_event(measured):
    kept, _check = measured
    assert kept <= 240, f"{kept:.0f} bytes per event"


def test_a_run_and_its_check_peak_at_most_520_bytes_per_event(measured):
    kept, check_peak = measured
    assert kept + check_peak <= 520, f"{kept:.0f} + {check_peak:.0f} bytes per event"


def test_a_check_keeps_no_table_by_event_id(measured):
    _kept, check_peak = measured
    assert check_peak <= 40, f"{check_peak:.0f} bytes per event"


def test_the_stream_keeps_no_object_per_event():
    world = World(parse(bench.generated(1000)), STRATEGIES["safe"], 0)
    events = world.provider.events
    assert events.ids is None and events.positions.typecode == "q" and len(events) == 1000
    assert events["e10"] == Event("e10", 10) and "e11" not in events and "e010" not in events
    ids, positions = events.by_position()
    assert positions is events.positions and ids[-1] == "e10000" and events.rank("e10000") == 999


def test_a_named_stream_reads_in_position_order():
    table = EventTable.of([Event("b", 5), Event("a", 3, "poison"), Event("c", 5)])
    assert list(table) == ["b", "a", "c"] and table["a"] == Event("a", 3, "poison")
    ids, positions = table.by_position()
    assert (
        list(ids) == ["a", "b", "c"]
        and list(positions) == [3, 5, 5]
        and [table.rank(x) for x in "abc"] == [0, 1, 2]
    )


def test_receipts_keep_default_ids_by_position_and_the_rest_by_id():
    receipts = Receipts({"e30": ("applied", 30), "x": ("ignored", 7), "e20": ("applied", 21)})
    receipts["e10"] = ("retry_later", 10)           # out of order: kept aside
    receipts["e10"] = ("applied", 10)
    assert dict(receipts) == {"e30": ("applied", 30), "e10": ("applied", 10), "x": ("ignored", 7),
                              "e20": ("applied", 21)}
    assert receipts.outcomes.base == 30 and receipts.outcomes.aside == {10: "applied"}
    assert set(receipts.other) == {"x",
                                   "e20"} and "e21" not in receipts and receipts.get("e20") == ("applied", 21)


def test_the_id_at_a_position_is_the_last_terminal_receipt_there():
    store = MemoryStore(Checkpoint("C1", 0, 0))
    store.commit_event(1, "e10", 10, "applied", 0)
    assert store.lookup([Event("e10", 10), Event("y", 10)]) == ({"e10": "applied"}, {10: "e10"})
    store.commit_event(1, "y", 10, "quarantined", 0)
    assert store.lookup([Event("e10", 10)]) == ({"e10": "applied"}, {10: "y"}) and store.id_at(20) is None


def test_effect_counts_read_as_a_dictionary():
    counts = IdMap()
    for eid in ("e20", "e10", "e20", "z"):
        counts[eid] = counts.get(eid, 0) + 1
    assert dict(counts) == {"e20": 2, "e10": 1, "z": 1} and len(counts) == 3 and "e30" not in counts
    del counts["e20"]
    assert dict(counts) == {"e10": 1, "z": 1} and len(counts) == 2 and counts.get("e20") is None


def test_an_id_map_stays_small_whatever_the_positions():
    counts = IdMap()
    for k in range(63):  # each position twice the last: kept aside once the array would be sparse
        counts[f"e{1 << k}"] = k
    assert len(counts.slots.codes) <= SPAN + DENSITY * 63 and dict(counts) == {
        f"e{1 << k}": k for k in range(63)
    }
    counts.set_at(3, "x")                                               # between two array slots
    assert counts.at(3) == "x" and counts["e3"] == "x" and len(counts) == 64


def test_an_id_map_keeps_more_than_256_distinct_values():
    counts = IdMap()
    for k in range(300):                # the 256th distinct value widens the array of codes
        counts.set_at(k, str(k))
    assert counts.slots.codes.typecode == "H" and [counts.at(k) for k in range(300)] == [
        str(k) for k in range(300)
    ]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_receipt_past_2_63_is_refused_by_both_stores_and_one_at_2_63_minus_1_reads_back(kind):
    """The memory store kept a receipt at position 2**63 (by position, in its IdMap) where SQLite's INTEGER
    cannot hold it: the stores disagreed (issue 32). Both refuse it now, with the same line and nothing
    written; the last position SQLite holds is kept by position and read back by id like any other."""
    store = make_store(kind, Checkpoint("C1", 0, 0))
    with pytest.raises(Unstorable, match=r"^event\.position is 9223372036854775808, not within "
                                         r"-2\*\*63\.\.2\*\*63 - 1 \(SQLite's INTEGER\)$"):
        store.commit_event(1, f"e{2**63}", 2**63, "applied", 0)
    assert dict(store.receipts) == {} and list(store.receipt_log) == [] and list(store.writes) == []
    eid = f"e{2**63 - 1}"
    assert store.commit_event(1, eid, 2**63 - 1, "applied", 0)
    assert store.receipts.get(eid) == ("applied", 2**63 - 1) and dict(store.receipts) == {
        eid: ("applied", 2**63 - 1)}
    assert store.lookup([Event(eid, 2**63 - 1)]) == ({eid: "applied"}, {2**63 - 1: eid})
    assert not store.commit_event(1, eid, 2**63 - 1, "applied", 0)     # a second terminal receipt is refused


def test_an_id_map_is_a_mapping_all_through():
    """Its slots once sat in an attribute named ``values``, which hid ``Mapping.values()``: ``sum(effect_count
    .values())`` on a run's sink raised TypeError."""
    r = simkit.simulate(simkit.load("retry_walkthrough"))
    counts = r.world.sink.effect_count
    assert sum(counts.values()) == len(r.world.sink.effects) and list(counts) == [
        "e104",
        "e105",
        "e106",
        "e107",
    ]
