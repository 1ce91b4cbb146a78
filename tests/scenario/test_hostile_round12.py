"""Hostile input, twelfth round (a fresh tester): a fault asked of a feed read the service then refuses, a
consumer that forges an event's behaviour, and consumer modules that change their process at import (its
working folder, a thread that never ends, its limits on open files and file sizes) or whose ``run()`` will not
close; ``[initial] receipts`` past the stream's bound. Each: one line naming the file, key or flag and the
problem (exit status 2, no traceback), a reply that changes no state, or the verdict the same run gives. (What
the tester left as strict xfails, in modules this round could not edit, was made after it.)
"""
from __future__ import annotations

import json
import sys

import pytest
from conftest import simkit_in as _cli

import simkit
from simkit.model import Event
from simkit.ops import Handle
from simkit.service import DEV_SCOPE, dev_service

CHANGES = "/api/v1/memory/changes"


def _changes(svc, after=None, through=None, faults=()):
    """One feed page asked of ``svc`` by ``dev``: the reply's status and body."""
    def at(seq):
        return None if seq is None else {"journal_id": svc.journals[next(iter(svc.journals))].journal_id,
                                         "sequence": seq}
    raw = json.dumps({"contract_version": 1, "scope": DEV_SCOPE,
                      "query": {"after": at(after), "through": at(through), "limit": 256}}).encode()
    reply = svc.call(CHANGES, "Bearer dev", raw, faults=faults, content_type="application/json")
    return reply.status, json.loads(reply.body) if isinstance(reply.body, (bytes, str)) else reply.body


# -- 1. corrupt-journal asked of a feed read the service refuses, or whose page is empty ---------------------
@pytest.mark.parametrize("after, through, status", [(99, None, 409), (5, None, 200), (2, 2, 200)],
                         ids=["cursor ahead: 409", "caught up: empty page", "after at its fence"])
def test_corrupt_journal_strikes_only_what_the_page_it_answers_reads(after, through, status):
    """``X-Simkit-Fault: corrupt-journal`` on a feed read with ``after`` ahead of the journal was answered
    409 ``cursor_ahead``, and the journal's last entry was corrupted all the same: every later read of the
    feed was a 500 ``integrity_failure``, from a request the service had rejected (docs/service.md: "a
    rejected request, whatever its status, changes no state"). On a page with no entries (caught up, or
    ``after`` at its ``through``) the reply was a 200 and an entry outside the page was corrupted unseen,
    where the fault alters "a journal entry in the requested range" and the reply is its 500
    (simkit/service/http.py). Now a refused read changes nothing and an empty page alters nothing."""
    svc = dev_service()
    before = svc.state_digest()
    got, body = _changes(svc, after, through, faults=("corrupt-journal",))
    assert got == status, body
    assert svc.state_digest() == before
    assert _changes(svc)[0] == 200


def test_corrupt_journal_on_a_page_with_entries_is_still_its_500():
    """A guard: the fault on a page that serves entries corrupts the first and answers 500."""
    svc = dev_service()
    got, body = _changes(svc, 1, None, faults=("corrupt-journal",))
    assert got == 500 and body["error"]["code"] == "integrity_failure"
    assert _changes(svc)[0] == 500


# -- 2. a consumer that asks the handler about an event under a behaviour of its own -------------------------
class AsksAsPoison(simkit.Consumer):
    """Asks the handler about every event as if it were ``poison`` (an ``exec:`` consumer does it by writing
    ``"behavior": "poison"`` into the event it sends back), then quarantines what it is told to."""

    claimed = "poison"

    def run(self):
        gen, result = super().run(), None
        while True:
            request = gen.send(result)
            if isinstance(request, Handle):
                request = Handle(Event(request.event.id, request.event.position, self.claimed))
            result = yield request


def test_a_consumer_that_forges_an_events_behaviour_decides_nothing():
    """On ``retry_walkthrough`` (every event ``ok``) this consumer quarantined e106 and e107, ran no effect
    at all, and was judged ok: the handler decided by the ``behavior`` field of the event in the request,
    which docs/hooks.md says is "the scenario's, for plots: the handler decides, not you", so the decision
    log (the checker's ground truth) said ``quarantine``. The handler's answer is now the scenario's: the
    forged behaviour decides nothing, and the run is ``safe``'s."""
    run = simkit.simulate(simkit.load("retry_walkthrough"), AsksAsPoison)
    safe = simkit.simulate(simkit.load("retry_walkthrough"), "safe")
    assert run.as_dict()["effects"] == safe.as_dict()["effects"] == 2
    assert run.trace.digest() == safe.trace.digest() and run.verdict.ok


