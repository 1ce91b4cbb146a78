"""Hostile consumers, sixty-second round (a fresh tester): seed 000's walkthroughs, steps, invariants and
shortcuts and seed 001's steps, each read as the one branch a colleague gets wrong under deadline: 27 buggy
consumers in Python (``tests/mutants/round62.py``; 21 written before the audit's cases were read) and 7 over
the wire, in Node and Perl (``tests/exec/consumers/round62/``, the bug picked by the first argument), and 8
that take a liberty the seeds allow (7 in Python, Perl's ``remember-identity``), none flagged. Each was
audited (``simkit audit ... --jobs 1``, default budget; the buggy ones in Python that passed, again with
``--budget 1500``).

Found (each passed the full audit on main, ``--budget 1500``: 0 of 241 cases failed):

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
- ``DeadLetterIsFinal``: invariant 5, "A failed item, retryable dead-letter outcome, operator-review hold,
  or reversible quarantine blocks the page barrier"; the author counts a ``dead_letter`` as done. simkit's
  handler never answered ``dead_letter`` (no behaviour made it), so no case could show it; the vocabulary
  lists it as a non-terminal outcome the handler decides.

The first two are caught by one new corner, ``overlap_page_new_identity`` (``simkit/tools/audit_corners.py``,
where the corners moved from ``audit_cases.py``, at the layout's 400-line limit): C2 first answers its own
token, then serves 2 and 3 again behind applied_position 3, 3 under a new id. The third by a new behaviour,
``dead_letter`` (``dead_letter`` the first ``failures`` times, then ``apply``), and the corner
``dead_letter_blocks``.

Held (caught by the audit on main; the first failing case is in the round's report): replaying durable
events first, then the rest (the quarantine walkthrough's 212), a reservation kept for a worker's life across
a credential rotation, a provisional record left for a late reply, settling without the settlement's
compare-and-set, halting on a commit that finds a receipt, the watermark trusted in a life's first attempt
with backfills, a receipt before the effect when the record is provisional, applied_position held behind
ignored and quarantined events, a quarantine after a retry treated as one more retry, decisions cached for a
life, a receipt without its effect after a lost commit, a page validated against itself, a retry inside an
attempt across a rotation, an event quarantined for a crossed reply, a page wholly behind the prefix
published unlooked; over the wire: overlap not validated, a crossed success committed, two events at one
position, tokens compared with Perl's ``==``. Perl's ``dead-letter-tail`` (a dead letter quarantined when the
page's tail is durable) passed on main, as ``DeadLetterIsFinal`` did, and the dead-letter corner catches it.

Not findings (the store or the ledger enforce what the consumer gets wrong, so nothing can go wrong in any
world simkit models): a commit's or barrier's ``applied_position`` lowered (``PositionOfTheEvent``,
``BarrierAtLastEvent``, ``EmptyPageResetsWatermark``; the store keeps the maximum, docs: "never moves
backwards here"), a reply settled under the tuple it carries (``SettleWithReplyIdentity``; the fenced
settlement compares the record's own reservation too), a provisional record holding a result taken for
committed (``HeldResultIsSuccess``; a record holds a result only once committed), the gap check's ``<`` for
``<=`` (``GapCheckStrict``, the Node one too: the scenario reader refuses an ``applied_position`` no receipt
covers, the one state where it differs). Left alone, argued: validating only a page's new events, or
publishing a page of replays unvalidated (``ValidateNewEventsOnly``, ``ReplayPageFastPath``: they pass; seed
000 says "validate that *new* events respect the source order", so a case flagging a regression among
replays would flag a consumer the seed allows); a page of events under the request's own token backed off on
unread (``SameTokenMeansIdle``: simkit judges ``safe`` itself incomplete on such a page, whose cursor is never
the end of the stream, so no case can hold it; a scenario with one is accepted, and no consumer passes it).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import CORNERS, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round62  # noqa: E402

_CORNER = "overlap_page_new_identity"
_DEAD_LETTER = "dead_letter_blocks"
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


def test_a_dead_letter_counted_as_done_is_caught_and_correct_consumers_wait_for_it():
    """Seed 000 invariant 5: "A failed item, retryable dead-letter outcome ... blocks the page barrier". The
    handler dead-letters e2 twice, then applies it: every correct consumer waits and is ok; one that counts
    the dead letter as done moves the prefix over e2 and publishes C2: e2 lost, invariants 2 and 5."""
    assert any(c.kind == "corner" and c.name == _DEAD_LETTER for c in cases(1, 0))
    for cls in (*roster.CORRECT, *_CORRECT):
        v = simkit.simulate(wide(_DEAD_LETTER), cls).verdict
        assert v.ok and v.completed, (cls.__name__, v)
    v = simkit.simulate(wide(_DEAD_LETTER), round62.DeadLetterIsFinal).verdict
    assert not v.ok and v.lost == ["e2"] and {d["invariant"] for d in v.invariant_violations} == {2, 5}


def test_the_dead_letter_behaviour_answers_then_applies():
    """``behavior = "dead_letter"`` reads ``failures`` as ``transient`` does; the key on another behaviour is
    refused naming both."""
    sc = simkit.parse({"name": "dl", "pages": [{"cursor": "C1", "positions": [1], "next_cursor": "C2"},
                                               {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
                       "events": [{"position": 1, "behavior": "dead_letter", "failures": 3}]}, "dl.toml")
    run = simkit.simulate(sc, simkit.Consumer)
    assert run.verdict.ok
    assert [d[-1] for d in run.world.sink.decisions] == ["dead_letter"] * 3 + ["apply"]
    with pytest.raises(simkit.SimkitError, match="it is for 'transient' or 'dead_letter' only$"):
        simkit.parse({"generate": {}, "events": [{"position": 10, "behavior": "hold", "failures": 2}]},
                     "x.toml")


@pytest.mark.skipif(shutil.which("perl") is None, reason="needs perl")
def test_a_dead_letter_quarantined_when_the_page_tail_is_durable_is_caught_over_the_wire():
    """The Perl consumer (``tests/exec/consumers/round62/consumer.pl dead-letter-tail``) quarantines a dead
    letter when every later event of its page holds a receipt ("the rest is done"): on the corner, e3 is
    durable already, and e2 gets a ``quarantined`` receipt no handler decision ordered: lost, invariant 5."""
    script = Path(__file__).parents[1] / "exec/consumers/round62/consumer.pl"
    v = simkit.simulate(wide(_DEAD_LETTER), simkit.resolve(f"exec:perl {script} dead-letter-tail")).verdict
    assert not v.ok and v.lost == ["e2"] and 5 in {d["invariant"] for d in v.invariant_violations}
