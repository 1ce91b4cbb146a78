"""Hostile input, thirteenth round (a fresh tester): a ``service --explore`` horizon past what ``len()`` can
count; ``corrupt-checkpoint`` asked of a checkpoint write the service refuses or answers from its receipt; an
``--out`` onto the bundled scenario a command reads by its name; a request line with an integer past
Python's 4,300 digits; a live run cut off at its timeout; a halt with an empty reason; a page whose cursor is
empty; a scenario or config file whose read never ends. Each: one line naming the file, key or flag and the
problem (exit status 2, no traceback), a reply that changes no state, or the verdict the same run gives (and
says truly).
"""
from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import TWO_PAGES
from conftest import simkit_in as _cli

import simkit
from simkit.judge.verdict import _halt_cell
from simkit.scenario.read import SCENARIO_DIR
from simkit.service import DEV_SCOPE, dev_service

WRITE, READ = "/api/v1/memory/checkpoints", "/api/v1/memory/checkpoints/read"


# -- 1. service --explore --horizon past sys.maxsize ---------------------------------------------------------
@pytest.mark.parametrize("horizon", [2**62, 10**23])
def test_a_service_horizon_past_what_len_counts_is_its_budget_line(tmp_path, horizon):
    """``simkit service checkpoint_service --explore --horizon 99999999999999999999999`` was an
    ``OverflowError: cannot fit 'int' into an index-sized integer`` traceback and exit status 1: the lazy
    schedules' pool (simkit/service/sim.py) was measured with ``len()``, which stops at ``sys.maxsize``,
    where its docstring says "a huge ``horizon`` costs time, not memory". Now it runs until ``--budget``
    (docs/cli.md, "Bounds"): one line, exit status 2."""
    got = _cli(["service", "checkpoint_service", "--client", "correct", "--explore",
                "--horizon", str(horizon), "--budget", "1"], tmp_path)
    assert got.returncode == 2, got.stderr
    assert got.stderr.startswith("simkit: service checkpoint_service --explore: the budget of 1 s (--budget)")
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr and got.stdout == ""


# -- 2. corrupt-checkpoint on a checkpoint write the service answers without reading the checkpoint ----------
def _write(svc, key, revision, sequence, faults=()):
    """A checkpoint command of ``dev`` for consumer ``c``: the reply's status and error code (or None)."""
    journal = svc.journals[next(iter(svc.journals))].journal_id
    raw = json.dumps({"scope": DEV_SCOPE, "command": {
        "contract_version": 1, "idempotency_key": key, "consumer_id": "c", "expected_revision": revision,
        "cursor": {"journal_id": journal, "sequence": sequence}}}).encode()
    reply = svc.call(WRITE, "Bearer dev", raw, faults=faults, content_type="application/json")
    body = reply.body if isinstance(reply.body, dict) else json.loads(reply.body)
    return reply.status, body.get("error", {}).get("code")


