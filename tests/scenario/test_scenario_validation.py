"""Scenario values that parse but could never mean anything (docs/scenarios.md): ``nan`` and ``inf`` numbers,
faults on a worker or position that does not exist, two ``[[events]]`` for one position. Each is one line
naming the file, the key and the problem, exit status 2, and nothing written."""
from __future__ import annotations

import tomllib

import pytest
from conftest import TWO_PAGES

import simkit
from simkit.cli import main

PAGES = TWO_PAGES
SPIN = """
[[pages]]
cursor = "C5"
positions = [1, 2]
next_cursor = "C5"
"""
GENERATE = "[generate]\nevents = 4\n"
CRASH = "[[faults]]\nkind = 'crash'\npoint = 'before_event_commit'\n"

BAD = {
    # nan compares false with everything: the run ended at once and read "NOT ok ... completed: no", exit 0
    "nan latency": (
        PAGES + "[timing]\ncommit_latency = nan\n",
        "key 'timing.commit_latency': expected a number, got nan",
    ),
    "nan time limit": (
        PAGES + "[timing]\ntime_limit = nan\n",
        "key 'timing.time_limit': expected a number, got nan",
    ),
    "nan pause": (
        PAGES + "[[faults]]\nkind = 'pause'\npoint = 'after_fetch'\nduration = nan\n",
        "key 'faults[0].duration': expected a number, got nan",
    ),
    "nan pause_duration": (
        PAGES + "[random_faults]\npause = 0.1\npause_duration = nan\n",
        "key 'random_faults.pause_duration': expected a number, got nan",
    ),
    "nan rate": (GENERATE + "overlap = nan\n", "key 'generate.overlap': expected a number, got nan"),
    "nan rotation": (
        PAGES + "[auth]\nrotate_at = [5.0, nan]\n",
        "key 'auth.rotate_at': expected a number, got nan",
    ),
    # inf: a page that never advances ran forever
    "inf time limit": (
        SPIN + "[timing]\ntime_limit = inf\n",
        "key 'timing.time_limit': must be finite, got inf",
    ),
    "inf delay": (
        PAGES + "[[faults]]\nkind = 'late_reply'\ndelay = inf\n",
        "key 'faults[0].delay': must be finite, got inf",
    ),
    "huge integer": (
        PAGES + "[timing]\ntime_limit = 1" + "0" * 400 + "\n",
        "key 'timing.time_limit': must be finite, got an integer of 401 digits",
    ),
    # accepted, and never took effect
    "fault on a missing worker": (
        PAGES + CRASH + "worker = 5\n",
        "key 'faults[0].worker': no worker 5: the scenario has workers = 1",
    ),
    "fault at a missing position": (
        PAGES + CRASH + "position = 99\n",
        "key 'faults[0].position': no page carries position 99",
    ),
    "lost request at a missing position": (
        PAGES + "[[faults]]\nkind = 'lost_request'\nop = 'checkpoint_write'\nposition = 99\n",
        "key 'faults[0].position': no page carries position 99",
    ),
    "lost request of no request": (
        PAGES + "[[faults]]\nkind = 'lost_request'\nop = 'barrier'\n",
        "key 'faults[0].op': 'barrier' is not one of fetch, effect, checkpoint_write",
    ),
    "lost request on a missing worker": (
        PAGES + "[[faults]]\nkind = 'lost_request'\nworker = 3\n",
        "key 'faults[0].worker': no worker 3: the scenario has workers = 1",
    ),
    # seed 001's faults of an external call, and its credential rotation, with a sink that makes no call
    "late reply, transactional sink": (
        PAGES + "[[faults]]\nkind = 'late_reply'\ndelay = 3.0\n",
        "key 'faults[0].kind': a late_reply strikes an external call's reply, and a transactional sink makes "
        'no call: set sink = "idempotent" or "unsafe"',
    ),
    "crossed reply, transactional sink": (
        PAGES + "[[faults]]\nkind = 'crossed_reply'\ndiffers = 'fingerprint'\n",
        "key 'faults[0].kind': a crossed_reply strikes an external call's reply, and a transactional sink "
        'makes no call: set sink = "idempotent" or "unsafe"',
    ),
    "rotation, transactional sink": (
        PAGES + "[auth]\nrotate_at = [1.0]\n",
        "key 'auth.rotate_at': rotates the credential of external calls, and a transactional sink makes "
        'none: set sink = "idempotent" or "unsafe"',
    ),
    "event at a missing position": (
        PAGES + "[[events]]\nposition = 99\nbehavior = 'poison'\n",
        "key 'events[0].position': no page carries position 99",
    ),
    "duplicate event position": (
        PAGES + "[[events]]\nposition = 1\nbehavior = 'poison'\n[[events]]\nposition = 1\nbehavior = 'ok'\n",
        "key 'events[1].position': duplicate position 1 (events[0] already gives it)",
    ),
    # the logs keep an unnamed id e<position> as its position, a named one as a negative code: e-1 broke both
    "negative position": (
        SPIN.replace("[1, 2]", "[-1, 2]"),
        "key 'pages[0].positions': positions are not negative, got -1",
    ),
    "negative receipt": (
        PAGES + "[initial]\nreceipts = [-5]\n",
        "key 'initial.receipts': positions are not negative, got -5",
    ),
    "generated: beyond the stream": (
        GENERATE + CRASH + "position = 50\n",
        "key 'faults[0].position': position 50 is outside the generated stream (1..40 for events = 4)",
    ),
    "generated: between positions, no backfill": (
        GENERATE + "[[events]]\nposition = 15\nbehavior = 'poison'\n",
        "key 'events[0].position': position 15 is not in the generated stream: with backfill = 0 its "
        "positions are 10, 20, ..., 40",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_meaningless_value_is_one_line_exit_2(tmp_path, capsys, case):
    text, message = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = tmp_path / "timeline.png"
    assert main(["run", str(path), "--timeline", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"simkit: {path}: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize("text", [
    PAGES + "[initial]\nreceipts = [7]\n" + CRASH + "position = 7\n",     # a receipt's event is in the stream
    PAGES + CRASH + "position = 2\n",
    GENERATE + "[[events]]\nposition = 40\nbehavior = 'poison'\n",
    GENERATE + "backfill = 0.5\n" + CRASH + "position = 15\n",               # backfills land between, by seed
    SPIN + "[timing]\ntime_limit = 1e3\n",
])
def test_values_that_name_something_real_are_accepted(text):
    simkit.parse(tomllib.loads(text))


def test_two_workers_accept_a_fault_on_worker_two():
    sc = simkit.parse(tomllib.loads("workers = 2\n" + PAGES + CRASH + "worker = 2\n"))
    assert sc.faults[0].worker == 2


def test_every_bundled_scenario_still_loads():
    for name in simkit.bundled():
        simkit.load(name)


def test_crash_argument_occurrence_is_at_least_1():
    """``--crash POINT#0`` is refused by parse_crash_arg
    itself, as ``occurrence = 0`` in a [[faults]] entry is."""
    with pytest.raises(simkit.ScenarioError,
                       match=r"^crash before_effect#0: key 'occurrence': must be at least 1$") \
            as e:
        simkit.parse_crash_arg("before_effect#0")
    assert e.value.param == "crash"                          # the CLI says --crash (test_cli)
    assert simkit.parse_crash_arg("before_effect#2").occurrence == 2


def test_a_long_scripted_stream_gathers_its_positions_once(monkeypatch):
    """20,000 [[events]] and a fault per page: each is a set lookup, not a scan of every page (which made
    parsing quadratic: 10,000 events took 5.5 s)."""
    from simkit.scenario import read, stream
    calls = []
    real = stream.carried_positions
    # check_targets asks
    monkeypatch.setattr(stream, "carried_positions", lambda sc: calls.append(1) or real(sc))
    n, size = 20_000, 10
    pages = [{"cursor": f"C{k}", "positions": list(range(k * size + 1, (k + 1) * size + 1)),
              "next_cursor": f"C{k + 1}" if (k + 1) * size < n else f"C{k}"} for k in range(n // size)]
    sc = simkit.parse({"pages": pages, "events": [{"position": x, "behavior": "poison"}
                                                  for x in range(1, n + 1)],
                       "faults": [{"kind": "crash", "point": "before_event_commit",
                                   "position": p["positions"][0]}
                                  for p in pages]})
    assert len(sc.events) == n and len(sc.faults) == n // size
    assert calls == [1]
    assert read.missing_position(sc, n + 1) == f"no page carries position {n + 1}"    # still works alone
