"""Issue 32's leftovers of earlier rounds, each found by a tester and left then: a killed ``compare``, the
``audit`` flags' bound, number flags in other digits, a wait of no declared reason, halt reasons and
descriptions of megabytes, a missing ``#!`` interpreter, and ``serve`` started with SIGINT ignored; each held
to what the other commands already do."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import pytest
from conftest import killed_once_made
from conftest import simkit_in as _cli

import simkit
from simkit.cli.parser import build_parser
from simkit.errors import SimkitError

LONG = '[generate]\nevents = 200000\npage_size = 100\n'


def test_a_sigkill_of_compare_leaves_no_store_database_behind(tmp_path):
    """``simkit compare FILE --store sqlite`` ran its strategies in its own process: a SIGKILL left the run's
    store folder (``/tmp/simkit-store-*``; the round-11 tester found 141 of them). It now runs them apart,
    as ``run`` does, and the reaper removes the work's folder when the command is killed outright."""
    (tmp_path / "long.toml").write_text(LONG)
    (tmp_path / "tmp").mkdir()
    made, left = killed_once_made(["compare", "long.toml", "--store", "sqlite"], tmp_path, tmp_path / "tmp",
                                  timeout=120)
    assert made, "the runs never made their store"
    assert left == []


def test_compare_still_answers_as_before(tmp_path):
    """A guard: the same table, and the same JSON, from the work's process."""
    done = _cli(["compare", "retry_walkthrough", "--json"], tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert '"scenario": "retry_walkthrough"' in done.stdout and done.stdout.count("\n") == 1
    done = _cli(["compare", "retry_walkthrough"], tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("retry_walkthrough (seed 0, settlement fenced)")
    assert "\n\nstrategy " in done.stdout


def test_audit_seeds_past_the_library_bound_name_the_flag(tmp_path):
    """``--seeds`` and ``--sweep-seeds`` are bounded by the library's own bound (one constant, not a copy)."""
    from simkit.tools.sweep import MAX_SEEDS
    for flag in ("--seeds", "--sweep-seeds"):
        done = _cli(["audit", "safe", flag, str(MAX_SEEDS + 1)], tmp_path)
        assert done.returncode == 2
        assert done.stderr == f"simkit: {flag} {MAX_SEEDS + 1}: must be at most {MAX_SEEDS}\n"


@pytest.mark.parametrize("args", [
    ["run", "gauntlet", "--seed", "\u0663"],                 # ARABIC-INDIC DIGIT THREE: int() reads 3
    ["compare", "gauntlet", "--seed", "1_0"],
    ["sweep", "gauntlet", "--seeds", "\u0662"],
    ["sweep", "gauntlet", "--seeds", "2", "--first-seed", " 7"],
    ["sweep", "gauntlet", "--seeds", "2", "--crash-rate", "0.\u0665"],
    ["explore", "gauntlet", "--max-crashes", "\u0661"],
    ["live", "gauntlet", "--kills", "\uff11"],                # FULLWIDTH DIGIT ONE
    ["serve", "--port", "\u0668\u0660\u0660\u0660"],
    ["service", "checkpoint_service", "--contract-version", "\u0661"],
], ids=lambda a: " ".join(a[:1] + [x for x in a if x.startswith("--")]))
def test_a_number_flag_refuses_digits_that_are_not_ascii(args):
    """``--seed \u0663`` ran seed 3 (``int()`` reads any Unicode digit, ``_`` and blanks around), while
    ``--crash`` and the scenario files refuse them: every number a command reads is now ASCII digits, one
    line naming the flag."""
    with pytest.raises(SimkitError, match=rf"^{args[-2]} .*: expected a (whole )?number in ASCII digits$"):
        build_parser().parse_args(args)


CONSUMERS = """\
from simkit import Consumer
from simkit.ops import Halt, Wait


class Waits(Consumer):
    def run(self):
        yield Wait("zzz")


class Halts(Consumer):
    def run(self):
        yield Halt("x" * 5_000_000)
"""


def test_a_wait_of_a_reason_the_vocabulary_lacks_is_a_malformed_request(tmp_path):
    """``Wait("zzz")`` was taken as a wait of a worker not caught up: a consumer could wait for ever on a
    reason nobody declared. A reason is one of ``WAIT_REASONS``, as the protocol's table says."""
    (tmp_path / "mine.py").write_text(CONSUMERS)
    done = _cli(["run", "gauntlet", "--strategy", "mine.py:Waits"], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("simkit: strategy mine.py:Waits: yielded a malformed request: "
                           "Wait.reason is 'zzz', not one of caught_up, blocked\n")


def test_a_halt_reason_and_a_description_of_megabytes_are_printed_as_their_start(tmp_path):
    """A consumer's halt reason of 5,000,000 characters, and a scenario's description of 3,000,000, were
    printed whole (``run``'s verdict, ``compare``'s head): their start and length now. ``--json`` keeps
    them whole, as data."""
    (tmp_path / "mine.py").write_text(CONSUMERS)
    (tmp_path / "big.toml").write_text(f'description = "{"d" * 3_000_000}"\n[generate]\nevents = 5\n'
                                       'page_size = 2\n')
    done = _cli(["run", "gauntlet", "--strategy", "mine.py:Halts"], tmp_path)
    assert done.returncode == 0 and len(done.stdout) < 3000, len(done.stdout)
    assert "x… (5000000 characters) (unjustified" in done.stdout
    done = _cli(["compare", "big.toml"], tmp_path)
    assert done.returncode == 0 and len(done.stdout) < 5000 and "d… (3000000 characters)" in done.stdout
    done = _cli(["run", "gauntlet", "--strategy", "mine.py:Halts", "--json"], tmp_path)
    assert '"halted": "' + "x" * 5_000_000 + '"' in done.stdout


def test_a_halt_reason_of_megabytes_is_cut_in_every_line_and_cell_that_shows_it():
    """The same in the one-line verdict (explore's and shrink's) and a table's cell (compare's, audit's)."""
    from simkit.judge.report import verdict_line, verdict_row
    from simkit.ops import Halt

    class Halts(simkit.Consumer):
        def run(self):
            yield Halt("x" * 5_000_000)
    run = simkit.simulate(simkit.load("gauntlet"), Halts)
    assert "x… (5000000 characters)" in verdict_line(run.verdict) and len(verdict_line(run.verdict)) < 2000
    cells = " ".join(verdict_row(run))
    assert "x… (5000000 characters) (unjustified)" in cells and len(cells) < 2000


def test_a_script_whose_interpreter_is_missing_is_told_so(tmp_path):
    """``exec:./cons`` of a script whose ``#!`` names an interpreter that is not there was "cannot start
    './cons': No such file or directory", of a file that is there. It now names the interpreter."""
    script = tmp_path / "cons"
    script.write_text("#!/usr/bin/no-such-interpreter -u\nprint(1)\n")
    script.chmod(0o755)
    done = _cli(["run", "gauntlet", "--strategy", "exec:./cons"], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("simkit: strategy exec:./cons: worker 1: cannot start './cons': its #! line names "
                           "/usr/bin/no-such-interpreter, which is not there\n")
    done = _cli(["run", "gauntlet", "--strategy", "exec:./gone"], tmp_path)
    assert done.stderr.endswith("cannot start './gone': No such file or directory\n")


def test_serve_started_with_sigint_ignored_keeps_ignoring_it():
    """A shell starts a background job with SIGINT ignored; every command keeps ignoring it (``explore``
    runs on), but ``serve``'s uvicorn handled it anyway and shut down with exit status 0. It now serves
    on, and SIGTERM still ends it with its one line and 143."""
    argv = [sys.executable, "-m", "simkit", "serve", "--port", "0", "--log-level", "warning"]
    proc = subprocess.Popen(argv,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        url = proc.stdout.readline().split()[2]
        assert httpx.get(f"{url}/openapi.json", timeout=60).status_code == 200   # uvicorn's handlers are in
        proc.send_signal(signal.SIGINT)
        time.sleep(2.0)
        assert proc.poll() is None, "serve ended on a SIGINT it was started ignoring"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, err) == (143, "simkit: terminated by SIGTERM\n")


def test_shrink_says_a_consumer_whose_replay_fails_otherwise_is_not_deterministic(monkeypatch):
    """``shrink`` of a consumer that fails one way, then another (or not at all) on the same input wrote a
    file whose ``simkit run`` showed another verdict than the one it was shrunk for, and said nothing (round
    13's tester). Its final replay is now compared: here the consumer passes it, as a nondeterministic one
    may."""
    from simkit.tools import shrink as shrinking
    ran, replayed = shrinking.judged, []

    def judged(scenario, *args):
        if replayed:                                    # the replay after shrinking: this time, it passes
            return ran(simkit.load("retry_walkthrough"), "safe")
        return ran(scenario, *args)

    def passes(data, still):                            # nothing smaller: the replay comes next
        replayed.append(True)
        return data
    monkeypatch.setattr(shrinking, "judged", judged)
    monkeypatch.setattr(shrinking, "_passes", passes)
    with pytest.raises(SimkitError, match=r"replay gives ok, not .*: the consumer is not deterministic, and "
                                          r"nothing was written$"):
        shrinking.shrink(simkit.load("retry_walkthrough"), "persist_token_on_fetch")


# == Leftovers of rounds 13-15 ===============================================================================
# -- 1. one tolerant writer of a Scenario as the dict of its file --------------------------------------------
def test_one_writer_of_a_scenario_as_its_file_serves_the_check_and_the_toml():
    """Before: ``runner._as_data`` (tolerant, for the check of an edited Scenario) and ``scenario_toml.
    scenario_data`` (for ``shrink`` and ``audit``'s TOML, which assumed a well-formed one: ``pages = "abc"``
    was a KeyError, neither pages nor generate an AssertionError) were two copies. Now one, in
    ``simkit.scenario.write``, answered by both; every bundled scenario reads back into itself."""
    import dataclasses
    import tomllib

    from simkit import runner
    from simkit.scenario import write
    from simkit.tools import scenario_toml, shrink
    assert scenario_toml.scenario_data is shrink.scenario_data is write.scenario_data
    assert not hasattr(runner, "_as_data")
    for name in ("retry_walkthrough", "gauntlet", "late_retry", "quarantine_boundary", "transient_storm"):
        sc = simkit.load(name)
        text = scenario_toml.toml_text(write.scenario_data(sc))
        assert simkit.parse(tomllib.loads(text), source=sc.source) == sc, name
    broken = dataclasses.replace(simkit.load("retry_walkthrough"), pages="abc", generate=None)
    assert write.scenario_data(broken)["pages"] == "abc"       # passed through, for parse to name


def test_a_timing_value_of_none_is_named_by_the_check_not_a_traceback_from_the_world():
    """Before: the check's writer left out every ``None`` of ``[timing]``, so ``parse`` took the default and
    the world raised ``TypeError: '<=' not supported between NoneType and int``. Now it is written as it is
    and named: one line, the key."""
    import dataclasses
    sc = simkit.load("retry_walkthrough")
    sc = dataclasses.replace(sc, timing=dataclasses.replace(sc.timing, fetch_latency=None))
    with pytest.raises(simkit.ScenarioError, match=r"^scenario 'retry_walkthrough': timing\.fetch_latency "
                                                   r"expected float, got NoneType None$"):
        simkit.simulate(sc)


# -- 2. and 3. a hook's answer it may not give ---------------------------------------------------------------
class _Sub(str):
    """A str of its own type."""


class FetchZero(simkit.Consumer):
    def after_fetch(self, checkpoint, page):
        return 0
        yield


class FetchTypo(simkit.Consumer):
    def after_fetch(self, checkpoint, page):
        return "rejectd"
        yield


class FetchSub(simkit.Consumer):
    def after_fetch(self, checkpoint, page):
        return _Sub("caught_up")
        yield


class ValidateSub(simkit.Consumer):
    def validate(self, checkpoint, page, ids_at):
        return _Sub("bad page")


class ValidateFalse(simkit.Consumer):
    def validate(self, checkpoint, page, ids_at):
        return False


AFTER_FETCH = ("but must return None to go on, or the status that ends the attempt: one of advanced, "
               "caught_up, blocked, rejected, lost (docs/hooks.md#after_fetch)")
VALIDATE = 'but must return None (or "") to let the page through, or a str: the reason to halt'


@pytest.mark.parametrize("consumer, said", [
    (FetchZero, f"hook after_fetch() returned 0 (int) {AFTER_FETCH}"),
    (FetchTypo, f"hook after_fetch() returned 'rejectd' (str) {AFTER_FETCH}"),
])
def test_after_fetch_returning_no_status_is_one_line_naming_the_hook(consumer, said):
    """Before: ``after_fetch`` returning 0 (or a misspelt status) ended the attempt with it; ``run()`` began
    the next one at once, for ever, until the progress guard stopped the run (10000 fetches) with no word of
    the hook. Now: one line naming the hook and the value, at the first page."""
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), consumer)
    assert str(caught.value).endswith(said), str(caught.value)


@pytest.mark.parametrize("consumer, said", [
    (FetchSub, f"hook after_fetch() returned 'caught_up' (_Sub, a subclass of str) {AFTER_FETCH}"),
    (ValidateSub, f"hook validate() returned 'bad page' (_Sub, a subclass of str) {VALIDATE}"),
    (ValidateFalse, f"hook validate() returned False (bool) {VALIDATE}"),
])
def test_a_str_subclass_or_a_bool_from_a_hook_names_the_hook_not_the_request(consumer, said):
    """Before: a ``str`` subclass from ``validate`` or ``after_fetch`` was reported as ``Halt.reason`` or
    ``Wait.reason`` of a malformed request, one the author never wrote; ``validate`` returning ``False`` let
    the page through unseen. Now the hook and what it returned."""
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), consumer)
    message = str(caught.value)
    assert said in message and "reason" not in message.split("returned")[0], message


