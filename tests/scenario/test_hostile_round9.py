"""Hostile input, ninth round (issue 32, a fresh tester): the public Python API as a library user misuses it
(``simkit.load``, ``simkit.parse``, ``simkit.simulate``, ``simkit.testing``, a consumer defined in the script
that runs it, requests with fields of the wrong type), and ``simkit workshop`` / ``simkit demo`` under odd
folders and environments. Each: one line naming the parameter, file or flag and the problem (a
:class:`~simkit.SimkitError` with its ``param`` from the library; exit status 2 from the command line),
nothing written; or the verdict the same run gives. (What the tester left as strict xfails, in modules outside
its reach, was fixed after it.)
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import WRONG_TYPES
from conftest import simkit_in as _cli
from test_hostile import one_line_exit_2

import simkit
from simkit import Consumer, Fault, ScenarioError, SimkitError, StrategyError
from simkit.testing import assert_passes_audit, run_on

REPO = Path(__file__).resolve().parents[2]


# -- simkit.load and simkit.parse: a value of the wrong type, an empty name ----------------------------------
@pytest.mark.parametrize("ref", [None, 3, b"retry_walkthrough", ["retry_walkthrough"]])
def test_load_of_a_value_that_is_no_name_or_path_is_one_line_naming_ref(ref):
    """``simkit.load(None)`` was pathlib's ``TypeError: expected str, bytes or os.PathLike object``."""
    with pytest.raises(ScenarioError) as caught:
        simkit.load(ref)
    assert caught.value.param == "ref"
    assert str(caught.value).startswith("ref ") and "not a scenario's name or a path" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_load_of_an_empty_name_names_no_scenario():
    """``simkit.load("")`` said ``: is a folder, not a scenario file`` (``Path("")``: the current folder)."""
    with pytest.raises(ScenarioError, match=r"^ref '': names no scenario") as caught:
        simkit.load("")
    assert caught.value.param == "ref"


def test_a_path_object_still_loads():
    assert simkit.load(Path("retry_walkthrough")).name == "retry_walkthrough"


@pytest.mark.parametrize("argv", [["run", ""], ["explore", ""]])
def test_an_empty_scenario_argument_is_one_line_naming_it(capsys, argv):
    one_line_exit_2(capsys, argv, "SCENARIO '': names no scenario")


@pytest.mark.parametrize("data", [None, b"name = 'x'", "name = 'x'", [("name", "x")]])
def test_parse_of_a_value_that_is_no_dict_is_one_line_naming_data(data):
    """``simkit.parse(b"...")`` was ``AttributeError: 'int' object has no attribute 'isprintable'`` (from
    simkit.errors), ``parse(None)`` a TypeError."""
    with pytest.raises(ScenarioError, match=r"^data .*: is of type \w+, not a dict") as caught:
        simkit.parse(data)
    assert caught.value.param == "data"


def test_run_on_a_number_is_one_line():
    """``simkit.testing.run_on("safe", 3)`` reached the same pathlib TypeError through load()."""
    with pytest.raises(ScenarioError, match=r"^ref 3: is of type int"):
        run_on("safe", 3)


# -- simkit workshop and simkit demo ------------------------------------------------------------------------
def test_workshop_into_an_empty_folder_name_writes_nothing(tmp_path, capsys, monkeypatch):
    """``simkit workshop "$UNSET"`` wrote the 11 files of the edition into the current folder and said
    ``wrote 11 files to : open it with ...``."""
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["workshop", ""], "workshop DIR '': names no folder")
    assert list(tmp_path.iterdir()) == []


