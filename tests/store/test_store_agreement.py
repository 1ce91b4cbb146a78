"""Issue 32, "stores that disagree": the memory store and the SQLite store accept the same writes, leaving the
same state, and refuse the same ones with the same line (:mod:`simkit.store.limits`).

The memory store kept an event position of 2**63 or more and text holding a lone surrogate (in an event id, a
cursor), which SQLite cannot hold: it raised OverflowError or UnicodeEncodeError of its own, and the same
consumer was judged on one store and stopped with a traceback-like line on the other.
"""
from __future__ import annotations

import pytest
from conftest import UNSTORABLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simkit.cli import main
from simkit.model import OUTCOMES, Checkpoint, Event
from simkit.store.limits import Unstorable
from simkit.store.memory import MemoryStore
from simkit.store.sqlite import SQLiteStore

START = Checkpoint("C1", 5, 1)
INITIAL = {"e5": ("applied", 5)}

#: integers around the edges: 0, -1, SQLite's INTEGER's ends and one past them, far past them
EDGES = [0, 1, -1, 5, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 2**70, -(2**70)]
integers = st.one_of(st.sampled_from(EDGES), st.integers(-10, 100))
#: text with lone surrogates, astral characters (😀, a surrogate pair in UTF-16 but one character here),
#: ASCII; and ids that are default ones (``e<position>``), near the edges too
texts = st.one_of(
    st.text(st.sampled_from(["a", "é", "\ud800", "\udfff", "\U0001f600", "\U00010000", "e", "1"]),
            max_size=4),
    st.builds(lambda n: f"e{n}", integers),
    st.sampled_from(["C1", "C2", "e5", "e6"]),
)
outcomes = st.one_of(st.sampled_from(OUTCOMES), st.just("bogus"))

commit = st.tuples(st.just("commit"), texts, integers, outcomes, integers)
barrier = st.tuples(st.just("barrier"), st.one_of(st.just("C1"), texts), st.one_of(st.just(1), integers),
                    texts, integers, integers)
overwrite = st.tuples(st.just("overwrite"), texts, integers, integers)


def apply(store, op):
    """``op`` on ``store``: its result, or the line it refused it with."""
    kind, *args = op
    try:
        if kind == "commit":
            eid, position, outcome, applied = args
            return store.commit_event(1, eid, position, outcome, applied)
        if kind == "barrier":
            return store.compare_and_swap(1, *args)
        return store.overwrite(1, *args)
    except Unstorable as exc:
        return f"refused: {exc}"


def state(store, probes):
    """What the checker reads of ``store``, and what a lookup of ``probes`` answers. Sequence numbers left
    out: a rejected barrier spends one on SQLite only (SQLiteStore.compare_and_swap)."""
    lookup = store.lookup([Event(eid, pos) for eid, pos in probes])
    return (store.checkpoint, dict(store.receipts), [w[1:] for w in store.writes],
            [r[1:] for r in store.receipt_log], lookup)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(commit, barrier, overwrite), min_size=1, max_size=6))
def test_both_stores_accept_and_refuse_the_same_writes(ops):
    memory, sqlite = MemoryStore(START, dict(INITIAL)), SQLiteStore(START, dict(INITIAL))
    try:
        probes = [("e5", 5)]
        for op in ops:
            said = apply(memory, op), apply(sqlite, op)
            assert said[0] == said[1], op
            if said[0] is True and op[0] == "commit":
                probes.append((op[1], op[2]))
            assert state(memory, probes) == state(sqlite, probes), op
    finally:
        sqlite.close()


SURROGATE = "holds a lone surrogate ({}), which no store can hold: text is kept as UTF-8"
PAST = "not within -2**63..2**63 - 1 (SQLite's INTEGER)"


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("op, line", [
    (("commit", "e9", 2**70, "applied", 1), f"event.position is an integer of 71 bits, {PAST}"),
    (("commit", f"e{2**63}", 2**63, "applied", 1), f"event.position is 9223372036854775808, {PAST}"),
    (("commit", "e\ud800", 9, "applied", 1), "event.id 'e\\ud800' " + SURROGATE.format("U+D800")),
    (("commit", "e9", 9, "applied", 2**63),
     "applied_position is 9223372036854775808, not within 0..2**63 - 1"),
    (("barrier", "C1", 1, "\udfff\U0001f600", 2, 5),
     "next_cursor '\\udfff\U0001f600' " + SURROGATE.format("U+DFFF")),
    (("barrier", "C1", 2**63, "C2", 2, 5), f"version is 9223372036854775808, {PAST}"),
    (("overwrite", 7, 2, 5), "next_cursor is 7 (int), not str"),
])
def test_a_value_no_store_holds_is_refused_with_one_line_and_nothing_written(kind, op, line):
    store = MemoryStore(START, dict(INITIAL)) if kind == "memory" else SQLiteStore(START, dict(INITIAL))
    before = state(store, [("e5", 5)])
    with pytest.raises(Unstorable) as refused:
        {"commit": lambda: store.commit_event(1, *op[1:]),
         "barrier": lambda: store.compare_and_swap(1, *op[1:]),
         "overwrite": lambda: store.overwrite(1, *op[1:])}[op[0]]()
    assert str(refused.value) == line and isinstance(refused.value, ValueError)
    assert state(store, [("e5", 5)]) == before


