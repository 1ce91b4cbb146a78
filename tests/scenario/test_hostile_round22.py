"""Hostile input, twenty-second round (a fresh tester): the command line and the files outside the service.
Found: initial states no consumer reaches that a file could still describe (a ``resume_cursor`` off the chain
of the first page, a page no ``next_cursor`` leads to, an ``applied_position`` over events a later page serves
in order), run, and ``safe`` judged ``NOT ok`` for what the file made impossible (a fuzz of random scripted
initial states: 31 of 239 accepted files; now none of 764); a page off the chain without a receipt was even
one of ``test_hostile.py``'s cases "the contract allows" (it holds one now). ``live --events`` cutting a
stream under the file's receipts (a traceback); an output path ending in ``/`` written as a file; 64 workers
over a million events (3 GB, blamed on the consumer); a ``--timeline`` of 30,000 events drawn for minutes.

Held: number flags at and past their bounds (``--max-delay nan``, ``--timeout 1e300``, ``--kills`` of 20
digits, ``--jobs 0``, ``--crash-rate 1e-320``, ``--pause-duration 1e309``); non-UTF-8 names in and out;
``COLUMNS`` of 1, 0, -5, ``abc`` and 10**8 on a terminal; a deleted working folder; a relative ``TMPDIR``
under a consumer that changes folder; ``--out`` onto the scenario by a hard link, a ``..`` path or a link to
it; ``workshop`` over a folder at a notebook's place or under ``ulimit -f`` (nothing left); SIGTERM, SIGINT
and SIGHUP of ``live`` from 0.3 to 3 s, and SIGINT of ``shrink --out`` (no process, no temporary file, the
file absent or whole); ``shrink``, ``explore`` and ``audit`` files read back to the same verdict (quotes,
backslashes and emoji in names, cursors and ids; ``--settlement``, ``--store``, ``--seed``); 1.8 million
``rotate_at`` times; positions and versions at 2**53; 64 live workers.

Left alone: a page of events that answers its own token never ends the stream, so every consumer is
``completed: no`` there (``test_hostile.py`` uses it for the progress guard), as with a ``time_limit``, a
``stuck`` count or a pause (``explore --pause-duration 20000``) past the time the file gives; the at-risk
spans and durable prefix behind the figures still take time that grows with events times barriers
(:mod:`simkit.judge.facts`: bounded for ``--timeline`` only); ``simkit run new.toml/`` reads the file
``new.toml``.

Each: one line naming the file, key or flag and the problem (exit status 2, no traceback, nothing written),
or the verdict the same run earns.
"""
from __future__ import annotations

import json

import pytest
from conftest import simkit_in as _cli

CHAIN = ('[[pages]]\ncursor = "C1"\npositions = [1]\nnext_cursor = "C2"\n\n'
         '[[pages]]\ncursor = "C2"\npositions = [2]\nnext_cursor = "C2"\n\n'
         '[[pages]]\ncursor = "C3"\npositions = [3]\nnext_cursor = "C2"\n')
#: ``CHAIN`` ending in an empty page, as a stream ends
ENDED = CHAIN.replace('positions = [2]\nnext_cursor = "C2"', 'positions = [2]\nnext_cursor = "C4"') + (
    '\n[[pages]]\ncursor = "C4"\npositions = []\nnext_cursor = "C4"\n')


