"""The durable store port on both stores (``memory`` and ``sqlite``), and the simulation on SQLite.

The port's contract (seed 000 steps 1, 4 and 5, invariants 2-4) is checked against both stores with one
parametrized fixture; the SQLite store must in addition keep its ground truth in the database (it survives a
reopen) and run in WAL mode with ``synchronous = FULL``. Every bundled scenario gives the same verdict and the
same trace on both stores.
"""
import dataclasses
import json
import sqlite3
import subprocess
import sys

import pytest

import simkit
from simkit.model import Checkpoint, Event
from simkit.store import sql
from simkit.store.settlement import COMMITTED, TIMEOUT, Reply
from simkit.store.sqlite import SQLiteStore, make_store

START = Checkpoint("C7", 105, 1)
INITIAL = {"e104": ("applied", 104), "e105": ("applied", 105)}


@pytest.fixture(params=["memory", "sqlite"])
def store(request):
    return make_store(request.param, START, dict(INITIAL))


def unseq(log):
    """A log without its sequence numbers (a rejected barrier spends one on SQLite only: see SQLiteStore)."""
    return [entry[1:] for entry in log]


def test_load_returns_the_checkpoint_and_logs_the_read(store):
    assert store.load(1) == START
    assert unseq(store.reads) == [(0.0, 1, START)]


def test_initial_receipts_are_in_the_ledger_at_time_0(store):
    assert store.receipts == INITIAL
    assert store.receipt_log == [(0, 0.0, 0, "e104", "applied"), (0, 0.0, 0, "e105", "applied")]
    assert store.writes == []


def test_every_log_row_is_read_by_name(store):
    """Issue 27: the rows of either store are named tuples
    (``receipt_log[k].event_id``), as the judge reads them."""
    store.load(1)
    store.commit_event(1, "e106", 106, "applied", 106)
    assert store.receipt_log[-1].event_id == "e106" and store.receipt_log[0].outcome == "applied"
    assert store.reads[0].checkpoint == START and store.writes[0].after == Checkpoint("C7", 106, 1)
    assert store.writes[0].kind == "commit" and store.reads[0].worker == 1


def test_commit_writes_receipt_and_applied_position_together(store):
    assert store.commit_event(1, "e106", 106, "applied", 106) is True
    assert store.receipts["e106"] == ("applied", 106)
    assert store.checkpoint == Checkpoint("C7", 106, 1)
    (seq, _t, worker, kind, before, after), = store.writes
    assert (worker, kind, before, after) == (1, "commit", START, Checkpoint("C7", 106, 1))
    assert store.receipt_log[-1][0] == seq                  # one transaction, one moment


def test_second_terminal_receipt_is_refused_without_running_the_effect(store):
    ran = []
    assert store.commit_event(1, "e106", 106, "applied", 106, effect=lambda: ran.append(1)) is True
    assert store.commit_event(2, "e106", 106, "applied", 106, effect=lambda: ran.append(2)) is False
    assert ran == [1]
    assert [e for e in store.receipt_log if e[3] == "e106"] == [store.receipt_log[-1]]


def test_applied_position_never_moves_backwards(store):
    store.commit_event(1, "e110", 110, "applied", 110)
    store.commit_event(1, "e106", 106, "applied", 106)
    assert store.checkpoint.applied_position == 110
    assert [w[3] for w in store.writes] == ["commit"]


def test_a_failing_effect_commits_nothing(store):
    def boom():
        raise RuntimeError("sink down")
    with pytest.raises(RuntimeError):
        store.commit_event(1, "e106", 106, "applied", 106, effect=boom)
    assert "e106" not in store.receipts and store.checkpoint == START and store.writes == []


def test_lookup_by_id_and_terminal_receipt_by_position(store):
    store.commit_event(1, "e107", 107, "quarantined", 107)
    store.commit_event(1, "e108", 108, "retry_later", 107)
    events = tuple(Event(f"e{p}", p) for p in (104, 106, 107, 108))
    by_id, by_position = store.lookup(events)
    assert by_id == {"e104": "applied", "e107": "quarantined", "e108": "retry_later"}
    assert by_position == {104: "e104", 107: "e107"}


