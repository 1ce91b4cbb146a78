"""Round 58 (a fresh tester): ``simkit audit`` attacked by 33 buggy consumers in Python
(``tests/mutants/round58.py``) and 8 over ``exec:`` (``tests/exec/consumers/round58/``: a Node and a Perl
program written from docs/protocol.md alone, each with the bug its argument names), on the returning hooks and
on bugs that show only at scale or with unusual value shapes. Found (each passed the whole audit of main,
``--jobs 1 --budget 1500``, nothing left out):

- ``PaddedWatermark``: positions kept as zero-padded text of width 6 and compared as text, so 1,000,000 sorts
  before 999,999 and is skipped as a replay (lost). Every case's positions were below a million or, in
  ``positions_past_32_bits``, of one digit count each side of a comparison. Corner
  ``positions_across_digit_widths``: pages that start at each power of ten up to 10**15.
- ``TruncatedTokenCaughtUp``, ``CaseFoldCaughtUp`` (and ``TrimmedCaughtUp``): step 7's "the returned token
  equals the request token" decided on a cut, case-folded or trimmed token, so an empty page whose new token
  differs only there reads as the end and the consumer backs off for ever (incomplete).
  ``tokens_compared_exactly`` has such tokens only on pages with events, where step 7 is not asked. Corner
  ``empty_pages_tokens_compared_exactly`` puts them on empty pages.
- ``BackfillsSkipValidation``: step 3 skipped whenever the provider may backfill; no case had backfills and a
  page out of its own order. ``BackfillsAtOddPositions``: with backfills, the watermark still trusted at
  multiples of 10, where generated streams never backfill and no scripted case did. Corner
  ``regression_with_backfills``: e20 backfilled behind e30, then a page out of its own order.
- ``ResyncEveryFiftiethVersion``: every 50th checkpoint written without the compare-and-swap; harmless with
  one worker, and no case had two workers past version 50. Wide case ``two_workers_long_stream``
  (``long_stream`` raced by two workers that pause).
- ``RetryCapOfTwentyFive``: a job queue's retry cap (Sidekiq's default, 25) per event, then the page moves on
  with the event undone. ``long_blocks``' longest block was exactly 25 failures. Its last event now fails
  50 times (a back-off doubling to 64 still completes, at about 23,000 of the 100,000 units).

Every consumer of ``roster.CORRECT``, and the Python, Node and Rust reference consumers over ``exec:``, are ok
on each new case (both seeds of the wide one). Held, not bugs the world can show: ``FloatWatermark`` (a
scenario's positions stop at 2**53, where a double is exact), ``EventPositionOnly`` (the store never lowers
applied_position), ``AnyReceiptIsReplay`` (no receipt is non-terminal unless the consumer writes one;
``DurableRetryMarker``, which does, is caught), ``SameTokenIsCaughtUp`` (a page with events that answers its
own token never ends the stream: ``safe`` is incomplete there too).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round58  # noqa: E402

_PROGRAMS = Path(__file__).parents[1] / "exec" / "consumers" / "round58"
_NEW = ("positions_across_digit_widths", "empty_pages_tokens_compared_exactly", "regression_with_backfills")
_PERL = pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")


def test_the_new_corners_are_audited_and_correct_consumers_pass_them():
    listed = {c.name for c in cases(1, 0) if c.kind == "corner"}
    assert all(name in CORNERS and name in listed for name in _NEW)
    for cls in roster.CORRECT:
        for name in _NEW:
            v = simkit.simulate(wide(name), cls).verdict
            halts = name == "regression_with_backfills"     # step 3: a halt, justified, is the answer
            assert v.ok and v.completed and (v.halt_justified if halts else v.halted is None), (cls.__name__,
                                                                                               name, v)


@pytest.mark.parametrize("strategy", [
    round58.PaddedWatermark, round58.StringWatermark,
    pytest.param(f"exec:perl {_PROGRAMS / 'consumer.pl'} string_watermark", marks=_PERL, id="perl")])
def test_a_position_compared_as_text_is_caught(strategy):
    """Seed 000 step 4: a watermark proves a replay only of a position at or below it; compared as text,
    zero-padded to width 6, 10**6 is "below" 999,999 and is lost (plain text loses 10 after 9 already)."""
    v = simkit.simulate(wide("positions_across_digit_widths"), strategy).verdict
    assert "e1000000" in v.lost and any(d["invariant"] == 2 for d in v.invariant_violations), v


@pytest.mark.parametrize("cls", [round58.TruncatedTokenCaughtUp, round58.CaseFoldCaughtUp,
                                 round58.TrimmedCaughtUp], ids=lambda c: c.__name__)
def test_an_empty_pages_token_compared_other_than_byte_for_byte_is_caught(cls):
    """Seed 000 step 7: only "the returned token equals the request token" is the end for now; an empty
    page with a new token is a zero-item page. Compared cut, folded or trimmed, the new token is taken for
    the old and the consumer backs off there for ever, with events still to come."""
    v = simkit.simulate(wide("empty_pages_tokens_compared_exactly"), cls).verdict
    assert not v.completed and v.pending and not v.lost, v


def test_step_3_and_4_skipped_in_part_with_backfills_are_caught():
    """Seed 000 step 3: backfills put a new event behind positions already served, on a later page; a page
    out of its own source order is still "an unexpected regression". ``BackfillsSkipValidation`` processes
    it (unhalted, invariant 2) where ``safe`` halts, justified. Step 4: "If the source permits late
    backfills, use per-event receipts": ``BackfillsAtOddPositions`` trusts the watermark at e20, loses it."""
    assert simkit.simulate(wide("regression_with_backfills"), simkit.Consumer).verdict.halt_justified
    v = simkit.simulate(wide("regression_with_backfills"), round58.BackfillsSkipValidation).verdict
    assert v.unhalted and any(d["invariant"] == 2 for d in v.invariant_violations), v
    v = simkit.simulate(wide("regression_with_backfills"), round58.BackfillsAtOddPositions).verdict
    assert v.lost == ["e20"], v


def test_a_plain_write_past_the_fiftieth_version_is_caught():
    """Seed 000 invariant 3: ``ResyncEveryFiftiethVersion`` writes every 50th checkpoint without the
    compare-and-swap. With one worker nobody is overwritten; no other case had two workers past version 50.
    The wide case races ``long_stream`` with two that pause: a stale worker overwrites newer progress.
    ``CORRECT`` is ok there (two seeds, as the audit runs it); checked once here, on the first seed."""
    sc = wide("two_workers_long_stream")
    assert sc.workers == 2 and simkit.simulate(sc, simkit.Consumer).verdict.ok
    v = simkit.simulate(sc, round58.ResyncEveryFiftiethVersion).verdict
    assert any(d["invariant"] == 3 for d in v.invariant_violations), v


def test_a_retry_cap_of_25_is_caught():
    """Seed 000 invariant 5: "A failed item ... blocks the page barrier", however often it failed.
    ``RetryCapOfTwentyFive`` gives an event up after 25 failures; ``long_blocks``' e6 fails 50 times."""
    assert simkit.simulate(wide("long_blocks"), simkit.Consumer).verdict.ok
    v = simkit.simulate(wide("long_blocks"), round58.RetryCapOfTwentyFive).verdict
    assert v.lost == ["e6"] and any(d["invariant"] == 5 for d in v.invariant_violations), v
