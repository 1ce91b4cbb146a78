"""Round 46: mutation testing of the checker (simkit/judge). Each test kills at least one mutant the existing
tests let live, named ``module-N`` in its docstring; none showed the real checker wrong.

How the mutants were made (the script stays outside the repository, /tmp/r46/mutate.py): stdlib ``ast`` walks
checker.py, claims.py, halts.py, order.py, outcomes.py, settlement.py, facts.py and verdict.py and makes one
mutant per site, numbered in walk order: each comparison flipped (< <=, > >=, == !=, in / not in, is / is
not), ``and``/``or`` swapped, every integer constant (indices and slice bounds too) +1 and -1,
``if``/``while``/conditional-expression tests set to True and (``if``) to False, ``not`` dropped,
``continue``/``break``, call statements, augmented assignments and ``return`` inside an ``if`` replaced by
``pass``, comprehension filters dropped, ``max``/``min`` and ``any``/``all`` swapped, and outcome, decision,
write-kind and settlement-kind strings swapped within their group. ``ast.unparse`` writes the mutated module
into a copy of the worktree, and each mutant runs in a process of its own. 1,299 mutants; 249 were run, drawn
at random from the 953 of checker, claims, halts, order and outcomes (the machine was shared: settlement,
facts and verdict were not reached).

Kill criterion: ``pytest -x`` on the brief's filter (tests/judge but test_mutants.py, tests/seed,
tests/scenario/test_hostile_round19/20/23), per mutant only the tests whose coverage context (``coverage
run``, ``dynamic_context = test_function``) reaches the mutated line, first without the four slowest files
(seed/test_validation_list, seed/test_shortcuts, seed/test_crash_anywhere, scenario/test_hostile_round23);
survivors reached only at module level, or not shown equivalent, ran again on the whole filter.

Score, of the 249: 157 killed by the filter (one by a hang: the per-mutant timeout); 29 killed by the tests
below; 56 equivalent (the same verdict on every run: a shortcut never or always taken, a field read but
unused, a value no run has, a helper ``check`` never calls), each with its reason in the round's report; 7
left, which change a verdict only where another field fails the run already, or in runs not built in the time
(the report names them).
"""
from __future__ import annotations

import sys
from pathlib import Path

from test_checker import PAGES, History, invariants

import simkit
from simkit.model import Event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutants import round46  # noqa: E402
from mutants.correct import ReadAhead, RememberedIdentity  # noqa: E402
from mutants.validation import TrustTheProvider  # noqa: E402

# test_checker's pages with a poison event first (the handler decides quarantine)
POISON = {**PAGES, "events": [{"position": 1, "behavior": "poison"}]}


def test_a_receipt_is_judged_by_the_decision_before_it_not_a_later_one():
    """claims-373 (``if s > seq: break`` dropped in ``_Decisions.latest``): an ``applied`` receipt written
    while the handler's decision was ``operator_review`` is unordered (invariant 5) even if the handler
    later decides ``apply``; the mutant judged every write by the event's last decision ever."""
    h = History(pages=PAGES).first_page_applied()
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    _cp, page = h.page(1, "C2")
    assert h.sink.decide(1, page.events[0]) == "operator_review"
    h.apply(1, "e3", 3)                                 # the bug: applied while review is pending
    h.sink.clock.time = 40.0
    _cp, page = h.page(1, "C2")
    assert h.sink.decide(1, page.events[0]) == "apply"  # a later decision does not order the earlier write
    v = h.verdict()
    assert any(x["invariant"] == 5 and "e3 while the handler's decision was operator_review" in x["detail"]
               for x in v.invariant_violations), v.invariant_violations
    assert not v.ok


def test_an_applied_receipt_after_an_ordered_quarantine_is_not_duplicated():
    """checker-73 (``len(r) > 1`` dropped in ``_applied_receipts_twice``): an event with two terminal
    receipts, a quarantine the handler ordered and then one ``applied``, holds one ``applied`` receipt: not
    ``duplicated`` (test_checker's version has an unordered quarantine, which is void and never a
    candidate, so it could not tell)."""
    h = History(pages=POISON)
    _cp, page = h.page(1, "C1")
    assert h.sink.decide(1, page.events[0]) == "quarantine"
    assert h.store.commit_event(1, "e1", 1, "quarantined", 1)
    h.store.receipt_log.add(h.store.clock.tick(), 5.0, 2, "e1", "applied")
    v = h.verdict()
    assert v.duplicated == [] and 4 not in invariants(v)


