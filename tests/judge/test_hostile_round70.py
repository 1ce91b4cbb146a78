"""Round 70 (a fresh tester, as an adversary): buggy consumers on seed 001's fenced settlement, many workers
and late retries, and rare faults (tests/mutants/round70.py, tests/exec/consumers/round70/). Found:

1. ``SecondRetryKeepsOldReservation`` reserves again on an event's second try but reuses its first tuple from
   the third on (seed 001 step 2: "A changed request or authorization context requires a new reservation and
   generation"). It passed ``simkit audit`` at the default budget (0 of 118 cases failed); at ``--budget
   1500`` two explorations caught it (``rotation_before_retry`` and ``misbound_response`` with up to three
   lost requests of effect), and no wide case or corner did: every rotation came between a first try and its
   one retry. New wide case ``rotation_between_retries`` (two lost replies, the rotation after the first
   try) catches it in one cheap run, before the explorations a budget leaves out.
2. ``BlockedBehindReceipts`` lets an event whose call is not committed pass when a later event of its page
   holds a terminal receipt (seed 000 invariant 5). It passed the audit, all 250 cases at ``--budget 1500``:
   no case has a backfill whose call fails behind a receipted event. New wide case
   ``blocked_behind_receipts``.

Every other consumer of the round was caught by the audit as it was; each test below shows it on one case.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round70  # noqa: E402

_NEW = ("rotation_between_retries", "blocked_behind_receipts")
_WIRE = Path(__file__).parents[1] / "exec" / "consumers" / "round70"


@pytest.mark.parametrize("name", _NEW)
def test_the_new_cases_are_audited_and_correct_consumers_pass_them(name):
    """Both are cases of the audit, and ``safe`` and every correct consumer of the roster are ok on them."""
    assert any(c.name == name for c in cases(1, 0))
    for cls in roster.CORRECT:
        v = simkit.simulate(wide(name), cls).verdict
        assert v.ok and v.completed, (cls.__name__, v)


def test_a_tuple_reused_from_the_third_try_on_is_caught():
    """Seed 001 step 2, broken only on a third try of one life: it calls bound to P1 while P2 is in force
    (stale_binding), and its settlements under the old tuple never commit: incomplete."""
    v = simkit.simulate(wide(_NEW[0]), round70.SecondRetryKeepsOldReservation).verdict
    assert {s["kind"] for s in v.settlement_violations} == {"stale_binding"} and not v.completed
    assert simkit.simulate(wide("rotation_before_retry"), round70.SecondRetryKeepsOldReservation).verdict.ok


def test_an_event_let_pass_behind_a_later_receipt_is_caught():
    """Seed 000 invariant 5 with backfills: e2's call never reached the service, and the consumer lets it
    pass because e3 of its page holds a receipt: the barrier publishes C3 and e2 is lost (invariant 1)."""
    v = simkit.simulate(wide(_NEW[1]), round70.BlockedBehindReceipts).verdict
    assert v.lost == ["e2"] and {d["invariant"] for d in v.invariant_violations} == {1}


#: each consumer of the round the audit caught as it was, and one case it fails
_CAUGHT = [("TimeoutTwiceIsSuccess", "long_outage"),
           ("CachedReservationAcrossRotation", "rotation_before_retry"),
           ("NewKeyAfterLostReply", "rotation_before_retry"), ("RecordBeforeFence", "crossed_each_field"),
           ("ProvisionalIsDone", "crossed_after_timeout"), ("AnyReplyIsSuccess", "crossed_each_field"),
           ("OverwriteAfterOneTakeover", "three_workers"), ("RefreshedBarrierAfterRestart", "late_retry"),
           ("AnyReceiptIsReplay", "transient_storm"), ("LostLastCommitIsDone", "long_outage"),
           ("TimeoutThenReserveIsCommitted", "rotation_after_lost_request"),
           ("CommitBeforeSettleOnRetry", "crossed_after_timeout"), ("LostBarrierThenOverwrite", "fence_race"),
           ("EffectAgainOnCommitRace", "fence_race"), ("RaceWinnerDidThePage", "shortcut_no_version_check"),
           ("RetryBehindReceiptsIsDone", "dead_letter_blocks"), ("RetryBehindReceiptsIsDone", _NEW[1]),
           ("ClaimsReceiptsAfterRestart", "quarantine_boundary"), ("ScratchKeyProbe", "late_response")]


def _scenario(name):
    return simkit.load(name) if name in simkit.bundled() else wide(name)


@pytest.mark.parametrize(("name", "case"), _CAUGHT)
def test_the_round_consumers_the_audit_caught_are_caught(name, case):
    assert not simkit.simulate(_scenario(case), getattr(round70, name)).verdict.ok


_MODES = [("held-reservation", "rotation_before_retry"), ("late-timeout", "crossed_after_timeout"),
          ("overwrite-after-restart", "late_retry"), ("lost-last-commit", "long_outage"),
          ("any-receipt", "transient_storm"), ("third-worker-overwrites", "three_workers")]


@pytest.mark.parametrize(("mode", "case"), _MODES)
def test_the_round_consumers_over_the_wire_are_caught(mode, case):
    assert not simkit.simulate(_scenario(case), f"exec:{_WIRE / 'run'} {mode}").verdict.ok


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_new_idempotency_key_for_a_retry_over_the_wire_is_caught():
    """Seed 001 step 2 in Node: the retry under a new key is never settled under the record's tuple: invariant
    5 (a page published over an uncommitted operation) or incomplete."""
    v = simkit.simulate(wide("rotation_before_retry"), f"exec:{_WIRE / 'newkey'}").verdict
    assert not v.ok and not v.completed
