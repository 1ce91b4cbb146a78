"""``--strategy exec:COMMAND`` (docs/protocol.md): consumers
in any language, one real process per worker life.

The reference consumers of examples/consumers/ pass the gauntlet and their buggy twins fail where the shortcut
they take fails; a bad line or a silent consumer ends the run with one line; a crash kills the process for
real, so memory kept "across lives" is gone, as seed 000 says. Kept small: one gauntlet run per language, the
rest on scenarios of a page or two.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import simkit
from simkit.errors import ConsumerError
from simkit.procedure import external
from simkit.procedure.strategies import resolve
from simkit.tools.audit import audit
from simkit.tools.explore import explore

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent / "consumers"
LANGUAGES = [p.name for p in sorted((ROOT / "examples/consumers").iterdir()) if (p / "run").is_file()]
TOOLS = {"python": "python3", "javascript": "node", "rust": "rustc"}


def available(language: str):
    return pytest.param(language, marks=pytest.mark.skipif(shutil.which(TOOLS.get(language, "sh")) is None,
                                                           reason=f"{TOOLS.get(language)} is not installed"))


ALL = [available(lang) for lang in LANGUAGES]


def ref(language: str, run: str = "run") -> str:
    return f"exec:{ROOT / 'examples/consumers' / language / run}"


def python(script: str, *args: str) -> str:
    return f"exec:{sys.executable} {HERE / script} {' '.join(args)}".rstrip()


def simkit_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simkit", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=300)


@pytest.fixture(scope="module", autouse=True)
def built():
    """A compiled consumer's ``run`` builds it on first use; here once, before any run's silence limit starts.
    With stdin closed the consumer exits at once."""
    for lang in LANGUAGES:
        if lang == "rust" and shutil.which("rustc"):
            subprocess.run([ROOT / "examples/consumers" / lang / "run"], stdin=subprocess.DEVNULL, check=True,
                           timeout=600)


def test_every_language_has_a_consumer_and_a_buggy_twin():
    assert {"python", "javascript", "rust"} <= set(LANGUAGES)
    for lang in LANGUAGES:
        for run in ("run", "run-buggy"):
            assert os.access(ROOT / "examples/consumers" / lang / run, os.X_OK), (lang, run)


@pytest.mark.parametrize("language", ALL)
def test_the_gauntlet_is_ok_and_the_trace_is_safe_s(language):
    """``simkit run gauntlet --strategy exec:examples/consumers/LANG/run`` from the repository's root: ok, and
    the very verdict of in-process ``safe`` (a deterministic consumer: the same lines for the same lines)."""
    r = simkit_cli("run", "gauntlet", "--strategy", f"exec:examples/consumers/{language}/run", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["ok"] and got["crashes"] > 0, got
    safe = simkit.simulate(simkit.load("gauntlet"), resolve("safe")).as_dict()
    assert {**got, "strategy": "safe"} == safe


@pytest.mark.parametrize("language", ALL)
def test_the_buggy_twin_fails_as_the_shortcut_does(language):
    """``run-buggy`` publishes the token on fetch: on that shortcut's scenario it loses what the in-process
    shortcut loses, by the same rules (invariant 1), and the audit fails it on its first case."""
    sc = simkit.load("shortcut_persist_token_on_fetch")
    buggy = simkit.simulate(sc, resolve(ref(language, "run-buggy"))).verdict
    shortcut = simkit.simulate(sc, resolve("persist_token_on_fetch")).verdict
    assert not buggy.ok and buggy.lost == shortcut.lost == ["e107"]
    assert {v["invariant"] for v in buggy.as_dict()["invariant_violations"]} == \
        {v["invariant"] for v in shortcut.as_dict()["invariant_violations"]} >= {1}
    assert simkit.simulate(sc, resolve(ref(language))).verdict.ok
    result = audit(ref(language, "run-buggy"), first_only=True, shrink_first=False)
    assert not result.ok and "invariants 1" in result.failures[0].kind


@pytest.mark.parametrize("which, problem", [
    ("json", "wrote 'not json at all': not JSON"),
    ("field", """wrote '{"op": "fetch", "cursor": 7}': Fetch.cursor is integer 7, not string"""),
    ("op", """wrote '{"op": "jump"}': 'op' is "jump", not one of load"""),
])
def test_a_bad_line_ends_the_run_with_one_line(which, problem):
    r = simkit_cli("run", "retry_walkthrough", "--strategy", python("bad_line.py", which))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "worker 1 " in r.stderr and problem in r.stderr, r.stderr


def test_a_silent_consumer_is_killed_and_its_stderr_passed_through():
    r = simkit_cli("run", "retry_walkthrough", "--strategy", python("silent.py"),
                   env={external.LIMIT_ENV: "1"})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [
        "[worker 1] thinking...",
        f"simkit: strategy {python('silent.py')}: worker 1 wrote nothing for 1 s (wall clock; "
        f"{external.LIMIT_ENV} sets it): killed; a consumer flushes its output after each request line"]


def test_a_consumer_that_will_not_start_is_one_line():
    with pytest.raises(ConsumerError, match="worker 1: cannot start 'no-such-consumer': No such file"):
        simkit.simulate(simkit.load("retry_walkthrough"), resolve("exec:no-such-consumer"))


def test_a_crash_kills_the_process_and_a_new_one_starts(tmp_path, monkeypatch):
    """retry_walkthrough crashes once: two lives, two processes; the first was dead and reaped before the
    second started (``os.kill(pid, 0)`` finds a zombie too), and none is left after the run."""
    pids = tmp_path / "pids"
    monkeypatch.setenv("PIDS", str(pids))
    run = simkit.simulate(simkit.load("retry_walkthrough"), resolve(python("pids.py")))
    assert run.verdict.ok and run.as_dict()["crashes"] == 1
    lives = [line.split() for line in pids.read_text().splitlines()]
    assert len(lives) == 2 and [alive for _pid, alive in lives] == ["0", "0"]
    assert external.live_processes() == []
    for pid, _alive in lives:
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)


def test_memory_across_lives_is_gone_as_the_seed_predicts():
    """A consumer that dedups by a module global ``DONE`` set instead of receipts. A crash right after the
    first event's receipt is durable ends the process and the set with it (seed 000: "everything in memory is
    gone"), so the next life runs that event's effect again: duplicated on a sink without idempotency,
    invariant 4. Without the crash it is ok: the bug is only seen because the crash is real."""
    sc = simkit.parse({"name": "memory_across_lives", "sink": "unsafe",
                       "pages": [{"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
                                 {"cursor": "C2", "positions": [], "next_cursor": "C2"}]})
    crash = simkit.Fault("crash", "after_event_commit", position=1)
    remembers = resolve(python("memory.py"))
    caught = simkit.simulate(sc, remembers, faults=(crash,)).verdict
    assert caught.duplicated == ["e1"] and not caught.lost
    assert {v["invariant"] for v in caught.as_dict()["invariant_violations"]} == {4}
    assert simkit.simulate(sc, remembers).verdict.ok
    assert simkit.simulate(sc, resolve(ref("python")), faults=(crash,)).verdict.ok


def test_exploration_forks_and_replays_a_life_to_its_own_process():
    """The forked explorer copies simkit mid-life (a lost reply goes on with
    the same life); each copy replays the life to a process of its own. The
    exploration is the one from scratch, and the one of in-process ``safe``."""
    sc = simkit.load("retry_walkthrough")

    def explored(strategy, share):
        d = explore(sc, strategy, max_crashes=0, lost_responses=1, share_prefixes=share).as_dict()
        return {k: v for k, v in d.items() if k != "strategy"}

    forked = explored(ref("python"), True)
    assert forked == explored(ref("python"), False) == explored("safe", False)
    assert forked["schedules"] == 6 and external.live_processes() == []


def test_a_nondeterministic_consumer_is_named(tmp_path, monkeypatch):
    """flaky.py takes the shortcut in some processes only: a forked replay finds other requests than the life
    it replays, and the audit's replay of its first failure does not fail the same way."""
    monkeypatch.setenv("ONCE", str(tmp_path / "once"))
    with pytest.raises(ConsumerError, match="the consumer is not deterministic"):
        explore(simkit.load("retry_walkthrough"), python("flaky.py", "odd"), max_crashes=0,
                lost_responses=1, share_prefixes=True)
    (tmp_path / "once").unlink()
    result = audit(python("flaky.py", "first"), first_only=True)
    assert not result.ok and result.shrunk is None
    assert result.shrink_error.endswith("the consumer is not deterministic")


def test_an_exec_strategy_is_named_by_its_command_and_pickles_as_it():
    """Verdicts, replay lines and worker processes of a pool
    (audit, sweep, explore) name it ``exec:COMMAND``."""
    import pickle

    from simkit.procedure.strategies import strategy_name, strategy_ref
    cls = resolve("exec:examples/consumers/python/run")
    assert resolve("exec:examples/consumers/python/run") is cls
    assert strategy_name(cls) == strategy_ref(cls) == "exec:examples/consumers/python/run"
    assert pickle.loads(pickle.dumps(cls)) is cls
    with pytest.raises(simkit.StrategyError, match="^strategy exec:'unclosed: No closing quotation$"):
        resolve("exec:'unclosed")
    with pytest.raises(simkit.StrategyError, match="^strategy exec: : no command$"):
        resolve("exec: ")
