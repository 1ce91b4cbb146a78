"""Hostile input on the command line and in scenario files (issue 20): every case answered with one line and
exit status 2, nothing written, or with a verdict, in bounded time and memory. Each case here once spun, grew
without bound, printed a traceback or was accepted and judged wrongly.

The progress guard (:mod:`simkit.world.simulation`) is what bounds a run that simulated time does not: a run
that spins at one instant, or spends its step budget, ends with ``completed: false`` and ``stopped`` saying
why.
"""
from __future__ import annotations

import copy
import inspect
import json
import os
import resource
import time
from pathlib import Path

import pytest
from conftest import TWO_PAGES, scenario_dict

import simkit
from simkit.cli import main
from simkit.ops import Load
from simkit.scenario import read as scenario_read
from simkit.world import simulation as worlds

ZERO = {"fetch_latency": 0.0, "commit_latency": 0.0, "effect_latency": 0.0, "restart_delay": 0.0,
        "timeout": 0.0, "backoff": 0.0}
SPIN = {"pages": [{"cursor": "C5", "positions": [1, 2], "next_cursor": "C5"}]}


def one_line_exit_2(capsys, argv, message: str, out=None) -> str:
    """``simkit ARGV`` answers one line on stderr containing
    ``message``, exit 2, nothing on stdout or at ``out``."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("simkit: "), captured.err
    assert message in captured.err, captured.err
    if out is not None:
        assert not out.exists()
    return captured.err


def bounded(fn, seconds: float = 30.0, megabytes: float = 400.0):
    """``fn()`` within ``seconds`` of this process's CPU time and without its peak resident memory growing by
    ``megabytes``. CPU time, not the clock on the wall: the work is bounded whatever else the machine runs
    (the suite's other worker, other jobs), and ``fn`` runs in this process, so a runaway loop shows here."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.process_time()
    out = fn()
    assert time.process_time() - began < seconds
    assert (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024 < megabytes
    return out


# -- 3. the progress guard -----------------------------------------------------------------------------------
class LoadsForever(simkit.Consumer):
    """Reads its checkpoint again and again: a request that takes no simulated time."""

    def run(self):
        while True:
            yield Load()


def test_a_consumer_spinning_at_one_instant_is_stopped():
    """A worker that makes requests taking no simulated time forever (1.5 GB after 36 s before the guard)."""
    run = bounded(lambda: simkit.simulate(simkit.load("gauntlet"), LoadsForever))
    d = run.as_dict()
    assert d["completed"] is False and d["ok"] is False
    assert d["stopped"] == (f"progress guard: {worlds.STALL_STEPS} steps at t=0 without simulated time "
                            "advancing")


@pytest.mark.parametrize("name", ["gauntlet", "retry_walkthrough"])
def test_a_world_where_waiting_takes_no_time_is_refused(name):
    """``fetch_latency = 0`` with ``backoff = 0``: a worker that waits (a review, a hold, a transient event,
    another worker's pause) retries at one instant until the guard ends the run, so ``safe`` was NOT ok on a
    file no consumer could finish (round 37). The file is refused instead, naming the key."""
    data = scenario_dict(name)
    data["timing"] = dict(ZERO)
    with pytest.raises(simkit.ScenarioError, match=r"key 'timing.backoff': must be positive when "
                                                     r"fetch_latency is 0"):
        simkit.parse(data)
    data["timing"]["backoff"] = 1.0
    assert simkit.simulate(simkit.parse(data)).verdict.completed


@pytest.mark.parametrize("timing", [{"time_limit": 1e15},
                                    {"fetch_latency": 1e-300, "commit_latency": 1e-300,
                                     "effect_latency": 1e-300,
                                     "backoff": 1e-300, "time_limit": 1.0}],
                         ids=["huge time limit", "1e-300"])
def test_a_self_loop_that_time_does_not_end_spends_its_step_budget(timing):
    """A page that answers its own token with events is never the end; a time limit of 1e15, or latencies of
    1e-300, leave simulated time no guard. The step budget ends the run (about 5 s, 150 MB)."""
    run = bounded(lambda: simkit.simulate(simkit.parse({**SPIN, "timing": timing})), seconds=60)
    budget = worlds.STEP_BASE + worlds.STEPS_PER_ITEM * (2 + 1)        # two events, one page, one worker
    assert run.world.guard.budget == budget
    assert run.as_dict()["stopped"].startswith(f"progress guard: the step budget of {budget} steps spent at "
                                               f"t=")
    assert not run.verdict.completed and not run.verdict.ok


def test_the_guard_is_in_the_text_summary_and_json(tmp_path, capsys):
    """A consumer spinning on a request that takes no time: the guard's reason is said in both outputs."""
    plugin = tmp_path / "loads_forever.py"
    plugin.write_text("import simkit\nfrom simkit.ops import Load\n\n\n" + inspect.getsource(LoadsForever))
    strategy = f"{plugin}:LoadsForever"
    assert main(["run", "gauntlet", "--strategy", strategy]) == 0
    text = capsys.readouterr().out
    assert "completed: no" in text and "\n  stopped: progress guard: 100000 steps at t=" in text
    assert main(["run", "gauntlet", "--strategy", strategy, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stopped"].startswith("progress guard: ") and d["completed"] is False


def test_no_bundled_run_comes_near_the_guard():
    """The budgets are generous: every bundled scenario x strategy takes under 1,500 steps (the guard counts
    in chunks of GUARD_CHUNK, so a run that ends unguarded shows 0 or 1,000 here)."""
    for name in simkit.bundled():
        sc = simkit.load(name)
        for strategy in simkit.STRATEGIES.values():
            run = simkit.simulate(sc, strategy)
            assert run.as_dict()["stopped"] is None
            assert run.world.guard.steps <= 2 * worlds.GUARD_CHUNK < worlds.STALL_STEPS


# -- 4. a consumer whose own code raises ---------------------------------------------------------------------
MINE = '''
import json
from simkit import Consumer


class Boom(Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise ValueError("boom")


class Library(Consumer):
    def is_replay(self, event, receipts, applied_position):
        return json.loads("{")


class NotARequest(Consumer):
    def run(self):
        yield "fetch please"


class Returns(Consumer):
    def run(self):
        return
        yield


from simkit.ops import Commit, Handle


class FloatPosition(Consumer):
    def apply(self, event, applied_position):
        return (yield Commit(event, "applied", applied_position + 0.5, with_effect=True))


class ListCursor(Consumer):
    def barrier_target(self, checkpoint, page):
        return [page.next_cursor]


class NotAnEvent(Consumer):
    def process(self, checkpoint, page, receipts):
        yield Handle(page.events[0].id)
'''


@pytest.fixture
def mine(tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text(MINE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("cls, message", [
    ("Boom", "simkit: strategy mine.py:Boom raised ValueError: boom in is_replay (mine.py:8)\n"),
    ("Library", "simkit: strategy mine.py:Library raised JSONDecodeError: Expecting property name "
                "enclosed in double quotes: line 1 column 2 (char 1) in is_replay (mine.py:13)\n"),
    ("NotARequest", "simkit: strategy mine.py:NotARequest yielded 'fetch please' (str), which is not a "
                    "request of simkit.ops\n"),
    ("FloatPosition", "simkit: strategy mine.py:FloatPosition: yielded a malformed request: "
                      "Commit.applied_position is 106.5 (float), not int\n"),
    ("ListCursor", "simkit: strategy mine.py:ListCursor: yielded a malformed request: Barrier.next_cursor "
                   "is ['C8'] (list), not str\n"),
    ("NotAnEvent", "simkit: strategy mine.py:NotAnEvent: yielded a malformed request: Handle.event is "
                   "'e104' (str), not Event\n"),
])
def test_a_consumer_that_raises_is_one_line_naming_it(mine, capsys, cls, message):
    """41 lines of traceback and exit 1 before; now the strategy, the exception
    and where, exit 2, no figure. A request the world cannot execute names the
    field the consumer got wrong (a traceback from inside the store before)."""
    out = mine / "t.png"
    assert main(["run", "retry_walkthrough", "--strategy", f"mine.py:{cls}", "--timeline", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == message and not out.exists()


def test_simulate_raises_a_simkit_error_carrying_it(mine):
    cls = simkit.resolve("mine.py:Boom")
    with pytest.raises(simkit.ConsumerError,
                       match=r"^strategy mine.py:Boom raised ValueError: boom in is_replay"):
        simkit.simulate(simkit.load("retry_walkthrough"), cls)
    assert issubclass(simkit.ConsumerError, simkit.SimkitError)


@pytest.mark.parametrize("argv", [
    ["explore", "retry_walkthrough", "--strategy", "mine.py:Boom", "--max-crashes", "1", "--jobs", "2"],
    ["sweep", "default", "--strategy", "mine.py:Boom", "--seeds", "2", "--jobs", "2"],
    ["shrink", "retry_walkthrough", "--strategy", "mine.py:Boom"],
    ["audit", "mine.py:Boom", "--seeds", "1", "--sweep-seeds", "0"],
], ids=["explore", "sweep", "shrink", "audit"])
def test_explore_sweep_shrink_and_audit_report_it_the_same_way(mine, capsys, argv):
    one_line_exit_2(capsys, argv, "strategy mine.py:Boom raised ValueError: boom in is_replay (mine.py:8)")
    assert not list(mine.glob("*.toml"))


# -- 4. tracebacks instead of one line -----------------------------------------------------------------------
def test_an_unreadable_scenario_file_is_one_line(tmp_path, capsys, monkeypatch):
    """PermissionError (as root, chmod cannot make a file unreadable: the read itself is made to fail)."""
    path = tmp_path / "locked.toml"
    path.write_text(TWO_PAGES)
    real = scenario_read.read_bytes

    def refuse(where, *args, **kw):       # the file's one read (simkit.scenario.read.read_bytes)
        if Path(where).name == "locked.toml":
            raise PermissionError(13, "Permission denied", str(where))
        return real(where, *args, **kw)

    monkeypatch.setattr(scenario_read, "read_bytes", refuse)
    one_line_exit_2(capsys, ["run", str(path)], f"simkit: {path}: cannot read it: Permission denied\n")


@pytest.mark.parametrize("text", ["a = " + "[" * 3000 + "]" * 3000, "a = " + "{b = " * 3000 + "1"
                                  + "}" * 3000],
                         ids=["arrays", "inline tables"])
def test_deeply_nested_toml_is_one_line(tmp_path, capsys, text):
    """RecursionError, 3,002 lines of traceback."""
    path = tmp_path / "deep.toml"
    path.write_text(text)
    one_line_exit_2(capsys, ["run", str(path)],
                    f"{path}: not valid TOML: arrays or inline tables nested too deeply")


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_checkpoint_version_where_integers_stop_is_refused(tmp_path, capsys, store):
    """OverflowError at the barrier (the trace's 64-bit column), another on SQLite."""
    path = tmp_path / "version.toml"
    path.write_text(f'store = "{store}"\n[initial]\ncheckpoint_version = {2**63 - 1}\n' + TWO_PAGES)
    one_line_exit_2(capsys, ["run", str(path)],
                    f"key 'initial.checkpoint_version': must be at most {2**53}, got {2**63 - 1}")


def test_a_stream_of_2_63_events_is_refused(tmp_path, capsys):
    """MemoryError, after minutes."""
    path = tmp_path / "events.toml"
    path.write_text(f"[generate]\nevents = {2**63 - 1}\n")
    one_line_exit_2(capsys, ["run", str(path)],
                    f"key 'generate.events': must be at most 1000000, got {2**63 - 1}")


def test_a_stream_too_long_to_build_in_bounded_memory_is_refused(tmp_path, capsys):
    """10**7 events was accepted, and killed at 1.4 GB after
    a minute with no output: the stream is built whole."""
    path = tmp_path / "events.toml"
    path.write_text("[generate]\nevents = 10000000\n")
    one_line_exit_2(capsys, ["run", str(path)],
                    "key 'generate.events': must be at most 1000000, got 10000000")


@pytest.mark.parametrize("rate, message", [
    (1.0, "key 'generate.empty_pages': must be below 1: a stream whose every page is empty never reaches its "
          "events"),
    (0.9999999, "key 'generate.empty_pages': 0.9999999 with events = 40 makes about 4e+08 pages; at most "
                "2000000"),
])
def test_a_stream_of_empty_pages_that_never_ends_is_refused(rate, message):
    """Found by the generated scenarios below: ``empty_pages = 1.0`` built pages forever (16 GB in ten
    minutes) before the run even began."""
    with pytest.raises(simkit.ScenarioError) as err:
        bounded(lambda: simkit.parse({"generate": {"empty_pages": rate}}, source="s"), seconds=5)
    assert str(err.value) == f"s: {message}"


@pytest.mark.parametrize("option", ["--timeline", "--swimlane"])
def test_a_300_character_output_name_is_one_line(tmp_path, capsys, option):
    """OSError: File name too long, after the run."""
    out = tmp_path / ("x" * 300 + ".png")
    one_line_exit_2(capsys, ["run", "retry_walkthrough", option, str(out)], "File name too long")


@pytest.mark.parametrize("argv, message", [
    (["sweep", "default", "--seeds", str(10**18)], f"--seeds {10**18}: at most 1000000 per configuration"),
    (["sweep", "default", "--seeds", "2", "--first-seed", str(10**30), "--out", "{tmp}/s.csv"],
     f"--first-seed {10**30}: must be within {2**53} either side of 0"),
    (["run", "retry_walkthrough", "--seed", str(10**30), "--timeline", "{tmp}/t.png"],
     f"--seed {10**30}: must be within {2**53} either side of 0"),
    (["explore", "retry_walkthrough", "--max-crashes", str(10**6), "--out", "{tmp}/x.toml"],
     f"--max-crashes {10**6}: at most 50"),
    (["audit", "safe", "--seeds", str(10**8), "--out", "{tmp}/a.toml"],
     f"--seeds {10**8}: must be at most 1000000"),
    (["live", "default", "--kills", "1", "--events", str(10**8)], f"--events {10**8}: at most 1000000"),
], ids=["sweep --seeds", "--first-seed", "--seed", "explore --max-crashes", "audit --seeds", "live --events"])
def test_numeric_options_have_bounds_too(tmp_path, capsys, argv, message):
    """Found by trying the bounds above as a hostile user: --seeds 10**18
    built its task list forever, a seed past 2**63 stopped a Parquet table
    with an OverflowError, --max-crashes 10**6 ended in a RecursionError."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    bounded(lambda: one_line_exit_2(capsys, argv, message), seconds=20)
    assert not list(tmp_path.iterdir())


# -- 6. --jobs has a bound -----------------------------------------------------------------------------------
class _Pool(Exception):
    """Raised by the spy in place of starting a process pool."""


@pytest.fixture
def pools(monkeypatch):
    """The ``max_workers`` of every process pool asked for; none is started."""
    import concurrent.futures
    asked = []

    def spy(max_workers=None, **kw):
        asked.append(max_workers)
        raise _Pool

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", spy)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    return asked


_CAPPED = r"^jobs {}: using 8 worker processes \(4 per CPU at most\)$"


def test_explore_jobs_are_capped_at_4_per_cpu_and_the_schedules(pools):
    """``explore ... --jobs 1000`` started 1,002 processes
    for 9 schedules; ``--jobs 10**6`` was a fork bomb."""
    from simkit.tools.explore import explore
    sc = simkit.load("retry_walkthrough")
    with pytest.raises(_Pool), pytest.warns(simkit.errors.Note, match=_CAPPED.format(10**6)) as noted:
        explore(sc, "safe", max_crashes=2, jobs=10**6)
    assert pools == [8] and len(noted) == 1 and noted[0].message.param == "jobs"
    with pytest.raises(_Pool):                  # two first faults: two processes, however many were asked for
        explore(sc, "safe", max_crashes=1, jobs=1000, points=("before_event_commit",))
    assert pools == [8, 2]


def test_no_more_processes_than_tasks():
    from simkit.tools.pool import processes
    assert processes(5, 3) == 3 and processes(1, 0) == 1 and processes(2) == 2


def test_sweep_jobs_are_capped(pools):
    from simkit.tools.sweep import sweep
    with pytest.raises(_Pool), pytest.warns(simkit.errors.Note, match=_CAPPED.format(1000)):
        sweep(simkit.load("default"), ("safe",), seeds=100, jobs=1000)
    assert pools == [8]


def test_audit_caps_its_jobs_once(monkeypatch, capsys):
    """A note, not an error: the library warns naming its parameter, the command line prints one line naming
    the flag."""
    import simkit.tools.audit as auditor
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr(auditor, "cases", lambda seeds, sweep_seeds: [])
    with pytest.warns(simkit.errors.Note, match=_CAPPED.format(10**6)) as noted:
        auditor.audit("safe", jobs=10**6)
    assert len(noted) == 1 and capsys.readouterr().err == ""
    assert main(["audit", "safe", "--jobs", str(10**6), "--json"]) == 0
    assert capsys.readouterr().err == "simkit: --jobs 1000000: using 8 worker processes (4 per CPU at most)\n"


# -- 7. accepted but wrong -----------------------------------------------------------------------------------
def pages(*spec) -> list[dict]:
    """``(cursor, positions, next_cursor[, ids])`` per page."""
    return [{"cursor": p[0], "positions": p[1], "next_cursor": p[2], **({"ids": p[3]} if len(p) > 3 else {})}
            for p in spec]


END = ("C9", [], "C9")


@pytest.mark.parametrize("data, message", [
    ({"initial": {"resume_cursor": "C7"}, "pages": pages(("C1", [1], "C9"), END)},
     "key 'initial.resume_cursor': 'C7' names no page (pages: 'C1', 'C9')"),
    ({"pages": pages(("C1", [1], "C2"), END)},
     "key 'pages[0].next_cursor': 'C2' names no page (pages: 'C1', 'C9')"),
    ({"pages": pages(("C1", [1, 2], "C9", ["a", "a"]), END)},
     "key 'pages[0].ids': id 'a' at position 2 here and at position 1 in pages[0]: one id belongs to one "
     "position"),
    ({"pages": pages(("C1", [1], "C2", ["a"]), ("C2", [2], "C9", ["a"]), END)},
     "key 'pages[1].ids': id 'a' at position 2 here and at position 1 in pages[0]: one id belongs to one "
     "position"),
    ({"initial": {"receipts": [5]}, "pages": pages(("C1", [1], "C9", ["e5"]), END)},
     "key 'initial.receipts': position 5 is event e5, which pages[0] carries at position 1: one id "
     "belongs to one position"),
    ({"pages": pages(("C1", [1], "C2"), ("C2", [2], "C1"))},
     "key 'pages[1].next_cursor': cycle 'C1' -> 'C2' -> 'C1': the stream would never end (only its end "
     "page names itself)"),
    ({"pages": pages(("C1", [1], "C9"), END, ("X", [], "Y"), ("Y", [], "X"))},
     "key 'pages[3].next_cursor': cycle 'X' -> 'Y' -> 'X': the stream would never end"),
], ids=["resume_cursor names no page", "next_cursor names no page", "one id twice on a page",
        "one id on two pages", "a receipt's id on a page", "cycle", "cycle off the chain"])
def test_cursors_naming_no_page_one_id_at_two_positions_and_cycles_are_refused(data, message):
    """docs/scenarios.md. A cursor naming no page was refused at run time, and the verdict blamed ``safe`` for
    lost events; one id at two positions was judged ok; a cycle ran to the time limit."""
    with pytest.raises(simkit.ScenarioError) as err:
        simkit.parse(data, source="s")
    assert str(err.value).startswith(f"s: {message}")


@pytest.mark.parametrize("data", [
    {"pages": pages(("C1", [1], "C9"), END), "initial": {"receipts": [7]}},  # a receipt off every page
    {"pages": pages(("C1", [1, 2], "C2"), ("C2", [2, 3], "C9"), END)},  # an overlap: same id, same place
    # two ids at one position
    {"pages": pages(("C1", [2], "C2", ["x2"]), ("C2", [2, 3], "C9", ["y2", "e3"]), END)},
    {"pages": pages(("C1", [1], "C1"))},  # a page answering its own token
    # a page off the chain, its event held by a receipt (without one no run is served e5: lost, round 22)
    {"pages": pages(("C1", [1], "C9"), END, ("X", [5], "C9")), "initial": {"receipts": [5]}},
])
def test_what_the_contract_allows_is_still_accepted(data):
    simkit.simulate(simkit.parse(data))


def test_a_utf8_byte_order_mark_is_accepted(tmp_path, capsys):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + ('name = "bom"\n' + TWO_PAGES).encode())
    assert main(["run", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_a_folder_is_reported_as_a_folder(tmp_path, capsys):
    (tmp_path / "scenarios").mkdir()
    one_line_exit_2(capsys, ["run", str(tmp_path / "scenarios")],
                    f"simkit: {tmp_path / 'scenarios'}: is a folder, not a scenario file\n")


@pytest.mark.parametrize("make", [lambda p: os.mkfifo(p), None], ids=["fifo", "device"])
def test_a_fifo_or_a_device_is_reported_as_such_not_missing_and_never_read(tmp_path, capsys, make):
    """It was "no such scenario" although the path exists; reading a FIFO would wait for ever."""
    path = tmp_path / "f.toml"
    if make is None:
        path = Path("/dev/zero")
    else:
        make(path)
    one_line_exit_2(capsys, ["run", str(path)],
                    f"simkit: {path}: is not a regular file, not a scenario file\n")


@pytest.mark.parametrize("argv", [["shrink", "shortcut_persist_token_on_fetch", "--strategy",
                                   "persist_token_on_fetch"],
                                  ["run", "retry_walkthrough", "--timeline"]],
                         ids=["shrink", "run --timeline"])
def test_a_read_only_output_file_is_not_replaced(tmp_path, capsys, argv):
    out = tmp_path / ("kept.toml" if argv[0] == "shrink" else "kept.png")
    out.write_text("mine\n")
    out.chmod(0o444)
    one_line_exit_2(capsys, argv + ([str(out)] if argv[-1] == "--timeline" else ["--out", str(out)]),
                    f"{out}: is read-only; not replaced")
    assert out.read_text() == "mine\n" and out.stat().st_mode & 0o777 == 0o444


def test_control_characters_in_a_description_are_escaped(tmp_path, capsys):
    """``compare`` echoed ANSI escapes from a description to the terminal."""
    path = tmp_path / "ansi.toml"
    path.write_text('description = "red \\u001b[31mRED\\u001b[0m\\u0007 done"\n' + TWO_PAGES)
    assert main(["compare", str(path)]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.endswith(r"red \x1b[31mRED\x1b[0m\x07 done") and "\x1b" not in head


@pytest.mark.parametrize("data, message", [
    ({"name": "\x1b[2J"}, "key 'name': '\\x1b[2J' holds control characters"),
    ({"\x1b[2J": 1}, "key '\\x1b[2J': unknown key"),
    ({"workers": 65}, "key 'workers': must be at most 64, got 65"),
    ({"seed": 2**64}, f"key 'seed': must be at most {2**53}, got {2**64}"),
    ({"initial": {"applied_position": -2**63}}, f"key 'initial.applied_position': must be at least {-2**53}"),
    ({"events": [{"position": 1, "behavior": "transient", "failures": 2**63}]},
     f"key 'events[0].failures': must be at most {2**53}"),
    ({"faults": [{"kind": "crash", "point": "after_fetch", "occurrence": 10**30}]},
     "key 'faults[0].occurrence': must be at most 9007199254740992, got 1000000000000000000000000000000"),
    ({"random_faults": {"max_faults": 10**400}},
     "key 'random_faults.max_faults': must be at most 9007199254740992, "
     "got an integer of 401 digits"),
])
def test_every_integer_key_has_a_bound_and_names_print_as_themselves(data, message):
    base = {"pages": pages(("C1", [1], "C9"), END)}
    with pytest.raises(simkit.ScenarioError) as err:
        simkit.parse({**base, **data}, source="s")
    assert str(err.value).startswith(f"s: {message}") and str(err.value).isprintable()


# -- 8. generated hostile scenarios --------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: numbers at the edges: zero, negative, tiny, huge, where integers stop, not numbers at all
HOSTILE_NUMBERS = st.sampled_from([0, -1, 1, 2, 3, 0.0, -0.5, 1e-300, 5e-324, 0.5, 1e15, 1e308, 2**53, 2**53
                                   + 1,
                                   2**63 - 1, 2**64, 10**400, float("nan"), float("inf"), -float("inf"), True,
                                   "1", None, [], {}])
SMALL_INTS = st.integers(-3, 12)
WORDS = st.sampled_from(["C1", "C2", "C3", "C9", "", "x" * 5000, "\x1b[31m", "é", "\n", "C1 ", "\u202e"])
NESTED = st.recursive(st.sampled_from([0, "x", 1.5, None]), lambda inner: st.lists(inner, max_size=2)
                      | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2), max_leaves=6)


def sometimes(strategy, hostile=HOSTILE_NUMBERS):
    """Mostly a sensible value; one time in 15 a hostile number, one in 30 a nested structure where a scalar
    belongs (so that a good share of scenarios is accepted and run)."""
    return st.integers(0, 29).flatmap(lambda k: hostile if k > 27 else NESTED if k == 27 else strategy)


@st.composite
def hostile_scenarios(draw) -> dict:
    data: dict = {}
    if draw(st.booleans()):
        cursors = draw(st.lists(WORDS, min_size=1, max_size=4, unique=True))
        data["pages"] = [{"cursor": c,
                          "positions": draw(sometimes(st.lists(sometimes(SMALL_INTS), max_size=4))),
                          "next_cursor": draw(st.sampled_from(cursors) | WORDS),
                          **({"ids": draw(st.lists(st.sampled_from(["a", "b", "e1", "e2", ""]), max_size=4))}
                             if draw(st.booleans()) else {}),
                          **({"stuck": draw(sometimes(SMALL_INTS))} if draw(st.booleans()) else {})}
                         for c in cursors]
        if draw(st.booleans()):
            data["pages"][-1].update(positions=[], next_cursor=data["pages"][-1]["cursor"])  # an end, often
        if draw(st.booleans()):
            data["initial"] = {"resume_cursor": draw(st.sampled_from(cursors) | WORDS),
                               "checkpoint_version": draw(sometimes(SMALL_INTS)),
                               "applied_position": draw(sometimes(SMALL_INTS)),
                               "receipts": draw(sometimes(st.lists(SMALL_INTS, max_size=3)))}
    else:
        data["generate"] = {
            "events": draw(sometimes(st.integers(1, 40))),
            "page_size": draw(sometimes(st.integers(1, 6))),
            **{
                k: draw(sometimes(st.sampled_from([0.0, 0.1, 0.5, 1.0])))
                for k in draw(
                    st.lists(
                        st.sampled_from(
                            [
                                "overlap",
                                "backfill",
                                "empty_pages",
                                "stuck",
                                "lost_fetch",
                                "poison",
                                "transient",
                                "review",
                                "hold",
                            ]
                        ),
                        max_size=4,
                        unique=True,
                    )
                )
            },
        }
    data["timing"] = {
        k: draw(sometimes(st.sampled_from([0.0, 1e-300, 0.5, 1.0, 5.0, 1e6])))
        for k in draw(
            st.lists(
                st.sampled_from(
                    [
                        "fetch_latency",
                        "commit_latency",
                        "effect_latency",
                        "restart_delay",
                        "timeout",
                        "backoff",
                        "time_limit",
                    ]
                ),
                max_size=7,
                unique=True,
            )
        )
    }
    if draw(st.integers(0, 3)) == 3:  # every latency zero: only the guard ends what time does not
        data["timing"].update(ZERO)
    data["workers"] = draw(sometimes(st.integers(1, 3)))
    data["sink"] = draw(st.sampled_from(["transactional", "idempotent", "unsafe"]))
    data["events"] = [{"position": draw(sometimes(st.sampled_from([1, 2, 3, 10, 20, 30]))),
                       "behavior": draw(st.sampled_from(["ok", "poison", "transient", "review", "hold",
                                                         "lunch"])),
                       "failures": draw(sometimes(st.integers(0, 3), st.sampled_from([2**53, 2**63, -1])))}
                      for _ in range(draw(st.integers(0, 2)))]
    data["faults"] = [{"kind": draw(st.sampled_from(["crash", "pause", "lost_response", "lost_request"])),
                       "point": draw(st.sampled_from(simkit.CRASH_POINTS)),
                       "occurrence": draw(sometimes(st.integers(1, 3))),
                       "duration": draw(sometimes(st.sampled_from([0.0, 1.0, 50.0])))}
                      for _ in range(draw(st.integers(0, 2)))]
    for f in data["faults"]:
        if f["kind"] not in ("crash", "pause"):
            del f["point"]
    if draw(st.booleans()):
        data["random_faults"] = {"crash": draw(sometimes(st.sampled_from([0.0, 0.3, 1.0]))),
                                 "max_faults": draw(sometimes(st.integers(0, 50),
                                                              st.sampled_from([10**9, 2**53])))}
    return data


@pytest.fixture
def small_guard(monkeypatch):
    """A guard that ends a run after thousands of steps, not
    a million: each example stays well under a second."""
    monkeypatch.setattr(worlds, "STALL_STEPS", 5_000)
    monkeypatch.setattr(worlds, "STEP_BASE", 20_000)
    monkeypatch.setattr(worlds, "STEPS_PER_ITEM", 100)


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(hostile_scenarios(), st.sampled_from(["safe", "compare_tokens", "no_version_check"]))
def test_hostile_scenarios_get_one_line_or_a_verdict_in_bounded_steps_and_memory(small_guard, data, strategy):
    """Parsed, and if accepted simulated: a ScenarioError of one printable line, or a verdict of a run that
    took no more steps than its (here small) budget, in bounded time and memory."""
    try:
        sc = simkit.parse(copy.deepcopy(data), source="hostile.toml")
    except simkit.ScenarioError as exc:
        message = str(exc)
        assert message.startswith("hostile.toml: key '") and message.isprintable() and len(message) < 2000
        return
    run = bounded(lambda: simkit.simulate(sc, simkit.resolve(strategy)), seconds=20, megabytes=200)
    d = run.as_dict()
    assert run.world.guard.steps <= run.world.guard.budget
    assert d["stopped"] is None or (d["stopped"].startswith("progress guard: ") and d["completed"] is False)
    json.dumps(d)                                   # the --json object is plain data
