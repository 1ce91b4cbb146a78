"""Hostile input, third round (issue 32): each case here once printed a traceback, was judged wrongly, or was
answered differently by the two stores. Now: one line naming the file, key or flag and the problem, exit
status 2, nothing written; or a verdict.
"""
from __future__ import annotations

import pytest
from conftest import TWO_PAGES
from test_hostile import one_line_exit_2

import simkit
from simkit.cli import main

DIGITS = "1" * 5000                             # past Python's 4,300-digit limit on int() and str()


def pages(*spec) -> list[dict]:
    return [{"cursor": p[0], "positions": p[1], "next_cursor": p[2]} for p in spec]


# -- 1. tracebacks instead of one line -----------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    (f"[[pages]]\ncursor = 'C1'\npositions = [{DIGITS}]\nnext_cursor = 'C1'\n",
     "line 3: an integer of more than 4300 digits; every integer key holds at most 9007199254740992"),
    (f"seed = 1{'_1' * 4500}\n" + TWO_PAGES, "line 1: an integer of more than 4300 digits"),
    (f"[[pages]]\ncursor = 'C1'\npositions = [0x{'f' * 5000}]\nnext_cursor = 'C1'\n",
     "key 'pages[0].positions': must be at most 9007199254740992, got an integer of about 6021 digits"),
    (f"name = 0x{'f' * 5000}\n" + TWO_PAGES,
     "key 'name': expected str, got int an integer of about 6021 digits"),
    (f"[timing]\nbackoff = 0x{'f' * 5000}\n" + TWO_PAGES, "key 'timing.backoff': must be finite"),
    (f"[auth]\nrotate_at = [0x{'f' * 5000}]\n" + TWO_PAGES, "key 'auth.rotate_at': must be at most"),
], ids=["decimal", "underscores", "hexadecimal position", "hexadecimal name", "hexadecimal time",
        "rotate_at"])
def test_an_integer_past_4300_digits_in_a_scenario_file_is_one_line(tmp_path, capsys, text, message):
    """ValueError: Exceeds the limit (4300 digits) for integer string conversion, from tomllib, or from the
    very message that was to refuse the number."""
    path = tmp_path / "huge.toml"
    path.write_text(text)
    one_line_exit_2(capsys, ["run", str(path)], f"{path}: {message}")


@pytest.mark.parametrize("suffix, key", [(f"@{DIGITS}", "position"), (f"@-{DIGITS}", "position"),
                                         (f"#{DIGITS}", "occurrence")], ids=["@", "@-", "#"])
def test_an_integer_past_4300_digits_in_crash_is_one_line(capsys, suffix, key):
    err = one_line_exit_2(capsys, ["run", "retry_walkthrough", "--crash", "before_event_commit" + suffix],
                          f"key '{key}': must be within 9007199254740992 either side of 0")
    assert err.startswith("simkit: --crash before_event_commit") and len(err) < 200


def test_an_id_of_e_and_5000_digits_is_just_an_id():
    """The store asked whether ``e<digits>`` is a default id by converting the digits: a traceback from inside
    the run. No position has more than 19 digits: such an id is a named one."""
    data = {"pages": [{"cursor": "C1", "positions": [1], "ids": ["e" + DIGITS], "next_cursor": "C2"},
                      {"cursor": "C2", "positions": [], "next_cursor": "C2"}]}
    for store in ("memory", "sqlite"):
        run = simkit.simulate(simkit.parse({**data, "store": store}))
        assert run.verdict.ok and run.as_dict()["effects"] == 1


@pytest.mark.parametrize("receipts, message", [
    ([5], "key 'initial.receipts': position 5 is not an event of the generated stream: its positions are "
          "10, 20, ..., 100"),
    ([110], "key 'initial.receipts': position 110 is not an event of the generated stream"),
])
def test_generated_receipts_outside_the_stream_are_one_line(receipts, message):
    """KeyError at the start of the run."""
    with pytest.raises(simkit.ScenarioError) as err:
        simkit.parse({"generate": {"events": 10}, "initial": {"receipts": receipts}}, source="s")
    assert str(err.value).startswith(f"s: {message}")
    run = simkit.simulate(simkit.parse({"generate": {"events": 10}, "initial": {"receipts": [10, 100]}}))
    assert run.verdict.ok


