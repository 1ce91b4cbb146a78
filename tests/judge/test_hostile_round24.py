"""Hostile consumers, twenty-fourth round (a fresh tester): "``simkit audit MYCONSUMER`` passes means my
consumer keeps the rules", attacked as an adversary and as a careless colleague
(``tests/mutants/round24.py``).

Found:

- the audit's only page out of order was 5, 4, 6 (a regression at the page's first pair): a validator that
  compares every event with the page's first one (``OrderAgainstFirst``), or that sees a regression only in a
  position *lower* than the one before (``StrictlyBackwards``: two ids at one position pass), passed every
  case; so did one looking for a gap at a page's first event only (``GapAtPageStart``: the only gap was
  there), and one skipping step 3 at checkpoint version 0 (``FreshStartTrustsThePage``: every bad page came
  after a barrier). Corners now serve a regression in a page's middle, in the first page's last pair, two ids
  at one position inside a page, and a gap after a replay;
- a correct consumer that fetched the next page before validating the one it had
  (``PrefetchBeforeValidating``: seed 000 allows reading ahead) and halted on the bad page was judged
  unjustified, ``completed`` false and NOT ok: a halt was judged by the worker's last fetch only. It is now
  judged by that, or by the worker's latest response to the durable ``resume_cursor`` (its attempt's page);
- a correct consumer backing off as ``blocked`` at the end of the stream too (``BackOffAsBlocked``, safe's
  durable writes) ran to the time limit and was judged incomplete, NOT ok: only ``Wait("caught_up")`` counted.
  A worker that backs off after its last fetch reached the end, with the durable cursor there, is caught up;
- a consumer that cut every page to its first 100 events (``BulkOfAHundred``, a bulk API's limit) and passed
  the barrier passed every case: the widest pages held 50 events. The wide case ``big_page`` holds 1,500.

Held (caught, or ok where correct): a consumer that validates a reply's tuple in memory and skips the
settlement write (duplicated on the unsafe sink after a crash before its receipt, explored); one that never
trusts a receipt for a replay (it calls the service again for an initial receipt: duplicated); a remembered
identity taking a lost barrier reply as swapped, and one fetching each page twice, ok; the correct consumers
and ``safe`` on every bundled scenario and corner after each change; the audits of ``ReadAhead`` and
``PipelinedReadAhead`` with the new cases.

Left alone here, mended after (the last test): a consumer that never raises ``applied_position``
(``NeverRaisesApplied``: commits and barriers keep the loaded one) was ok everywhere, though without
backfills it no longer sees a gap behind the real prefix (``gap_behind_applied``: it applies e3 instead of
halting). A run whose durable ``applied_position`` ends behind the work it made durable is now incomplete.
A page whose ``next_cursor`` is its own cursor and that serves events is not the end of the stream for the
provider, and ``safe`` is incomplete there.

Each: the verdict the same run earns, on the smallest scenario that shows it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import correct, round24, unseen, validation  # noqa: E402

#: The corners a partial step 3 slips through, and the validators each catches
_NEW_CORNERS = {"regression_mid_page": (round24.OrderAgainstFirst,),
                "regression_last_pair": (round24.OrderAgainstFirst, round24.FreshStartTrustsThePage),
                "two_ids_one_position": (round24.OrderAgainstFirst, round24.StrictlyBackwards),
                "gap_mid_page": (round24.GapAtPageStart,)}


@pytest.mark.parametrize("name", sorted(_NEW_CORNERS))
def test_a_validator_checking_part_of_a_page_fails_a_corner(name):
    """Seed 000 step 3: a regression anywhere in a page, or two ids at one position inside it, stops the
    attempt. ``safe`` halts (justified) on each corner; a validator that checks only part of the page applies
    the page and is caught; and the audit runs the corner."""
    assert name in CORNERS and any(c.kind == "corner" and c.name == name for c in cases(1, 0))
    safe = simkit.simulate(wide(name), simkit.Consumer).verdict
    assert safe.ok and safe.halt_justified is True
    for cls in _NEW_CORNERS[name]:
        v = simkit.simulate(wide(name), cls).verdict
        assert not v.ok and v.unhalted and v.lost, (cls.__name__, v)


def test_the_partial_validators_pass_the_corner_that_was_there():
    """What let them through: on the audit's first corner (5, 4, 6), and the bundled gap, each halts,
    justified, as ``safe``."""
    for cls in (round24.OrderAgainstFirst, round24.StrictlyBackwards, round24.FreshStartTrustsThePage):
        v = simkit.simulate(wide("page_out_of_order"), cls).verdict
        assert v.ok and v.halt_justified is True
    v = simkit.simulate(simkit.load("gap_behind_applied"), round24.GapAtPageStart).verdict
    assert v.ok and v.halt_justified is True


@pytest.mark.parametrize("scenario", ["page_out_of_order", "overlap_new_identity", "gap_behind_applied"])
def test_a_halt_after_fetching_the_next_page_is_justified_by_the_attempts_page(scenario):
    """Seed 000 step 3 with read-ahead (invariant 3 allows it): the worker halts on the page fetched with the
    durable ``resume_cursor`` after it fetched the page after it. The halt is justified by the attempt's page
    (a regression, a conflicting identity, a gap), and the run is ok, as ``safe``'s."""
    sc = wide(scenario) if scenario in CORNERS else simkit.load(scenario)
    v = simkit.simulate(sc, round24.PrefetchBeforeValidating).verdict
    assert v.ok and v.halted and v.halt_justified is True and v.completed, v


