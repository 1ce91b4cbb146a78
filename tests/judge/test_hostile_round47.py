"""Hostile consumers, forty-seventh round (a fresh tester): "``simkit audit X`` passes means X keeps the
rules", attacked by 26 consumers in Python (``tests/mutants/round47.py``; all but ``VersionInSixteenBits`` and
``IdsInVarchar255`` written from the docs alone, before reading the audit's cases or the gallery) and 10 over
``exec:`` (``tests/exec/consumers/round47.toml``: eight in Node, two in Python without simkit, each a
reference consumer with one change).

Found (each passed the audit of main, ``--jobs 1``, default budget: in process the budget left out the 5 to 40
dearest explorations; over ``exec:`` it judged the first 40 to 60 cases only, and each exec one below has an
in-process twin that passed, or a setting no case has):

- positions past 32 bits: no case served a position above 1,000,001, so a consumer that keeps
  ``applied_position`` in an unsigned 32-bit column (``UInt32Watermark``; ``uint32_position.js``, whose
  ``>>> 0`` is JavaScript's idiom for it) passed, and on a long-lived stream leaves ``applied_position``
  behind the work it made durable for good (incomplete); no case's version passed 400 (``long_stream``), so
  one kept in 16 bits (``VersionInSixteenBits``, a SMALLINT column) passed too. The corner
  ``positions_past_32_bits`` serves positions across 2**31 and 2**32 up to 2**53 (the most a scenario holds:
  JSON's exact integers) from a checkpoint_version of 2**32 - 2, a crash after a commit on each page.
- ids compared other than byte for byte: every case's ids were ``e<position>`` or ``x5``, so a receipt check
  that folds case (a case-insensitive collation: ``CaseInsensitiveReceipts``, ``case_insensitive_ids.js``),
  trims and normalises (``NormalisedIds``), cuts ids to 16 characters (``IdsTruncatedTo16``; to 255,
  ``IdsInVarchar255``, written after reading the cases) or skips ids of a shape (``SkipEventsWithDashedIds``)
  passed. The corner ``ids_compared_exactly`` holds, on one page, ids that differ only in case, a trailing
  space, Unicode normalisation, or past a shared prefix of 35 or of 300 characters, one of each pair
  committed before a crash and the other after it: each such consumer takes the second of a pair for the
  replay of the first and loses it (invariants 1, 2).
- a third worker: no case had more than two workers on one checkpoint, so ``third_worker_moves_on.js``
  (workers 3 and up take a non-terminal decision as done) passed. The corner ``three_workers``.
- a page past 2,048: ``big_page`` served 1,500 events, so ``TruncatesBigPages`` (a fixed buffer of 2,048)
  passed; it serves 4,100 now (about 0.25 s more CPU an audit of ``safe``).

Also: ``TrustTheRetryReply`` (seed 001 step 6 on the retry path: a success reply taken for committed without
settling it, once the record is provisional) was caught by one exploration only, among the last cases a budget
reaches; the wide case ``crossed_after_timeout`` (e1's first request lost, its retry's reply crossed) loses
e1 for it, as for ``py_settle_trusts_reply.py``.

Every consumer of ``roster.CORRECT`` and the reference consumers (Python, JavaScript, Rust, Perl) are ok on
the new corners, the wider ``big_page`` and ``crossed_after_timeout``.

Held (caught on main; first failing case): ``EveryHundredthAttemptMovesOn`` (wide long_stream),
``EvenVersionOverwrite`` (fence_race), ``HaltBecomesSkip`` (gap_behind_applied), ``QuarantineAtPageEnd``,
``InclusiveAfterOffByOne`` and ``ReviewResolvedInMemory`` (blocked_after_barrier), ``IgnoresFirst``,
``WatermarkAfterBackfill``, ``SecondLifeSkipsLookup`` and ``BarrierBeforeLastCommitReply`` (default),
``TrustOtherWorkersWatermark`` and ``second_worker_overwrites.js`` (gauntlet), ``LostCommitRetriedAsNew`` and
``lost_commit_ok.js`` (wide long_outage), ``CommitEmptyPageWithPosition`` (corner versions_outrun_positions),
``conflict_skipped.js`` (overlap_new_identity), ``py_ignore_as_apply.py`` (ignored_event),
``py_settle_trusts_reply.py`` (misbound_response); ``TrustTheRetryReply`` (above) and ``RetryWithoutTheKey``
(a timed-out call retried as a plain effect, harmless but on an unsafe sink) by one exploration only
(shortcut_success_before_effect, ≤1 crash + 1 lost request).

Left alone: ``AuditAware`` (in process: behaves while ``simkit.tools.audit`` is imported) and
``audit_aware.js`` (reads its parent's command line) pass, and no finite audit can judge code written to
detect it (docs/verdict.md says so now). ``refused_cursor_waits.js`` backs off on a refused cursor instead of
halting, and passes: simkit's provider refuses only a token it never issued (a scenario's ``next_cursor``
must name a page), so a consumer that makes up no token never meets a refusal. ``LostBarrierMeansAdvanced``
is caught as "caught up in memory only" (docs/verdict.md), a liveness failure the docs name;
``TimeoutAfterCommitted`` (a made-up timeout settled after every committed reply) keeps the rules where
settlement is ``fenced``, which absorbs it.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, WIDE, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from exec.consumers import round47 as exec47  # noqa: E402
from mutants import roster, round47  # noqa: E402

_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
_NEW = ("positions_past_32_bits", "ids_compared_exactly", "three_workers")


def _node(name: str):
    """A parameter naming a Node program of :mod:`exec.consumers.round47` (written by :func:`_strategy`)."""
    return pytest.param(name, marks=_NODE, id=name)


def _strategy(strategy, folder: Path):
    """A consumer class as it is, or the ``exec:`` command of the round's Node program ``strategy`` names."""
    return f"exec:node {exec47.written(strategy, folder)}" if isinstance(strategy, str) else strategy