BAD_STR = '''
from simkit import Consumer


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no words")


class Mine(Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise Unprintable()
'''


def test_a_plugin_whose_import_raises_an_unprintable_exception_is_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.py").write_text(BAD_STR + "\nraise Unprintable()\n")
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", "bad.py:Mine"],
                    "simkit: --strategy bad.py:Mine: bad.py failed to import: Unprintable: <Unprintable: "
                    "str() raised>\n")


def test_a_consumer_raising_an_unprintable_exception_is_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.py").write_text(BAD_STR)
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", "bad.py:Mine"],
                    "simkit: strategy bad.py:Mine raised Unprintable: <Unprintable: str() raised> in "
                    "is_replay (bad.py:12)\n")


# -- 5. stores that disagree; 1. a position past 2**63 -------------------------------------------------------
WRITES = """
from simkit import Consumer
from simkit.ops import Barrier, Commit


class Negative(Consumer):
    def apply(self, event, applied_position):
        return (yield Commit(event, "applied", -1, with_effect=True))


class Past63(Consumer):
    def apply(self, event, applied_position):
        return (yield Commit(event, "applied", 2**63, with_effect=True))


class Outcome(Consumer):
    def apply(self, event, applied_position):
        return (yield Commit(event, "bogus", applied_position, with_effect=True))


class Version(Consumer):
    def page_barrier(self, checkpoint, page, applied_position):
        return (yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, page.next_cursor,
                              2**63, applied_position))
"""


@pytest.mark.parametrize("store", ["memory", "sqlite"])
@pytest.mark.parametrize("cls, problem", [
    ("Negative", "Commit.applied_position is -1, not within 0..2**63 - 1"),
    ("Past63", "Commit.applied_position is 9223372036854775808, not within 0..2**63 - 1"),
    ("Outcome", "Commit.outcome is 'bogus', not one of applied, ignored, quarantined, retry_later, "
                "dead_letter, operator_review, reversible_hold"),
    ("Version", "Barrier.next_version is 9223372036854775808, not within 0..2**63 - 1"),
])
def test_both_stores_refuse_the_same_malformed_writes(tmp_path, capsys, monkeypatch, store, cls, problem):
    """The memory store kept a negative position and an unknown outcome; SQLite raised IntegrityError or
    OverflowError (and the memory store, past 2**63, an OverflowError of the trace's)."""
    (tmp_path / "writes.py").write_text(WRITES)
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", f"writes.py:{cls}", "--store", store],
                    f"simkit: strategy writes.py:{cls}: yielded a malformed request: {problem}\n")


def test_a_negative_initial_applied_position_is_refused():
    """Positions are not negative, and a consumer that writes back the applied position it loaded would be
    refused by the stores."""
    with pytest.raises(simkit.ScenarioError,
                       match=r"^s: key 'initial.applied_position': must be at least 0, got -1"):
        simkit.parse({"initial": {"applied_position": -1}, "pages": pages(("C1", [1], "C1"))}, source="s")


# -- 6. exit codes -------------------------------------------------------------------------------------------
RAISES = '''
import sys
from simkit import Consumer


class Exits(Consumer):
    def is_replay(self, event, receipts, applied_position):
        sys.exit(5)


class Interrupts(Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise KeyboardInterrupt


class Closes(Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise GeneratorExit
'''


@pytest.mark.parametrize("cls, raised", [("Exits", "SystemExit: 5"), ("Interrupts", "KeyboardInterrupt"),
                                         ("Closes", "GeneratorExit")])
def test_a_consumer_raising_sys_exit_or_keyboard_interrupt_is_its_one_line(
    tmp_path, capsys, monkeypatch, cls, raised
):
    """sys.exit(5) made simkit exit 5 with no message; a
    KeyboardInterrupt of its own printed "interrupted", 130."""
    (tmp_path / "raises.py").write_text(RAISES)
    monkeypatch.chdir(tmp_path)
    line = one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", f"raises.py:{cls}"],
                           f"simkit: strategy raises.py:{cls} raised {raised} in is_replay (raises.py:")
    assert line.endswith(")\n")


