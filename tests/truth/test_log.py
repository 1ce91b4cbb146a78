"""The columnar ground-truth logs read exactly like the lists of tuples they replace."""
import copy
import sqlite3

import pytest

from simkit.model import Checkpoint
from simkit.store.durable import DurableList
from simkit.store.memory import MemoryStore
from simkit.truth.log import (
    DecisionLog,
    EffectLog,
    ReadLog,
    ReceiptLog,
    ReceiptRow,
    WriteLog,
    WriteRow,
    write_states,
)
from simkit.truth.trace import Trace
from simkit.world.provider import ServedLog

START = Checkpoint("C1", 0, 0)


def test_a_log_reads_back_its_rows_as_tuples():
    log = ReceiptLog([(0, 0.0, 0, "e1", "applied")])
    log.add(7, 2.5, 1, "e2", "quarantined")
    rows = [(0, 0.0, 0, "e1", "applied"), (7, 2.5, 1, "e2", "quarantined")]
    assert list(log) == rows and log == rows and len(log) == 2
    assert log[-1] == rows[-1] and log[0] == rows[0] and log[1:] == rows[1:]
    assert [eid for _s, _t, _w, eid, _o in log] == ["e1", "e2"]
    assert log != rows[:1] and EffectLog() == []
    with pytest.raises(IndexError):
        log[2]


def test_a_row_is_read_by_name():
    """Issue 27: ``log[k].event_id``, not ``log[k][3]``; the row's fields are the log's columns."""
    log = ReceiptLog([(0, 0.0, 0, "e1", "applied"), (7, 2.5, 1, "e2", "quarantined")])
    assert log[1] == ReceiptRow(seq=7, time=2.5, worker=1, event_id="e2", outcome="quarantined")
    assert (log[-1].event_id, log[0].outcome) == ("e2", "applied")
    assert log[:1] == [ReceiptRow(0, 0.0, 0, "e1", "applied")] and isinstance(log[:1][0], ReceiptRow)
    for cls in (ReceiptLog, ReadLog, EffectLog, DecisionLog, ServedLog):
        assert cls.ROW._fields == tuple(name for name, _kind in cls.COLUMNS), cls
    store = MemoryStore(START)
    store.commit_event(1, "e1", 10, "applied", 10)
    assert store.writes[0].after == Checkpoint("C1", 10, 0) and store.writes[0].kind == "commit"
    assert (
        store.reads == []
        and store.writes[:][0] == store.writes[0]
        and isinstance(store.writes[:][0], WriteRow)
    )


def test_a_log_whose_row_names_other_fields_is_refused_when_defined():
    with pytest.raises(TypeError, match="ROW's fields must be its columns"):
        class Wrong(EffectLog):
            __slots__ = ()
            ROW = ReceiptRow

    class Made(EffectLog):                  # no ROW of its own: one named after its columns
        __slots__ = ()
        COLUMNS = (("seq", "q"), ("label", None))
    log = Made([(1, "x")])
    assert log[0].label == "x" and Made.ROW._fields == ("seq", "label")


def test_numbers_are_stored_in_typed_columns():
    log = EffectLog()
    log.add(3, 1.0, 2, "e9")
    seq, time, worker, eid = log.columns
    assert (seq.typecode, time.typecode, worker.values.typecode, eid) == ("q", "d", "h", ["e9"])
    assert eid.codes.tolist() == [9]                   # the id kept as the position it derives from
    log.add(4, 2.0, 10**6, "x")                         # a worker too big for two bytes is kept aside
    assert log[-1] == (4, 2.0, 10**6, "x") and worker.other == {1: 10**6}


def test_a_write_log_rebuilds_each_before_from_the_write_ahead_of_it():
    store = MemoryStore(START)
    store.commit_event(1, "e1", 10, "applied", 10)
    store.commit_event(1, "e2", 20, "applied", 20)
    assert store.compare_and_swap(1, "C1", 0, "C2", 1, 20)
    c1_10, c1_20, c2 = Checkpoint("C1", 10, 0), Checkpoint("C1", 20, 0), Checkpoint("C2", 20, 1)
    assert [w[3:] for w in store.writes] == [("commit", START, c1_10), ("commit", c1_10, c1_20),
                                              ("barrier", c1_20, c2)]
    assert store.writes[1][4:] == (c1_10, c1_20) and store.writes[0][4] == START
    assert store.writes[-1][5] == store.checkpoint == c2
    as_list = list(store.writes)
    assert list(write_states(store.writes)) == list(write_states(as_list))  # the checker's view, either form
    assert list(write_states(as_list))[2][4:] == (("C1", 20, 0), ("C2", 20, 1))


