"""Hostile input, eleventh round (a fresh tester): the public API's faults held to the scenario as a file's
are, consumer names too long for a file name, and what a consumer says reaching the terminal. Each: one line
naming the parameter, flag or strategy and the problem (exit status 2, no traceback), or the verdict the same
run gives.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import killed_once_made
from conftest import simkit_in as _cli

import simkit
from simkit import Fault

REPO = Path(__file__).resolve().parents[2]


# -- 1. simulate(faults=...) names a worker or a position the scenario does not have ------------------------
@pytest.mark.parametrize("scenario, fault, problem", [
    ("retry_walkthrough", Fault("crash", "before_event_commit", worker=2),
     "faults[0].worker: no worker 2: the scenario has workers = 1"),
    ("retry_walkthrough", Fault("crash", "before_event_commit", position=108),
     "faults[0].position: no page carries position 108"),
    ("default", Fault("lost_response", op="effect", position=601),
     "faults[0].position: position 601 is outside the generated stream (1..600 for events = 60)"),
], ids=["worker", "position", "generated position"])
def test_simulate_with_a_fault_the_scenario_cannot_strike_is_one_line(scenario, fault, problem):
    """``simulate(sc, faults=(Fault("crash", ..., worker=2),))`` on a one-worker scenario (or at a position no
    page carries) ran, the fault was never struck, and the verdict said ok: its docstring promises faults
    checked "as a ``[[faults]]`` table allows", and such a table is refused (``no worker 2: the scenario has
    workers = 1``), as ``--crash before_event_commit@108`` is."""
    with pytest.raises(simkit.SimkitError) as caught:
        simkit.simulate(simkit.load(scenario), "safe", faults=(fault,))
    assert str(caught.value).startswith(problem) and caught.value.param == "faults"
    assert "\n" not in str(caught.value)


def test_simulate_with_a_fault_the_scenario_can_strike_still_runs():
    """A guard: the fault of the walkthrough at 106 (a position a page carries) is struck as before."""
    run = simkit.simulate(simkit.load("retry_walkthrough"), "safe",
                          faults=[Fault("crash", "before_event_commit", position=106)])
    assert run.verdict.ok and run.as_dict()["crashes"] == 2


# -- 2. audit's default file for a consumer whose name is longer than a file name may be ---------------------
LONG = "Consumer" + "X" * 300
MOVE_ON = (f"from simkit import Consumer\n\n\nclass {LONG}(Consumer):\n    def is_terminal(self, decision):\n"
           "        return decision == 'retry_later'\n")


def test_audit_of_a_consumer_whose_name_is_too_long_for_a_file_writes_its_default_file(tmp_path):
    """``simkit audit mine.py:Consumer<300 X>`` (or ``'exec:sh run ARG'`` with a long argument) was refused at
    once, ``--out simkit-audit-...toml: cannot write ...: File name too long``: the default file's name held
    the whole name, past the 255 bytes a file name may have, and the one line blamed an ``--out`` nobody gave.
    The name is now cut, and ended by a digest of the whole."""
    (tmp_path / "mine.py").write_text(MOVE_ON)
    done = _cli(["audit", f"mine.py:{LONG}", "--budget", "5", "--sweep-seeds", "0", "--jobs", "1"], tmp_path,
                timeout=240)
    assert done.returncode == 1, done.stderr[-2000:]
    written = [p.name for p in tmp_path.glob("simkit-audit-*.toml")]
    assert len(written) == 1 and len(written[0].encode()) <= 255 and written[0] in done.stdout
    assert "File name too long" not in done.stderr + done.stdout


def test_a_short_consumer_name_keeps_its_default_file_name():
    """A guard: a name that fits is the file name as before (``simkit-audit-CLASS.toml``)."""
    from simkit.tools.scenario_toml import file_stem
    assert file_stem("mine.py:Move On") == "mine.py_Move_On"
    assert file_stem("X" * 121) != file_stem("X" * 122) and len(file_stem("X" * 5000)) < 140


# -- 3. what a consumer or its name says, on the terminal ----------------------------------------------------
ESCAPES = """from simkit import Consumer


class Escapes(Consumer):
    def validate(self, checkpoint, page, ids_at):
        return "bad\\n\\x1b[31mRED\\x1b[0m"