def test_a_real_ctrl_c_is_still_interrupted(monkeypatch, capsys):
    """The user's Ctrl-C, raised by the command line's handler, stays "interrupted", 130."""
    import os
    import signal

    import simkit.cli.commands as commands

    def ctrl_c(args):
        os.kill(os.getpid(), signal.SIGINT)
        return 0

    monkeypatch.setitem(commands.COMMANDS, "list", ctrl_c)
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "simkit: interrupted\n"


# -- 2. wrong verdicts on odd initial states -----------------------------------------------------------------
def test_a_generated_stream_with_an_initial_cursor_is_refused():
    """Its tokens are drawn from the run's seed: the cursor named no page, the provider refused it, and the
    halt was judged unjustified and the run incomplete, blaming the consumer for the file."""
    with pytest.raises(simkit.ScenarioError) as err:
        simkit.parse({"generate": {"events": 10}, "initial": {"resume_cursor": "C1"}}, source="s")
    assert str(err.value).startswith("s: key 'initial.resume_cursor': a generated stream's tokens are "
                                     "random strings drawn from the run's seed")


@pytest.mark.parametrize("data", [
    {"initial": {"resume_cursor": "C2"}, "pages": pages(("C1", [1, 2], "C2"), ("C2", [3], "C3"),
                                                        ("C3", [], "C3"))},
    {"initial": {"resume_cursor": "C3", "applied_position": 2},
     "pages": pages(("C1", [1, 2], "C2"), ("C2", [], "C3"), ("C3", [], "C3"))},
    {"initial": {"resume_cursor": "C2", "receipts": [1]},
     "pages": pages(("C1", [1, 2], "C2"), ("C2", [], "C2"))},
], ids=["past one page", "past an empty page too, a watermark only", "one receipt of two"])
def test_an_initial_cursor_past_events_without_receipts_is_refused(data):
    """Invariant 1: the durable cursor moves past a page only once each of its events has a durable outcome. A
    file whose cursor starts past events without receipts describes a state no consumer reaches; it was judged
    with nothing applied (ok, and now: those events lost, blamed on ``safe``)."""
    with pytest.raises(simkit.ScenarioError) as err:
        simkit.parse(data, source="s")
    assert str(err.value).startswith("s: key 'initial.resume_cursor': "
                                     f"'{data['initial']['resume_cursor']}' is past pages[0] ('C1'), whose ")
    assert "no later page serves and no receipt covers" in str(err.value)


@pytest.mark.parametrize("data", [
    {"initial": {"resume_cursor": "C2", "receipts": [1, 2]},
     "pages": pages(("C1", [1, 2], "C2"), ("C2", [3], "C3"), ("C3", [], "C3"))},
    {"initial": {"resume_cursor": "C2", "receipts": [1]},                         # 2 is served again from C2
     "pages": pages(("C1", [1, 2], "C2"), ("C2", [2, 3], "C3"), ("C3", [], "C3"))},
    {"initial": {"resume_cursor": "C2"}, "pages": pages(("C1", [], "C2"), ("C2", [3], "C3"),
                                                        ("C3", [], "C3"))},
], ids=["receipts", "an overlap", "past an empty page"])
def test_an_initial_cursor_past_events_it_holds_is_judged_ok(data):
    assert simkit.simulate(simkit.parse(data)).verdict.ok


# -- 1. and 6. simkit live -----------------------------------------------------------------------------------
def test_live_on_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """OSError ENOSPC (or SQLite's "database or disk is full") while the databases are created: a traceback,
    and half-made files in the folder."""
    import errno
    import sqlite3

    from simkit.live import worker

    def full(folder, *args):
        # a file half-made
        sqlite3.connect(folder / "store.db").execute("CREATE TABLE t (x)").connection.close()
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(worker.Harness, "create", full)
    folder = tmp_path / "run"
    one_line_exit_2(capsys, ["live", "retry_walkthrough", "--kills", "0", "--dir", str(folder)],
                    f"simkit: --dir {folder}: cannot create the run's databases: No space left on device\n")
    assert not folder.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    one_line_exit_2(capsys, ["live", "retry_walkthrough", "--kills", "0", "--dir", str(kept)],
                    "No space left")
    assert kept.exists() and not list(kept.iterdir())