def test_a_write_log_refuses_a_row_that_does_not_continue_it():
    log = WriteLog(START)
    log.append((1, 0.0, 1, "commit", START, Checkpoint("C1", 5, 0)))
    with pytest.raises(ValueError, match="does not start from"):
        log.append((2, 0.0, 1, "commit", START, Checkpoint("C1", 6, 0)))
    assert len(log) == 1


def test_a_row_a_typed_column_refuses_is_not_half_written():
    log = EffectLog()
    log.add(1, 0.0, 1, "e1")
    with pytest.raises(TypeError):
        log.add(2, None, 1, "e2")              # a time must be a number
    assert list(log) == [(1, 0.0, 1, "e1")] and [len(c) for c in log.columns] == [1, 1, 1, 1]


def test_a_copy_of_a_log_is_its_own():
    log = WriteLog(START)
    log.add(1, 0.0, 1, "commit", "C1", 5, 0)
    twin = copy.copy(log)
    twin.add(2, 0.0, 1, "commit", "C1", 6, 0)
    assert len(log) == 1 and len(twin) == 2 and twin.initial is START
    assert copy.deepcopy(twin) == twin


def test_a_log_equals_lists_and_tuples_of_its_rows_only():
    assert EffectLog() == [] and EffectLog() == ()
    assert EffectLog() != "" and EffectLog() != {}


def test_the_store_checkpoint_changes_only_by_a_logged_write():
    store = MemoryStore(START)
    with pytest.raises(AttributeError):
        store.checkpoint = Checkpoint("C1", 50, 3)
    store.commit_event(1, "e1", 10, "applied", 10)
    assert store.writes.last() == store.checkpoint == Checkpoint("C1", 10, 0)


def test_the_live_durable_list_takes_rows_column_by_column_too():
    rows = DurableList(sqlite3.connect(":memory:"), "effects", ("seq", "time", "worker", "event_id"))
    rows.add(3, 1.5, 2, "e9")
    assert list(rows) == [(3, 1.5, 2, "e9")]


def test_trace_times_are_a_typed_array_and_read_back_as_floats():
    trace = Trace()
    trace.add(2.5, 1, "load", "", None, START, 0)
    assert trace.time.typecode == "d" and list(trace.time) == [2.5]
    assert trace.to_frame().time.dtype == "float64"


def test_trace_columns_read_back_every_value_they_were_given():
    trace = Trace()
    cp = Checkpoint("C1", 2**40, 0)
    rows = [(1.0, 1, "fetch", "", None, cp, 7, "3 events"),
            (2.0, 1, "commit", "e10", 10, cp, 2**63 + 1, "applied"),
            (3.0, 2, "commit", "x9", 9, cp, -(2**63), "applied"),
            (4.0, 1, "commit", "e010", 10, cp, True, "")]
    for row in rows:
        trace.add(*row)
    assert list(trace.event_id) == ["", "e10", "x9", "e010"] and trace.event_id[-1] == "e010"
    assert list(trace.position) == [None, 10, 9, 10] and trace.position[0] is None
    assert list(trace.cursor_place) == [7, 2**63 + 1, -(2**63), True] and trace.cursor_place[-1] is True
    assert trace.step.count("commit") == 3 and trace.step.index("commit") == 1 and "fetch" in trace.step
    assert trace.outcome == ["3 events", "applied", "applied",
                             ""] and trace.applied_position[1:3] == [2**40] * 2
    assert trace.to_frame().event_id.tolist() == ["", "e10", "x9", "e010"]


def test_codes_widen_past_256_distinct_values():
    from simkit.truth.columns import Codes
    codes = Codes(str(i) for i in range(300))
    assert codes.codes.typecode == "H" and list(codes) == [str(i) for i in range(300)] and codes[255] == "255"