class AsksAsOk(AsksAsPoison):
    """The other way round: asks about every event as if it were ``ok``."""

    claimed = "ok"


def test_a_consumer_that_says_ok_of_a_poison_event_is_still_told_quarantine():
    """A request that says ``ok`` is applied without a lookup only where every event of the stream is ``ok``;
    on ``quarantine_boundary`` (a poison event) the handler still answers from the table: ``safe``'s run."""
    run = simkit.simulate(simkit.load("quarantine_boundary"), AsksAsOk)
    safe = simkit.simulate(simkit.load("quarantine_boundary"), "safe")
    assert "quarantine" in [row[4] for row in run.world.sink.decisions]
    assert run.trace.digest() == safe.trace.digest() and run.verdict.ok


# -- 3. a consumer module that changes the working folder at import -----------------------------------------
MOVES = """import os
from simkit import Consumer

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))   # to read its settings


class MoveOn(Consumer):
    def is_terminal(self, decision):
        return decision == "retry_later"
"""


@pytest.mark.parametrize("args", [
    ["explore", "transient_storm", "--max-crashes", "0"],
    ["explore", "transient_storm", "--max-crashes", "0", "--jobs", "2"],
    ["sweep", "transient_storm", "--seeds", "2", "--jobs", "1"],
    ["shrink", "transient_storm", "--json"],
], ids=["explore", "explore --jobs 2", "sweep", "shrink --json"])
def test_a_consumer_that_changes_folder_at_import_is_run_not_said_missing(tmp_path, args):
    """``os.chdir`` at import (a module that moves to its own folder to read its settings) made ``explore``,
    ``sweep`` and ``shrink --json`` say ``--strategy mine.py:MoveOn: no such file mine.py``, one line naming a
    file that is there: each resolved ``mine.py`` once more after the import had moved the folder (``run``,
    ``shrink`` and ``audit`` resolved it once). Now the reference is resolved once per process and the
    consumer is run and judged."""
    (tmp_path / "data").mkdir()
    (tmp_path / "mine.py").write_text(MOVES)
    done = _cli([*args, "--strategy", "mine.py:MoveOn"], tmp_path, timeout=300)
    assert "no such file" not in done.stderr and done.returncode == 0, done.stderr
    assert "MoveOn" in done.stdout


# -- 4. a request asking the handler about an event of a behaviour no scenario has ---------------------------
class AsksOfNoBehaviour(AsksAsPoison):
    """Asks the handler about every event under a behaviour that is none of docs/scenarios.md's six."""

    def run(self):
        gen, result = simkit.Consumer.run(self), None
        while True:
            request = gen.send(result)
            if isinstance(request, Handle):
                request = Handle(Event(request.event.id, request.event.position, "zzz"))
            result = yield request


EXEC_ZZZ = """import json, sys
sys.stdin.readline()
print(json.dumps({"op": "handle", "event": {"id": "e106", "position": 106, "behavior": "zzz"}}), flush=True)
sys.stdin.readline()
"""