def test_workshop_says_a_folder_with_a_newline_on_one_line(tmp_path, capsys, monkeypatch):
    """The folder's name was printed as it is: a newline in it broke the line that says where the notebooks
    are in two (its errors were escaped already)."""
    monkeypatch.chdir(tmp_path)
    assert simkit.cli.main(["workshop", "a\nb"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "wrote 11 files to a\\nb; " in out
    assert (tmp_path / "a\nb" / "00_index.ipynb").is_file()


@pytest.mark.parametrize("flag", ["--timeline", "--swimlane"])
def test_a_figure_under_an_mplbackend_matplotlib_does_not_know_is_written(tmp_path, flag):
    """``MPLBACKEND=nosuch simkit demo`` (or ``run --timeline``) was matplotlib's ValueError traceback as it
    was first imported, exit status 1. The command line draws files only (Agg): the variable is left out of
    that import, and the figure is written."""
    done = _cli(["run", "retry_walkthrough", flag, "f.png"], tmp_path, {"MPLBACKEND": "nosuch"})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "f.png").stat().st_size > 0


def test_demo_under_an_unknown_mplbackend_writes_its_png(tmp_path):
    done = _cli(["demo", "--out", "d.png"], tmp_path, {"MPLBACKEND": "nosuch"}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d.png").stat().st_size > 0


def test_a_consumer_process_still_inherits_mplbackend(tmp_path):
    """The variable is left out of matplotlib's import only: what the command hands a consumer is the user's
    environment."""
    probe = tmp_path / "probe.py"
    probe.write_text(textwrap.dedent("""
        import os, sys
        sys.stdin.readline()
        sys.stderr.write("MPLBACKEND=" + os.environ.get("MPLBACKEND", "<unset>") + "\\n")
        sys.exit(0)
    """))
    done = _cli(["run", "retry_walkthrough", "--timeline", "f.png", "--strategy",
                 f"exec:{sys.executable} {probe}"], tmp_path, {"MPLBACKEND": "nosuch"})
    assert done.returncode == 0, done.stderr
    assert "[worker 1] MPLBACKEND=nosuch" in done.stderr


# -- simkit.simulate: its other parameters (simkit/runner.py, out of this round's reach) ---------------------
RUNNER = ("simkit/runner.py: simulate() checks strategy only; scenario, seed and faults reach the world as "
          "given. Fix: check them there as _strategy() does, one SimkitError each with param")


@pytest.mark.parametrize("faults", ["before_fetch", ("before_fetch",), (("crash", "before_fetch"),), None, 3])
def test_simulate_with_faults_that_are_no_faults_is_one_line_naming_faults(faults):
    """Was ``AttributeError: 'str' object has no attribute 'kind'`` from simkit/world/faults.py, or
    ``TypeError: 'NoneType' object is not iterable``."""
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), "safe", faults=faults)
    assert caught.value.param == "faults"


@pytest.mark.parametrize("scenario", ["retry_walkthrough", None, Path("retry_walkthrough.toml")])
def test_simulate_of_a_scenario_that_is_no_scenario_is_one_line_naming_scenario(scenario):
    """Was ``AttributeError: 'str' object has no attribute 'seed'`` from runner.py."""
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(scenario, "safe")
    assert caught.value.param == "scenario"


@pytest.mark.parametrize("seed", [3.0, "3", True, 10**30, float("nan")])
def test_simulate_refuses_a_seed_the_command_line_refuses(seed):
    """``seed=3.0`` runs another world than ``seed=3`` (random.Random hashes a float otherwise), and the Run
    says ``seed 3.0``: the verdict is no run ``simkit run --seed 3`` replays. ``10**30`` the command line
    refuses (``--seed ...: must be within 9007199254740992 either side of 0``) and the library ran."""
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(simkit.load("gauntlet"), "safe", seed=seed)
    assert caught.value.param == "seed"


def test_simulate_with_a_fault_at_no_crash_point_is_one_line():
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), "safe", faults=(Fault("crash", 3, "x"),))
    assert caught.value.param == "faults"


def test_simulate_with_an_unknown_settlement_names_its_param():
    with pytest.raises(ScenarioError, match="^settlement 'bogus': not one of") as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), "safe", settlement="bogus")
    assert caught.value.param == "settlement"


# -- a consumer defined in the script that runs it -----------------------------------------------------------
SCRIPT = '''
import sys
from simkit import Consumer, load, simulate


class MoveOn(Consumer):
    def is_terminal(self, decision):
        return decision == "retry_later"


def main():
    print("main runs")
    try:
        run = simulate(load("transient_storm"), MoveOn)
    except Exception as exc:
        print("error:", exc)
        return 1
    print("ok" if run.verdict.ok else "NOT ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def test_a_script_that_defines_its_consumer_and_simulates_it_runs_once(tmp_path):
    """The most ordinary script a library user writes: ``if __name__ == "__main__": sys.exit(main())``."""
    (tmp_path / "mine.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "mine.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.splitlines() == ["main runs", "NOT ok"], done.stdout + done.stderr
    assert done.returncode == 0



UNGUARDED = '''
from simkit import Consumer, load, simulate
from simkit.model import Fault


class Remembers(Consumer):
    handled = set()

    def is_replay(self, event, receipts, applied_position):
        return event.id in Remembers.handled or super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        Remembers.handled.add(event.id)
        return (yield from super().apply(event, applied_position))


