"""The checker fires: for every verdict field, a hand-built ground-truth history that it must report.

Each test writes provider responses, store writes and sink effects by hand — no consumer involved — so the
checker is shown to judge ground truth, not a strategy's claims.
"""

import pytest

import simkit
from simkit.judge.checker import check
from simkit.model import Checkpoint
from simkit.store.memory import MemoryStore
from simkit.world.provider import scripted
from simkit.world.sink import Sink

PAGES = {
    "name": "hand",
    "initial": {"resume_cursor": "C1"},
    "pages": [
        {"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
        {"cursor": "C2", "positions": [3], "next_cursor": "C3"},
        {"cursor": "C3", "positions": [], "next_cursor": "C3"},
    ],
    "events": [{"position": 3, "behavior": "review", "resolve_after": 30.0, "resolution": "apply"}],
}


class History:
    """A world assembled by hand: provider, store and sink share one clock."""

    def __init__(self, sink="transactional", pages=PAGES):
        sc = simkit.parse(pages)
        self.provider = scripted(sc)
        self.store = MemoryStore(Checkpoint("C1", 0, 0))
        self.sink = Sink(sink, sc.events, self.store.clock)
        self.provider.clock = self.store.clock
        self.halts = []
        self.completed = True

    def apply(self, worker, eid, pos, applied=None):
        self.store.commit_event(worker, eid, pos, "applied", pos if applied is None else applied,
                                lambda: self.sink.record(worker, eid))

    def page(self, worker, cursor):
        cp = self.store.load(worker)
        return cp, self.provider.fetch(cursor, worker)

    def verdict(self):
        return check(self)

    def write(self, worker, cursor, applied, version, kind="overwrite"):
        """A durable checkpoint write as ground truth records it, with no store rule in the way (the store's
        own writes never lower applied_position)."""
        clock = self.store.clock
        self.store.writes.add(clock.tick(), clock.now, worker, kind, cursor, applied, version)
        self.store._checkpoint = Checkpoint(cursor, applied, version)

    def first_page_applied(self):
        """Worker 1 fetches C1 and commits both its events; no barrier yet."""
        self.page(1, "C1")
        self.apply(1, "e1", 1)
        self.apply(1, "e2", 2)
        return self

    def correct_run(self):
        self.first_page_applied()
        assert self.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
        cp, page = self.page(1, "C2")
        assert self.sink.decide(1, page.events[0]) == "operator_review"   # blocks: no barrier yet
        self.sink.clock.time = 40.0
        cp, page = self.page(1, "C2")
        assert self.sink.decide(1, page.events[0]) == "apply"
        self.apply(1, "e3", 3)
        assert self.store.compare_and_swap(1, "C2", 1, "C3", 2, 3)
        self.page(1, "C3")
        return self


def invariants(v):
    return sorted({x["invariant"] for x in v.invariant_violations})


def test_a_correct_history_is_ok():
    v = History().correct_run().verdict()
    assert v.ok, v


def test_lost_event_reported_when_cursor_moved_past_it():
    h = History()
    h.page(1, "C1")
    h.apply(1, "e1", 1)
    h.store.compare_and_swap(1, "C1", 0, "C2", 1, 1)     # e2 never got an outcome
    v = h.verdict()
    assert v.lost == ["e2"] and not v.ok
    assert v.pending == ["e3"]
    assert invariants(v) == [1]


def test_receipt_claiming_success_without_effect_is_not_an_outcome():
    h = History(sink="unsafe")
    h.page(1, "C1")
    h.store.commit_event(1, "e1", 1, "applied", 1)           # no effect in the sink's log
    h.sink.effect(1, "e2")
    h.store.commit_event(1, "e2", 2, "applied", 2)
    h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    v = h.verdict()
    assert v.lost == ["e1"]
    assert invariants(v) == [1, 2]


def test_duplicated_effect_reported_with_invariant_4():
    h = History(sink="unsafe").correct_run()
    h.sink.effect(2, "e2")
    v = h.verdict()
    assert v.duplicated == ["e2"]
    assert invariants(v) == [4]
    assert "ran 2 times" in v.invariant_violations[0]["detail"]


def test_regression_counted_for_each_backwards_write():
    h = History().correct_run()
    h.store.overwrite(2, "C2", 1, 0)                          # cursor back to C2, version back to 1
    v = h.verdict()
    assert v.regressions == 1 and not v.ok


def test_regression_of_the_version_alone():
    h = History().correct_run()                               # ends at C3 / 3 / v2
    h.write(1, "C3", 3, 1)
    v = h.verdict()
    assert v.regressions == 1 and not v.ok


def test_regression_of_applied_position_alone():
    h = History().correct_run()
    h.write(1, "C3", 2, 3, kind="commit")                     # version up, cursor kept, applied 3 -> 2
    v = h.verdict()
    assert v.regressions == 1 and not v.ok
    assert v.invariant_violations == []


def test_regression_of_the_cursors_place_alone():
    h = History().correct_run()
    h.write(1, "C2", 3, 3)                                    # version up, applied kept, cursor back to C2
    v = h.verdict()
    assert v.regressions == 1 and not v.ok


def test_a_write_that_moves_nothing_backwards_is_no_regression():
    h = History().correct_run()
    h.write(1, "C3", 3, 3)
    assert h.verdict().regressions == 0


def test_invariant_1_token_published_before_every_event_is_classified():
    h = History()
    h.page(1, "C1")
    h.store.compare_and_swap(1, "C1", 0, "C2", 1, 0)
    h.apply(1, "e1", 1)
    h.apply(1, "e2", 2)
    v = h.verdict()
    assert invariants(v) == [1] and v.lost == []
    assert {x["detail"].split(" while ")[1] for x in v.invariant_violations} == {"e1 has no durable outcome",
                                                                                  "e2 has no durable outcome"}


def test_invariant_2_applied_position_beyond_the_durable_prefix():
    h = History()
    h.page(1, "C1")
    h.apply(1, "e1", 1, applied=2)                            # e2 not yet durable
    v = h.verdict()
    assert invariants(v) == [2]
    assert "e2" in v.invariant_violations[0]["detail"]


def test_invariant_2_applied_position_past_the_fetched_page():
    """Invariant 2 is judged against the whole stream, not only the page the worker fetched: e3 is on C2,
    which no one has fetched yet, and has no outcome when applied_position is raised to 3."""
    h = History()
    h.page(1, "C1")
    h.apply(1, "e1", 1)
    h.apply(1, "e2", 2, applied=3)
    v = h.verdict()
    assert invariants(v) == [2]
    assert [x["detail"] for x in v.invariant_violations] == [
        "applied_position 3 written while e3 (position 3) has no durable outcome"]


def test_invariant_2_applied_position_far_beyond_anything_observed_with_backfills():
    """The reviewer's repro: a consumer that writes applied_position = 10^6 on a stream with backfills. Every
    event of the stream above the real prefix (4 and 5, on a page not fetched yet) breaks invariant 2."""
    class Far(simkit.Consumer):
        def resulting_applied_position(self, event, page, applied):
            return 10**6 if event.position == 3 else max(applied, event.position)

    sc = simkit.parse({"name": "far", "backfills": True, "initial": {"resume_cursor": "C1"},
                       "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
                                 {"cursor": "C2", "positions": [4, 5], "next_cursor": "C3"},
                                 {"cursor": "C3", "positions": [], "next_cursor": "C3"}]})
    v = simkit.simulate(sc, Far).verdict
    assert not v.ok and 2 in invariants(v)
    assert {x["detail"] for x in v.invariant_violations if x["invariant"] == 2} == {
        "applied_position 1000000 written while e4 (position 4) has no durable outcome",
        "applied_position 1000000 written while e5 (position 5) has no durable outcome"}