# -- 1. pages a run from its start never reaches ------------------------------------------------------------
@pytest.mark.parametrize("head, message", [
    ('[initial]\nresume_cursor = "C3"\n\n',
     "key 'initial.resume_cursor': 'C3' is off the chain of pages from pages[0]: pages[0] ('C1') holds 'e1' "
     "at 1, which no page from 'C3' serves and no receipt covers"),
    ("", "key 'pages[2].cursor': 'C3' is reached by no next_cursor from 'C1', where the run starts: its 'e3' "
         "at 3 would never be served"),
], ids=["resume off the chain", "a page nothing leads to"])
def test_an_event_no_run_is_served_is_refused_not_judged_lost(tmp_path, head, message):
    """A page no ``next_cursor`` from the run's start leads to (``C3`` with the default start ``C1``, or
    ``C1`` under ``resume_cursor = "C3"``, which leads on to ``C2``) holds an event no run is ever served:
    ``safe`` was ``NOT ok``, ``lost: 1 (e3)`` or ``lost: 1 (e1)``.
    Now the file is refused, naming the key."""
    (tmp_path / "s.toml").write_text(head + ENDED)
    done = _cli(["run", "s.toml"], tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.startswith(f"simkit: s.toml: {message}") and done.stderr.count("\n") == 1


@pytest.mark.parametrize("head", [
    '[initial]\nresume_cursor = "C3"\nreceipts = [1]\n\n',
    "[initial]\nreceipts = [3]\n\n",
], ids=["resume off the chain", "a page nothing leads to"])
def test_an_unserved_page_whose_events_hold_receipts_is_still_judged_ok(tmp_path, head):
    """A guard: receipts for the events no page from the start serves make the state one a consumer has."""
    (tmp_path / "s.toml").write_text(head + ENDED)
    done = _cli(["run", "s.toml", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True


# -- 2. an applied_position over events a later page serves in order ----------------------------------------
@pytest.mark.parametrize("text, covered", [
    ("[initial]\napplied_position = 1000\nreceipts = [10]\n\n[generate]\nevents = 5\npage_size = 1\n",
     "1000 covers position 20, 30, 40, 50, which the provider serves in order"),
    ('[initial]\napplied_position = 100\nreceipts = [10]\n\n[[pages]]\ncursor = "C1"\npositions = [10]\n'
     'next_cursor = "C2"\n\n[[pages]]\ncursor = "C2"\npositions = [20]\nnext_cursor = "C3"\n\n'
     '[[pages]]\ncursor = "C3"\npositions = []\nnext_cursor = "C3"\n',
     "100 covers position 20, which the provider serves in order"),
], ids=["generated", "scripted"])
def test_an_initial_applied_position_over_a_later_pages_events_is_refused(tmp_path, text, covered):
    """Without backfills, ``applied_position = 1000`` over a stream whose first page (10) holds a receipt and
    whose next pages serve 20, 30, ... in order: ``safe`` halted on a gap at 20, judged ``(unjustified: the
    provider kept its contract)``, ``NOT ok``; only the first page's events were checked against it. Now the
    file is refused, naming the key (invariant 2)."""
    (tmp_path / "s.toml").write_text(text)
    done = _cli(["run", "s.toml"], tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert f"key 'initial.applied_position': {covered}" in done.stderr and "invariant 2" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("text", [
    "[initial]\napplied_position = 1000\nreceipts = [10, 20, 30, 40, 50]\n\n[generate]\nevents = 5\n"
    "page_size = 1\n",
    '[initial]\napplied_position = 10\n\n[[pages]]\ncursor = "C1"\npositions = []\nnext_cursor = "C2"\n\n'
    '[[pages]]\ncursor = "C2"\npositions = [20]\nnext_cursor = "C3"\n\n[[pages]]\ncursor = "C3"\n'
    'positions = [5]\nnext_cursor = "C4"\n\n[[pages]]\ncursor = "C4"\npositions = []\nnext_cursor = "C4"\n',
], ids=["every event receipted", "a gap the provider makes"])
def test_an_applied_position_over_receipts_or_a_real_gap_is_still_judged_ok(tmp_path, text):
    """A guard: every event covered holds a receipt, or the one behind it is a gap the provider made (5 after
    20), on which the halt is justified."""
    (tmp_path / "s.toml").write_text(text)
    done = _cli(["run", "s.toml", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True



# -- 3. an output path that names a folder by its spelling --------------------------------------------------
@pytest.mark.parametrize("args, out", [
    (["shrink", "shortcut_persist_token_on_fetch", "--strategy", "persist_token_on_fetch", "--out"],
     "new.toml/"),
    (["sweep", "retry_walkthrough", "--seeds", "1", "--strategy", "safe", "--jobs", "1", "--out"],
     "runs.csv/."),
    (["run", "retry_walkthrough", "--timeline"], "t.png/"),
], ids=["shrink", "sweep", "run"])
def test_an_output_path_ending_in_a_slash_is_refused_not_written_as_a_file(tmp_path, args, out):
    """``--out new.toml/`` names a folder (POSIX: a path ending in ``/`` resolves only to one); ``pathlib``
    drops the slash, and the command wrote the file ``new.toml`` and said ``wrote new.toml/``. Now: one line
    naming the flag, exit status 2, nothing written."""
    done = _cli([*args, out], tmp_path)
    flag = args[-1]
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr == f"simkit: {flag} {out}: names a folder (a trailing '/'), not a file\n"
    assert list(tmp_path.iterdir()) == []


# -- 4. live --events under the file's positions -------------------------------------------------------------
@pytest.mark.parametrize("head, message", [
    ("[initial]\nreceipts = [400]\n\n",
     "key 'initial.receipts': position 400 is not an event of the generated stream: its positions are 10, "
     "20, ..., 100"),
    ("[[events]]\nposition = 300\nbehavior = 'poison'\n\n",
     "key 'events[0].position': position 300 is outside the generated stream (1..100 for events = 10)"),
], ids=["a receipt", "an event"])
def test_live_events_cutting_the_stream_under_a_named_position_is_one_line(tmp_path, head, message):
    """``simkit live s.toml --events 10`` over a ``[generate]`` stream of 40 whose ``[initial] receipts`` name
    position 400: the override was not read again with the file, and the workers' databases were made from
    it: a ``KeyError: 400`` traceback, exit status 1. Now the stream cut short is read as its file would be:
    one line naming ``--events`` and the key, exit status 2, no process started."""
    (tmp_path / "s.toml").write_text(head + "[generate]\nevents = 40\n")
    done = _cli(["live", "s.toml", "--kills", "1", "--events", "10"], tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.startswith(f"simkit: --events 10: s.toml: {message}") and done.stderr.count("\n") == 1


def test_live_of_a_scenario_edited_into_what_no_file_says_is_one_line():
    """The library's ``simkit.live.run.live`` reads an edited Scenario again, as ``simulate``, ``explore``,
    ``shrink`` and ``sweep`` do: ``generate["events"]`` cut under ``[initial] receipts`` was the same
    ``KeyError`` from the databases. Now a :class:`simkit.SimkitError` naming the key."""
    import simkit
    from simkit.live.run import live
    sc = simkit.parse({"generate": {"events": 40}, "initial": {"receipts": [400]}})
    sc.generate["events"] = 10
    with pytest.raises(simkit.SimkitError, match=r"initial\.receipts position 400 is not an event"):
        live(sc, kills=0)


# -- 5. many workers over a long stream ---------------------------------------------------------------------
MILLION = [{"cursor": "C1", "positions": list(range(1, 1_000_001)), "next_cursor": "C2"},
           {"cursor": "C2", "positions": [], "next_cursor": "C2"}]
WALKED = ("each worker walks the whole stream, and a run walks at most 2000000 events in all (workers times "
          "events)")


@pytest.mark.parametrize("data, message", [
    ({"workers": 64, "pages": MILLION},
     f"64 workers over a stream of 1000000 events: {WALKED}; at most 2 workers here"),
    ({"workers": 21, "generate": {"events": 100_000}},
     f"21 workers over a stream of 100000 events: {WALKED}; at most 20 workers here"),
], ids=["a page of a million", "generated"])
def test_workers_times_events_past_the_bound_are_refused(data, message):
    """``workers = 64`` over one page of 1,000,000 events (each bound alone kept): every worker holds and
    walks the page, and ``safe``'s run passed 3 GB in five minutes, stopped at ``--max-memory`` with ``did the
    consumer allocate without bound?``; 64 workers over 100,000 generated events took 66 s. The stream's
    bound held a run at 0.5 GB only for one or two workers. Now the file is refused, naming ``workers``."""
    import simkit
    with pytest.raises(simkit.SimkitError) as caught:
        simkit.parse(data, source="s.toml")
    assert str(caught.value) == f"s.toml: key 'workers': {message}"


def test_workers_times_events_at_the_bound_are_still_run():
    """A guard: 20 workers over 100,000 events, and two over a million, are read as before."""
    import simkit
    assert simkit.parse({"workers": 20, "generate": {"events": 100_000}}).workers == 20
    assert simkit.parse({"workers": 2, "generate": {"events": 1_000_000}}).workers == 2


# -- 6. a timeline of a long stream --------------------------------------------------------------------------
def test_a_timeline_of_a_stream_past_its_bound_is_refused_before_drawing(tmp_path):
    """``simkit run s.toml --timeline t.png`` of 30,000 generated events a page: the run took 2 s, its
    timeline's at-risk spans (every event against every barrier) over 200 s, and 300,000 events past ten
    minutes, the command's budget the only bound. Now a timeline, as a swimlane, has its bound: one line
    naming ``--timeline``, exit status 2, no figure."""
    (tmp_path / "s.toml").write_text("[generate]\nevents = 10001\npage_size = 1\n\n"
                                     "[timing]\ntime_limit = 5.0\n")
    done = _cli(["run", "s.toml", "--timeline", "t.png"], tmp_path)
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert done.stderr.startswith("simkit: --timeline t.png: the run has ") and done.stderr.count("\n") == 1
    assert done.stderr.endswith("rows over a stream of 10001 events, and a timeline draws at most 20000 rows "
                                "and 10000 events; use a shorter stream\n")
    assert not (tmp_path / "t.png").exists()