def test_a_bad_hook_answer_is_one_line_and_exit_2_on_the_command_line(tmp_path):
    """The same on the command line: one line, exit status 2, no traceback."""
    (tmp_path / "zero.py").write_text("from simkit import Consumer\n\n\nclass Zero(Consumer):\n"
                                      "    def after_fetch(self, checkpoint, page):\n        return 0\n"
                                      "        yield\n")
    done = _cli(["run", "retry_walkthrough", "--strategy", "zero.py:Zero"], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"simkit: strategy zero.py:Zero: hook after_fetch() returned 0 (int) "
                           f"{AFTER_FETCH}\n")


def test_the_documented_statuses_and_reasons_still_pass():
    """A guard: ``persist_token_on_fetch`` returns ``"lost"``/``"rejected"``/None from ``after_fetch``; the
    default ``validate`` its reasons."""
    assert simkit.simulate(simkit.load("retry_walkthrough"), "persist_token_on_fetch").verdict is not None
    assert simkit.simulate(simkit.load("gauntlet"), "safe").verdict.ok


# -- 4. simulate from inside a running simulation ------------------------------------------------------------
class SimulatesInValidate(simkit.Consumer):
    def validate(self, checkpoint, page, ids_at):
        simkit.simulate(simkit.load("quarantine_boundary"), "safe")
        return None