BACKFILL = {"name": "backfill", "backfills": True, "initial": {"resume_cursor": "C1"},
            "pages": [{"cursor": "C1", "positions": [1, 3], "next_cursor": "C2"},
                      {"cursor": "C2", "positions": [2], "next_cursor": "C3"},      # 2 lands behind 3
                      {"cursor": "C3", "positions": [], "next_cursor": "C3"}]}


def test_invariant_2_a_backfill_is_judged_by_receipts_not_by_the_watermark():
    """A backfill lands behind positions already served: applied_position 3 written before e2 has an outcome
    makes no claim about it (seed 000: with late backfills "use per-event receipts instead"), whoever had
    fetched it; the barrier past C2 is where it must have one."""
    h = History(pages=BACKFILL)
    h.page(1, "C1")
    h.page(2, "C2")                                           # e2 served (to another worker) first
    h.apply(1, "e1", 1)
    h.apply(1, "e3", 3)
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 3)
    assert not h.verdict().invariant_violations
    h.page(1, "C2")
    assert h.store.compare_and_swap(1, "C2", 1, "C3", 2, 3)  # ... but publishing C3 with e2 undone is not
    v = h.verdict()
    assert invariants(v) == [1] and v.lost == ["e2"]


def test_a_read_ahead_that_sees_a_backfill_early_is_not_flagged():
    """The same checkpoint writes as safe's, with the next page fetched before the current one is processed:
    the verdict depends on what became durable, not on when a worker fetched."""
    h = History(pages=BACKFILL)
    h.page(1, "C1")
    h.provider.fetch("C2", 1)                                  # read ahead: e2 served before e1, e3 are done
    h.apply(1, "e1", 1)
    h.apply(1, "e3", 3)
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 3)
    h.apply(1, "e2", 2)
    assert h.store.compare_and_swap(1, "C2", 1, "C3", 2, 3)
    h.page(1, "C3")
    assert h.verdict().ok


