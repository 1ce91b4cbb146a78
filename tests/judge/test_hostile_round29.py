"""Hostile consumers, twenty-ninth round (a fresh tester): "``simkit audit MYCONSUMER`` passes means my
consumer keeps the rules", attacked on seed 001's fenced settlement and on workers sharing one checkpoint
(``tests/mutants/round29.py``).

Found:

- a consumer that remembers its own timeouts and, on the retry, calls the service again whatever the record
  says (``RetryWhatTimedOut``) passed every case: the only late reply (``late_response``) came after the retry
  had been made, and on an idempotent sink with no rotation a call after committed success shows nowhere. When
  the late reply commits the record before the retry and the credential rotates, that call goes out bound to
  the old principal (a committed record keeps its reservation). The wide case ``late_reply_before_retry``
  serves it, on an idempotent sink: on an unsafe one, a correct consumer retrying at once, before the late
  reply (``RetryCallInAttempt``), would run the effect twice as ``safe`` does after a lost reply.
- a consumer that takes the effect as done after the fifth timeout of one call (``OutageIsOver``: a retry
  budget) passed every case: explorations lose at most three requests of one operation in a row, and the
  sweep's random lost requests never five of one event; so did one taking a commit as done after its fifth
  lost reply in a row (``FifthLostCommitMeansDone``, the gallery's ``ThirdLostCommitMeansDone`` with a bigger
  budget). The wide case ``long_outage`` drops e2's first 25 calls and e3's first 25 commits.

Held (caught, or ok where correct): taking a ``provisional`` record for committed, always or from a second
timeout on (sweeps); a reservation kept in memory across attempts (``rotation_before_retry``: stale binding);
reserving a page's operations up front and calling each later (``crossed_each_field``); committing the receipt
on a reply that matches the tuple, settling after (explored lost commits on the unsafe sink); a plain call
outside the protocol (the same); leaving the rest of a page to the worker whose receipt refused a commit, and
check-then-overwrite barriers (``gauntlet``, ``fence_race``, ``shortcut_no_version_check``). Correct and ok:
retrying the call at once within an attempt, never writing ``provisional``, re-reading the checkpoint before
each effect and leaving the page to a worker that moved it (full audits, and 300 to 600 small scripted runs
each with late, crossed and lost replies, crashes, pauses, rotations and one or two workers, against
``safe``'s verdict on the same run).

Left alone here, mended after (the last two tests): a worker paused between its ``Reserve`` and its ``Call``
(a pause at ``before_effect``) across a rotation sends the call bound to the principal rotated out, and
``stale_binding`` failed the run, ``safe``'s too, and at random any consumer's under rotations with random
pauses. No consumer can avoid it: the pause strikes after its last request. The service's log now keeps when
each request was issued (``Request.sent``), and a request is judged by the binding in force then.

Each: the verdict the same run earns, on the smallest scenario that shows it.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

import simkit
from simkit.model import RandomFaults
from simkit.tools.audit_cases import cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round29  # noqa: E402

_CORRECT = roster.CORRECT


def test_a_call_after_committed_success_runs_the_effect_twice():
    """Seed 001 step 4 (committed success is absorbing): the late reply commits e1's record between its
    timeout and the blocked page's retry, and the credential rotates. ``RetryWhatTimedOut`` calls again, with
    the committed record's reservation: bound to the principal rotated out. The audit runs the case."""
    assert any(c.kind == "wide" and c.name == "late_reply_before_retry" for c in cases(1, 0))
    v = simkit.simulate(wide("late_reply_before_retry"), round29.RetryWhatTimedOut).verdict
    assert not v.ok and [d["kind"] for d in v.settlement_violations] == ["stale_binding"]


def test_where_the_late_reply_came_after_the_retry_it_passed():
    """What let it through: the bundled late reply lands after the retry was made, as ``safe``'s."""
    v = simkit.simulate(simkit.load("late_response"), round29.RetryWhatTimedOut).verdict
    assert v.ok


def test_a_receipt_after_five_timeouts_of_dropped_requests_is_lost():
    """Seed 001 step 5 (a timeout writes only the provisional state): the service drops e2's first 25
    requests; ``OutageIsOver`` commits e2's receipt after the fifth timeout, with no effect, and passes the
    barrier. The audit runs the case."""
    assert any(c.kind == "wide" and c.name == "long_outage" for c in cases(1, 0))
    v = simkit.simulate(wide("long_outage"), round29.OutageIsOver).verdict
    assert not v.ok and v.lost == ["e2"]


def test_a_commit_taken_as_done_after_five_lost_ones_is_lost():
    """Seed 000 invariant 1: the store drops e3's first 25 commits; ``FifthLostCommitMeansDone`` takes the
    fifth lost one as done and passes the barrier over e3, which has no receipt."""
    v = simkit.simulate(wide("long_outage"), round29.FifthLostCommitMeansDone).verdict
    assert not v.ok and v.lost == ["e3"] and {d["invariant"] for d in v.invariant_violations} == {1, 2}


@pytest.mark.parametrize("name", ["late_reply_before_retry", "long_outage"])
@pytest.mark.parametrize("cls", _CORRECT, ids=lambda c: c.__name__)
def test_correct_consumers_pass_the_new_cases(cls, name):
    """No correct consumer is flagged on a new case: it reads the committed record and commits the receipt
    without a second call; it retries the dropped call with the same tuple until the effect runs."""
    v = simkit.simulate(wide(name), cls).verdict
    assert v.ok, v


def _paused_before_the_call(position: int) -> simkit.Scenario:
    """``misbound_response`` (a rotation at t=3.2) with a pause at ``before_effect`` across it."""
    sc = simkit.load("misbound_response")
    return dataclasses.replace(sc, faults=(*sc.faults, simkit.Fault("pause", "before_effect", position,
                                                                     duration=5.0)))


@pytest.mark.parametrize("strategy", _CORRECT[:3])
def test_a_pause_between_reserve_and_call_is_not_the_consumers_stale_binding(strategy):
    """Seed 001 step 2 binds what the worker chooses: its call went out under the binding in force when it was
    issued; the pause after it is the world's, as latency is. ``safe`` was judged ``stale_binding`` here."""
    run = simkit.simulate(_paused_before_the_call(1), strategy)
    assert "pause" in set(run.trace.to_frame().step) and run.verdict.ok, run.verdict.settlement_violations


@pytest.mark.parametrize("seed", [0, 1, 4, 5])
@pytest.mark.parametrize("sink", ["idempotent", "unsafe"])
def test_random_pauses_under_rotations_leave_safe_unflagged(sink, seed):
    """The generated reproduction: three workers, three rotations, random pauses (each seed here was judged
    ``stale_binding`` for ``safe``)."""
    sc = dataclasses.replace(simkit.load("default"), workers=3, sink=sink, rotate_at=(40.0, 90.0, 150.0),
                             random_faults=RandomFaults(crash=0.02, lost_response=0.02, pause=0.05))
    assert simkit.simulate(sc, simkit.Consumer, seed=seed).verdict.settlement_violations == []