def test_the_new_corners_are_audited_and_correct_consumers_pass_them():
    listed = {c.name for c in cases(1, 0) if c.kind == "corner"}
    assert all(name in CORNERS and name in listed for name in _NEW)
    for cls in roster.CORRECT:
        for name in (*_NEW, "crossed_after_timeout"):
            v = simkit.simulate(wide(name), cls).verdict
            assert v.ok and v.completed and v.halted is None, (cls.__name__, name, v)


@pytest.mark.parametrize("strategy", [round47.UInt32Watermark, _node("uint32_position.js")])
def test_a_position_kept_in_32_bits_is_caught(strategy, tmp_path):
    """Seed 000: "The applied position says what work is durably complete": kept in 32 bits, it stays behind
    the work for good once positions pass 2**32."""
    v = simkit.simulate(wide("positions_past_32_bits"), _strategy(strategy, tmp_path)).verdict
    assert not v.ok and not v.completed, v


def test_a_version_kept_in_16_bits_is_caught():
    """Seed 000 step 5, "a greater version": ``VersionInSixteenBits`` lowers it (regressions, invariant 3)."""
    v = simkit.simulate(wide("positions_past_32_bits"), round47.VersionInSixteenBits).verdict
    assert v.regressions and any(d["invariant"] == 3 for d in v.invariant_violations), v


@pytest.mark.parametrize("strategy", [round47.CaseInsensitiveReceipts, round47.NormalisedIds,
                                      round47.IdsTruncatedTo16, round47.IdsInVarchar255,
                                      round47.SkipEventsWithDashedIds, _node("case_insensitive_ids.js")])
def test_a_receipt_compared_other_than_byte_for_byte_is_caught(strategy, tmp_path):
    """Seed 000 step 4: a durable receipt proves *the event* (its stable identity) already has its outcome;
    one for another id that folds, trims or cuts to the same proves nothing: the second of a pair is lost
    (``SkipEventsWithDashedIds``, which skips both, halts at the hole it left after the crash)."""
    v = simkit.simulate(wide("ids_compared_exactly"), _strategy(strategy, tmp_path)).verdict
    assert not v.ok and any(d["invariant"] == 2 for d in v.invariant_violations), v


@_NODE
def test_a_bug_of_the_third_worker_is_caught(tmp_path):
    """Seed 000 invariant 5 for workers 3 and up: ``third_worker_moves_on.js`` passes a barrier over a
    failure; with two workers it never shows."""
    assert WIDE.keys().isdisjoint(_NEW) and CORNERS["three_workers"]["workers"] == 3
    v = simkit.simulate(wide("three_workers"), _strategy("third_worker_moves_on.js", tmp_path)).verdict
    assert v.lost and any(d["invariant"] == 5 for d in v.invariant_violations), v


def test_a_page_cut_to_a_buffer_of_2048_is_caught():
    """Seed 000 invariant 1 on a page wider than a buffer of 2,048: ``TruncatesBigPages`` loses the rest."""
    assert simkit.simulate(wide("big_page"), simkit.Consumer).verdict.ok
    v = simkit.simulate(wide("big_page"), round47.TruncatesBigPages).verdict
    assert "e2049" in v.lost and "e2048" not in v.lost, v


def test_a_crossed_reply_to_a_retry_is_caught_by_a_wide_case():
    """Seed 001 step 6 on the retry of a call that timed out: trusted unsettled, the crossed reply commits a
    receipt for an effect that never ran (e1 lost), where ``safe`` settles it, rejected, and calls again."""
    assert any(c.kind == "wide" and c.name == "crossed_after_timeout" for c in cases(1, 0))
    assert simkit.simulate(wide("crossed_after_timeout"), simkit.Consumer).verdict.ok
    v = simkit.simulate(wide("crossed_after_timeout"), round47.TrustTheRetryReply).verdict
    assert v.lost == ["e1"], v
