"""``simkit live``: the same consumer classes in real processes on SQLite files, killed with SIGKILL.

About 30 kills at seeded random real instants: ``safe`` with a transactional and with an idempotent sink loses
and duplicates nothing and leaves the databases intact; ``persist_token_on_fetch`` and ``success_before_effect``
lose events under the same schedule. Kills at named crash points (the worker reports reaching one and is killed
there) hit the shortcuts' windows every time. No test asserts a duration.
"""
import json
import subprocess
import sys

import pytest

import simkit
from simkit.durable import DurableDict, DurableList, DurableSet, transaction
from simkit.live import live
from simkit.sqlite_store import connect

KILLS, SEED = 30, 5


def stream(sink: str, events: int = 300, **extra) -> simkit.Scenario:
    """A generated stream long enough that the kills land while there is work left."""
    return simkit.parse({"name": f"stream_{sink}", "sink": sink, "generate": {"events": events, "page_size": 5},
                         **extra})


@pytest.fixture(scope="module")
def random_kills():
    """The same schedule (seed and count; the window follows the pace of work) for every strategy and sink."""
    return {(strategy, sink): live(stream(sink), simkit.resolve(strategy), KILLS, SEED)
            for strategy, sink in [("safe", "transactional"), ("safe", "idempotent"),
                                   ("persist_token_on_fetch", "transactional"),
                                   ("success_before_effect", "idempotent")]}


@pytest.mark.parametrize("sink", ["transactional", "idempotent"])
def test_safe_survives_random_kills(random_kills, sink):
    r = random_kills["safe", sink]
    assert r.kills >= 20
    assert r.verdict.lost == [] and r.verdict.duplicated == [] and r.verdict.pending == []
    assert r.verdict.ok, r.verdict.as_dict()
    assert r.integrity == "ok"
    assert r.world.store.checkpoint.applied_position == max(e.position for e in r.world.provider.events.values())


@pytest.mark.parametrize("strategy, sink", [("persist_token_on_fetch", "transactional"),
                                            ("success_before_effect", "idempotent")])
def test_shortcuts_lose_events_under_the_same_kills(random_kills, strategy, sink):
    r = random_kills[strategy, sink]
    assert r.kills >= 20 and r.integrity == "ok"
    assert r.verdict.lost, f"{strategy} lost nothing in {r.kills} kills"
    assert r.verdict.completed and not r.verdict.ok


POINTS = ("after_event_commit", "after_page_barrier")


@pytest.mark.parametrize("strategy, sink, loses", [("safe", "idempotent", False),
                                                   ("persist_token_on_fetch", "transactional", True),
                                                   ("success_before_effect", "idempotent", True)])
def test_kills_at_named_crash_points(strategy, sink, loses):
    r = live(stream(sink, events=100), simkit.resolve(strategy), 6, SEED, at=POINTS)
    assert r.kills >= 3 and r.mode == "points" and r.integrity == "ok"     # a shortcut may skip the stream's end
    assert bool(r.verdict.lost) is loses
    assert r.verdict.duplicated == [] and r.verdict.completed


def test_two_workers_share_one_checkpoint():
    r = live(simkit.load("late_retry"), simkit.resolve("safe"), 4, 0, max_delay=0.01)
    assert r.verdict.ok and r.integrity == "ok"
    assert {w for _s, _t, w, _cp in r.world.store.reads} == {1, 2}


def test_unsafe_sink_duplicates_honestly_when_killed_between_effect_and_receipt():
    """Seed 000 "Limits": no idempotency and no transaction, so even safe can run an effect twice."""
    r = live(stream("unsafe", events=40), simkit.resolve("safe"), 3, SEED, at=("after_effect",))
    assert r.verdict.duplicated and r.verdict.lost == [] and r.integrity == "ok"


def test_json_output_has_the_contract_fields_and_kills(tmp_path):
    out = subprocess.run([sys.executable, "-m", "simkit", "live", "retry_walkthrough", "--kills", "2",
                          "--dir", str(tmp_path / "run"), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    for key in ("scenario", "strategy", "seed", "ok", "lost", "duplicated", "regressions", "invariant_violations",
                "halted", "pending", "completed", "final_checkpoint", "crashes", "fetches", "effects", "kills",
                "integrity"):
        assert key in d, key
    assert d["ok"] and d["integrity"] == "ok" and d["crashes"] == d["kills"]
    assert sorted(p.name for p in (tmp_path / "run").glob("*.db")) == ["provider.db", "sink.db", "store.db"]


@pytest.mark.parametrize("args, message", [
    (["--kills", "-1"], "--kills -1: must be at least 0"),
    (["--kills", "1", "--store", "memory"], "--store memory: live mode needs a store"),
    (["--kills", "1", "--at", "lunch"], "invalid choice: 'lunch'"),
    (["--kills", "1", "--events", "9"], "--events 9: needs a [generate] scenario"),
    (["--kills", "1", "--max-delay", "0"], "--max-delay 0.0: must be positive"),
    (["--kills", "1", "--max-delay", "nan"], "--max-delay nan: must be a finite number"),
    (["--kills", "1", "--max-delay", "inf"], "--max-delay inf: must be a finite number"),
    ([], "the following arguments are required: --kills"),
])
def test_bad_input_one_line_exit_2(args, message):
    out = subprocess.run([sys.executable, "-m", "simkit", "live", "retry_walkthrough", *args],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.stderr


def test_a_folder_live_cannot_create_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(simkit.SimkitError, match=r"^--dir .*/file/run: cannot create it: Not a directory$"):
        live(simkit.load("retry_walkthrough"), simkit.resolve("safe"), 1, folder=tmp_path / "file" / "run")


def test_durable_containers_behave_like_plain_ones(tmp_path):
    db = connect(tmp_path / "x.db")
    log, counts, seen = DurableList(db, "log", ("a", "b")), DurableDict(db, "counts"), DurableSet(db, "seen")
    with transaction(db):
        log.append((1, "x"))
        log.append((2, "y"))
        counts["e1"] = counts.get("e1", 0) + 1
        seen.add(("r", 1))
    with pytest.raises(RuntimeError), transaction(db):
        counts["e1"] = 99
        raise RuntimeError("killed")
    assert list(log) == [(1, "x"), (2, "y")] and log[-1] == (2, "y") and len(log) == 2
    assert counts["e1"] == 1 and "e2" not in counts and counts.setdefault("e2", 5) == 5
    assert ("r", 1) in seen and ("r", 2) not in seen
