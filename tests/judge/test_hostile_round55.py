"""Hostile consumers, fifty-fifth round (a fresh tester): "``simkit audit X`` passes means X keeps the rules",
attacked by 25 consumers in Python (``tests/mutants/round55.py``) and 12 over ``exec:``
(``tests/exec/consumers/round55/``: a Node and a Perl program written from docs/protocol.md alone, each with
the bug its argument names), the first 15 and the exec ones written before reading the audit's cases or the
gallery. Most go after seed 001's settlement (a key regenerated or cached across a rotation, a second or third
timeout taken for an answer, a misbound reply normalised or dropped as ignored), workers sharing one
checkpoint (adopting or overwriting another's progress after a rejected or lost barrier, yielding a page on a
commit answered ``False``) and history (two crashes on one event, a third blocked attempt, a lost commit
remembered).

Found (each passed the audit of main, ``--jobs 1``, default budget; over ``exec:`` the budget judged the
bundled scenarios and corners only, and the wide cases were run one by one, ``simkit.simulate``):

- ids and tokens a language takes for something else: every case's ids were ``e<position>``, ``x…`` or the
  text of ``ids_compared_exactly``, and its tokens ``C<n>`` or ten random letters and digits, so a Perl
  consumer that asks whether a receipt sits at a position by the holder id's truth (``consumer.pl
  falsy_holder``: ``"0"`` is false in Perl, and in PHP), one that takes a false ``next_cursor`` for none
  (``falsy_token``), and a Node consumer that asks the receipts object whether it has the id as a key
  (``consumer.js in_outcomes``: ``id in outcomes``, true of ``toString``, ``constructor`` and ``__proto__`` on
  every JavaScript object) passed. Ids and tokens that are offsets as text start at ``"0"``. The corner
  ``falsy_or_builtin_strings`` serves 0, toString and constructor, then, under token ``0``, re-serves 0 behind
  ``applied_position`` (with its receipt) beside __proto__: the first halts there without cause (a gap the
  provider never made), the second never publishes token 0 (incomplete), the third takes the three for
  replays and loses them (invariants 1, 2).

Every consumer of ``roster.CORRECT``, the reference consumers (Python, JavaScript, Rust) and round 55's own
programs without their bug are ok on the new corner.

Held (caught on main; first failing case): ``SkipCallIfProvisional``, ``SecondTimeoutMeansDone``,
``ThirdTimeoutQuarantines`` (wide long_outage); ``StaleReservationAcrossRotation`` (wide
rotation_before_retry); ``NormalizeReplyIdentity``, ``MisboundReplyIgnored``,
``ProvisionalAfterRotationIsDone``, ``consumer.js truthy_settle`` (misbound_response);
``RegenerateKeyOnRetry``, ``ReceiptThenSettle``, ``PoisonAfterTwoCrashes``, ``WatermarkAfterWarmup``,
``LostCommitRemembered``, ``ReuseFirstReservationForPage``, ``PublishTwoPagesAtOnce``,
``RetryAttemptLimitMovesOn``, ``SettleLateReplyAsTimeout`` (bundled default or blocked_after_barrier);
``AdoptOthersProgressOnReject``, ``ForceBarrierAfterLost``, ``RefreshVersionBeforeBarrier``,
``YieldPageToOtherWorker`` (fence_race, gauntlet); ``consumer.pl sort_events``, ``numeric_token``,
``string_watermark`` (corners, every_digit); ``consumer.js null_is_true`` and ``timeout_budget`` (wide
long_outage, beyond the exec budget).

Left alone, the bug unobservable in simkit's world or absorbed by its store: ``ReusePageAfterBlocked`` (a page
kept for the next attempt at its cursor: a scripted or generated provider serves a cursor the same page every
time), ``ValidateOncePerCursor`` (what step 3 reads of a re-served page, its receipts and the prefix, can
change only in ways that break nothing), ``RepeatedTokenIsCaughtUp`` and ``consumer.pl token_seen`` (a token
comes back only as a page's own), ``AppliedIsEventPosition`` and ``BarrierPrefixFromPage`` (the store never
moves ``applied_position`` back, "whatever the caller asks"), ``consumer.js settle_under_reply`` (fenced
settlement rejects the reply's own identity as the reservation) and ``result_means_done`` (a record holds a
result only once committed).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster  # noqa: E402

_PROGRAMS = Path(__file__).parents[1] / "exec" / "consumers" / "round55"
_CORNER = "falsy_or_builtin_strings"


def _program(interpreter: str, name: str, bug: str) -> str:
    if shutil.which(interpreter) is None:
        pytest.skip(f"{interpreter} is not installed")
    return f"exec:{interpreter} {_PROGRAMS / name} {bug}"


def test_the_new_corner_is_audited_and_correct_consumers_pass_it():
    assert _CORNER in CORNERS and _CORNER in {c.name for c in cases(1, 0) if c.kind == "corner"}
    for cls in roster.CORRECT:
        v = simkit.simulate(wide(_CORNER), cls).verdict
        assert v.ok and v.completed and v.halted is None, (cls.__name__, v)


def test_a_receipt_test_that_javascript_objects_answer_for_their_own_names_is_caught():
    """Seed 000 step 4: a *durable receipt* proves the replay; ``id in outcomes`` is true of toString,
    constructor and __proto__ on every JavaScript object, receipt or not: the three are lost."""
    assert simkit.simulate(wide(_CORNER), _program("node", "consumer.js", "none")).verdict.ok
    v = simkit.simulate(wide(_CORNER), _program("node", "consumer.js", "in_outcomes")).verdict
    assert sorted(v.lost) == ["__proto__", "constructor", "toString"], v


def test_an_id_perl_takes_for_false_is_caught():
    """Seed 000 step 3: "Overlap at or below the applied prefix is acceptable"; asked of id "0"'s truth, its
    receipt is not there, and its replay is a gap the provider never made: an unjustified halt."""
    assert simkit.simulate(wide(_CORNER), _program("perl", "consumer.pl", "none")).verdict.ok
    v = simkit.simulate(wide(_CORNER), _program("perl", "consumer.pl", "falsy_holder")).verdict
    assert not v.ok and not v.completed and v.halted and v.halt_justified is False, v


def test_a_token_perl_takes_for_false_is_caught():
    """Seed 000 step 7: only "the request token" back means caught up; taken for absent, the next_cursor "0"
    is never published and the worker stalls a page before the end (incomplete)."""
    v = simkit.simulate(wide(_CORNER), _program("perl", "consumer.pl", "falsy_token")).verdict
    assert not v.ok and not v.completed and v.halted is None and v.pending == ["__proto__"], v
