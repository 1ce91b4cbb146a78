"""``simkit live``: the same consumer classes in real processes on SQLite files, killed with SIGKILL.

About 30 kills at seeded random real instants: ``safe`` with a transactional and with an idempotent sink loses
and duplicates nothing and leaves the databases intact; ``persist_token_on_fetch`` and
``success_before_effect`` lose events under the same schedule. Kills at named crash points (the worker reports
reaching one and is killed there) hit the shortcuts' windows every time. No test asserts a duration.
"""
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import simkit
from simkit.live.run import live
from simkit.store.durable import DurableDict, DurableList, DurableSet, transaction
from simkit.store.sqlite import connect

KILLS, SEED = 30, 5


def stream(sink: str, events: int = 300, **extra) -> simkit.Scenario:
    """A generated stream long enough that the kills land while there is work left."""
    return simkit.parse({"name": f"stream_{sink}", "sink": sink,
                         "generate": {"events": events, "page_size": 5}, **extra})


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
    assert r.world.store.checkpoint.applied_position == max(e.position
                                                            for e in r.world.provider.events.values())


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
    assert r.kills >= 3 and r.mode == "points" and r.integrity == "ok"  # a shortcut may skip the stream's end
    assert bool(r.verdict.lost) is loses
    assert r.verdict.duplicated == [] and r.verdict.completed


def test_kills_the_workers_outran_are_reported_as_not_delivered():
    """retry_walkthrough fetches twice: the third start, told the third pass of after_fetch, fetches once (the
    second died after fetching C8) and is never killed; the summary says how many of those asked were
    delivered instead of a bare count."""
    from simkit.live.run import live_details
    r = live(simkit.load("retry_walkthrough"), simkit.resolve("safe"), 3, 0, at=("after_fetch",))
    assert (r.kills, r.asked) == (2, 3) and r.verdict.ok
    assert "live: 2 SIGKILLs of 3 asked (the workers caught up first: the pass named was never reached)" in \
        live_details(r)
    assert " of " not in live_details(dataclasses.replace(r, kills=3))     # every kill asked delivered


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
    for key in ("scenario", "strategy", "seed", "ok", "lost", "duplicated", "regressions",
                "invariant_violations",
                "halted", "pending", "completed", "final_checkpoint", "crashes", "fetches", "effects",
                "kills", "integrity"):
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
    # select() and sleep() cannot wait that long: an OverflowError traceback before
    (["--kills", "1", "--max-delay", "1e300"], "--max-delay 1e+300: must be at most 1000000 seconds"),
    (["--kills", "1", "--timeout", "1e308"],
     "--timeout 1e+308: must be positive and at most 1000000 seconds"),
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
    with pytest.raises(simkit.SimkitError, match=r"^folder .*/file/run: cannot create it: Not a directory$"):
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


# -- deaths nobody planned, and signals to the supervisor (issue 20) -----------------------------------------
# 30 ms a page
SLOW = 'name = "slow"\n[generate]\nevents = 300\npage_size = 5\n[timing]\nfetch_latency = 30.0\n'


def _default_sigint() -> None:
    """In the child, before exec: SIGINT back to its default. A suite started in the background (``pytest &``)
    runs with SIGINT ignored, the child would inherit that, and Python keeps an ignored SIGINT ignored: the
    SIGINT variant below would then wait for an exit that never comes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_live(tmp_path, *args):
    """``simkit live`` on a stream of about 2 s in a subprocess (temporary folders under ``tmp_path``), and
    the pid of its first worker once it is up."""
    path = tmp_path / "slow.toml"
    path.write_text(SLOW)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "simkit", "live", str(path), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    deadline, seen = time.monotonic() + 30, set()
    while time.monotonic() < deadline:
        children = [proc.pid]
        for _ in range(3):                  # simkit, its reaper, the run's process: the workers below
            children = [int(x) for pid in children for p in Path(f"/proc/{pid}/task").glob("*/children")
                        for x in p.read_text().split()]
        # a worker lives on; the process that first imports the consumer (as run's) is gone in milliseconds
        if lasting := [c for c in children if c in seen]:
            time.sleep(0.3)                 # into its work
            return proc, lasting[0]
        seen = set(children)
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("no live worker started")


def test_a_worker_killed_from_outside_is_a_crash_like_any_other(tmp_path):
    """The OOM killer or an operator: the supervisor ended with RuntimeError ... exited with status -9."""
    proc, worker = _start_live(tmp_path, "--kills", "0", "--json")
    os.kill(worker, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    d = json.loads(out)
    assert d["unplanned_deaths"] == 1 and d["kills"] == 0 and d["crashes"] == 1 and d["starts"] == 2
    assert d["ok"] and d["completed"] and d["integrity"] == "ok"


@pytest.mark.parametrize("signame, status, message", [("SIGTERM", 143, "simkit: terminated by SIGTERM\n"),
                                                      ("SIGHUP", 129, "simkit: terminated by SIGHUP\n"),
                                                      ("SIGINT", 130, "simkit: interrupted\n")])
def test_sigterm_and_sighup_clean_up_like_ctrl_c(tmp_path, signame, status, message):
    """SIGTERM printed nothing and left the temporary databases (17 MB) and the workers behind."""
    proc, worker = _start_live(tmp_path, "--kills", "3")
    assert list(tmp_path.glob("simkit-live-*"))
    os.kill(proc.pid, getattr(signal, signame))
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (status, "", message)
    assert not list(tmp_path.glob("simkit-live-*"))
    for _ in range(100):                    # the worker is gone (killed and reaped by the supervisor)
        if not Path(f"/proc/{worker}").exists():
            break
        time.sleep(0.05)
    assert not Path(f"/proc/{worker}").exists()


def test_a_consumer_that_raises_in_a_worker_is_one_line(tmp_path):
    (tmp_path / "mine.py").write_text("from simkit import Consumer\n\nclass Boom(Consumer):\n"
                                      "    def is_replay(self, event, receipts, applied_position):\n"
                                      "        raise ValueError('boom')\n")
    out = subprocess.run([sys.executable, "-m", "simkit", "live", "retry_walkthrough", "--kills", "1",
                          "--strategy", "mine.py:Boom"], capture_output=True, text=True, cwd=tmp_path,
                         timeout=120)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == ("simkit: live worker 1: strategy mine.py:Boom raised ValueError: boom in is_replay "
                          "(mine.py:5)\n")


def test_the_worker_binds_the_simulation_objects_through_their_public_methods():
    """docs/architecture.md, "No reach-ins": the harness keeps the sink's
    handler memory and the service's memory of what it ran in durable containers
    by asking them (``keep_handler_state``, ``keep_ran``), never by name."""
    import ast

    import simkit.live.worker as worker
    tree = ast.parse(Path(worker.__file__).read_text(encoding="utf-8"))
    private = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)
               and n.attr.startswith("_")
               and not n.attr.startswith("__")
               and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "os"))]
    names = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and n.value.startswith("_") and n.value.isidentifier()]
    assert (private, names) == ([], [])