def test_simulate_inside_a_hook_says_so_and_names_the_hook():
    """Before: ``... raised RuntimeError: the garbage collector is already paused: one pause per run, at its
    outermost place (simkit.truth.collector) in validate (...)``: the collector, not what the author did. Now
    that simulate was called from inside a running simulation, and the hook."""
    with pytest.raises(SimkitError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), SimulatesInValidate)
    message = str(caught.value)
    assert "simulate() was called from inside a running simulation" in message, message
    assert " in validate (" in message and "garbage collector" not in message and "\n" not in message
    assert simkit.simulate(simkit.load("retry_walkthrough")).verdict.ok      # and the next run is fine


# -- 5. simkit workshop at a FIFO or a dangling link ---------------------------------------------------------
def test_workshop_at_a_fifo_or_a_dangling_link_says_what_it_is(tmp_path):
    """Before: ``simkit workshop FIFO`` said it "is a file"; ``simkit workshop DANGLING_LINK`` "cannot write
    the notebooks there: File exists". Now each what it is, in one line, exit 2; nothing is written."""
    import os
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    for args, said in [
        (["workshop", "pipe"], "simkit: pipe is a FIFO: name a folder for the workshop notebooks\n"),
        (["workshop", "gone"], f"simkit: gone is a dangling symbolic link (to {str(tmp_path / 'nowhere')!r}, "
                               "which is not there): name a folder for the workshop notebooks\n"),
        (["workshop", "gone/sub"], f"simkit: gone/sub: gone is a dangling symbolic link (to "
                                   f"{str(tmp_path / 'nowhere')!r}, which is not there), not a folder: name "
                                   "a folder for the workshop notebooks\n"),
    ]:
        done = _cli(args, tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", said), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gone", "pipe"]