def test_invariant_3_barrier_that_did_not_match_what_the_worker_read():
    h = History().correct_run()
    h.page(2, "C1")                                           # worker 2 read C3/v2, yet fetched C1
    h.store.overwrite(2, "C2", 1, 0)
    v = h.verdict()
    assert 3 in invariants(v)


def test_invariant_3_barrier_whose_cursor_matches_but_whose_version_is_stale():
    """Worker 2 read C3/v2 and fetched C3; worker 1 then passed a barrier to
    C3/v3. Worker 2's barrier still finds the cursor it fetched with, but
    not the version: an unconditional write over v3 breaks invariant 3."""
    h = History().correct_run()                               # worker 1 has fetched C3 (empty, C3 back)
    h.page(2, "C3")                                           # worker 2 reads C3/v2 and fetches C3
    assert h.store.compare_and_swap(1, "C3", 2, "C3", 3, 3)
    h.store.overwrite(2, "C3", 4, 3)                          # no version check: v3 was never read by 2
    v = h.verdict()
    assert v.regressions == 0 and invariants(v) == [3]
    assert len(v.invariant_violations) == 1 and v.invariant_violations[0]["worker"] == 2
    assert "('C3', v3)" in v.invariant_violations[0]["detail"]


def test_invariant_3_barrier_that_does_not_increase_the_version():
    """Seed 000 step 5: the barrier swaps to the returned cursor *and a greater version*. One that keeps
    the version (and so cannot fence a stale retry) breaks invariant 3, though it moves nothing backwards."""
    h = History().first_page_applied()
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 0, 2)
    v = h.verdict()
    assert v.regressions == 0 and invariants(v) == [3]
    assert "('C1', v0)" in v.invariant_violations[0]["detail"]


def test_invariant_3_cursor_the_provider_never_returned():
    h = History().first_page_applied()
    h.store.compare_and_swap(1, "C1", 0, "C9", 1, 2)
    v = h.verdict()
    assert invariants(v) == [3]
    assert "never returned" in v.invariant_violations[0]["detail"]


def test_invariant_5_barrier_over_a_review_hold():
    h = History().first_page_applied()
    h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    _, page = h.page(1, "C2")
    assert h.sink.decide(1, page.events[0]) == "operator_review"
    h.store.compare_and_swap(1, "C2", 1, "C3", 2, 2)
    v = h.verdict()
    assert invariants(v) == [5]
    assert v.lost == ["e3"]


