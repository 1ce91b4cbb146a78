"""The journal (simkit/truth/journal.py) writes one commit's rows exactly as the four logs' own ``add`` would,
undoes them all when a value is refused, and the world's quick commit through it leaves the same ground truth
and trace as the general path. Both journals: the compiled one (simkit/_native.c) and the generated one that
runs without it."""
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simkit.model import Checkpoint
from simkit.procedure.strategies import STRATEGIES
from simkit.scenario.read import bundled, load, parse
from simkit.truth import passes
from simkit.truth.journal import ROW, journal
from simkit.truth.log import EffectLog, ReceiptLog, WriteLog
from simkit.truth.trace import COLUMNS, Trace
from simkit.world.simulation import World


@contextmanager
def compiled(on: bool):
    """The compiled journal (if built), or the generated one."""
    kept = passes.NATIVE
    passes.NATIVE = kept if on else None
    try:
        yield
    finally:
        passes.NATIVE = kept


def _logs():
    return EffectLog(), ReceiptLog(), WriteLog(Checkpoint("", 0, 0)), Trace()


def _by_add(logs, effect_seq, seq, now, worker, event_id, position, outcome, step, cursor, applied, version,
            place, raised):
    effects, receipts, writes, trace = logs
    if effect_seq is not None:
        effects.add(effect_seq, now, worker, event_id)
    receipts.add(seq, now, worker, event_id, outcome)
    if raised:
        writes.add(seq, now, worker, "commit", cursor, applied, version)
    trace.add(now, worker, step, event_id, position, Checkpoint(cursor, applied, version), place, outcome)


def _contents(logs):
    effects, receipts, writes, trace = logs
    return (list(effects), list(receipts), list(writes),
            [list(getattr(trace, c)) for c in COLUMNS])


ids = st.one_of(st.integers(0, 2**64).map(lambda p: f"e{p}"), st.text(max_size=4),
                st.sampled_from(["e007", "e-1", "e", "ｅ1"]))
rows = st.tuples(st.none() | st.integers(1, 10**6), st.integers(1, 10**6), st.floats(0, 1e12),
                 st.integers(-2**20, 2**20), ids, st.integers(-2**64, 2**64),
                 st.sampled_from(["applied", "ignored", "quarantined", "odd"]),
                 st.sampled_from(["commit", "quarantine"]), st.text(max_size=3),
                 st.integers(-2**63, 2**63 - 1), st.integers(-2**20, 2**20), st.integers(-1, 2**40),
                 st.booleans())


@pytest.mark.parametrize("native", [True, False, "buffered"])
@settings(max_examples=200, deadline=None)
@given(batch=st.lists(rows, max_size=6))
def test_rows_are_those_of_the_four_adds(native, batch):
    """Default and named ids, ids that only look default, positions and numbers past every column's compact
    range, with and without an effect, raising ``applied_position`` or not: the same rows, read back. (An
    ``applied_position`` past 64 bits never reaches a log: both stores refuse it first.) ``buffered``: the
    compiled journal as the world's quick path calls it, rows that need no Python buffered until ``end()``."""
    by_journal, by_add = _logs(), _logs()
    with compiled(bool(native)):
        row = journal(*by_journal)
    if native == "buffered":
        if passes.NATIVE is None:
            pytest.skip("simkit._native was not built")
        row.begin()
    for values in batch:
        assert len(values) == len(ROW)
        row(*values)
        _by_add(by_add, *values)
    if native == "buffered":
        row.end()
    assert _contents(by_journal) == _contents(by_add)


@pytest.mark.skipif(passes.NATIVE is None, reason="simkit._native was not built")
def test_buffered_rows_widen_a_column_as_unbuffered_ones_do():
    """300 distinct cursors and outcomes among the usual rows: a value new to its column is not buffered (its
    code is made in Python, which may widen the column's codes past one byte), so the rows buffered before it
    are written first, and those after it are written at the new width."""
    by_journal, by_add = _logs(), _logs()
    row = journal(*by_journal)
    row.begin()
    for k in range(1, 900):
        fresh = k % 3 == 0
        values = (k, k, k + 0.5, 1, f"e{k}", k, f"out{k}" if fresh else "applied", "commit",
                  f"c{k}" if fresh else "c0", k, 0, 1, k % 2 == 0)
        row(*values)
        _by_add(by_add, *values)
    row.end()
    assert by_journal[3].resume_cursor.codes.typecode == "H"
    assert _contents(by_journal) == _contents(by_add)