def test_a_handle_of_an_event_of_no_behaviour_is_a_malformed_request(tmp_path):
    """``{"op": "handle", "event": {..., "behavior": "zzz"}}`` was answered ``reversible_hold`` (the handler's
    last branch took every behaviour it did not know for a hold), and the run judged; an ``outcome`` of no
    outcome is refused as malformed (docs/protocol.md, "When something is wrong"), and so is this now, from
    an ``exec:`` consumer and a Python one alike."""
    with pytest.raises(simkit.SimkitError) as caught:
        simkit.simulate(simkit.load("retry_walkthrough"), AsksOfNoBehaviour)
    assert "Handle.event.behavior is 'zzz', not one of ok, ignore, poison, transient, review, hold" in str(
        caught.value)
    (tmp_path / "zzz.py").write_text(EXEC_ZZZ)
    done = _cli(["run", "retry_walkthrough", "--strategy", f"exec:{sys.executable} zzz.py"], tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.count("\n") == 1 and "Handle.event.behavior is 'zzz', not one of ok" in done.stderr


# -- 5. a consumer module that starts a thread that never ends, under --jobs 2 -------------------------------
THREADED = """import threading, time
from simkit import Consumer


def beat():                             # a heartbeat, a metrics flusher: a thread that never returns
    while True:
        time.sleep(0.05)


threading.Thread(target=beat).start()


class Beating(Consumer):
    pass
"""


@pytest.mark.parametrize("args", [
    ["explore", "retry_walkthrough", "--max-crashes", "1", "--jobs", "2"],
    ["sweep", "retry_walkthrough", "--seeds", "4", "--jobs", "2"],
], ids=["explore", "sweep"])
def test_a_consumer_thread_that_never_ends_does_not_hold_the_pool(tmp_path, args):
    """A module that starts a thread (not a daemon) at import: with ``--jobs 1`` the command answered in under
    a second, with ``--jobs 2`` it answered nothing, until ``explore``'s budget (600 s: "the budget ran out
    ... none is reported", a line that blames the bounds) or ``sweep``'s stall (1,200 s): each pool worker
    imported the module too, and at its exit waited for that thread for ever, and the command for the
    workers. The results are in by then: the workers are ended, as ``audit``'s are."""
    (tmp_path / "beating.py").write_text(THREADED)
    done = _cli([*args, "--strategy", "beating.py:Beating"], tmp_path, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "Beating" in done.stdout


# -- 6. [initial] receipts past the stream's bound, or one position many times -------------------------------
END2 = {"cursor": "C2", "positions": [], "next_cursor": "C2"}


@pytest.mark.parametrize("receipts, pages, message", [
    ([1] * 3, [{"cursor": "C1", "positions": [1], "next_cursor": "C2"}, END2],
     "key 'initial.receipts': position 1 is listed twice: each position once"),
    (list(range(1, 1_000_002)), [{"cursor": "C1", "positions": [], "next_cursor": "C2"}, END2],
     "key 'initial.receipts': 1000001 positions; a scenario's stream holds at most 1000000 events"),
    (list(range(600_001, 1_200_001)),
     [{"cursor": "C1", "positions": list(range(1, 600_001)), "next_cursor": "C2"}, END2],
     "key 'initial.receipts': 600000 positions no page carries, each an event of the stream, besides the "
     "600000 the pages carry: a scenario's stream holds at most 1000000 events"),
], ids=["one position three times", "past the bound alone", "past it with the pages"])
def test_initial_receipts_are_held_to_the_streams_bound_and_each_position_once(receipts, pages, message):
    """``[initial] receipts`` of 1,900,000 positions no page carries (a 14 MB file) was accepted, each one an
    event of the stream (docs/scenarios.md), and ``simkit run`` took two minutes and 700 MB, where the pages
    carry at most 1,000,000 positions "as a generated stream's events"; ``receipts = [1, 1, ...]`` seven
    million times ran 80 s. The receipts now count towards that bound, and a position is listed once."""
    data = {"initial": {"receipts": receipts, "applied_position": 0, "resume_cursor": "C1"}, "pages": pages}
    with pytest.raises(simkit.ScenarioError) as caught:
        simkit.parse(data, source="s")
    assert str(caught.value) == f"s: {message}"


# -- 7. a consumer module that lowers the limit of open files at import --------------------------------------
FEW_FILES = """import resource
from simkit import Consumer

resource.setrlimit(resource.RLIMIT_NOFILE, (12, 12))      # "no consumer needs more than a few"


class Frugal(Consumer):
    pass
"""


@pytest.mark.parametrize("args", [
    ["explore", "retry_walkthrough", "--max-crashes", "1", "--jobs", "2"],
    ["sweep", "retry_walkthrough", "--seeds", "4", "--jobs", "2"],
    ["live", "retry_walkthrough", "--kills", "1"],
], ids=["explore", "sweep", "live"])
def test_a_consumer_that_lowers_the_open_files_limit_is_one_line(tmp_path, args):
    """``resource.setrlimit(RLIMIT_NOFILE, (12, 12))`` at import: ``explore --jobs 2`` and ``sweep --jobs 2``
    (a pool's pipes) and ``live`` (its databases) ended with a 70-line traceback of ``OSError: [Errno 24] Too
    many open files`` and exit status 1. A consumer that lowers ``sys.setrecursionlimit`` until simkit's own
    code fails gets one line (docs/cli.md), and so does this one now: exit status 2, naming the limit."""
    (tmp_path / "frugal.py").write_text(FEW_FILES)
    done = _cli([*args, "--strategy", "frugal.py:Frugal"], tmp_path, timeout=120)
    assert "Traceback" not in done.stderr
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "Too many open files (did the consumer lower RLIMIT_NOFILE" in done.stderr


# -- 8. a consumer module that limits the size of the files its process may write ----------------------------
NO_FILES = """import resource
from simkit import Consumer

resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))        # "a consumer writes no files"


class Writeless(Consumer):
    pass
"""


@pytest.mark.parametrize("args", [
    ["run", "retry_walkthrough", "--store", "sqlite"],
    ["explore", "retry_walkthrough", "--max-crashes", "1", "--store", "sqlite"],
    ["shrink", "transient_storm", "--store", "sqlite"],
], ids=["run", "explore", "shrink"])
def test_a_consumer_that_limits_file_sizes_is_one_line_with_the_sqlite_store(tmp_path, args):
    """``resource.setrlimit(RLIMIT_FSIZE, (0, 0))`` at import, and ``--store sqlite``: the work's database
    could not be written, and ``run``, ``explore`` and ``shrink`` ended with a 50-line traceback of
    ``sqlite3.OperationalError: disk I/O error`` and exit status 1 (``live`` said it in one line). Now one
    line, exit status 2, as for a consumer that lowers another of its process's limits."""
    (tmp_path / "writeless.py").write_text(NO_FILES)
    done = _cli([*args, "--strategy", "writeless.py:Writeless"], tmp_path, timeout=120)
    assert "Traceback" not in done.stderr
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "the SQLite store cannot write its database: disk I/O error" in done.stderr


# -- 9. a consumer whose run() will not close ----------------------------------------------------------------
UNDYING = """from simkit import Consumer


class Undying(Consumer):
    def run(self):
        while True:                     # a crash closes the generator: it yields again
            try:
                yield from super().run()
            except GeneratorExit:
                continue
"""


def test_a_consumer_whose_generator_ignores_generator_exit_at_a_crash_is_one_line(tmp_path):
    """A ``run()`` that catches GeneratorExit and yields again: at the walkthrough's crash the line
    ``generator ignored GeneratorExit`` came, but after an ``Exception ignored in: <generator object
    Undying.run ...>`` and a traceback through simkit's own code, printed when the generator that had
    refused to close was collected and closed again. Now the one line alone. (``live`` kills the process: no
    generator is closed there.)"""
    (tmp_path / "undying.py").write_text(UNDYING)
    done = _cli(["run", "retry_walkthrough", "--strategy", "undying.py:Undying"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "generator ignored GeneratorExit" in done.stderr


@pytest.mark.parametrize("args", [["run", "transient_storm"],
                                  ["explore", "retry_walkthrough", "--max-crashes", "1"]],
                         ids=["run without a crash", "explore"])
def test_a_consumer_whose_generator_ignores_generator_exit_at_the_runs_end_says_nothing_more(tmp_path, args):
    """The same consumer where no crash closes it: the run's verdict (or explore's first crash's line)
    came after an ``Exception ignored in`` and a traceback on stderr, printed when the world let go of the
    last life's generator and Python closed it."""
    (tmp_path / "undying.py").write_text(UNDYING)
    done = _cli([*args, "--strategy", "undying.py:Undying"], tmp_path)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


# -- 10. a sweep whose last seed passes the bound ------------------------------------------------------------
def test_a_sweep_whose_last_seed_passes_the_bound_says_the_first_seed_as_given(tmp_path):
    """``sweep --first-seed 9007199254740990 --seeds 10`` said ``--first-seed 9007199254740999: must be within
    9007199254740992 either side of 0``, a first seed nobody gave (the last one the sweep would run). Now the
    first seed as given, and the last seed it would reach."""
    done = _cli(["sweep", "retry_walkthrough", "--strategy", "safe", "--seeds", "10", "--first-seed",
                 "9007199254740990", "--jobs", "1"], tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("simkit: --first-seed 9007199254740990: the last of 10 seeds is 9007199254740999; "
                           "each seed must be within 9007199254740992 either side of 0\n")