# without backfills, e4 is served behind e5 on the page read ahead, exactly at the applied_position loaded
GAP_AT_APPLIED = {
    "name": "gap_at_applied",
    "backfills": False,
    "initial": {"resume_cursor": "C1", "applied_position": 4},
    "pages": [
        {"cursor": "C1", "positions": [5], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [4, 6], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [], "next_cursor": "C3"},
    ],
}


def test_a_gap_exactly_at_the_loaded_applied_position_is_seen():
    """halts-640 (``p > applied`` as ``p >= applied`` in ``_seen``): an event served exactly at the
    ``applied_position`` its worker loaded, with no receipt, is a gap (step 3: "at or below"). A consumer
    that reads the next page ahead and skips the gap check goes on where step 3 stops: ``unhalted``."""
    v = simkit.simulate(simkit.parse(GAP_AT_APPLIED), round46.GapBlindReadAhead).verdict
    gap = "gap: e4 at position 4 is behind applied_position 4"
    assert any(gap in d["detail"] for d in v.unhalted), v.unhalted
    safe = simkit.simulate(simkit.parse(GAP_AT_APPLIED), ReadAhead).verdict
    assert safe.ok and safe.halt_justified and not safe.unhalted, safe


# without backfills, page C2 both regresses inside itself (3, then 2) and starts with e3 behind applied 5
DISORDER_AND_GAP = {
    "name": "disorder_and_gap",
    "backfills": False,
    "pages": [
        {"cursor": "C1", "positions": [1, 5], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [3, 2, 6], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [], "next_cursor": "C3"},
    ],
}


def test_a_page_out_of_order_is_named_as_such_whatever_else_it_shows():
    """halts-479 (``if who in out: continue`` dropped in ``breaches``): a page whose own order breaks the
    contract is named by that breach, the provider's fact, not by a gap the receipts also show."""
    v = simkit.simulate(simkit.parse(DISORDER_AND_GAP), TrustTheProvider).verdict
    assert v.unhalted and all("showed a source-order regression or two ids at one position inside the page"
                              in d["detail"] for d in v.unhalted), v.unhalted


def test_a_missing_halt_is_dated_by_the_first_effect_not_the_receipt_after_it():
    """halts-497 (effects never noted in ``unhalted``): on an external sink the effect comes before its
    receipt; the missing halt is the first write, the effect of e6 (the mutant named the receipt)."""
    v = simkit.simulate(simkit.parse({**DISORDER_AND_GAP, "sink": "idempotent"}), TrustTheProvider).verdict
    assert [d["detail"].split(" after ")[0] for d in v.unhalted] == ["effect of e6"], v.unhalted