"""
MOVE_ON_AS_IS = "from simkit import Consumer\n\n\nclass MoveOn(Consumer):\n    pass\n"


def test_sweep_rows_named_as_given_print_their_control_characters_as_escapes(tmp_path):
    """Two consumers sharing a class name are rows named as their ``--strategy`` was given (round 10): a path
    holding an escape or a newline (``$'e\\x1b[31m.py:MoveOn'``) coloured the terminal and broke the table
    in two, printed as it is. The table says the escapes; ``--json`` keeps the names as given."""
    for name in ("e\x1b[31m.py", "n\nl.py"):
        (tmp_path / name).write_text(MOVE_ON_AS_IS)
    args = ["sweep", "retry_walkthrough", "--seeds", "1", "--jobs", "1", "--strategy", "e\x1b[31m.py:MoveOn",
            "--strategy", "n\nl.py:MoveOn"]
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "e\\x1b[31m.py:MoveOn" in done.stdout and "n\\nl.py:MoveOn" in done.stdout
    assert len(done.stdout.strip().splitlines()) == 6       # a head, a blank, two lines of header, two rows
    rows = json.loads(_cli([*args, "--json"], tmp_path).stdout)["summary"]
    assert sorted(r["strategy"] for r in rows) == ["e\x1b[31m.py:MoveOn", "n\nl.py:MoveOn"]


@pytest.mark.parametrize("strategy, said", [
    ("esc.py:Escapes", "halted: bad\\n\\x1b[31mRED"),
    (f"exec:{REPO}/examples/consumers/python/run \x1b[31mRED\nX", "run \\x1b[31mRED\\nX · seed 0"),
], ids=["halt reason", "exec command"])
def test_what_a_consumer_says_is_printed_as_its_escapes(tmp_path, strategy, said):
    """A consumer's (or an ``exec:`` program's) ``Halt`` reason holding a newline and an ANSI escape, and an
    ``exec:`` command holding them (the strategy's name), reached the terminal as they are: the summary's line
    broke in two and the escape coloured it, where a description's control characters, a scenario's name and
    a folder's are printed as their escapes (rounds 1, 8, 9). ``--json`` keeps them as data."""
    (tmp_path / "esc.py").write_text(ESCAPES)
    done = _cli(["run", "retry_walkthrough", "--strategy", strategy], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and said in done.stdout


@pytest.mark.parametrize("command, strategy, said", [
    ("explore", f"exec:{REPO}/examples/consumers/python/run \x1b[31mRED", "run \\x1b[31mRED · seed 0"),
    ("shrink", "e\x1b[31m.py:Escapes", "--strategy $'e\\x1b[31m.py:Escapes'"),
    ("audit", "e\x1b[31m.py:Escapes", "--strategy $'e\\x1b[31m.py:Escapes'")])
def test_explore_shrink_and_audit_print_a_strategy_as_its_escapes(tmp_path, command, strategy, said):
    """The same for ``explore``'s first line, and for the replay command ``shrink`` and ``audit`` print when
    they write a failing consumer's file (the file's own comment already held the escapes), as a word a shell
    takes back (bash's ``$'...'``: round 26)."""
    (tmp_path / "e\x1b[31m.py").write_text(ESCAPES)
    args = {"explore": ["retry_walkthrough", "--strategy", strategy, "--max-crashes", "0"],
            "shrink": ["retry_walkthrough", "--strategy", strategy, "--out", "x.toml"],
            "audit": [strategy, "--out", "x.toml", "--budget", "5", "--jobs", "1"]}[command]
    done = _cli([command, *args], tmp_path)
    assert "\x1b" not in done.stdout + done.stderr and said in done.stdout, (done.stdout, done.stderr)


# -- 4. workshop into a folder that holds a README of its own ------------------------------------------------
def test_workshop_into_a_folder_with_its_own_readme_is_refused_and_writes_nothing(tmp_path):
    """``simkit workshop .`` in a project (docs/cli.md suggests ``.`` for the current folder) replaced the
    project's README.md with the edition's, without a word and without ``--force``: only the notebooks counted
    as an attendee's work. Now the README is refused as they are, before anything is written."""
    (tmp_path / "README.md").write_text("# my project\n")
    done = _cli(["workshop", "."], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "README.md" in done.stderr
    assert "Traceback" not in done.stderr and "--force" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
    assert (tmp_path / "README.md").read_text() == "# my project\n"


def test_workshop_again_over_its_own_edition_needs_force_for_the_notebooks_only(tmp_path):
    """A guard: the edition's own README is no clash (``--force`` rewrites an edition as before), and
    ``--force`` replaces a README of the user's too."""
    assert _cli(["workshop", "ws"], tmp_path).returncode == 0
    assert _cli(["workshop", "ws", "--force"], tmp_path).returncode == 0
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "README.md").write_text("# mine\n")
    assert _cli(["workshop", "mine", "--force"], tmp_path).returncode == 0
    assert (tmp_path / "mine" / "README.md").read_text() == (tmp_path / "ws" / "README.md").read_text()


# -- 5. a Settle or Call holding what no Call gave -----------------------------------------------------------
FORGERIES = """import dataclasses

from simkit import Consumer
from simkit.model import COMMITTED, Reservation
from simkit.ops import Call, Reserve, Settle


class SaysSuccess(Consumer):
    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        return (yield Settle(event, op.reservation, "success"))


class ForgesAReservation(Consumer):
    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        yield Call(event, Reservation(5, None, ["x"], "g"))
        return COMMITTED


class ForgesAReply(Consumer):
    def settle_effect(self, event):
        op = yield Reserve(event)
        if op.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, op.reservation)
        if isinstance(reply, str):
            return (yield Settle(event, op.reservation, reply))
        forged = dataclasses.replace(reply, identity=dataclasses.replace(reply.identity, generation="3"))
        return (yield Settle(event, op.reservation, forged))
"""


@pytest.mark.parametrize("cls, said", [
    ("SaysSuccess", "Settle.observation is 'success', not a reply as Call gave it, or one of timeout, "
                    "cancelled, expired"),
    ("ForgesAReservation", "Call.reservation.operation_id is 5 (int), not str"),
    ("ForgesAReply", "Settle.observation.identity.generation is '3' (str), not int"),     # a guard: as before
])
@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_settle_or_call_of_values_no_call_gave_is_the_consumers_one_line(tmp_path, cls, said, store):
    """``Settle(event, reservation, "success")`` (an observation no policy knows: a reply, or ``timeout``,
    ``cancelled``, ``expired``), a ``Call`` with a reservation of an integer operation id, or a reply whose
    identity's generation is a string: a ``ValueError`` or ``TypeError`` traceback from the settlement ledger,
    exit status 1, where a request of a field of the wrong type is the consumer's one line (round 9). (A
    reply's identity of a string generation was already refused by the ledger, naming its field.)"""
    (tmp_path / "forge.py").write_text(FORGERIES)
    done = _cli(["run", "misbound_response", "--strategy", f"forge.py:{cls}", "--store", store], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.count("\n") == 1 and f"strategy forge.py:{cls}: " in done.stderr
    assert said in done.stderr


def test_an_exec_consumer_settling_an_unknown_observation_is_one_line(tmp_path):
    """The same over the wire: ``{"op": "settle", ..., "observation": "success"}`` decoded (a string), then
    raised from the ledger."""
    program = tmp_path / "settle.py"
    program.write_text(
        "import json, sys\n"
        "sys.stdin.readline()\n"
        "def ask(o):\n"
        "    print(json.dumps(o), flush=True)\n"
        "    return json.loads(sys.stdin.readline())['value']\n"
        "cp = ask({'op': 'load'})\n"
        "page = ask({'op': 'fetch', 'cursor': cp['resume_cursor']})\n"
        "event = page['events'][0]\n"
        "op = ask({'op': 'reserve', 'event': event})\n"
        "ask({'op': 'settle', 'event': event, 'reservation': op['reservation'], 'observation': 'success'})\n")
    done = _cli(["run", "late_response", "--strategy", f"exec:{sys.executable} {program}"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.count("\n") == 1 and "Settle.observation is 'success'" in done.stderr


# -- 6. the simulation's SQLite store when the work is killed -----------------------------------------------
ENDS = """import os
import time

from simkit import Consumer


class Exits(Consumer):
    def is_replay(self, event, receipts, applied_position):
        os._exit(3)


class Sleeps(Consumer):
    def is_replay(self, event, receipts, applied_position):
        time.sleep(600)
"""


@pytest.mark.parametrize("argv", [
    ["run", "retry_walkthrough", "--store", "sqlite", "--strategy", "ends.py:Exits"],
    ["sweep", "retry_walkthrough", "--store", "sqlite", "--strategy", "ends.py:Exits", "--seeds", "2"],
    ["explore", "gauntlet", "--store", "sqlite", "--budget", "2", "--max-crashes", "3"],
], ids=["os._exit", "os._exit in a sweep", "budget"])
def test_a_killed_work_leaves_no_store_database_behind(tmp_path, argv):
    """``--store sqlite``: each run's store is a database in a fresh temporary folder, removed with the store;
    a work that ends without returning (a consumer's ``os._exit``, the budget's SIGKILL) left one folder per
    run in the system's temporary folder (``/tmp/simkit-store-*``, two for the walkthrough's two lives). The
    work's temporary files are now in a folder of the command's, removed with the work."""
    (tmp_path / "ends.py").write_text(ENDS)
    (tmp_path / "tmp").mkdir()
    done = _cli(argv, tmp_path, env={"TMPDIR": str(tmp_path / "tmp")}, timeout=180)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_sigkill_of_the_command_leaves_no_store_database_behind(tmp_path):
    """The reaper removes the work's folder when the command itself is killed outright."""
    (tmp_path / "ends.py").write_text(ENDS)
    (tmp_path / "tmp").mkdir()
    argv = ["run", "retry_walkthrough", "--store", "sqlite", "--strategy", "ends.py:Sleeps"]
    made, left = killed_once_made(argv, tmp_path, tmp_path / "tmp")
    assert made, "the run never made its store"
    assert left == []


# -- 7. a command started without its standard files ---------------------------------------------------------
def _closed(args, cwd, close: tuple[int, ...], stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    """``simkit ARGS`` started with file descriptors ``close`` closed, as ``<&- >&- 2>&-`` start it."""
    full = {**os.environ, "PYTHONPATH": str(REPO)}
    shut = ";".join(f"os.close({fd})" for fd in close)
    code = (f"import os, sys; {shut}; "
            "os.execv(sys.executable, [sys.executable, '-m', 'simkit', *sys.argv[1:]])")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=full, stdout=stdout,
                          stderr=stderr, timeout=120)


def test_a_run_started_without_stdin_and_stdout_says_nothing_on_stderr_and_exits_0(tmp_path):
    """``simkit run retry_walkthrough <&- >&-`` (a daemon's child, a cron job): the first pipe of the work
    took file descriptors 0 and 1, the work's ``dup2(2, 1)`` replaced its own end of the answer's pipe with
    stderr, and the answer (a pickle) was written on the terminal, then ``the process doing the work ended
    (exit status 0) without a result: did the consumer end its own process ...``, exit status 2, for
    ``safe``."""
    done = _closed(["run", "retry_walkthrough"], tmp_path, (0, 1), stdout=None)
    assert done.returncode == 0 and done.stderr == b"", done.stderr[-2000:]


def test_an_exec_consumer_run_without_stdin_and_stderr_is_judged(tmp_path):
    """``simkit run ... --strategy exec:... <&- 2>&-``: Python made ``sys.stderr`` None, and the consumer's
    stderr, passed through, was ``None.write``: ``strategy exec:... raised AttributeError: 'NoneType' object
    has no attribute 'flush'``, exit status 2, blamed on the consumer."""
    done = _closed(["run", "retry_walkthrough", "--json", "--strategy",
                    f"exec:{REPO}/examples/consumers/python/run"], tmp_path, (0, 2), stderr=None)
    assert done.returncode == 0
    assert json.loads(done.stdout)["ok"] is True


# -- 8. live --dir holding a link where a database goes ------------------------------------------------------
@pytest.mark.parametrize("name", ["store.db", "sink.db", "store.db-wal"])
def test_live_into_a_folder_holding_a_dangling_link_at_a_database_is_refused(tmp_path, name):
    """``ln -s /elsewhere/victim.db shared/store.db; simkit live ... --dir shared``: the folder was taken as
    free (a dangling link does not exist), and the run's store was written through the link, a database made
    where it pointed. As every writer (docs/cli.md), a link there is refused, dangling or not, writing
    nothing."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / name).symlink_to(tmp_path / "victim.db")
    done = _cli(["live", "retry_walkthrough", "--kills", "1", "--dir", "shared"], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert f"{name} is a symbolic link" in done.stderr and "--dir shared" in done.stderr
    assert not (tmp_path / "victim.db").exists() and not (tmp_path / "victim.db-wal").exists()
    assert sorted(p.name for p in (tmp_path / "shared").iterdir() if not p.name.startswith(".")) == [name]


# -- 9. a consumer's own ``name`` that is no string --------------------------------------------------------
NAMED = """from simkit import Consumer


class ListName(Consumer):
    name = ["mine"]
"""


@pytest.mark.parametrize("command", [["run", "retry_walkthrough"], ["sweep", "retry_walkthrough", "--seeds",
                                                                    "1", "--jobs", "1"]])
def test_a_consumer_whose_name_attribute_is_unhashable_is_judged_under_its_class_name(tmp_path, command):
    """``name = ["mine"]`` on a consumer class (``Consumer.name`` is the strategy's name for the built-ins):
    ``TypeError: unhashable type: 'list'`` from ``strategy_name``'s lookup, a traceback, exit status 1, after
    the run. ``strategy_ref`` already took a name that is no string for none."""
    (tmp_path / "named.py").write_text(NAMED)
    done = _cli([*command, "--strategy", "named.py:ListName"], tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "ListName" in done.stdout


# -- 10. audit's seeds past their bound ----------------------------------------------------------------------
@pytest.mark.parametrize("flag", ["--seeds", "--sweep-seeds"])
def test_audit_seeds_past_their_bound_name_the_flag(tmp_path, flag):
    """``simkit audit safe --sweep-seeds 1000000000`` said ``audit: seeds and sweep_seeds at most 1000000 (got
    3, 1000000000)``: the library's parameters, both, where every other bound names the flag that sets it
    (docs/cli.md)."""
    done = _cli(["audit", "safe", flag, "1000001"], tmp_path)
    assert done.returncode == 2 and done.stderr == f"simkit: {flag} 1000001: must be at most 1000000\n"


# -- 11. an initial applied_position over events the first page serves without receipts ---------------------
PAGES = ('[[pages]]\ncursor = "C1"\npositions = [{}]\nnext_cursor = "C2"\n\n'
         '[[pages]]\ncursor = "C2"\npositions = []\nnext_cursor = "C2"\n')


@pytest.mark.parametrize("text, covered", [
    (PAGES.format("0, 1"), "0 covers position 0,"),
    ("[initial]\napplied_position = 2\n\n" + PAGES.format("1, 2, 3"), "2 covers position 1, 2,"),
    ("[initial]\napplied_position = 99\nreceipts = [99]\n\n" + PAGES.format("1, 2, 3"),
     "99 covers position 1, 2, 3,"),
    ("[generate]\nevents = 5\n\n[initial]\napplied_position = 20\n", "20 covers position 10, 20,"),
], ids=["an event at 0", "applied 2", "a receipt beyond the page", "generated"])
def test_an_initial_applied_position_over_unreceipted_first_events_is_refused(tmp_path, text, covered):
    """Without backfills, ``[initial] applied_position = 2`` over a first page of 1, 2, 3 and no receipts (or
    an event at position 0, which docs/scenarios.md allows, under the default 0): ``safe``'s first attempt
    halts on a gap, nothing served before it, and the verdict was ``NOT ok``: ``halted: gap: e1 ...
    (unjustified: the provider kept its contract)``, ``completed: no``, a correct consumer blamed for a
    durable state none reaches (invariant 2). The file is refused, naming the key."""
    (tmp_path / "s.toml").write_text(text)
    done = _cli(["run", "s.toml"], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert "key 'initial.applied_position': " + covered in done.stderr and "invariant 2" in done.stderr


@pytest.mark.parametrize("text", [
    "[initial]\napplied_position = 2\nreceipts = [1, 2]\n\n" + PAGES.format("1, 2, 3"),
    "backfills = true\n\n[initial]\napplied_position = 2\n\n" + PAGES.format("1, 2, 3"),
    "[initial]\napplied_position = 5\n\n" + PAGES.format("6, 7"),
], ids=["receipts", "backfills", "above"])
def test_an_initial_state_a_consumer_reaches_is_still_judged_ok(tmp_path, text):
    """A guard: receipts for what applied_position covers, a provider with backfills, a first page above."""
    (tmp_path / "s.toml").write_text(text)
    done = _cli(["run", "s.toml", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


# -- 12. an exec: consumer's line just over 1 MiB ------------------------------------------------------------
LONG_LINE = """import json, sys
sys.stdin.readline()
line = json.dumps({"op": "halt", "reason": "x" * (int(sys.argv[1]) - 28)})
assert len(line) == int(sys.argv[1]), len(line)
sys.stdout.write(line + "\\n")
sys.stdout.flush()
sys.stdin.readline()
"""


@pytest.mark.parametrize("size, refused", [(2**20, False), (2**20 + 1, True), (2**20 + 50_000, True)])
def test_a_request_line_over_1_mib_is_refused_however_it_arrives(tmp_path, size, refused):
    """docs/protocol.md: a line over 1 MiB is refused. Its check ran only while no newline had arrived, so a
    line whose end came in the same 64 KiB read as the bytes past the bound (up to 1 MiB + 64 KiB) was taken:
    a halt of 1,098,576 bytes was judged."""
    (tmp_path / "long.py").write_text(LONG_LINE)
    done = _cli(["run", "retry_walkthrough", "--json", "--strategy", f"exec:{sys.executable} long.py {size}"],
                tmp_path)
    if refused:
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-500:]
        assert "wrote a line longer than 1048576 bytes" in done.stderr
    else:
        assert done.returncode == 0 and json.loads(done.stdout)["halted"] is not None, done.stderr[-500:]