@pytest.mark.parametrize("outcome", ["retry_later", "dead_letter", "operator_review", "reversible_hold"])
@pytest.mark.parametrize("decided", [True, False], ids=["decision_logged", "receipt_only"])
def test_barrier_over_a_durable_receipt_that_is_not_terminal(outcome, decided):
    """A durable receipt that says retry later, dead letter, await review or hold reversibly is no terminal
    outcome: a barrier that publishes C3 over it breaks invariant 5, whether the handler's decision is in the
    sink's log or only the receipt says so, and e3 is lost."""
    h = History().first_page_applied()
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    _, page = h.page(1, "C2")
    if decided:
        h.sink.decisions.add(h.store.clock.tick(), h.store.clock.now, 1, "e3", outcome)
    assert h.store.commit_event(1, "e3", 3, outcome, 2)      # durable, not terminal
    assert h.store.compare_and_swap(1, "C2", 1, "C3", 2, 2)
    v = h.verdict()
    assert invariants(v) == [5]
    assert v.invariant_violations[0]["detail"] == f"token 'C3' published while e3 is {outcome}"
    assert v.lost == ["e3"] and not v.ok


def decide(h, eid, decision, worker=1):
    """A handler decision as the sink logs it."""
    h.sink.decisions.add(h.store.clock.tick(), h.store.clock.now, worker, eid, decision)


def test_barrier_after_a_hold_was_made_terminal_is_ok():
    """The receipt history matters only up to the barrier: a review hold,
    later resolved by the handler to quarantine and made a durable terminal
    quarantine, then the barrier, is the quarantine boundary done right."""
    h = History().first_page_applied()
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    h.page(1, "C2")
    decide(h, "e3", "operator_review")
    assert h.store.commit_event(1, "e3", 3, "operator_review", 2)
    decide(h, "e3", "quarantine")
    assert h.store.commit_event(1, "e3", 3, "quarantined", 3)
    assert h.store.compare_and_swap(1, "C2", 1, "C3", 2, 3)
    assert h.verdict().ok


# -- receipts are claims, the handler's decisions are the facts (docs/verdict.md) ----------------------------
def barrier_over_e3(h, outcome, applied=3):
    """Worker 1 has done page C1; it fetches C2, writes ``outcome`` for e3 and passes the barrier."""
    h.first_page_applied()
    assert h.store.compare_and_swap(1, "C1", 0, "C2", 1, 2)
    h.page(1, "C2")
    if outcome == "applied":
        h.apply(1, "e3", 3)
    else:
        assert h.store.commit_event(1, "e3", 3, outcome, applied)
    assert h.store.compare_and_swap(1, "C2", 1, "C3", 2, applied)
    return h.verdict()


@pytest.mark.parametrize("outcome", ["ignored", "quarantined"])
def test_a_terminal_receipt_the_handler_never_ordered_breaks_invariant_5_and_is_no_outcome(outcome):
    """A consumer that writes ``ignored`` or ``quarantined`` for an event without asking the handler has
    closed nothing: invariant 5 at the receipt, and since the claim is no outcome, invariant 1 at the barrier
    and the event lost."""
    v = barrier_over_e3(History(), outcome)
    assert [x["detail"] for x in v.invariant_violations if x["invariant"] == 5] == [
        f"durable {outcome} receipt of e3 while the handler never decided it"]
    assert 1 in invariants(v) and v.lost == ["e3"] and not v.ok


@pytest.mark.parametrize("decision", ["retry_later", "operator_review", "reversible_hold"])
@pytest.mark.parametrize("outcome", ["ignored", "quarantined"])
def test_a_non_terminal_decision_made_terminal_by_the_consumer_breaks_invariant_5(decision, outcome):
    """Seed 000 step 4: "a transient dead-letter entry, a pending operator decision, or a reversible hold does
    not close the prefix". A durable quarantine or ignore over such a decision is a claim the handler never
    made."""
    h = History()
    decide(h, "e3", decision)
    v = barrier_over_e3(h, outcome)
    assert f"durable {outcome} receipt of e3 while the handler's decision was {decision}" in [
        x["detail"] for x in v.invariant_violations if x["invariant"] == 5]
    assert v.lost == ["e3"] and not v.ok