def test_a_non_terminal_receipt_is_replaced_by_a_terminal_one(store):
    store.commit_event(1, "e106", 106, "retry_later", 105)
    assert store.commit_event(1, "e106", 106, "applied", 106) is True
    assert store.receipts["e106"] == ("applied", 106)
    assert [e[4] for e in store.receipt_log if e[3] == "e106"] == ["retry_later", "applied"]


@pytest.mark.parametrize("cursor, version", [("C6", 1), ("C7", 0), ("C7", 2)])
def test_barrier_rejected_unless_cursor_and_version_match(store, cursor, version):
    assert store.compare_and_swap(1, cursor, version, "C8", version + 1, 107) is False
    assert store.checkpoint == START and store.writes == []


def test_barrier_swaps_cursor_and_version_and_keeps_the_greater_prefix(store):
    store.commit_event(1, "e107", 107, "applied", 107)
    assert store.compare_and_swap(2, "C7", 1, "C8", 2, 106) is True
    assert store.checkpoint == Checkpoint("C8", 107, 2)
    assert unseq(store.writes)[-1][1:] == (2, "barrier", Checkpoint("C7", 107, 1), Checkpoint("C8", 107, 2))
    assert store.compare_and_swap(1, "C7", 1, "C9", 2, 107) is False        # the stale retry loses


def test_overwrite_writes_without_comparing(store):
    store.compare_and_swap(1, "C7", 1, "C8", 2, 105)
    assert store.overwrite(2, "C8-stale", 2, 105) is True
    assert store.checkpoint == Checkpoint("C8-stale", 105, 2)
    assert [w[3] for w in store.writes] == ["barrier", "overwrite"]


def test_sequence_numbers_grow_across_every_log(store):
    store.load(1)
    store.commit_event(1, "e106", 106, "applied", 106)
    store.compare_and_swap(1, "C0", 0, "C8", 1, 106)
    store.compare_and_swap(1, "C7", 1, "C8", 2, 106)
    seqs = [store.reads[0][0], store.receipt_log[-1][0], store.writes[-1][0]]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3


def test_operation_records_reserve_reuse_and_settle(store):
    ledger = store.operations
    first = ledger.reserve(1, "e106", "f" * 64, "P1")
    assert ledger.reserve(1, "e106", "f" * 64, "P1") == first         # a retry reuses the tuple
    assert ledger.settle("fenced", 1, first.reservation, TIMEOUT) == "provisional"
    assert ledger.settle("fenced", 1, first.reservation, Reply(first.reservation, 7)) == COMMITTED
    assert ledger.settle("last_write_wins", 1, first.reservation, TIMEOUT) == "provisional"
    renewed = ledger.reserve(1, "e107", "g" * 64, "P2")
    assert renewed.reservation.generation == first.reservation.generation + 1
    assert [(t.action, t.before, t.after) for t in ledger.history] == [
        ("reserve", None, "pending"), ("settle", "pending", "provisional"),
        ("settle", "provisional", "committed"),
        ("settle", "committed", "provisional"), ("reserve", None, "pending")]
    assert ledger.records["e106"].result == Reply(first.reservation, 7)


# -- SQLite only --------------------------------------------------------------------------------------------
def test_ground_truth_survives_a_reopen(tmp_path):
    a = SQLiteStore(START, dict(INITIAL), path=tmp_path / "store.db")
    a.load(1)
    a.commit_event(1, "e106", 106, "applied", 106)
    a.compare_and_swap(1, "C7", 1, "C8", 2, 106)
    op = a.operations.reserve(1, "e107", "f" * 64, "P1")
    b = SQLiteStore.open(tmp_path / "store.db")
    for name in ("checkpoint", "receipts", "writes", "receipt_log", "reads"):
        assert getattr(b, name) == getattr(a, name), name
    assert list(b.operations.history) == list(a.operations.history)
    assert b.operations.records["e107"] == op
    assert b.operations.reserve(2, "e108", "g" * 64, "P1").reservation.generation == 2   # the counter too