def test_a_halt_on_a_good_page_after_fetching_the_next_one_is_still_unjustified():
    """The other side: a halt whose attempt's page and last fetch are both fine is a halt for nothing."""

    class HaltOnOverlapAfterPrefetch(round24.PrefetchBeforeValidating, validation.HaltOnOverlap):
        pass

    v = simkit.simulate(simkit.load("default"), HaltOnOverlapAfterPrefetch, seed=7).verdict
    assert v.halted and v.halt_justified is False and not v.ok


@pytest.mark.parametrize("cls", [correct.ReadAhead, correct.RereadsBeforeHalting, unseen.PipelinedReadAhead,
                                 simkit.Consumer])
def test_correct_consumers_halt_justified_on_every_corner(cls):
    """No false positive from the new corners or the halt rule: the correct consumers halt, justified, on each
    step 3 corner (round 31's backfill corner is step 4's: no halt, ok)."""
    for name in CORNERS:
        v = simkit.simulate(wide(name), cls).verdict
        halts = CORNERS[name]["description"].startswith("Step 3")
        assert v.ok and v.halt_justified is (True if halts else None), (cls.__name__, name, v)


def test_a_consumer_cutting_a_page_to_a_bulk_of_a_hundred_fails_the_big_page():
    """Seed 000 invariant 1 on a page wider than a bulk limit: ``BulkOfAHundred`` passes the barrier after the
    first 100 events of a page. It passed every case (the widest pages held 50); the audit's ``big_page`` (a
    page of 1,500) loses the rest, where ``safe`` is ok."""
    assert any(c.kind == "wide" and c.name == "big_page" for c in cases(1, 0))
    assert simkit.simulate(wide("big_page"), simkit.Consumer).verdict.ok
    v = simkit.simulate(wide("big_page"), round24.BulkOfAHundred).verdict
    assert not v.ok and "e101" in v.lost and "e100" not in v.lost
    for name in ("wide_pages", "long_stream"):
        assert simkit.simulate(wide(name), round24.BulkOfAHundred).verdict.ok


@pytest.mark.parametrize("name", ["retry_walkthrough", "transient_storm", "fence_race", "late_response"])
def test_backing_off_as_blocked_at_the_end_of_the_stream_is_caught_up(name):
    """Seed 000 step 7, judged from ground truth: a worker whose last fetch reached the end of the stream,
    with the durable ``resume_cursor`` there, and that backs off, is caught up whatever its ``Wait`` says.
    The run ends as ``safe``'s does (same fetches), not at the time limit."""
    sc = simkit.load(name)
    safe = simkit.simulate(sc, simkit.Consumer)
    run = simkit.simulate(sc, round24.BackOffAsBlocked)
    assert run.verdict.ok and run.verdict.completed, run.verdict
    assert run.as_dict()["fetches"] == safe.as_dict()["fetches"]


def test_a_blocked_worker_that_read_ahead_to_the_end_is_not_caught_up():
    """The other side: a worker blocked on a page, whose last fetch read the end of the stream ahead, is not
    caught up (the durable cursor is not at the end): the run goes on until the page is done."""
    v = simkit.simulate(simkit.load("transient_storm"), unseen.PipelinedReadAhead).verdict
    assert v.ok and not v.pending


def test_an_applied_position_left_behind_the_durable_work_is_incomplete():
    """Seed 000: "the applied position says what work is durably complete", "the greatest position in the
    source-ordered prefix whose events have durable outcomes". ``NeverRaisesApplied`` was ok on every bundled
    scenario; it now fails each one where ``safe`` raises ``applied_position`` and does not halt (a justified
halt may leave the prefix behind), and ``gap_behind_applied``."""
    raised, caught = set(), set()
    for name in simkit.bundled():
        sc = simkit.load(name)
        safe = simkit.simulate(sc, simkit.Consumer)
        if safe.verdict.halted is None and safe.world.store.checkpoint.applied_position > \
                sc.initial.applied_position:
            raised.add(name)
        if not simkit.simulate(sc, round24.NeverRaisesApplied).verdict.ok:
            caught.add(name)
    assert len(raised) > 10 and raised <= caught, raised - caught
    assert "gap_behind_applied" in caught      # where ``safe`` halts, it applies the event behind the prefix


def test_an_initial_applied_position_behind_initial_receipts_is_not_the_consumers(tmp_path):
    """The other side: the file's own checkpoint may understate its receipts (a state a lagging writer left);
    ``safe`` resuming at the end has no work to write, so nothing of it is behind: complete."""
    (f := tmp_path / "understated.toml").write_text(
        '[initial]\nresume_cursor = "C2"\napplied_position = 0\nreceipts = [1, 2, 3]\n\n'
        '[[pages]]\ncursor = "C1"\npositions = [1, 2, 3]\nnext_cursor = "C2"\n\n'
        '[[pages]]\ncursor = "C2"\npositions = []\nnext_cursor = "C2"\n')
    v = simkit.simulate(simkit.load(str(f)), simkit.Consumer).verdict
    assert v.ok and v.completed