def test_live_with_a_consumer_raising_generator_exit_is_one_line(tmp_path, capsys, monkeypatch):
    """122 lines of stderr: the worker's GeneratorExit escaped its one-line report."""
    (tmp_path / "raises.py").write_text(RAISES)
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["live", "retry_walkthrough", "--strategy", "raises.py:Closes", "--kills", "0"],
                    "simkit: live worker 1: strategy raises.py:Closes raised GeneratorExit in is_replay "
                    "(raises.py:")


@pytest.mark.parametrize("text, message", [
    (f"[[journals]]\nchanges = {DIGITS}\n", "line 2: an integer of more than 4300 digits"),
    (f"faults = [0x{'f' * 5000}]\n", "faults: expected an array of strings like \"lose-reply@write#2\", got "
                                     "[<an integer of 20000 bits>]"),
], ids=["decimal", "hexadecimal"])
def test_an_integer_past_4300_digits_in_a_serve_config_is_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "serve.toml"
    path.write_text(text)
    one_line_exit_2(capsys, ["serve", "--config", str(path), "--port", "0"], f"{path}: {message}")


# -- 3. the progress guard's budget is earned, not granted by the stream's size ------------------------------
def test_a_large_stream_looping_at_its_start_gets_the_base_budget(monkeypatch):
    """Every fetch lost and a time limit of 1e15: the stream's size granted
    1,000 steps per event and page, 120 million for 100,000 events (hours, and
    memory all along). Progress earns them now: no receipt, one cursor."""
    import simkit.world.guard as guard
    from simkit.world.simulation import World

    monkeypatch.setattr(guard, "STEP_BASE", 20_000)
    # (all but every fetch: a rate of 1 is refused, round 37)
    sc = simkit.parse({"generate": {"events": 100_000, "lost_fetch": 1 - 1e-12},
                       "timing": {"time_limit": 1e15}})
    assert World(sc, simkit.resolve("safe"), 0).guard.budget == 20_000
    run = simkit.simulate(sc)
    assert run.world.guard.budget == 20_000 + guard.STEPS_PER_ITEM * 1          # one cursor fetched
    assert run.as_dict()["stopped"].startswith("progress guard: the step budget of 21000 steps spent")
    assert not run.verdict.completed


def test_a_run_that_progresses_earns_its_budget(monkeypatch):
    """The same stream, no fault: every event applied although the base budget is far below what it takes."""
    import simkit.world.guard as guard
    monkeypatch.setattr(guard, "STEP_BASE", 2_000)
    run = simkit.simulate(simkit.parse({"generate": {"events": 2_000}}))
    assert run.verdict.ok and run.world.guard.steps > 2_000


SLOW = '''
import time
from simkit import Consumer


class Sleeps(Consumer):
    def is_replay(self, event, receipts, applied_position):
        time.sleep(3600)


class Spins(Consumer):
    def is_replay(self, event, receipts, applied_position):
        while True:
            pass
'''


@pytest.mark.parametrize("cls", ["Sleeps", "Spins"])
def test_a_consumer_that_sleeps_or_spins_is_stopped_by_the_wall_clock(tmp_path, capsys, monkeypatch, cls):
    """The step budget counts requests, and a consumer stuck
    between two of them made none: run hung for ever."""
    import time

    import simkit.world.guard as guard
    (tmp_path / "slow.py").write_text(SLOW)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(guard, "WALL_SECONDS", 1.0)
    began = time.monotonic()
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", f"slow.py:{cls}"],
                    f"simkit: strategy slow.py:{cls}: one run took more than 1 s of wall-clock time")
    assert time.monotonic() - began < 10
    import signal
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0 and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