@pytest.mark.parametrize("decision", ["operator_review", "reversible_hold", "retry_later", "quarantine"])
def test_an_effect_while_the_latest_decision_is_not_apply_breaks_invariant_5(decision):
    """Applying an event under review, on hold, due for a retry, or that the policy quarantined: the effect
    and its receipt exist, but the handler never ordered them."""
    h = History()
    decide(h, "e3", decision)
    v = barrier_over_e3(h, "applied")
    assert [x["detail"] for x in v.invariant_violations] == [
        f"durable applied receipt of e3 while the handler's decision was {decision}"]
    assert not v.ok and v.lost == []            # the effect did happen: nothing is lost, it is wrong


def test_an_effect_of_an_event_whose_handler_logs_but_was_never_asked_breaks_invariant_5():
    """e3 is a review event: its handler logs every decision. Applied with no decision at all, it was never
    asked."""
    v = barrier_over_e3(History(), "applied")
    assert invariants(v) == [5] and "the handler never decided it" in v.invariant_violations[0]["detail"]


@pytest.mark.parametrize("outcome, decision", [("applied", "apply"), ("quarantined", "quarantine"),
                                               ("ignored", "ignore")])
def test_a_terminal_receipt_the_handler_ordered_is_an_outcome(outcome, decision):
    h = History()
    decide(h, "e3", decision)
    assert barrier_over_e3(h, outcome).ok


def test_the_latest_decision_counts_a_retry_later_then_apply_is_ordered():
    h = History()
    decide(h, "e3", "retry_later")
    decide(h, "e3", "apply")
    assert barrier_over_e3(h, "applied").ok


def test_an_ok_event_needs_no_logged_decision_to_be_applied_but_does_to_be_ignored():
    """The handler of an ``ok`` event answers apply and logs
    nothing: applying it is ordered, ignoring it is not."""
    h = History()
    h.page(1, "C1")
    h.apply(1, "e1", 1)
    assert h.store.commit_event(1, "e2", 2, "ignored", 2)
    v = h.verdict()
    assert [x["detail"] for x in v.invariant_violations if x["invariant"] == 5] == [
        "durable ignored receipt of e2 while the handler never decided it"]


def test_two_applied_receipts_for_one_event_are_duplicated():
    """docs/verdict.md: ``duplicated`` also holds an event with more than one ``applied`` receipt. The store
    refuses a second terminal receipt, so the receipt log is written by hand; the sink ran the effect once."""
    h = History().correct_run()
    clock = h.store.clock
    h.store.receipt_log.add(clock.tick(), 50.0, 2, "e2", "applied")
    v = h.verdict()
    assert v.duplicated == ["e2"] and not v.ok
    assert h.sink.effect_count["e2"] == 1
    assert [(x["invariant"], x["time"], x["worker"], x["detail"]) for x in v.invariant_violations] == [
        (4, 50.0, 2, "e2 holds 2 applied receipts")]


def test_an_applied_receipt_after_a_terminal_quarantine_is_not_duplicated():
    """One ``applied`` receipt is not a duplicate, whatever terminal receipt came before it."""
    h = History()
    h.page(1, "C1")
    assert h.store.commit_event(1, "e1", 1, "quarantined", 1)
    h.store.receipt_log.add(h.store.clock.tick(), 5.0, 2, "e1", "applied")
    v = h.verdict()
    assert v.duplicated == [] and 4 not in invariants(v)


# -- halts are claims that the provider broke its contract ---------------------------------------------------
REGRESSING = {"name": "hand", "pages": [{"cursor": "C1", "positions": [2, 1], "next_cursor": "C2"},
                                        {"cursor": "C2", "positions": [], "next_cursor": "C2"}]}


def test_a_halt_on_a_page_that_regresses_is_justified_and_counts_as_completed():
    h = History(pages=REGRESSING)
    h.page(1, "C1")
    h.halts.append((h.store.clock.now, 1, "source-order regression: position 1 after 2"))
    v = h.verdict()
    assert v.halted.startswith("source-order regression") and v.halt_justified is True and v.completed
    assert v.pending == ["e1", "e2"] and v.ok