run = simulate(load("retry_walkthrough"), Remembers,
               faults=[Fault("crash", "before_event_commit", position=107)])
print("ok" if run.verdict.ok else "NOT ok", run.world.crashes)
'''


def printed(tmp_path, script: str) -> list[str]:
    """What ``python mine.py`` prints, ``script`` its source: the lines of its output."""
    (tmp_path / "mine.py").write_text(script)
    done = subprocess.run([sys.executable, "mine.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    print(done.stderr)                      # (shown by pytest where the caller's assertion fails)
    return done.stdout.splitlines()


def test_a_script_that_simulates_at_top_level_runs_its_simulation_once(tmp_path):
    """No ``__main__`` guard: each life runs the script's definitions afresh (a crash wipes the class-level
    set, so e107 is applied, not lost) and stops at its ``simulate()``, which used to run again inside every
    life (and an ``audit()`` there nested a whole audit in each)."""
    assert printed(tmp_path, UNGUARDED) == ["ok 1"]



TWO_CONSUMERS = UNGUARDED + '''

class AlsoRemembers(Consumer):
    handled = set()

    def is_replay(self, event, receipts, applied_position):
        return event.id in AlsoRemembers.handled or super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        AlsoRemembers.handled.add(event.id)
        return (yield from super().apply(event, applied_position))


again = simulate(load("retry_walkthrough"), AlsoRemembers,
                 faults=[Fault("crash", "before_event_commit", position=107)])