# -- 6. simkit.viz arguments ---------------------------------------------------------------------------------
@pytest.mark.parametrize("call, said", [
    (lambda ax, run: simkit.viz.plot.timeline(ax, run, now=float("nan")), "now nan: must be a finite"),
    (lambda ax, run: simkit.viz.plot.timeline(ax, run, now=float("inf")), "now inf: must be a finite"),
    (lambda ax, run: simkit.viz.plot.timeline(ax, run, now=True), "now True: must be a finite"),
    (lambda ax, run: simkit.viz.plot.fates(ax, run, columns=0), "columns 0: must be an integer of at least"),
    (lambda ax, run: simkit.viz.plot.fates(ax, run, columns=2.5), "columns 2.5: must be an integer"),
])
def test_timeline_now_and_fates_columns_are_checked(call, said):
    """Before: ``timeline(now=nan)`` drew no line and said nothing, ``fates(columns=0)`` drew one per row.
    Now a ValueError naming the argument, as ``layers`` of ``timeline`` already was."""
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import simkit.viz.plot
    fig, ax = plt.subplots()
    try:
        with pytest.raises(ValueError, match=f"^{said}"):
            call(ax, simkit.simulate(simkit.load("retry_walkthrough")))
        simkit.viz.plot.timeline(ax, simkit.simulate(simkit.load("retry_walkthrough")), now=3)  # still fine
    finally:
        plt.close(fig)