def test_astral_characters_and_edge_positions_are_kept_alike():
    """What SQLite holds, the memory store holds the same: a position of -1 (its receipt is the position's
    holder on both, where the memory store lost it for a default-looking id), 2**63 - 1, an astral id."""
    stores = MemoryStore(START, dict(INITIAL)), SQLiteStore(START, dict(INITIAL))
    for store in stores:
        assert store.commit_event(1, "e-1", -1, "applied", 0)
        assert store.commit_event(1, f"e{2**63 - 1}", 2**63 - 1, "applied", 2**63 - 1)
        assert store.commit_event(1, "\U0001f600", 7, "ignored", 7)
        assert store.compare_and_swap(1, "C1", 1, "C\U0001f600", 2, 0)
    probes = [("e-1", -1), (f"e{2**63 - 1}", 2**63 - 1), ("\U0001f600", 7)]
    assert state(stores[0], probes) == state(stores[1], probes)
    assert stores[0].lookup([Event("e-1", -1)])[1] == {-1: "e-1"}




@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("cls, problem", [
    ("Surrogate", "Barrier.next_cursor '\\ud800' " + SURROGATE.format("U+D800")),
    ("Past63Bits", f"Commit.event.position is an integer of 71 bits, {PAST}"),
    ("DefaultIdPast63", f"Commit.event.position is 9223372036854775808, {PAST}"),
])
def test_a_consumer_gets_the_same_line_from_either_store(tmp_path, capsys, monkeypatch, store, cls, problem):
    """The memory store judged these runs (their verdicts said nothing of the values); SQLite stopped them
    with its own OverflowError or UnicodeEncodeError. Now both: the consumer's malformed request, exit 2."""
    (tmp_path / "unstorable.py").write_text(UNSTORABLE)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "retry_walkthrough", "--strategy", f"unstorable.py:{cls}", "--store", store]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"simkit: strategy unstorable.py:{cls}: yielded a malformed request: {problem}\n"


@pytest.mark.parametrize("applied", [1e30, float("nan"), -1.5, 2**70])
def test_a_number_no_store_holds_is_named_whatever_its_type(applied):
    """(review) A float reached ``bit_length`` in the message and raised AttributeError instead."""
    for store in (MemoryStore(START, dict(INITIAL)), SQLiteStore(START, dict(INITIAL))):
        shown = r"(1e\+30|nan|-1\.5|an integer of 71 bits)"
        with pytest.raises(Unstorable, match=rf"^applied_position is {shown}, not within 0\.\.2\*\*63 - 1$"):
            store.commit_event(1, "e1", 1, "applied", applied)


SETTLES_UNDER = '''
from dataclasses import replace

from simkit.ops import Settle
from simkit.procedure.strategies import STRATEGIES


class {name}(STRATEGIES["safe"]):
    def run(self):
        inner, result = super().run(), None
        while True:
            op = inner.send(result)
            if isinstance(op, Settle):
                op = Settle(op.event, replace(op.reservation, {field}={value}), op.observation)
            result = yield op
'''


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("field, value, problem", [
    ("binding", '"\\ud800"', "Settle.reservation.binding '\\ud800' " + SURROGATE.format("U+D800")),
    ("generation", "2**64", "Settle.reservation.generation is an integer of 65 bits, not within "
                            "-2**63..2**63 - 1 (SQLite's INTEGER)"),
])
def test_a_settle_under_a_tuple_no_store_holds_gets_the_same_line(tmp_path, capsys, monkeypatch, store, field,
                                                                  value, problem):
    """(review) The ledger checked only the operation id: a binding with a lone surrogate was judged on the
    memory store and stopped by SQLite's UnicodeEncodeError."""
    (tmp_path / "settles.py").write_text(SETTLES_UNDER.format(name="Odd", field=field, value=value))
    monkeypatch.chdir(tmp_path)
    assert main(["run", "late_response", "--strategy", "settles.py:Odd", "--store", store]) == 2
    said = capsys.readouterr().err
    assert said == f"simkit: strategy settles.py:Odd: yielded a malformed request: {problem}\n"