def test_named_file_is_wal_with_synchronous_full(tmp_path):
    s = SQLiteStore(START, path=tmp_path / "store.db")
    assert s._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert s._db.execute("PRAGMA synchronous").fetchone()[0] == 2          # FULL
    assert s.integrity() == "ok"


def test_the_database_itself_refuses_a_second_terminal_receipt(tmp_path):
    SQLiteStore(START, dict(INITIAL), path=tmp_path / "store.db").close()
    db = sqlite3.connect(tmp_path / "store.db")
    params = {"event_id": "e104", "position": 104, "outcome": "applied", "seq": 9, "time": 1.0, "worker": 1}
    assert db.execute(sql.WRITE_RECEIPT, params).rowcount == 0
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO receipts (event_id, position, outcome, seq, time, worker) "
                   "VALUES ('e104', 104, 'applied', 9, 1.0, 1)")


def test_history_is_written_by_the_database(tmp_path):
    """The trigger, not the Python code, records a checkpoint change: even a hand-written UPDATE is logged."""
    SQLiteStore(START, path=tmp_path / "store.db").close()
    db = sqlite3.connect(tmp_path / "store.db")
    db.execute("UPDATE checkpoint SET resume_cursor = 'C9', kind = 'by hand'")
    db.commit()
    (*_, kind, before, after), = SQLiteStore.open(tmp_path / "store.db").writes
    assert (kind, before, after) == ("by hand", START, Checkpoint("C9", 105, 1))


# -- the simulation on both stores ------------------------------------------------------------------------
GENERATED = {name for name in simkit.bundled() if simkit.load(name).generate is not None}
SUBSET = ("safe", "persist_token_on_fetch", "no_version_check", "success_before_effect")


def on(name, store):
    return dataclasses.replace(simkit.load(name), store=store)


@pytest.mark.parametrize("name", simkit.bundled())
def test_same_verdicts_and_traces_on_both_stores(name):
    strategies = SUBSET if name in GENERATED else tuple(simkit.STRATEGIES)
    for strategy in strategies:
        mem = simkit.simulate(on(name, "memory"), simkit.resolve(strategy))
        lite = simkit.simulate(on(name, "sqlite"), simkit.resolve(strategy))
        assert lite.world.store.__class__ is SQLiteStore
        assert lite.as_dict() == mem.as_dict(), (name, strategy)
        assert lite.trace.digest() == mem.trace.digest(), (name, strategy)


def test_same_ground_truth_on_both_stores():
    mem, lite = (simkit.simulate(on("gauntlet", s), simkit.resolve("no_version_check")).world.store
                 for s in ("memory", "sqlite"))
    for name in ("writes", "reads", "receipt_log"):
        assert unseq(getattr(lite, name)) == unseq(getattr(mem, name)), name
    assert lite.receipts == mem.receipts
    assert [dataclasses.replace(t, seq=0) for t in lite.operations.history] == \
           [dataclasses.replace(t, seq=0) for t in mem.operations.history]


def cli(*args):
    return subprocess.run([sys.executable, "-m", "simkit", *args], capture_output=True, text=True)


def test_store_option_on_run_and_compare():
    mem, lite = (json.loads(cli("run", "retry_walkthrough", "--store", s, "--json").stdout)
                 for s in ("memory", "sqlite"))
    assert mem == lite and lite["ok"]
    out = cli("compare", "shortcut_persist_token_on_fetch", "--store", "sqlite", "--json")
    assert out.returncode == 0 and len(json.loads(out.stdout)["results"]) == len(simkit.STRATEGIES)
    bad = cli("run", "retry_walkthrough", "--store", "postgres")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--store" in bad.stderr