def _read_status(svc) -> int:
    raw = json.dumps({"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "c"}).encode()
    return svc.call(READ, "Bearer dev", raw, content_type="application/json").status


@pytest.mark.parametrize("key, revision, sequence, status, code", [
    ("k2", 1, 99, 409, "cursor_ahead"), ("k1", 0, 3, 409, "idempotency_conflict"), ("k1", 0, 2, 200, None)],
    ids=["cursor ahead", "idempotency conflict", "identical retry"])
def test_corrupt_checkpoint_on_a_write_answered_before_it_reads_the_checkpoint_changes_nothing(
        key, revision, sequence, status, code):
    """``X-Simkit-Fault: corrupt-checkpoint`` on a checkpoint write the service then refused (409
    ``cursor_ahead``, 409 ``idempotency_conflict``) or answered from its receipt (an identical retry, 200)
    corrupted the stored checkpoint all the same, before the call: every later read of it was a 500
    ``integrity_failure``, from a request that was refused or told all was well (docs/service.md: "a rejected
    request, whatever its status, changes no state"; round 12 found the same of ``corrupt-journal``). Now the
    write alters its checkpoint as it reads it, and one answered before that alters nothing."""
    svc = dev_service()
    assert _write(svc, "k1", 0, 2) == (200, None)
    before = svc.state_digest()
    assert _write(svc, key, revision, sequence, faults=("corrupt-checkpoint",)) == (status, code)
    assert svc.state_digest() == before and _read_status(svc) == 200


def test_corrupt_checkpoint_on_a_write_that_reads_it_is_still_its_500():
    """A guard: a write that reads the stored checkpoint (a stale revision here) meets the corruption: 500."""
    svc = dev_service()
    assert _write(svc, "k1", 0, 2) == (200, None)
    assert _write(svc, "k3", 7, 3, faults=("corrupt-checkpoint",)) == (500, "integrity_failure")
    assert _read_status(svc) == 500


# -- 3. an output path onto a bundled scenario named by its name ---------------------------------------------
@pytest.mark.parametrize("command", [
    ["shrink", "retry_walkthrough", "--strategy", "persist_token_on_fetch"],
    ["explore", "retry_walkthrough", "--strategy", "persist_token_on_fetch", "--max-crashes", "0"],
    ["audit", "persist_token_on_fetch", "--budget", "20", "--sweep-seeds", "0", "--jobs", "1"],
], ids=["shrink", "explore", "audit"])
def test_an_out_onto_the_bundled_scenario_a_command_reads_is_refused(tmp_path, command):
    """``simkit shrink retry_walkthrough --strategy persist_token_on_fetch --out
    .../simkit/scenario/bundled/retry_walkthrough.toml`` wrote the shrunk scenario over the bundled one (an
    editable install's, a checkout's): ``--out`` is refused when it "is the scenario file itself"
    (docs/cli.md, "Exit status"), but the check compared it with the argument as a path, and
    ``retry_walkthrough`` is a name. ``audit`` reads every bundled scenario. Now each is one line naming
    ``--out``, and the file stays."""
    bundled = Path(str(SCENARIO_DIR / "retry_walkthrough.toml"))
    kept = bundled.read_bytes()
    try:
        got = _cli([*command, "--out", str(bundled)], tmp_path)
    finally:
        written = bundled.read_bytes()
        bundled.write_bytes(kept)           # a failing run of this test leaves the checkout as it was
    assert got.returncode == 2, got.stderr
    assert got.stderr.startswith(f"simkit: --out {bundled}: is the scenario file ")
    assert got.stderr.count("\n") == 1 and written == kept


def test_a_scenario_file_named_as_a_path_is_still_compared_as_before(tmp_path):
    """A guard: a scenario given by its path, and an ``--out`` elsewhere, as before."""
    (tmp_path / "mine.toml").write_text(TWO_PAGES)
    got = _cli(["explore", "mine.toml", "--strategy", "persist_token_on_fetch", "--max-crashes", "0", "--out",
                "mine.toml"], tmp_path)
    assert got.returncode == 2 and "is the scenario file 'mine.toml' itself" in got.stderr
    got = _cli(["explore", "mine.toml", "--strategy", "persist_token_on_fetch", "--max-crashes", "0", "--out",
                "first.toml"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "first.toml").is_file()


# -- 4. a request line holding an integer past Python's 4,300 digits -----------------------------------------
def test_a_request_line_with_an_integer_past_4300_digits_is_said_in_the_lines_terms(tmp_path):
    """An ``exec:`` consumer writing ``{"op": "fetch", "cursor": 999...}`` (5,000 digits) was told ``not JSON
    (Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; use
    sys.set_int_max_str_digits() to increase the limit)``: advice to a program in any language to change a
    setting of simkit's Python. Round 4 found the same of the service's bodies. Now the line is "not JSON (an
    integer of more than 4300 digits)", one line, exit status 2."""
    (tmp_path / "s.toml").write_text(TWO_PAGES)
    (tmp_path / "long.py").write_text(
        "import sys\nsys.stdin.readline()\n"
        "sys.stdout.write('{\"op\": \"fetch\", \"cursor\": ' + '9' * 5000 + '}\\n')\nsys.stdout.flush()\n"
        "sys.stdin.readline()\n")
    got = _cli(["run", "s.toml", "--strategy", f"exec:{sys.executable} long.py"], tmp_path)
    assert got.returncode == 2, got.stderr
    assert got.stderr.rstrip("\n").endswith(": not JSON (an integer of more than 4300 digits)"), got.stderr
    assert got.stderr.count("\n") == 1 and "set_int_max_str_digits" not in got.stderr


# -- 5. a live run cut off at its --timeout ------------------------------------------------------------------
def test_a_live_run_cut_off_at_its_timeout_says_so_not_that_the_workers_caught_up(tmp_path):
    """``simkit live retry_walkthrough --kills 1 --timeout 5e-324`` ended at once, its workers nowhere near
    the end (``completed: no``, two events pending), and its summary said ``0 SIGKILLs of 1 asked (the workers
    caught up first)``: the one reason it gives for kills not delivered, false here. Now a run that reaches
    its timeout says ``(cut off at the timeout)``, and no reason that did not happen."""
    got = _cli(["live", "retry_walkthrough", "--kills", "1", "--timeout", "5e-324"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert "completed: no" in got.stdout and "caught up first" not in got.stdout
    live = next(line for line in got.stdout.splitlines() if line.startswith("  live: "))
    assert live.startswith("  live: 0 SIGKILLs of 1 asked at random instants")
    assert "(cut off at the timeout)" in live


def test_a_live_run_that_ends_before_its_kills_still_says_the_workers_caught_up(tmp_path):
    """A guard: kills not delivered because the workers finished first are still said so."""
    got = _cli(["live", "retry_walkthrough", "--kills", "1", "--at", "after_page_barrier", "--seed", "0"],
               tmp_path)
    assert got.returncode == 0, got.stderr
    assert "completed: yes" in got.stdout and "cut off" not in got.stdout


# -- 6. a halt whose reason is empty -------------------------------------------------------------------------
HALTS = """from simkit import Consumer
from simkit.ops import Halt, Load


class HaltsSayingNothing(Consumer):
    reason = ""

    def run(self):
        yield Load()
        yield Halt(self.reason)


class HaltsSayingBlank(HaltsSayingNothing):
    reason = "   "
"""


@pytest.mark.parametrize("name", ["HaltsSayingNothing", "HaltsSayingBlank"])
def test_a_halt_with_an_empty_reason_is_said_to_be_a_halt(tmp_path, name):
    """A consumer that yields ``Halt("")`` (an ``exec:`` one writing ``{"op": "halt", "reason": ""}``) was
    reported ``halted: no`` by ``simkit run``, and ``-`` in a table, while ``--json`` said ``"halted": ""``:
    the summary tested the reason's truth, and an empty string is false, so a halt for investigation read as
    a worker that simply never completed (``audit`` counted it as stalled). A blank reason printed nothing at
    all. Now either is ``halted: (no reason given) (unjustified: ...)``."""
    (tmp_path / "s.toml").write_text(TWO_PAGES)
    (tmp_path / "halts.py").write_text(HALTS)
    got = _cli(["run", "s.toml", "--strategy", f"halts.py:{name}"], tmp_path)
    assert got.returncode == 0, got.stderr
    assert "halted: (no reason given) (unjustified: the provider kept its contract)" in got.stdout
    assert "halted: no" not in got.stdout
    verdict = simkit.simulate(simkit.parse(tomllib.loads(TWO_PAGES)), _halts_class(tmp_path, name)).verdict
    assert _halt_cell(verdict) == "(no reason given) (unjustified)"


def _halts_class(tmp_path, name):
    namespace: dict = {}
    exec(compile(HALTS, str(tmp_path / "halts.py"), "exec"), namespace)
    return namespace[name]


# -- 7. an empty cursor -------------------------------------------------------------------------------------
EMPTY_CURSOR = """
[initial]
resume_cursor = ""
receipts = [1, 2]
applied_position = 2

[[pages]]
cursor = "C1"
positions = [1, 2]
next_cursor = ""

[[pages]]
cursor = ""
positions = [3]
next_cursor = "C3"

[[pages]]
cursor = "C3"
positions = []
next_cursor = "C3"
"""


def test_a_page_whose_cursor_is_empty_is_refused(tmp_path):
    """A stream with a page at the cursor ``""`` and ``[initial] resume_cursor = ""`` (its events before it
    receipted) was checked as starting at ``""``, and run from ``C1``: the world reads an empty cursor as
    "none given" (``Initial.checkpoint``, the provider's start), so the durable state at time 0 was not the
    file's (three fetches where two are due, a barrier more). An empty string is now refused as a page's
    cursor (and so as ``resume_cursor``, which names a page), one line naming the key."""
    (tmp_path / "empty.toml").write_text(EMPTY_CURSOR)
    got = _cli(["run", "empty.toml"], tmp_path)
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr == ("simkit: empty.toml: key 'pages[0].next_cursor': is empty; a cursor is a token of "
                          "at least one character\n")
    named = EMPTY_CURSOR.replace('""', '"C2"')
    run = simkit.simulate(simkit.parse(tomllib.loads(named)), "safe")
    assert run.verdict.ok and run.as_dict()["fetches"] == 2      # the same stream, named: started at C2


# -- 8. a scenario or config file that is a regular file whose read waits for ever ---------------------------
@pytest.mark.skipif(not os.access("/proc/kmsg", os.R_OK), reason="reading /proc/kmsg needs root on Linux")
@pytest.mark.parametrize("args, problem", [
    (["run", "/proc/kmsg"], "simkit: /proc/kmsg: cannot read it: "),
    (["serve", "--port", "0", "--config", "/proc/kmsg"], "simkit: /proc/kmsg: cannot read config: "),
], ids=["scenario", "serve --config"])
def test_a_file_whose_read_never_ends_is_one_line_at_once(tmp_path, args, problem):
    """``simkit run /proc/kmsg`` (and ``simkit serve --config /proc/kmsg``) waited for ever: the file is
    regular by its mode (a FIFO or a device is refused before it is opened) and of size 0, and a read of it
    waits for the kernel's next message, where "every command ends in a bounded time whatever its arguments
    and files say" (docs/cli.md, "Bounds"). The file is now opened without blocking: one line, exit status
    2, at once."""
    got = _cli(args, tmp_path, timeout=30)
    assert got.returncode == 2 and got.stderr.startswith(problem) and got.stderr.count("\n") == 1, got.stderr


def test_a_scenario_file_with_crlf_bare_cr_and_a_byte_order_mark_is_still_read(tmp_path):
    """A guard: the file's bytes are read as ``read_text()`` read them (a byte order mark dropped, CRLF and a
    bare CR as newlines)."""
    text = TWO_PAGES.replace("\n", "\r\n")
    (tmp_path / "crlf.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "cr.toml").write_bytes(TWO_PAGES.replace("\n", "\r").encode())
    for name in ("crlf.toml", "cr.toml"):
        assert simkit.simulate(simkit.load(tmp_path / name), "safe").verdict.ok
