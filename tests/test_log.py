"""The columnar ground-truth logs read exactly like the lists of tuples they replace."""
import pytest

from simkit.log import EffectLog, ReceiptLog, WriteLog, states
from simkit.model import Checkpoint
from simkit.store import MemoryStore

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


def test_numbers_are_stored_in_typed_columns():
    log = EffectLog()
    log.add(3, 1.0, 2, "e9")
    seq, time, worker, eid = log.columns
    assert (seq.typecode, time.typecode, worker.typecode, eid) == ("q", "d", "q", ["e9"])


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
    assert list(states(store.writes)) == list(states(as_list))           # the checker's view, either form
    assert list(states(as_list))[2][4:] == (("C1", 20, 0), ("C2", 20, 1))


def test_a_write_log_refuses_a_row_that_does_not_continue_it():
    log = WriteLog(START)
    log.append((1, 0.0, 1, "commit", START, Checkpoint("C1", 5, 0)))
    with pytest.raises(ValueError, match="does not start from"):
        log.append((2, 0.0, 1, "commit", START, Checkpoint("C1", 6, 0)))
    assert len(log) == 1
