"""Generated methods (the column appends of ``truth.columns.adder`` behind ``Log.add`` and ``Trace.add``, the
``__init__`` of ``model.record``) are compiled by ``simkit._codegen.compile_function``: a traceback through
one shows its real source line under ``<simkit generated Owner.method>``, and each behaves exactly like the
plain Python it stands for."""
from __future__ import annotations

import inspect
import linecache
import traceback

import pytest

from simkit._codegen import compile_function
from simkit.model import Checkpoint, Event
from simkit.truth.columns import Column
from simkit.truth.log import DecisionLog, Log, ReceiptLog, WriteLog
from simkit.truth.trace import COLUMNS, Trace


def last_frame(exc: BaseException) -> traceback.FrameSummary:
    return traceback.extract_tb(exc.__traceback__)[-1]


def state(column) -> list:
    """Everything a column keeps: its slots (a typed array or list is its own contents)."""
    if not isinstance(column, Column):
        return list(column)
    return [(name, getattr(column, name)) for cls in type(column).__mro__
            for name in getattr(cls, "__slots__", ())]


def test_a_traceback_through_a_log_add_shows_its_source_line():
    with pytest.raises(TypeError) as raised:
        ReceiptLog().add("not a sequence number", 0.0, 1, "e1", "applied")
    frame = last_frame(raised.value)
    assert frame.filename == "<simkit generated ReceiptLog.add>" and frame.name == "add"
    assert frame.line == "c0.append(seq)"
    assert "File \"<string>\"" not in "".join(traceback.format_exception(raised.value))


def test_a_traceback_through_trace_add_shows_its_source_line():
    with pytest.raises(TypeError) as raised:
        Trace().add("soon", 1, "fetch", "e1", 1, Checkpoint("C1", 0, 0), 0)
    frame = last_frame(raised.value)
    assert frame.filename == "<simkit generated Trace.add>" and frame.line == "c0.append(time)"


def test_a_traceback_through_a_record_init_shows_its_source_line():
    with pytest.raises(TypeError) as raised:
        Checkpoint.__init__(object(), "C1", 0, 0)      # a slot setter refuses another type's instance
    frame = last_frame(raised.value)
    assert frame.filename == "<simkit generated Checkpoint.__init__>"
    assert frame.line == "_set_resume_cursor(self, resume_cursor)"
    assert inspect.getsource(Checkpoint.__init__).startswith("def __init__(self, resume_cursor,")


def test_one_name_generated_twice_with_different_sources_keeps_both_sources():
    one = type("Tiny", (Log,), {"__slots__": (), "COLUMNS": (("seq", "q"),)})
    two = type("Tiny", (Log,), {"__slots__": (), "COLUMNS": (("seq", "q"), ("time", "d"))})
    again = compile_function(inspect.getsource(one.add), "add", "Tiny.add", __name__,
                             dict(one.add.__globals__))
    names = [f.__code__.co_filename for f in (one.add, two.add, again)]
    assert names[0] != names[1] and names[2] == names[0]            # the same source keeps its name
    for f in (one.add, two.add):
        assert linecache.getlines(f.__code__.co_filename) == inspect.getsource(f).splitlines(True)
    with pytest.raises(TypeError) as raised:
        two().add(1, "late")
    assert last_frame(raised.value).line == "c1.append(time)"


def plain_log_add(log: Log, *values) -> None:
    """What a generated ``Log.add`` stands for: one ``append`` per column, the row undone if one refuses."""
    try:
        for column, value in zip(log.columns, values, strict=True):
            column.append(value)
    except BaseException:
        n = min(map(len, log.columns))
        for column in log.columns:
            del column[n:]
        raise


ROWS = {
    ReceiptLog: [(0, 0.0, 1, "e1", "applied"), (1, 0.5, 2, "e007", "quarantined"),
                 (2, 1.0, 70_000, "e2", "applied"), (3, 1.5, 1, "x-named", "ignored"),
                 (4, 2.0, 1, "e3", ("odd", 1)), (5, 2.5, -1, "e99", "applied")],
    DecisionLog: [(0, 0.0, 1, "e5", "apply"), (1, 1.0, 1, "e5", "quarantine"), (9, 3.0, 2, "e6", "apply")],
}