@pytest.mark.parametrize("native", [True, False])
def test_a_refused_value_undoes_the_whole_commit(native):
    logs = _logs()
    with compiled(native):
        row = journal(*logs)
    row(1, 2, 1.0, 1, "e10", 10, "applied", "commit", "c", 10, 0, 1, True)
    before = _contents(logs)
    with pytest.raises(TypeError):          # an unhashable outcome: refused by the trace's last column
        row(3, 4, 2.0, 1, "e20", 20, ["applied"], "commit", "c", 20, 0, 1, True)
    assert _contents(logs) == before
    assert {len(getattr(logs[3], c)) for c in COLUMNS} == {1}


def _runs(scenario, strategy="safe", seed=0):
    """The world's run with its journal and with the general path only."""
    quick = World(scenario, STRATEGIES[strategy], seed).run()
    general = World(scenario, STRATEGIES[strategy], seed)
    general._journal = None
    general.run()
    return quick, general


def _truth(world):
    return (world.trace.digest(), list(world.store.receipt_log), list(world.store.writes),
            list(world.sink.effects), dict(world.sink.effect_count.items()), world.store.checkpoint,
            dict(world.store.receipts.items()))


@pytest.mark.parametrize("name", bundled())
def test_quick_commit_leaves_what_the_general_path_leaves(name):
    scenario = load(name)
    for strategy in ("safe", "no_version_check"):
        quick, general = _runs(scenario, strategy)
        assert _truth(quick) == _truth(general), (name, strategy)


def test_the_journal_carries_a_generated_run():
    """The benchmark's stream with crashes, lost replies and overlaps: most commits take the journal."""
    from simkit.tools.bench import generated
    quick, general = _runs(parse(generated(3000, faults=True)), "safe", 3)
    assert quick._journal is not None and len(quick.store.receipt_log) >= 3000
    assert _truth(quick) == _truth(general)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.integers(-5, 2**70), st.sampled_from([0, 10**19 - 1, 10**19, 2**63, 2**63 - 1])),
       st.sampled_from(["e{}", "e0{}", "e{} ", "ｅ{}", "x{}", "e+{}"]), st.integers(-1, 1))
def test_is_default_id_answers_as_parsing_would(position, form, shift):
    """The commit path asks ``is_default_id(id, position)`` (an id built) where it asked
    ``default_position(id) == position`` (an id parsed): the same answer for every id and position."""
    from simkit.model import default_position, is_default_id
    event_id = form.format(position + shift)
    assert is_default_id(event_id, position) == (default_position(event_id) == position)



def _ground(world):
    """What a run leaves but its trace."""
    return (list(world.store.receipt_log), list(world.store.writes), list(world.sink.effects),
            dict(world.sink.effect_count.items()), world.store.checkpoint, dict(world.store.receipts.items()),
            list(world.store.operations.history), world.halts, world.crashes)


@pytest.mark.parametrize("name", bundled())
def test_a_world_that_keeps_no_trace_leaves_the_same_ground_truth_and_verdict(name):
    """``keep_trace=False`` (an explored schedule's world): no trace, and every other log, the settlement
    history (whose rows the trace annotates) and the verdict as a traced run leaves them, the journal's path
    too."""
    from simkit.judge.checker import check
    scenario = load(name)
    for strategy in ("safe", "no_version_check"):
        traced = World(scenario, STRATEGIES[strategy], 0).run()
        untraced = World(scenario, STRATEGIES[strategy], 0, keep_trace=False).run()
        assert untraced.trace is None and len(traced.trace)
        assert _ground(untraced) == _ground(traced), (name, strategy)
        assert check(untraced).as_dict() == check(traced).as_dict(), (name, strategy)
