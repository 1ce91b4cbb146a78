"""Hostile consumers, fifty-fifth round (a fresh tester): "``simkit audit X`` passes means X keeps the rules",
attacked by 27 consumers in Python (``tests/mutants/round55.py``) and 13 over ``exec:``
(``tests/exec/consumers/round55/``: a Node and a Perl program written from docs/protocol.md alone, each with
the bug its argument names), the first 15 and the exec ones written before reading the audit's cases or the
gallery (all but ``CursorInVarchar255``, ``CursorStripped`` and ``token_trim``). Most go after seed 001's
settlement (a key regenerated or cached across a rotation, a second or third timeout taken for an answer, a
misbound reply normalised or dropped as ignored), workers sharing one checkpoint (adopting or overwriting
another's progress after a rejected or lost barrier, yielding a page on a commit answered ``False``) and
history (two crashes on one event, a third blocked attempt, a lost commit remembered).

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

- tokens kept other than byte for byte: every case's tokens were ``C<n>`` or ten random letters and digits,
  so a consumer whose barrier publishes the next cursor cut to 255 characters (``CursorInVarchar255``: the
  checkpoint's cursor column a VARCHAR(255), and many providers' base64 tokens are longer) or trimmed
  (``CursorStripped``, ``consumer.js token_trim``) passed. The corner ``tokens_compared_exactly`` chains
  tokens that differ only in a trailing space, in case or in Unicode normalisation, then tokens of 256 and
  4,100 characters (past a buffer of 4,096), one event a page: cut, the token is one the provider never
  issued (refused: an unjustified halt, e7 lost); trimmed, it is the next page's, and e2 is skipped
  (invariant 3 either way).

Hardened: ``ProvisionalAfterRotationIsDone`` (a rotation's new reservation taken to inherit the old one's
timeout as success) was caught by explorations of ``rotation_before_retry`` only, which lose a request; the
wide case ``rotation_after_lost_request`` (the credential rotates between a lost request and its retry)
catches it in one run.

Every consumer of ``roster.CORRECT``, the reference consumers (Python, JavaScript, Rust) and round 55's own
programs without their bug are ok on the new corners.

Held (caught on main; first failing case): ``AdoptOthersProgressOnReject`` (bundled fence_race: regressions,
invariant 3); ``ForceBarrierAfterLost`` (default seed 8: invariant 3); ``RefreshVersionBeforeBarrier`` and
``YieldPageToOtherWorker`` (gauntlet: invariant 3; lost, invariants 1, 2, 5); ``RegenerateKeyOnRetry``
(default: incomplete), ``ReceiptThenSettle``, ``WatermarkAfterWarmup`` and ``ReuseFirstReservationForPage``
(default: lost); ``PoisonAfterTwoCrashes``, ``PublishTwoPagesAtOnce`` and ``RetryAttemptLimitMovesOn``
(blocked_after_barrier); ``NormalizeReplyIdentity`` (misbound_response: wrong reservation),
``MisboundReplyIgnored`` and ``consumer.js truthy_settle`` (misbound_response: lost);
``SkipCallIfProvisional``, ``SecondTimeoutMeansDone``, ``ThirdTimeoutQuarantines`` and
``LostCommitRemembered`` (wide long_outage); ``StaleReservationAcrossRotation`` and
``SettleLateReplyAsTimeout`` (wide rotation_before_retry: stale binding); ``consumer.pl sort_events`` (corner
page_out_of_order: unhalted), ``string_watermark`` (corner ids_compared_exactly: 10 "behind" 9),
``numeric_token`` (default: incomplete); ``consumer.js null_is_true`` and ``timeout_budget`` passed the exec
audit's budget (its first 40 cases) and are caught by wide long_outage (``simkit.simulate``).

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
from mutants import roster, round55  # noqa: E402

_PROGRAMS = Path(__file__).parents[1] / "exec" / "consumers" / "round55"
_CORNER = "falsy_or_builtin_strings"
_TOKENS = "tokens_compared_exactly"


def _program(interpreter: str, name: str, bug: str) -> str:
    if shutil.which(interpreter) is None:
        pytest.skip(f"{interpreter} is not installed")
    return f"exec:{interpreter} {_PROGRAMS / name} {bug}"


def test_the_new_corners_are_audited_and_correct_consumers_pass_them():
    listed = {c.name for c in cases(1, 0) if c.kind == "corner"}
    for name in (_CORNER, _TOKENS):
        assert name in CORNERS and name in listed
        for cls in roster.CORRECT:
            v = simkit.simulate(wide(name), cls).verdict
            assert v.ok and v.completed and v.halted is None, (name, cls.__name__, v)


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


@pytest.mark.parametrize("strategy",
                         [round55.CursorInVarchar255, round55.CursorStripped, ("node", "token_trim")],
                         ids=["CursorInVarchar255", "CursorStripped", "token_trim.js"])
def test_a_cursor_kept_other_than_byte_for_byte_is_caught(strategy):
    """Seed 000: a cursor is an opaque token the consumer "stores and sends back"; step 5 publishes "the
    returned next cursor". Cut to 255 characters it is a token the provider never issued (refused: an
    unjustified halt); trimmed, it is another page's, and the page between is skipped (e2 or e7 lost;
    invariant 3 either way)."""
    if isinstance(strategy, tuple):
        strategy = _program(strategy[0], "consumer.js", strategy[1])
    assert simkit.simulate(wide(_TOKENS), _program("node", "consumer.js", "none")).verdict.ok
    v = simkit.simulate(wide(_TOKENS), strategy).verdict
    assert v.lost and any(d["invariant"] == 3 for d in v.invariant_violations), v


def test_an_old_reservations_timeout_taken_for_the_effect_is_caught_by_a_wide_case():
    """Seed 001 step 2 ("a changed ... authorization context requires a new reservation") and step 5: after a
    rotation, the old reservation's timeout proves no effect. Only explorations (never reached by an exec
    audit's budget) lost a request before a rotation; the wide case ``rotation_after_lost_request`` does."""
    name = "rotation_after_lost_request"
    assert any(c.kind == "wide" and c.name == name for c in cases(1, 0))
    for cls in roster.CORRECT:
        assert simkit.simulate(wide(name), cls).verdict.ok, cls.__name__
    v = simkit.simulate(wide(name), round55.ProvisionalAfterRotationIsDone).verdict
    assert v.lost == ["e1"], v