# -- 7. service --contract-version and --version both given --------------------------------------------------
def test_service_contract_version_and_its_old_name_must_agree(tmp_path):
    """Before: ``simkit service S --contract-version 1 --version 2`` ran version 2 (the last won, silently).
    Now two versions given is one line, exit 2; the same version twice is accepted."""
    for args in (["--contract-version", "1", "--version", "2"],
                 ["--version", "2", "--contract-version", "1"]):
        done = _cli(["service", "checkpoint_service", *args, "--json"], tmp_path)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == ("simkit: --contract-version 1 and --version 2: give one (--version is the old "
                               "name of --contract-version)\n")
    done = _cli(["service", "checkpoint_service", "--contract-version", "2", "--version", "2", "--json"],
                tmp_path)
    assert done.returncode == 0 and '"version": 2' in done.stdout and done.stderr == ""


# -- 8. a start-up crash-mid-write#N counts the writes it can strike -----------------------------------------
def test_a_start_up_crash_mid_write_counts_only_writes_that_reach_their_commit():
    """Before: ``--fault crash-mid-write#2`` counted every authorized checkpoint write: an identical retry
    answered from its receipt was the 2nd, its reply was lost though nothing crashed, and the next real write
    was spared. Now (docs/service.md, "Faults") only the writes that reach their commit count."""
    import json

    pytest.importorskip("fastapi")
    from simkit.service import DEV_SCOPE, DEV_TENANT
    from simkit.service.config import build_service
    from simkit.service.http import _scheduler
    svc, faults = build_service(store="split", faults=["crash-mid-write#2"])
    scheduled = _scheduler(faults)

    def write(key, expected, seq):
        cursor = {"journal_id": svc.journal_id(DEV_TENANT, DEV_SCOPE), "sequence": seq}
        body = {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": key,
                                                "consumer_id": "cc", "expected_revision": expected,
                                                "cursor": cursor}}
        r = svc.call("/api/v1/memory/checkpoints", "Bearer dev", json.dumps(body).encode(),
                     scheduled=scheduled)
        return r.status, r.lost
    assert write("p1", 0, 2) == (200, False)
    assert write("p1", 0, 2) == (200, False)        # the identical retry: its receipt; not struck
    assert write("p9", 0, 3) == (409, False)        # refused (revision_conflict): not struck
    assert write("p2", 1, 4) == (500, True)         # the 2nd write to reach its commit: the crash
    assert write("p3", 2, 5) == (200, False)