# page C1 regresses inside itself; both its events are done already; C2 is the end of the stream
REPLAYED_DISORDER = {
    "name": "replayed_disorder",
    "initial": {"resume_cursor": "C1", "receipts": [1, 2]},
    "pages": [
        {"cursor": "C1", "positions": [2, 1], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"},
    ],
}


def test_a_barrier_closing_a_page_out_of_order_is_blamed_on_that_page():
    """halts-615 (``if c == cursor: return k`` dropped in ``Attempts.published``): the barrier C1 -> C2
    closes the page fetched with C1, not the page read ahead with C2 (which also returned C2, and later).
    Every event of C1 is a replay, so the barrier is the only write after the breach: the mutant saw none."""
    v = simkit.simulate(simkit.parse(REPLAYED_DISORDER), round46.TrustingReadAhead).verdict
    assert [d["detail"].split(" after ")[0] for d in v.unhalted] == ["barrier publishing 'C2'"], v.unhalted
    assert not v.ok


# without backfills: page C1's events are done already (applied_position 0 lags them); C2 slips e2 behind e3
GAP_BEHIND_BARRIER = {
    "name": "gap_behind_barrier",
    "backfills": False,
    "initial": {"resume_cursor": "C1", "receipts": [1, 3]},
    "pages": [
        {"cursor": "C1", "positions": [1, 3], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [2, 4], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [], "next_cursor": "C3"},
    ],
}


def test_a_gap_behind_what_the_workers_own_barrier_wrote_is_seen():
    """halts-635 (``kind != "commit"`` as ``kind != "barrier"`` in ``breaches``): what a worker holds of the
    checkpoint is what it loaded or what its own barrier wrote (applied_position 3, every event of C1 a
    replay), not what it last committed. A consumer that keeps that checkpoint as its next attempt identity
    and skips the gap check goes on past e2: ``unhalted`` (the mutant held the 0 it loaded)."""
    v = simkit.simulate(simkit.parse(GAP_BEHIND_BARRIER), round46.GapBlindRemembered).verdict
    gap = "gap: e2 at position 2 is behind applied_position 3"
    assert any(gap in d["detail"] for d in v.unhalted), v.unhalted
    correct = simkit.simulate(simkit.parse(GAP_BEHIND_BARRIER), RememberedIdentity).verdict
    assert correct.ok and correct.halt_justified and not correct.unhalted, correct


# an external sink, where every time is past 1,000 and every log sequence number is far below
SLOW_FIRST_FETCH = {
    "name": "slow_first_fetch",
    "sink": "idempotent",
    "timing": {"fetch_latency": 1000.0},
    "pages": [
        {"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"},
    ],
}


def test_calls_sent_before_the_earlier_events_settle_are_an_inversion():
    """order-825 (``_in_lockstep`` reading the effects' times, ``fields(1, 2)``, for their sequence
    numbers): a consumer that calls the service for e2 before e1's call is settled goes past an outcome
    that is not durable (step 4). The mutant compared e1's receipt's sequence number with e2's effect's
    time, found the run in lockstep and passed it: its verdict was ok."""
    v = simkit.simulate(simkit.parse(SLOW_FIRST_FETCH), round46.CallAllThenSettle).verdict
    assert [d["detail"].split(" had ")[0] for d in v.unhalted] == [
        "effect of e2 before e1 (position 1), earlier in page 'C1',"], v.unhalted
    assert not v.ok and simkit.simulate(simkit.parse(SLOW_FIRST_FETCH), simkit.Consumer).verdict.ok


def test_an_effect_run_twice_is_dated_by_its_second_run():
    """checker-205 (``times[1][0]`` as ``times[1][-1]``): invariant 4 for an effect that ran twice is dated
    by the second run, its time and its worker (the mutant gave the worker's number as the time)."""
    h = History(sink="unsafe")
    h.page(1, "C1")
    h.sink.clock.time = 3.0
    h.sink.record(1, "e1")
    h.sink.clock.time = 7.0
    h.sink.record(2, "e1")
    v = h.verdict()
    assert v.duplicated == ["e1"]
    assert [(x["invariant"], x["time"], x["worker"]) for x in v.invariant_violations
            if x["invariant"] == 4] == [(4, 7.0, 2)], v.invariant_violations


def test_a_barrier_over_a_durable_dead_letter_is_invariant_5_whatever_comes_later():
    """checker-126 (``break`` as ``pass`` in ``_Holds.at``, a line the filter never reached): a barrier that
    passes over e1 while its durable receipt is ``dead_letter`` (and no handler decision says so) breaks
    invariant 5, even though e1 is applied after the barrier. The mutant read the later receipt: invariant
    1."""
    h = History()
    h.page(1, "C1")
    assert h.store.commit_event(1, "e1", 1, "dead_letter", 0)
    h.apply(1, "e2", 2, applied=0)
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 0)
    h.store.receipt_log.add(h.store.clock.tick(), 9.0, 1, "e1", "applied")
    v = h.verdict()
    assert [(x["invariant"], x["detail"]) for x in v.invariant_violations if "published" in x["detail"]] == [
        (5, "token 'C2' published while e1 is dead_letter")], v.invariant_violations


def test_a_hold_overtaken_by_an_applied_claim_is_no_hold():
    """checker-248 (``e in rows`` as ``e not in rows`` in ``_Holds``: a terminal receipt after an event's
    first receipt dropped): e1's last receipt before the barrier is an ``applied`` claim with no effect, so it
    has no durable outcome (invariant 1), not the ``dead_letter`` before it (the mutant's invariant 5)."""
    h = History()
    h.page(1, "C1")
    assert h.store.commit_event(1, "e1", 1, "dead_letter", 0)
    assert h.store.commit_event(1, "e1", 1, "applied", 0)      # a receipt claiming an effect never made
    h.apply(1, "e2", 2, applied=0)
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 0)
    v = h.verdict()
    assert [(x["invariant"], x["detail"]) for x in v.invariant_violations if "published" in x["detail"]] == [
        (1, "token 'C2' published while e1 has no durable outcome")], v.invariant_violations