@pytest.mark.parametrize("kind", list(ROWS), ids=lambda k: k.__name__)
def test_a_generated_log_add_behaves_like_the_plain_appends(kind):
    generated, plain = kind(), kind()
    for row in ROWS[kind]:
        generated.add(*row)
        plain_log_add(plain, *row)
    assert list(generated) == list(plain) == ROWS[kind]
    assert [state(c) for c in generated.columns] == [state(c) for c in plain.columns]
    bad = (6, "late", 1, "e4", "applied")              # the time column refuses after seq took its value
    for add in (generated.add, lambda *row: plain_log_add(plain, *row)):
        with pytest.raises(TypeError):
            add(*bad)
    assert len(generated) == len(plain) == len(ROWS[kind])                  # no partial row left behind
    assert [state(c) for c in generated.columns] == [state(c) for c in plain.columns]


def test_a_generated_write_log_add_behaves_like_the_plain_appends():
    generated, plain = WriteLog(Checkpoint("C0", 0, 0)), WriteLog(Checkpoint("C0", 0, 0))
    rows = [(0, 1.0, 1, "commit", "C0", 3, 0), (1, 2.0, 1, "barrier", "C1", 3, 1),
            (2, 3.0, 2, "barrier", "C2", 2**40, 2)]
    for row in rows:
        generated.add(*row)
        plain_log_add(plain, *row)
    assert list(generated) == list(plain)
    assert [state(c) for c in generated.columns] == [state(c) for c in plain.columns]


def plain_trace_add(t: Trace, time, worker, step, event_id, position, checkpoint, place, outcome="") -> None:
    """What the generated ``Trace.add`` stands for (without its undo of a refused row)."""
    t.time.append(time)
    t.worker.append(worker)
    t.step.append(step)
    t.event_id.append(event_id, position)
    t.position.append(position)
    t.resume_cursor.append(checkpoint.resume_cursor)
    t.cursor_place.append(place)
    t.applied_position.append(checkpoint.applied_position)
    t.checkpoint_version.append(checkpoint.checkpoint_version)
    t.outcome.append(outcome)


def test_the_generated_trace_add_behaves_like_the_plain_appends():
    rows = [(0.0, 1, "fetch", "", -1, Checkpoint("C1", 0, 0), 0),
            (1.0, 1, "commit", "e1", 1, Checkpoint("C1", 1, 0), 0, "applied"),
            (1.5, 2, "commit", "e07", 7, Checkpoint("C1", 7, 0), 0, "applied"),
            (2.0, 2, "commit", "named", 8, Checkpoint("C1", 8, 0), 0, ("odd",)),
            (3.0, 1, "barrier", "", -1, Checkpoint("Z9", 8, 1), 3)]
    generated, plain = Trace(), Trace()
    for row in rows:
        generated.add(*row)
        plain_trace_add(plain, *row)
    assert generated.digest() == plain.digest() and len(generated) == len(rows)
    for c in COLUMNS:
        assert state(getattr(generated, c)) == state(getattr(plain, c)), c


def test_a_record_init_behaves_like_the_plain_one():
    assert Checkpoint("C1", 2, 3) == Checkpoint(resume_cursor="C1", applied_position=2, checkpoint_version=3)
    cp = Checkpoint("C1", 2, 3)
    assert (cp.resume_cursor, cp.applied_position, cp.checkpoint_version) == ("C1", 2, 3)
    assert Event("e1", 1).behavior == "ok" and Event("e1", 1, "poison").behavior == "poison"   # a default
    with pytest.raises(TypeError):
        Checkpoint("C1", 2)                                    # a missing argument, as a plain __init__ says
    with pytest.raises(AttributeError):
        cp.applied_position = 5                                # still frozen