def test_start_up_corruptions_count_only_the_requests_they_can_strike():
    """Before: ``corrupt-checkpoint#2`` counted every authorized read and write, a read of no checkpoint and a
    write answered from its receipt among them (neither has a stored checkpoint to alter), and
    ``corrupt-journal#2`` every feed page, an empty one too: the fault struck another request than the
    ``N``-th it could strike, or none. Now each counts only the requests that reach what it alters."""
    import json

    pytest.importorskip("fastapi")
    from simkit.service import DEV_SCOPE, DEV_TENANT
    from simkit.service.config import build_service
    from simkit.service.http import _scheduler

    def service(fault):
        svc, faults = build_service(faults=[fault])
        scheduled = _scheduler(faults)

        def call(route, body):
            version = {} if "command" in body else {"contract_version": 1}
            r = svc.call(route, "Bearer dev", json.dumps({**version, "scope": DEV_SCOPE, **body}).encode(),
                         scheduled=scheduled)
            return r.status
        return svc, call

    svc, call = service("corrupt-checkpoint#2")
    read = {"consumer_id": "cc"}
    write = {"command": {"contract_version": 1, "idempotency_key": "p1", "consumer_id": "cc",
                         "expected_revision": 0,
                         "cursor": {"journal_id": svc.journal_id(DEV_TENANT, DEV_SCOPE), "sequence": 2}}}
    assert call("/api/v1/memory/checkpoints/read", read) == 404        # nothing stored: not struck
    assert call("/api/v1/memory/checkpoints", write) == 200            # creates it: nothing stored before
    assert call("/api/v1/memory/checkpoints", write) == 200            # answered from its receipt
    assert call("/api/v1/memory/checkpoints/read", read) == 200        # the 1st that could be struck
    assert call("/api/v1/memory/checkpoints/read", read) == 500        # the 2nd: struck

    svc, call = service("corrupt-journal#2")
    head = svc.journals[next(iter(svc.journals))].head
    end = {"journal_id": svc.journal_id(DEV_TENANT, DEV_SCOPE), "sequence": head}
    assert call("/api/v1/memory/changes", {"query": {"after": end}}) == 200     # an empty page: not struck
    assert call("/api/v1/memory/changes", {}) == 200                           # the 1st with entries
    assert call("/api/v1/memory/changes", {}) == 500                           # the 2nd: struck


# -- 9. generators that would not close, kept for ever -------------------------------------------------------
UNDYING_RUNS = """import sys
import simkit
from simkit.procedure import lives

for _ in range(lives.KEEP_UNCLOSED + 4):
    try:
        simkit.simulate(simkit.load("retry_walkthrough"), "undying.py:Undying")
    except simkit.SimkitError:
        pass
print(len(lives._UNCLOSED))
"""


def test_generators_that_would_not_close_are_kept_at_most_a_few_and_let_go_quietly(tmp_path):
    """Before: each run of a consumer whose ``run()`` yields again after GeneratorExit left its generator
    (and its consumer, and all it held) in ``lives._UNCLOSED`` for ever: kept so that the collector did not
    close it again and print "Exception ignored in" with a traceback. Now at most ``KEEP_UNCLOSED``, the
    older let go, and at exit all, without that message."""
    from test_hostile_round12 import UNDYING

    from simkit.procedure.lives import KEEP_UNCLOSED
    (tmp_path / "undying.py").write_text(UNDYING)
    (tmp_path / "runs.py").write_text(UNDYING_RUNS)
    done = subprocess.run([sys.executable, "runs.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ,
                                            "PYTHONPATH": str(__import__("pathlib").Path(simkit.__file__)
                                                              .parents[1])})
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == f"{KEEP_UNCLOSED}\n"
