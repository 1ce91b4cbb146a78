"""Hostile input, round 25: consumers over the wire (``exec:COMMAND``, docs/protocol.md) that are hostile or
sloppy programs. Each test names the promise it keeps; helper programs are in ``consumers/``."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent / "consumers"


def python(script: str, *args: str) -> str:
    return f"exec:{sys.executable} {HERE / script} {' '.join(args)}".rstrip()


def simkit_cli(*args: str, env: dict | None = None, timeout: float = 120,
               stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    """The command in a process of its own; ``timeout`` bounds a hang only (no wall-clock assertion)."""
    return subprocess.run([sys.executable, "-m", "simkit", *args], stdout=subprocess.PIPE, stderr=stderr,
                          text=True, cwd=ROOT, env={**os.environ, **(env or {})}, timeout=timeout)


# -- 1. a daemon of the consumer's that holds its stderr and writes without end ------------------------------
def test_a_daemon_flooding_the_consumers_stderr_does_not_hold_the_lifes_end():
    """A life's end (here retry_walkthrough's crash before e107 commits) passed through what was left on the
    killed consumer's stderr until the pipe was empty; a daemon of its own session (``setsid``, out of reach
    of the group's SIGKILL) writing to it without end kept it from ever being empty: the run never ended
    (every run ends in bounded time). Now at most 1 MiB and half a second of it is passed through."""
    done = simkit_cli("run", "retry_walkthrough", "--json", "--strategy", python("stderr_daemon.py"),
                      timeout=90, stderr=subprocess.DEVNULL)
    assert done.returncode == 0 and '"ok": true' in done.stdout


# -- 2. a request refused once read names its worker and line ------------------------------------------------
@pytest.mark.parametrize("worker, field, value, problem", [
    ("2", "applied_position", "-1", "Barrier.applied_position is -1, not within 0..2**63 - 1"),
    ("1", "next_version", str(2**63), f"Barrier.next_version is {2**63}, not within 0..2**63 - 1"),
    ("2", "next_cursor", '"\\udc00"', "Barrier.next_cursor '\\udc00' holds a lone surrogate (U+DC00), which "
                                      "no store can hold: text is kept as UTF-8"),
])
def test_a_request_out_of_range_names_the_worker_and_the_line_it_wrote(worker, field, value, problem):
    """docs/protocol.md: every bad line ends the run with one line naming the worker. A request well formed as
    JSON whose value no store holds (a negative ``applied_position``, a version past 2**63 - 1, a cursor with
    a lone surrogate) was ``strategy exec:...: yielded a malformed request: ...``: which of late_retry's two
    workers, and which line, went unsaid (and "yielded" is Python's word, not the protocol's)."""
    strategy = python("worker_writes.py", worker, "barrier", field, shlex.quote(value))
    done = simkit_cli("run", "late_retry", "--strategy", strategy)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    head = f"simkit: strategy {strategy}: worker {worker} wrote '{{\"op\": \"barrier\", "
    assert done.stderr.startswith(head) and done.stderr.endswith(f"': {problem}\n"), done.stderr
    assert done.stderr.count("\n") == 1


# -- 3. a call or settlement of a reservation no reserve gave -----------------------------------------------
NO_SUCH = '{"operation_id": "nope", "fingerprint": "f", "binding": "b", "generation": 1}'


@pytest.mark.parametrize("op, args", [
    ("settle", ["--store", "memory"]), ("settle", ["--store", "sqlite"]),
    ("settle", ["--settlement", "split_validate_write"]), ("settle", ["--settlement", "unfenced"]),
    ("call", ["--store", "memory"]), ("call", ["--store", "sqlite"]),
])
def test_a_reservation_no_reserve_gave_is_the_consumers_one_line(op, args):
    """``{"op": "settle", ..., "reservation": {"operation_id": "nope", ...}}``, an operation id with no record
    in the ledger (seed 001: a settlement compares and sets the record a reservation made), was a
    ``KeyError: 'nope'`` traceback, exit 1, on either store and every policy (a Python consumer's ``Settle``
    too); and a ``call`` under it whose reply came late (late_response) was the same traceback when the world
    settled the late reply. Now the consumer's one line naming the field, exit 2, before the call runs."""
    strategy = python("worker_writes.py", "1", op, "reservation", shlex.quote(NO_SUCH))
    done = simkit_cli("run", "late_response", "--strategy", strategy, *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"simkit: strategy {strategy}: worker 1 wrote '{{\"op\": \"{op}\"")
    assert done.stderr.endswith(f": {op.title()}.reservation.operation_id is 'nope', which no Reserve gave: "
                                "call and settle with a reservation as Reserve returned it\n")


# -- 4. a long life's transcript -----------------------------------------------------------------------------
def test_a_long_life_keeps_no_transcript_outside_exploration(tmp_path):
    """A life kept every line it read and wrote, for a forked copy of simkit to replay (explore), in every
    command: a consumer fetching one page of 4,000 events 600 times in one life held about 45 MB more than
    in-process (300 MB for 3,000 fetches of 2,000), and ``--max-memory 90`` stopped the run, exit 2, where a
    Python consumer doing the same is judged. Now only exploration's forking runs keep one (the replay tests
    of test_exec_consumers.py still pass); memory bounded whatever the consumer asks."""
    wide = tmp_path / "wide.toml"
    wide.write_text('name = "wide"\ndescription = "a page of 4,000 events"\n[timing]\nfetch_latency = 0.001\n'
                    f'[[pages]]\ncursor = "C1"\npositions = {list(range(1, 4001))}\nnext_cursor = "C2"\n'
                    '[[pages]]\ncursor = "C2"\npositions = []\nnext_cursor = "C2"\n')
    done = simkit_cli("run", str(wide), "--json", "--max-memory", "90",
                      "--strategy", python("refetch.py", "600"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["fetches"] == 600


# -- 5. a lookup of a page over 1 MiB ------------------------------------------------------------------------
def test_a_lookup_of_a_page_over_a_mebibyte_is_no_bad_line(tmp_path):
    """docs/protocol.md, step 3: look up every page's events. A page of 25,000 events is 1.1 MB as simkit
    writes it and 1.2 MB as ``json.dumps`` sends it back: the lookup of a correct consumer was refused,
    ``wrote a line longer than 1048576 bytes``, exit 2, where a Python consumer is judged. Now a line may be
    1 MiB plus four times the longest line the consumer was given (its spaces, its ``\\u`` escapes)."""
    fat = tmp_path / "fat.toml"
    fat.write_text('name = "fat"\ndescription = "one page"\n[generate]\nevents = 25000\npage_size = 25000\n')
    done = simkit_cli("run", str(fat), "--json", "--strategy", python("looks_up.py"))
    assert done.returncode == 0 and "longer than" not in done.stderr, done.stderr[-2000:]
    assert json.loads(done.stdout)["fetches"] == 1
