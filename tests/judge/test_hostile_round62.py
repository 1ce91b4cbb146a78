"""Hostile consumers, sixty-second round (a fresh tester): seed 000's walkthroughs, steps, invariants and
shortcuts and seed 001's steps, each read as the one branch a colleague gets wrong under deadline, written
before the audit's cases were read: 22 buggy consumers in Python (``tests/mutants/round62.py``) and 8 over the
wire, in Node and Perl (``tests/exec/consumers/round62/``, one bug picked by the first argument), and 7 that
take a liberty the seeds allow. Each was audited (``simkit audit ... --jobs 1``, default budget).

Found (each passed the full audit, ``--budget 1500``, 0 of 241 cases failed, on main):

- ``OverlapPageByPositions``: step 3 says "Overlap at or below the applied prefix is acceptable"; the author
  publishes a page that lies wholly at or below the prefix at once when a receipt holds every one of its
  positions, never asking whose. A new id at a receipted position there (seed 000: "conflicting identity at
  the same position ... stops the attempt") is lost, unhalted. Every step-3 corner and bundled scenario that
  re-serves a position under a new id (``overlap_new_identity``) puts a newer event on the same page, and the
  one page wholly behind the prefix (``gap_single_event``) has no receipt at its position.
- ``ValidatedCursorsCache``: step 3 runs on every page fetched; the author validates a cursor's page once per
  life and trusts it when the same cursor is fetched again. Its first answer may be an empty page with the
  request's token (stuck) and the next a page that breaks the contract: lost, unhalted. No case served a
  page that breaks step 3 at a cursor's second answer.

Both are caught by one new corner, ``overlap_page_new_identity`` (``simkit/tools/audit_corners.py``, where the
corners moved from ``audit_cases.py``, at the layout's 400-line limit): C2 first answers its own token, then
serves 2 and 3 again behind applied_position 3, 3 under a new id.

Held (caught by the audit on main; the first failing case is in the round's report): replaying durable
events first, then the rest (the quarantine walkthrough's 212), a reservation kept for a worker's life across
a credential rotation, a provisional record left for a late reply, settling without the settlement's
compare-and-set, halting on a commit that finds a receipt, the watermark trusted in a life's first attempt
with backfills, a receipt before the effect when the record is provisional, applied_position held behind
ignored and quarantined events, a quarantine after a retry treated as one more retry, decisions cached for a
life, a receipt without its effect after a lost commit, a page validated against itself, a retry inside an
attempt across a rotation; and over the wire: overlap not validated, a same-token page with events idled,
a crossed success committed, the gap check's ``<`` for ``<=``, two events at one position, a dead letter
quarantined when the page's tail is done, tokens compared with Perl's ``==``.

Not findings (the store or the ledger enforce what the consumer gets wrong, so nothing can go wrong in any
world simkit models): a commit's or barrier's ``applied_position`` lowered (``PositionOfTheEvent``,
``BarrierAtLastEvent``, ``EmptyPageResetsWatermark``; the store keeps the maximum, docs: "never moves
backwards here"), a reply settled under the tuple it carries (``SettleWithReplyIdentity``; the fenced
settlement compares the record's own reservation too), a provisional record holding a result taken for
committed (``HeldResultIsSuccess``; a record holds a result only once committed).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round62  # noqa: E402

_CORNER = "overlap_page_new_identity"
_CORRECT = (round62.RetryLostBarrierOnce, round62.RetryLostCommitOnce, round62.LazyAppliedPosition,
            round62.ClaimThenProcess, round62.RefetchBeforeHalt, round62.VersionPlusTwo,
            round62.TimeoutLeavesPending)


def test_the_new_corner_is_audited_and_correct_consumers_pass_it():
    """The corner is a case of the audit, and ``safe``, every correct consumer of the roster and this round's
    are ok on it: the stuck answer backs off, and the page behind the prefix halts on x3, justified."""
    assert _CORNER in CORNERS and any(c.kind == "corner" and c.name == _CORNER for c in cases(1, 0))
    for cls in (*roster.CORRECT, *_CORRECT):
        v = simkit.simulate(wide(_CORNER), cls).verdict
        assert v.ok and v.completed and v.halt_justified, (cls.__name__, v)


@pytest.mark.parametrize("name", ["OverlapPageByPositions", "ValidatedCursorsCache"])
def test_a_page_behind_the_prefix_unexamined_is_caught(name):
    """Seed 000 step 3: "An unexpected regression, conflicting identity at the same position, or a gap ...
    stops the attempt for investigation." Each publishes C2 over x3 without halting: x3 lost, invariant 1,
    unhalted. On the bundled walkthroughs it is ok."""
    cls = getattr(round62, name)
    v = simkit.simulate(wide(_CORNER), cls).verdict
    assert not v.ok and v.lost == ["x3"] and v.unhalted and v.halted is None
    assert 1 in {d["invariant"] for d in v.invariant_violations}
    assert simkit.simulate(simkit.load("overlap_new_identity"), cls).verdict.ok
