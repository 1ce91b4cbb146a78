"""Seed 000 step 3: "Validate that new events respect the source order. Overlap at or below the applied prefix
is acceptable. An unexpected regression, conflicting identity at the same position, or a gap that violates the
provider contract stops the attempt for investigation." Each halt, executed: the attempt stops before any
effect, and the cursor stays where it was."""
import pytest

import simkit


def scenario(pages, backfills=False):
    """A scripted stream: (cursor, positions, next_cursor[, ids]) per page, transactional sink."""
    data = {"name": "step3", "backfills": backfills, "sink": "transactional",
            "pages": [{"cursor": p[0], "positions": p[1], "next_cursor": p[2],
                       **({"ids": p[3]} if len(p) > 3 else {})}
                      for p in pages]}
    return simkit.parse(data, source="step3")


def effects(run) -> list[str]:
    return [e[3] for e in run.world.sink.effects if e[2] > 0]


@pytest.mark.parametrize("pages, halt, applied, pending", [
    ([("C1", [1, 3, 2], "C2"), ("C2", [], "C2")], "source-order regression: position 2 after 3",
     [], ["e1", "e2", "e3"]),
    ([("C1", [2], "C2", ["x2"]), ("C2", [2, 3], "C3", ["y2", "e3"]), ("C3", [], "C3")],
     "conflicting identity at position 2: y2 but receipt for x2", ["x2"], ["y2", "e3"]),
    ([("C1", [1, 2, 5], "C2"), ("C2", [3, 6], "C3"), ("C3", [], "C3")],
     "gap: e3 at position 3 is behind applied_position 5 with no receipt, and the provider contract has no "
     "backfills",
     ["e1", "e2", "e5"], ["e3", "e6"]),
], ids=["regression", "conflicting identity", "gap"])
def test_step_3_stops_the_attempt_before_any_effect(pages, halt, applied, pending):
    run = simkit.simulate(scenario(pages))
    v = run.verdict
    assert v.halted == halt
    assert effects(run) == applied                      # nothing of the halted page took effect
    assert not v.lost and not v.invariant_violations   # what was not done is pending, not skipped
    assert v.pending == pending
    halted_page = next(p for p in pages if pending[0] in (p[3] if len(p) > 3 else [f"e{x}" for x in p[1]]))
    assert run.world.store.checkpoint.resume_cursor == halted_page[0]   # the cursor stays at the halted page


def test_a_gap_is_no_gap_when_the_provider_documents_backfills():
    """With backfills, e3 behind the prefix is a new event, applied by receipts: the same stream completes."""
    run = simkit.simulate(scenario([("C1", [1, 2, 5], "C2"), ("C2", [3, 6], "C3"), ("C3", [], "C3")],
                                   backfills=True))
    assert run.verdict.ok and run.verdict.halted is None
    assert effects(run) == ["e1", "e2", "e5", "e3", "e6"]


def test_overlap_at_or_below_the_applied_prefix_is_acceptable():
    """The overlap of step 3's second sentence: events the prefix already holds, redelivered, are replays."""
    run = simkit.simulate(scenario([("C1", [1, 2, 3], "C2"), ("C2", [2, 3, 4], "C3"), ("C3", [], "C3")]))
    assert run.verdict.ok and run.verdict.halted is None
    assert effects(run) == ["e1", "e2", "e3", "e4"]
    assert list(run.trace.to_frame().query("step == 'replay'").event_id) == ["e2", "e3"]