print("ok" if again.verdict.ok else "NOT ok", again.world.crashes, "also")
'''


def test_a_consumer_defined_after_another_ones_top_level_simulation_is_run_afresh_too(tmp_path):
    """The second class is defined below the first ``simulate()``: its lives run the script again past that
    call (passed over), so its class-level set is wiped by the crash as the first one's is."""
    assert printed(tmp_path, TWO_CONSUMERS) == ["ok 1", "ok 1 also"]


# -- requests with fields of the wrong type that the world executes -----------------------------------------
WRONG: dict = {}
exec(WRONG_TYPES, WRONG)            # (the consumers live's test writes to a file: tests/conftest.py)


@pytest.mark.parametrize("name", ["BoolPosition", "EffectAsText", "FetchesANumber"])
def test_a_request_whose_field_has_the_wrong_type_is_the_consumers_one_line(name):
    with pytest.raises(simkit.ConsumerError, match="yielded a malformed request"):
        simkit.simulate(simkit.load("transient_storm"), WRONG[name])


class IntegerTarget(Consumer):
    def barrier_target(self, checkpoint, page):
        return 7


def test_an_integer_cursor_is_said_to_be_no_string():
    with pytest.raises(simkit.ConsumerError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), IntegerTarget)
    assert "Barrier.next_cursor is 7 (int), not str" in str(caught.value)


def test_a_module_attribute_that_is_no_class_is_named_as_itself():
    with pytest.raises(StrategyError, match=r"os:system is a function, not a subclass"):
        simkit.simulate(simkit.load("retry_walkthrough"), "os:system")


# -- simkit.testing: its other parameters (simkit/testing.py and tools/audit.py, out of reach) ---------------
@pytest.mark.parametrize("consumer", [None, 3])
def test_assert_passes_audit_of_no_consumer_is_one_line(consumer):
    with pytest.raises(StrategyError):
        assert_passes_audit(consumer, budget=5)


def test_assert_passes_audit_with_a_budget_of_text_is_one_line():
    with pytest.raises(SimkitError) as caught:
        assert_passes_audit("safe", budget="5")
    assert caught.value.param == "budget"


@pytest.mark.parametrize("where", ["folder", "missing/x.toml"])
def test_assert_passes_audit_into_an_out_it_cannot_write_is_one_line(tmp_path, where):
    (tmp_path / "folder").mkdir()
    with pytest.raises(SimkitError):
        assert_passes_audit("persist_token_on_fetch", budget=5, first_only=True, out=tmp_path / where)


# -- simkit.parse_crash_arg, the base class of exec: consumers, resolve and audit ----------------------------
def test_parse_crash_arg_of_no_string_is_one_line_naming_crash():
    """``simkit.parse_crash_arg(None)`` was re's ``TypeError: expected string or bytes-like object``."""
    with pytest.raises(ScenarioError, match=r"^crash None: is of type NoneType, not a string") as caught:
        simkit.parse_crash_arg(None)
    assert caught.value.param == "crash"


@pytest.mark.parametrize("text", ["after_fetch\nbefore_effect", "x" * 50_000], ids=["newline", "50k"])
def test_parse_crash_arg_echoes_what_it_refuses_escaped_and_bounded(text):
    """The library's message echoed the text as given: a newline made it two lines, 50,000 characters a
    50 KB message (the command line bounded its own line, the library did not)."""
    with pytest.raises(ScenarioError) as caught:
        simkit.parse_crash_arg(text)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 500
    assert "expected POINT[@POSITION][#OCCURRENCE]" in message


@pytest.mark.parametrize("how", ["library", "cli"])
def test_the_base_class_of_exec_consumers_is_one_line(how, capsys):
    """``--strategy simkit.procedure.external:ExternalConsumer`` (a Consumer subclass, so resolve() takes it)
    started ``Popen([])``: 'raised IndexError: list index out of range in _execute_child (subprocess.py)'."""
    ref = "simkit.procedure.external:ExternalConsumer"
    if how == "cli":
        one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", ref],
                        "has no command to start (its argv is empty): name the program as exec:COMMAND")
        return
    with pytest.raises(simkit.ConsumerError, match="has no command to start"):
        simkit.simulate(simkit.load("retry_walkthrough"), ref)


def test_resolve_of_none_is_one_line():
    with pytest.raises(StrategyError):
        simkit.resolve(None)


@pytest.mark.parametrize("options", [{"jobs": 1.5}, {"jobs": -1}, {"budget": True}])
def test_audit_with_a_jobs_or_budget_of_the_wrong_kind_is_one_line(options):
    options.setdefault("budget", 3)
    with pytest.raises(SimkitError):
        simkit.audit("safe", **options)


@pytest.mark.parametrize("key", [3, ("a",), None], ids=["int", "tuple", "None"])
def test_parse_of_a_dict_with_a_key_that_is_no_string_names_it(key):
    """A dict given to ``simkit.parse`` need not come from TOML: a top-level key of another type was
    ``AttributeError: 'int' object has no attribute 'isprintable'`` from simkit.errors."""
    with pytest.raises(ScenarioError, match=rf"^<scenario>: key '{re.escape(str(key))}': unknown key$"):
        simkit.parse({"generate": {"events": 3}, key: 1})


# -- exec: a consumer that writes requests and never reads an answer -----------------------------------------
DEAF = r'''
import sys, time
sys.stdin.readline()                                # the handshake, and never another line
sys.stdout.write('{"op": "fetch", "cursor": "C7"}\n' * 20000)
sys.stdout.flush()
time.sleep(300)
'''


def test_a_consumer_that_never_reads_its_answers_is_killed_at_the_silence_limit(tmp_path, capsys,
                                                                                 monkeypatch):
    """A consumer that writes request after request and reads no answer filled its stdin's pipe, and simkit's
    blocking write of the next answer waited on it for ever (its own stdout full in turn: neither moved). The
    write now waits at most SIMKIT_EXEC_TIMEOUT seconds, then the consumer is killed with one line."""
    (tmp_path / "deaf.py").write_text(DEAF)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMKIT_EXEC_TIMEOUT", "2")
    from simkit.procedure.external import live_processes
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", f"exec:{sys.executable} deaf.py"],
                    "worker 1 read no answer for 2 s (wall clock; SIMKIT_EXEC_TIMEOUT sets it): killed; a "
                    "consumer reads each answer before it writes its next request")
    assert live_processes() == []


CHATTY = r'''
import json, sys
sys.stdin.readline()
for _ in range(5):                                  # five loads, then it stops (exit 0: run() returned)
    sys.stdout.write('{"op": "load"}\n'); sys.stdout.flush()
    sys.stderr.write("x" * 200_000 + "\n"); sys.stderr.flush()     # more than a pipe holds, before reading
    if not sys.stdin.readline():
        break
'''


def test_a_consumer_that_writes_stderr_before_it_reads_its_answer_is_heard(tmp_path, capfd, monkeypatch):
    """While simkit writes an answer it passes stderr through: a consumer blocked on a full stderr before it
    reads is not taken for one that does not read."""
    (tmp_path / "chatty.py").write_text(CHATTY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMKIT_EXEC_TIMEOUT", "5")
    run = simkit.simulate(simkit.load("retry_walkthrough"), f"exec:{sys.executable} chatty.py")
    assert not run.verdict.completed             # it loads five times and stops: judged, no error
    assert capfd.readouterr().err.count("[worker 1] xxxx") == 5
