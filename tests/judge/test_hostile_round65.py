"""Round 65 (a fresh tester, as an adversary): buggy consumers whose bug hides from small cases
(tests/mutants/round65.py, tests/exec/consumers/round65/), run here on the cases added for those the audit
missed. Found:

1. A consumer whose behaviour depends on state a new life does not wipe (a life counter in ``os.environ``,
   docs/verdict.md "Crashes are real") is not deterministic, and exploration rests on determinism: a
   schedule's run repeats its parent's up to the parent's last fault. ``simkit explore`` and ``simkit
   audit`` (its explore cases) ended in ``AssertionError: a schedule's last fault fires: its run is its
   parent's up to there``, a traceback, where the same consumer over ``exec:`` is named in one line ("the
   consumer is not deterministic"). Now :func:`simkit.tools.schedules.extensions` raises a
   :class:`~simkit.errors.ConsumerError` saying so: one line, exit status 2.
2. Consumers that passed every case of ``simkit audit`` (0 of 243 failed, budget 1500) and break a rule:
   ``WatermarkPastSixteenBits`` trusts the watermark past position 65,535 with backfills, and
   ``TrustWatermarkOnBigPages`` on a page of more than 1,000 events (the audit's backfills were all below
   20,000, on pages of 50 at most): new corner ``backfills_at_large_positions``, a page of 1,101 backfills
   from 65,536 to 2**53 - 2.
3. ``GiveUpAfterSixtyAttempts`` (a retry cap of 60), ``DeadLetterThirdStrike`` (a redrive limit of 3, in
   Python and over the wire in Perl) and ``StopAfterThreeStuckAnswers`` (a token's third answer taken for the
   end): the longest block was 50 failures, the only dead letter two, the longest stuck token two answers.
   New wide case ``thousand_attempts``: a failure, a dead letter and a stuck token of 1,000 attempts each, to
   a time limit a consumer backing off 64 times reaches.
4. A consumer over the wire that moves on past a failure from its fourth worker on (``consumer.js
   worker4``): the audit's most workers were three. New corner ``eight_workers``.
5. ``UnfencedPastVersionTwoToThe31`` writes its barrier without comparing once the version passes 2**31 - 1:
   every case with two workers starts at version 0 or 1, and the one past 2**32 has one worker, where an
   unconditional write does no harm. New corner ``late_retry_at_large_versions``.
6. ``TokensUrlDecoded`` URL-decodes a token before it publishes it: the audit's tokens were letters, digits,
   spaces and Unicode, none with a ``+``, a ``%`` escape or a ``&``. New corner
   ``tokens_as_base64_and_escapes``.
7. ``ValidatorForSmallPositions`` skips step 3 on a page with a position past 65,535: every breach the audit
   served was below 1,004. New corners ``gap_at_large_positions`` and ``regression_at_large_positions``.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import simkit
from simkit.errors import ConsumerError
from simkit.tools.audit_cases import cases, wide
from simkit.tools.explore import explore

_LIVES = "SIMKIT_ROUND65_LIVES"


class LivesInEnviron(simkit.Consumer):
    """Counts its lives in an environment variable; every third life a retry_later counts as done."""

    def __init__(self, contract):
        super().__init__(contract)
        n = int(os.environ.get(_LIVES, "0")) + 1
        os.environ[_LIVES] = str(n)
        self.moves_on = n % 3 == 0

    def is_terminal(self, decision):
        return self.moves_on


def test_a_consumer_that_is_not_deterministic_is_named_not_an_assertion(monkeypatch):
    monkeypatch.setenv(_LIVES, "0")
    with pytest.raises(ConsumerError, match="the consumer is not deterministic"):
        explore(simkit.load("transient_storm"), LivesInEnviron, share_prefixes=False)


sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round65  # noqa: E402

_BACKFILLS = "backfills_at_large_positions"
_THOUSAND = "thousand_attempts"
_EIGHT = "eight_workers"
_VERSIONS = "late_retry_at_large_versions"
_TOKENS = "tokens_as_base64_and_escapes"
_STEP3 = ("gap_at_large_positions", "regression_at_large_positions")
_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
_JS = Path(__file__).parents[1] / "exec" / "consumers" / "round65" / "consumer.js"
_CORRECT = (round65.ClaimsAheadThroughReceipts, round65.RemembersCommittedInLife,
            round65.SettlesTwiceBeforeBlocking, round65.BacksOffLongerEachTime)


@pytest.mark.parametrize("name", [_BACKFILLS, _THOUSAND, _EIGHT, _VERSIONS, _TOKENS, *_STEP3])
def test_the_new_cases_are_audited_and_correct_consumers_pass_them(name):
    """Both are cases of the audit, and ``safe``, every correct consumer of the roster and this round's are ok
    on them (``thousand_attempts`` runs to a time limit that a consumer backing off 64 times reaches)."""
    assert any(c.name == name for c in cases(1, 0))
    for cls in (*roster.CORRECT, *_CORRECT):
        v = simkit.simulate(wide(name), cls).verdict
        assert v.ok and v.completed, (cls.__name__, v)


@pytest.mark.parametrize("name", ["WatermarkPastSixteenBits", "TrustWatermarkOnBigPages"])
def test_a_watermark_trusted_past_a_large_position_or_on_a_big_page_is_caught(name):
    """Seed 000 step 4: "If the source permits late backfills, use per-event receipts instead." The audit's
    backfills were all below 20,000, on pages of 50 events at most (generated streams, and e4 behind a
    million): a consumer that trusts the watermark past position 65,535, and one that trusts it on a page of
    more than 1,000 events, passed it (0 of 243 cases failed each). On the new corner each loses every
    backfill of its second page."""
    v = simkit.simulate(wide(_BACKFILLS), getattr(round65, name)).verdict
    assert len(v.lost) == 1_101 and v.lost[:2] == ["e65536", "e4294967302"]


def test_a_retry_cap_a_redrive_limit_and_a_count_of_stuck_answers_are_caught():
    """Seed 000 step 4 ("A transient dead-letter entry ... does not close the prefix") and step 7 ("Do not
    equate emptiness with end of stream"): the audit's longest block was 50 failures, its only dead letter
    two, its longest stuck token two answers. A consumer that quarantines an event after 60 blocked attempts,
    one that quarantines a dead letter redriven three times, and one that stops at the third answer of one
    token passed it (0 of 243 cases failed each). On the new case the first two lose what they
    quarantined (invariant 5: a quarantine no decision ordered), the third leaves e3 pending, incomplete."""
    for cls, lost in ((round65.GiveUpAfterSixtyAttempts, ["e1", "e2"]),
                      (round65.DeadLetterThirdStrike, ["e2"])):
        v = simkit.simulate(wide(_THOUSAND), cls).verdict
        assert v.lost == lost and 5 in {d["invariant"] for d in v.invariant_violations}, cls.__name__
    v = simkit.simulate(wide(_THOUSAND), round65.StopAfterThreeStuckAnswers).verdict
    assert not v.completed and v.pending == ["e3"] and not v.lost


@_NODE
def test_a_step_kept_for_the_first_three_workers_is_caught():
    """Seed 000 invariant 5, broken only by a worker numbered 4 or more (the handshake's ``worker``): the
    audit's most workers were three (``three_workers``), so a consumer over the wire that moves on past a
    non-terminal outcome from its fourth worker on passed it. On the eight workers of the new corner it
    publishes C1's token over e2's review and C2's over e5's failure: both lost. (Past eight,
    ``ClaimsThePage`` of the roster starves: sixteen workers that each claim the page before fetching it take
    it from each other until the time limit.)"""
    v = simkit.simulate(wide(_EIGHT), f"exec:node {_JS} worker4").verdict
    assert v.lost == ["e2", "e5"] and {2, 5} <= {d["invariant"] for d in v.invariant_violations}
    assert simkit.simulate(wide("three_workers"), f"exec:node {_JS} worker4").verdict.ok


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
def test_a_redrive_limit_over_the_wire_is_caught():
    """The Perl consumer with a redrive limit of 3 (``consumer.pl deadletter3``) passed the 153 cases a budget
    of 200 s judged; on ``thousand_attempts`` it quarantines e2 after its third dead letter: lost."""
    pl = Path(__file__).parents[1] / "exec" / "consumers" / "round65" / "consumer.pl"
    v = simkit.simulate(wide(_THOUSAND), f"exec:perl {pl} deadletter3").verdict
    assert v.lost == ["e2"]
    assert simkit.simulate(wide("dead_letter_blocks"), f"exec:perl {pl} deadletter3").verdict.ok


def test_a_barrier_unfenced_past_a_large_version_is_caught():
    """Seed 000 invariant 3 ("A page barrier may replace resume_cursor only with a compare-and-swap that still
    matches the request cursor and checkpoint version used to fetch the page"), broken past version 2**31 - 1.
    It passed every case but the explorations (none of which starts past version 1); on the new corner the
    paused worker overwrites the other's progress: a regression, invariant 3."""
    v = simkit.simulate(wide(_VERSIONS), round65.UnfencedPastVersionTwoToThe31).verdict
    assert v.regressions == 1 and {d["invariant"] for d in v.invariant_violations} == {3}
    assert simkit.simulate(simkit.load("late_retry"), round65.UnfencedPastVersionTwoToThe31).verdict.ok


def test_a_token_decoded_as_a_query_string_is_caught():
    """Seed 000: "Treat continuation tokens as opaque transport state." A base64 token's ``+`` read as a space
    is a token the provider never issued: it refuses it, and the halt on that refusal is not justified."""
    v = simkit.simulate(wide(_TOKENS), round65.TokensUrlDecoded).verdict
    assert v.halted == "provider refused cursor 'eyJwIjo0Mn0 /A=='" and v.halt_justified is False
    assert simkit.simulate(wide("tokens_compared_exactly"), round65.TokensUrlDecoded).verdict.ok


@pytest.mark.parametrize("name", _STEP3)
def test_a_validator_that_gives_up_on_large_positions_is_caught(name):
    """Seed 000 step 3 at positions a long-lived stream has: the validator that lets a page with a position
    past 65,535 through unchecked applies the gap's event, or the page out of order: lost, unhalted. Every
    correct consumer halts there, justified."""
    v = simkit.simulate(wide(name), round65.ValidatorForSmallPositions).verdict
    assert not v.ok and v.lost and v.unhalted and v.halted is None
    assert simkit.simulate(wide(name), simkit.Consumer).verdict.halt_justified