# page C2 regresses inside itself
C2_OUT_OF_ORDER = {
    "name": "c2_out_of_order",
    "pages": [
        {"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [4, 3], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [], "next_cursor": "C3"},
    ],
}


def test_a_write_for_the_page_read_ahead_acts_on_that_page():
    """halts-607 (``if serves: return k`` as ``if True`` in ``Attempts.page_of``): a consumer that processes
    the page it read ahead before the current page's barrier, unvalidated, acts on that page (C2, out of
    order) with its first effect, not on its attempt's page C1, which does not serve e4. The mutant blamed
    that write on C1 and dated the missing halt by the later barrier."""
    v = simkit.simulate(simkit.parse(C2_OUT_OF_ORDER), round46.ProcessesThePageAheadUnchecked).verdict
    assert [(d["time"], d["detail"].split(" after ")[0]) for d in v.unhalted] == [(3.5, "effect of e4")], \
        v.unhalted


# the poison event e1 holds an applied receipt from before the run (the scenario's initial state)
DONE_BEFORE_THE_RUN = {
    "name": "done_before_the_run",
    "initial": {"resume_cursor": "C1", "receipts": [1]},
    "events": [{"position": 1, "behavior": "poison"}],
    "pages": [
        {"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"},
    ],
}


def test_an_initial_receipt_is_not_a_write_the_handler_must_order():
    """claims-396 (``receipts.fields(2, 4)`` as ``fields(3, 4)``: the event id read as the worker, so the
    initial state's receipts, worker 0, were judged): the receipts of ``[initial]`` are what the run starts
    from, not a write of it; ``safe`` replays e1 and is ok (the mutant reported invariant 5 at time 0)."""
    v = simkit.simulate(simkit.parse(DONE_BEFORE_THE_RUN), simkit.Consumer).verdict
    assert v.ok and v.invariant_violations == [], v


def test_a_call_settled_committed_is_a_durable_outcome_for_step_4():
    """order-716 (the settlement ledger never read in ``_first_writes``): a correct consumer that settles
    each call in source order and writes the page's receipts after the last one goes past no event without
    a durable outcome: a call settled ``committed`` is one. The mutant took only receipts as durable and
    reported an inversion (e2's effect before e1's receipt)."""
    page = {"name": "settled", "sink": "idempotent", "pages": SLOW_FIRST_FETCH["pages"]}
    v = simkit.simulate(simkit.parse(page), round46.SettleEachThenReceiptAll).verdict
    assert v.ok and v.unhalted == [], v


# overlap_new_identity under a contract that allows backfills: x3 at the position e3 holds a receipt at
NEW_IDENTITY_BACKFILLS = {
    "name": "new_identity_backfills",
    "backfills": True,
    "pages": [
        {"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [3, 4], "ids": ["x3", "e4"], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [], "next_cursor": "C3"},
    ],
}


def test_a_conflicting_identity_is_seen_where_backfills_are_allowed():
    """halts-592 (``not`` dropped from ``if not others and ...`` in ``_seen``): backfills or not, two ids
    at one position is a breach a consumer can see in the receipts. One that validates nothing goes on
    (``unhalted``); the mutant skipped every shared position when the contract allows backfills."""
    v = simkit.simulate(simkit.parse(NEW_IDENTITY_BACKFILLS), TrustTheProvider).verdict
    conflict = "conflicting identity at position 3: x3, and e3 holds a receipt there"
    assert v.unhalted and all(conflict in d["detail"] for d in v.unhalted), v.unhalted


def test_a_halt_on_an_id_served_before_at_the_same_position_is_justified():
    """halts-515 (``any`` as ``all`` in ``_conflicting_identity``): a halt is justified by an id already
    served at the position, not only by one holding a receipt there (docs/verdict.md). A correct consumer
    that compares the page it read ahead with the first page halts on x3 before e3 has a receipt; the
    mutant called that halt unjustified and the run incomplete."""
    v = simkit.simulate(simkit.parse(NEW_IDENTITY_BACKFILLS), round46.RemembersServedIds).verdict
    assert v.halt_justified is True and v.ok, v


def test_the_first_event_of_the_stream_keeps_its_outcome_beside_a_void_claim():
    """outcomes-938 (``if i < 0`` as ``if i < 1`` in ``Outcomes._receipts``): where some receipt is a void
    claim (e2's ``ignored``, which the handler never ordered), the first event of the stream, e1, with the
    quarantine its handler ordered, holds its outcome; the mutant moved e1's receipt off the stream, and e1
    was lost."""
    h = History(pages=POISON)
    _cp, page = h.page(1, "C1")
    assert h.sink.decide(1, page.events[0]) == "quarantine"
    assert h.store.commit_event(1, "e1", 1, "quarantined", 1)
    assert h.store.commit_event(1, "e2", 2, "ignored", 2)       # the handler never said ignore
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    v = h.verdict()
    assert "e1" not in v.lost + v.pending and "e2" in v.lost, v


def test_a_receipt_for_an_id_off_the_stream_is_not_the_last_events_outcome():
    """outcomes-887 (``if i < 0: i = self._place(eid)`` never taken): a receipt for an id the stream does not
    hold is kept after the stream's, not written into the last event's place (the mutant's ``at[-1]``): e3,
    never processed, is still without an outcome."""
    h = History().first_page_applied()
    assert h.sink.decide(1, Event("zz", 9, "ignore")) == "ignore"     # an id the provider never served
    assert h.store.commit_event(1, "zz", 9, "ignored", 2)
    v = h.verdict()
    assert "e3" in v.lost + v.pending, v


# an empty page with a new token in the middle of the stream
EMPTY_MIDWAY = {
    "name": "empty_midway",
    "pages": [
        {"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [3], "next_cursor": "C4"},
        {"cursor": "C4", "positions": [], "next_cursor": "C4"},
    ],
}


def test_an_empty_page_is_no_refusal():
    """halts-448 (``and`` as ``or`` in ``_refused``): a refusal has neither events nor a ``next_cursor``; an
    empty page with a new token is a page (step 7). A consumer that halts on it as if the cursor were refused
    halts unjustified; the mutant took the page for a refusal of an issued cursor and passed the run."""
    v = simkit.simulate(simkit.parse(EMPTY_MIDWAY), round46.EmptyPageIsRefusal).verdict
    assert v.halted and v.halt_justified is False and not v.ok, v


def test_a_halt_on_a_page_whose_ids_no_other_has_displaced_yet_is_unjustified():
    """halts-572 (``eid in others`` as ``eid not in others`` in ``_conflicting_identity``): the first page
    of NEW_IDENTITY_BACKFILLS shows nothing wrong (x3 is served only later); a consumer that halts on it
    halts without cause. The mutant found "another id served" in e1 and called the halt justified."""
    v = simkit.simulate(simkit.parse(NEW_IDENTITY_BACKFILLS), round46.PausedAfterFetch).verdict
    assert v.halted and v.halt_justified is False and not v.ok, v


# two workers on a page out of order; worker 2's first fetch never reaches the provider
TWO_HALTS = {
    "name": "two_halts",
    "workers": 2,
    "faults": [{"kind": "lost_request", "op": "fetch", "worker": 2}],
    "pages": [
        {"cursor": "C1", "positions": [2, 1], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"},
    ],
}


def test_every_halt_must_be_justified():
    """checker-130 (``all`` as ``any`` over the run's halts): worker 1 halts on the page out of order
    (justified); worker 2 halts on a lost request, served nothing (unjustified). ``halt_justified`` is false
    and the run fails; the mutant let the one justified halt answer for both."""
    v = simkit.simulate(simkit.parse(TWO_HALTS), round46.HaltsWhenUnreachable).verdict
    assert v.halt_justified is False and not v.ok, v


# e1 waits for review (resolved to quarantine), e2 is ignored: neither has an effect
REVIEW_THEN_IGNORE = {
    "name": "review_then_ignore",
    "events": [{"position": 1, "behavior": "review", "resolve_after": 20.0, "resolution": "quarantine"},
               {"position": 2, "behavior": "ignore"}],
    "pages": [
        {"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [], "next_cursor": "C2"},
    ],
}


def test_going_past_a_review_is_an_inversion_where_no_event_has_an_effect():
    """order-838 (``at[1:]`` as ``at[0:]`` in ``_later_done``'s first test): a consumer that goes past e1's
    review, ignores e2, and quarantines e1 once the review resolves breaks step 4, though nothing is lost.
    With no effect, each event's first write is its receipt, and the mutant's misaligned pre-check found no
    inversion at the last rank: its verdict was ok."""
    v = simkit.simulate(simkit.parse(REVIEW_THEN_IGNORE), round46.GoesPastFailures).verdict
    assert [d["detail"].split(" before ")[0] for d in v.unhalted] == ["ignored receipt for e2"], v.unhalted
    assert not v.ok and simkit.simulate(simkit.parse(REVIEW_THEN_IGNORE), simkit.Consumer).verdict.ok