def test_a_halt_the_page_does_not_justify_is_a_liveness_failure():
    """The same reason given over a page in source order: the provider kept its contract, the worker stopped
    without cause. Nothing is lost, yet the run is not ok: it never finishes."""
    h = History()
    h.page(1, "C1")
    h.halts.append((h.store.clock.now, 1, "source-order regression: position 1 after 2"))
    v = h.verdict()
    assert v.halt_justified is False and not v.completed and not v.lost and not v.ok


def test_a_halt_is_judged_by_the_last_fetch_whatever_loads_came_after():
    """docs/verdict.md, ``halt_justified``: what the worker was served by its
    last fetch, any number of ``Load`` requests in between changing nothing (a
    consumer that rereads the checkpoint before it halts is still right)."""
    h = History(pages=REGRESSING)
    h.page(1, "C1")
    h.store.load(1)
    h.store.load(1)
    h.halts.append((h.store.clock.now, 1, "source-order regression: position 1 after 2"))
    assert h.verdict().halt_justified is True


def test_a_halt_before_any_fetch_is_unjustified():
    """A worker that stops right after loading its checkpoint, never served anything, has nothing to blame."""
    h = History(pages=REGRESSING)
    h.store.load(1)
    h.halts.append((h.store.clock.now, 1, "source-order regression: position 1 after 2"))
    assert h.verdict().halt_justified is False


@pytest.mark.parametrize("cursor, justified", [("C2", True), ("C9", False)])
def test_a_refused_cursor_justifies_a_halt_only_if_the_provider_issued_it(cursor, justified):
    """The provider refusing a token it returned itself breaks its contract; refusing one the consumer made up
    (an incremented token) does not."""
    h = History()
    h.page(1, "C1")                             # returns C2
    h.store.load(1)
    clock = h.store.clock  # the provider refuses the next fetch (a hand-written response)
    h.provider.log.append((clock.tick(), clock.now, 1, cursor, "", ()))
    h.halts.append((h.store.clock.now, 1, f"provider refused cursor {cursor!r}"))
    assert h.verdict().halt_justified is justified


def test_not_completed_is_not_ok():
    h = History().correct_run()
    h.completed = False
    assert not h.verdict().ok


@pytest.mark.parametrize("field", ["lost", "duplicated", "regressions", "invariant_violations", "completed"])
def test_ok_is_false_whenever_any_failure_field_is_set(field):
    v = simkit.Verdict()
    assert v.ok
    setattr(v, field, {"lost": ["e1"], "duplicated": ["e1"], "regressions": 1,
                       "invariant_violations": [{"invariant": 1}], "completed": False}[field])
    assert not v.ok


def test_caught_up_in_memory_only_is_not_completed():
    """Every event has its outcome, but the durable resume_cursor never left C1: the workers said they were
    caught up, the checkpoint says otherwise. A restart would fetch the whole stream again."""
    h = History()
    h.page(1, "C1")
    h.apply(1, "e1", 1)
    h.apply(1, "e2", 2)
    decide(h, "e3", "apply")
    h.apply(1, "e3", 3)
    v = h.verdict()
    assert not v.lost and not v.pending and not v.invariant_violations
    assert not v.completed and not v.ok



def test_the_durable_prefix_of_a_history_without_a_scenario_starts_from_the_default_initial_state():
    """A hand-built history has no scenario (``as_truth`` reads it as it is): its durable prefix starts at the
    default ``[initial] applied_position``, 0, where it raised AttributeError reading ``scenario.initial``."""
    from simkit.judge.facts import durable_prefix
    times, positions = durable_prefix(History().correct_run())
    assert positions[-1] == 3 and times == sorted(times)


@pytest.mark.parametrize("thing", [None, object(), "retry_walkthrough"], ids=["None", "object", "a name"])
def test_check_of_something_with_no_ground_truth_is_a_type_error_saying_what_it_takes(thing):
    """simkit.check(None) was an AttributeError from deep in the ground truth's reading."""
    with pytest.raises(TypeError, match=r"no ground truth in \w+: a World, a Run, a GroundTruth or a hist"):
        simkit.check(thing)
