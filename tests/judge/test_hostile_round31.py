"""Hostile consumers, thirty-first round (a fresh tester): "``simkit audit MYCONSUMER`` passes means my
consumer keeps the rules", attacked on seed 000's procedure away from rounds 24 and 29: workers sharing one
checkpoint, odd initial states, backfills, pages of one event and a checkpoint written in several commits
(``tests/mutants/round31.py``).

Found:

- a correct consumer that claims a page before fetching it, by a compare-and-swap from the loaded (cursor,
  version) to the same cursor and the next version (a fencing token: ``ClaimsThePage``), or that writes its
  barrier in two fenced commits, the prefix first and then the cursor (``PrefixThenCursor``), was NOT ok
  everywhere: every compare-and-swap was judged as publishing a cursor, so keeping ``C7`` was "cursor 'C7'
  published but the provider never returned it" (invariant 3). Seed 000's invariant 3 constrains what
  *replaces* ``resume_cursor``; a compare-and-swap that keeps it publishes nothing (an unconditional write
  that keeps it is still judged: it is unfenced);
- a consumer that validates the first 100 events of a page (``ChecksTheHead``: a sample) passed every case:
  every page that broke the contract was short. The corner ``regression_deep_in_page`` swaps the last pair of
  a page of 1,000;
- a consumer that returns early from step 3 on a page of fewer than two events (``OrderNeedsTwoEvents``: "a
  single event cannot be out of order") passed every case: every page that broke the contract held two
  events or more. The corner ``gap_single_event`` serves a lone event behind the prefix;
- a consumer that trusts the watermark at checkpoint version 0 though the provider backfills
  (``SeededWatermark``: "the migration seeded it"), and one that trusts it more than 5,000 positions back
  (``LateArrivalWindow``), passed every case: the generated streams start at 0 and backfill one or two pages
  behind. The corner ``backfill_behind_start`` starts at 1,000,000, version 0, and backfills e4;
- a consumer whose followers (every worker but worker 1, told its number by the protocol's ``hello``) skip
  step 3 (``tests/exec/consumers/leader_validates.py``) passed every case: each page that broke the contract
  was served to one worker. The corner ``gap_two_workers`` serves it to two.

Held (caught, or ok where correct): validation skipped in each life's first attempt, or the watermark trusted
there (``regression_last_pair``; ``default``); a gap quarantined instead of halting (invariant 5); only worker
2 taking ``retry_later`` as done (gauntlet); an empty page passed by an unconditional write (gauntlet sweeps);
an ``ignore`` that runs the effect anyway (``ignored_event``, ``ignored_external``); a barrier that swaps the
cursor and then overwrites to record the prefix, or claims and then overwrites (invariant 3); a page claimed
again at once after a lost claim (two workers take it from each other for ever: ``completed`` false, rightly;
``ClaimsThePage`` backs off); ignore and quarantine receipts held back and committed after the page's later
effects (``unhalted``: an in-memory decision is no durable outcome). Correct and ok: ``ClaimsThePage`` and
``PrefixThenCursor`` in full audits (225 cases each); asking the handler about a page's events before
committing them in order (``HandleThenCommit``), a durable non-terminal receipt before stopping
(``RecordsWhatBlocks``), a lookup after a lost commit (``ChecksLostCommits``), backing off after every page,
fetching with a remembered cursor before loading the checkpoint to confirm it (bundled, corner, wide and sweep
cases).

Left alone: a consumer taking ``dead_letter`` for terminal passes, and no world can fail it: no behaviour of
``[[events]]`` makes the handler decide ``dead_letter``. A consumer that stops at a non-advancing token before
the end of the stream is ``completed`` false, though seed 000 step 7 says "stop or back off": docs/verdict.md
reads "stop" as for now (the events behind it are never processed). Any finite corner is outrun by a bigger
bound: a watermark window past a million positions, a head check of more than 1,000 events, a quarantine or
halt after more than 50 blocked attempts (``long_blocks``) still pass.

Each: the verdict the same run earns, on the smallest scenario that shows it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round31  # noqa: E402

_CORRECT = roster.CORRECT
#: This round's corners
_NEW = ("regression_deep_in_page", "gap_single_event", "gap_two_workers", "backfill_behind_start")
#: The follower that skips step 3, over the protocol
_LEADER = f"exec:{sys.executable} {Path(__file__).parents[1] / 'exec/consumers/leader_validates.py'}"


@pytest.mark.parametrize("cls", [round31.ClaimsThePage, round31.PrefixThenCursor])
@pytest.mark.parametrize("name", ["retry_walkthrough", "late_retry", "fence_race", "blocked_after_barrier"])
def test_a_compare_and_swap_that_keeps_the_cursor_publishes_nothing(cls, name):
    """Seed 000 invariant 3: "A page barrier may replace ``resume_cursor`` only with a compare-and-swap that
    still matches the request cursor and checkpoint version". A claim of the page, or a barrier's first half,
    swaps the version and keeps the cursor: nothing replaced, nothing to judge as published."""
    v = simkit.simulate(simkit.load(name), cls).verdict
    assert v.ok, v.invariant_violations


def test_an_overwrite_that_keeps_the_cursor_is_still_judged():
    """What stays: an unconditional write is unfenced whatever it writes (fence_race's ``no_version_check``
    overwrites ``C4`` with ``C4`` over a checkpoint it had not read: invariant 3, as golden)."""
    v = simkit.simulate(simkit.load("fence_race"), "no_version_check").verdict
    assert any("does not raise checkpoint_version" in d["detail"] for d in v.invariant_violations)


@pytest.mark.parametrize("name", _NEW)
def test_the_new_corners_are_audited_and_correct_consumers_pass_them(name):
    """Each corner is a case of the audit, and ``safe`` and every correct consumer are ok on it (a halt on a
    gap is justified)."""
    assert name in CORNERS and any(c.kind == "corner" and c.name == name for c in cases(1, 0))
    for cls in _CORRECT:
        v = simkit.simulate(wide(name), cls).verdict
        assert v.ok, (cls.__name__, v)
        assert (v.halt_justified is True) == (name != "backfill_behind_start"), (cls.__name__, v)


def test_a_step_3_that_needs_two_events_misses_a_lone_gap():
    """Seed 000 step 3 (a gap stops the attempt): ``OrderNeedsTwoEvents`` takes e3, alone on its page behind
    the prefix with no receipt, for a replay; e3 is lost. It halts, as ``safe``, on the bundled gap."""
    v = simkit.simulate(wide("gap_single_event"), round31.OrderNeedsTwoEvents).verdict
    assert not v.ok and v.lost == ["e3"] and v.unhalted
    assert simkit.simulate(simkit.load("gap_behind_applied"), round31.OrderNeedsTwoEvents).verdict.ok


def test_a_step_3_that_checks_the_page_head_misses_a_deep_regression():
    """Seed 000 step 3: ``ChecksTheHead`` validates a page's first 100 events; the swapped pair at the end of
    a page of 1,000 is processed, e1002 lost. It halts, as ``safe``, on every page of the other corners."""
    v = simkit.simulate(wide("regression_deep_in_page"), round31.ChecksTheHead).verdict
    assert not v.ok and v.lost == ["e1002"] and v.unhalted
    assert simkit.simulate(wide("regression_last_pair"), round31.ChecksTheHead).verdict.ok


@pytest.mark.parametrize("cls", [round31.SeededWatermark, round31.LateArrivalWindow])
def test_a_watermark_trusted_for_part_of_the_stream_loses_a_backfill(cls):
    """Seed 000 step 4: "If the source permits late backfills, use per-event receipts instead." e4 arrives a
    million positions behind a prefix seeded at version 0; each takes it for a replay and loses it. Each is
    ok where backfills stay near the prefix (``default``)."""
    v = simkit.simulate(wide("backfill_behind_start"), cls).verdict
    assert not v.ok and v.lost == ["e4"]
    assert simkit.simulate(simkit.load("default"), cls).verdict.ok


def test_a_follower_that_trusts_the_leader_processes_a_gap():
    """Seed 000 step 3, for every worker: worker 2 of ``leader_validates.py`` skips it; served the gap, it
    loses e3 (``unhalted``). Where only one worker is ever served a bad page, it passed."""
    v = simkit.simulate(wide("gap_two_workers"), _LEADER).verdict
    assert not v.ok and v.lost == ["e3"] and [d["worker"] for d in v.unhalted] == [2, 2]
    assert simkit.simulate(wide("gap_mid_page"), _LEADER).verdict.ok
