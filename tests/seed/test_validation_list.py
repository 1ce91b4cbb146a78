"""Seed 000, "Limits and validation", executed: one test per item of its validation list.

    Validate the implementation with crash injection before each event commit, after each event commit,
    before and after a durable quarantine receipt, before the page barrier, and after the barrier; also test
    overlapping pages, stale concurrent retries, reversible quarantine holds, empty pages with advancing
    tokens, and non-advancing tokens.

Each test builds a small scenario for its situation and runs ``safe`` over every fault schedule of it with
:func:`simkit.tools.explore.explore` (the crash-point items: every schedule of up to three crashes at that
point, at every position and every occurrence; the provider items: every schedule of up to two crashes
anywhere, and every schedule of one crash and one lost reply). Each asserts that the situation was reached
(the point was passed, the page was served) and that no schedule loses, duplicates, regresses or breaks an
invariant.
"""
import pytest

import simkit
from simkit.tools.explore import explore, replay

SINKS = ("transactional", "idempotent")


def scenario(name, pages, sink="transactional", events=(), **extra):
    """A scripted scenario from ``(cursor, positions, next_cursor[, stuck])`` tuples."""
    data = {"name": name, "sink": sink, "initial": {"resume_cursor": pages[0][0]},
            "pages": [{"cursor": c, "positions": list(ps), "next_cursor": n, **({"stuck": p[0]} if p else {})}
                      for c, ps, n, *p in pages],
            **extra}
    if events:
        data["events"] = list(events)
        data.setdefault("backfills", False)
    return simkit.parse(data, source=f"validation list: {name}")


TWO_PAGES = [("C1", [1, 2, 3], "C2"), ("C2", [4, 5], "C3"), ("C3", [], "C3")]
POISON = [{"position": 2, "behavior": "poison"}, {"position": 4, "behavior": "poison"}]


def explore_point(sc, point, crashes=3):
    x = explore(sc, "safe", max_crashes=crashes, points=(point,))
    assert x.passes.get(point, 0) > 0, f"{point} was never reached"
    assert x.by_faults[1] > 0 and x.schedules > x.passes[point]
    assert x.violations == 0, (x.kinds, x.first_violation)
    return x


@pytest.mark.parametrize("sink", SINKS)
def test_crash_before_each_event_commit(sink):
    x = explore_point(scenario("before_commit", TWO_PAGES, sink), "before_event_commit")
    assert x.passes["before_event_commit"] == 5                 # every event of both pages


@pytest.mark.parametrize("sink", SINKS)
def test_crash_after_each_event_commit(sink):
    x = explore_point(scenario("after_commit", TWO_PAGES, sink), "after_event_commit")
    assert x.passes["after_event_commit"] == 5


@pytest.mark.parametrize("sink", SINKS)
def test_crash_before_a_durable_quarantine_receipt(sink):
    x = explore_point(scenario("before_quarantine", TWO_PAGES, sink, POISON), "before_quarantine_receipt")
    assert x.passes["before_quarantine_receipt"] == 2           # 2 and 4, one on each page


@pytest.mark.parametrize("sink", SINKS)
def test_crash_after_a_durable_quarantine_receipt(sink):
    x = explore_point(scenario("after_quarantine", TWO_PAGES, sink, POISON), "after_quarantine_receipt")
    assert x.passes["after_quarantine_receipt"] == 2


@pytest.mark.parametrize("sink", SINKS)
def test_crash_before_the_page_barrier(sink):
    x = explore_point(scenario("before_barrier", TWO_PAGES, sink, POISON), "before_page_barrier")
    assert x.passes["before_page_barrier"] == 2                 # C1 -> C2 and C2 -> C3


@pytest.mark.parametrize("sink", SINKS)
def test_crash_after_the_page_barrier(sink):
    x = explore_point(scenario("after_barrier", TWO_PAGES, sink, POISON), "after_page_barrier")
    assert x.passes["after_page_barrier"] == 2


def explore_all(sc, crashes=2, lost=1):
    """Every schedule of up to ``crashes`` crashes (and pauses, with two workers); then, if ``lost``, every
    schedule of one crash and one lost reply (all three at once is ten times more runs for little more)."""
    x = explore(sc, "safe", max_crashes=crashes)
    assert x.by_faults[crashes] > 0
    assert x.violations == 0, (x.kinds, x.first_violation)
    if lost:
        y = explore(sc, "safe", max_crashes=1, lost_responses=lost)
        assert y.by_faults[2] > 0 and sum(y.replies.values()) > 0
        assert y.violations == 0, (y.kinds, y.first_violation)
    return x


@pytest.mark.parametrize("sink", SINKS)
def test_overlapping_pages(sink):
    """Pages that repeat events already applied: C2 re-serves 2 and 3, C3 re-serves 5 (seed 000 step 3:
    "overlap at or below the applied prefix is acceptable"; receipts make the replays harmless)."""
    sc = scenario("overlap", [("C1", [1, 2, 3], "C2"), ("C2", [2, 3, 4, 5], "C3"), ("C3", [5, 6], "C4"),
                              ("C4", [], "C4")], sink)
    explore_all(sc)
    trace = replay(sc, "safe", ()).trace
    assert trace.step.count("replay") == 3                     # 2, 3 and 5 recognised as complete


def test_stale_concurrent_retries():
    """Two workers on one checkpoint, each of which may crash or stall (a pause) anywhere, twice: the stale
    one's barrier loses its compare-and-swap and it rereads (seed 000 step 5, invariant 3)."""
    sc = scenario("stale_retries", [("C1", [1, 2], "C2"), ("C2", [3, 4], "C3"), ("C3", [], "C3")],
                  workers=2, random_faults={"pause_duration": 30.0})
    x = explore_all(sc, crashes=2, lost=0)
    assert x.pauses and x.by_faults[2] > 1000
    stale = replay(sc, "safe", [simkit.Fault("pause", "before_page_barrier", worker=1, duration=30.0)])
    assert "barrier_rejected" in stale.trace.step and stale.verdict.ok


@pytest.mark.parametrize("sink", SINKS)
def test_reversible_quarantine_holds(sink):
    """Event 2 is on a reversible hold for 30 time units: it blocks the page barrier (invariant 5) although
    3 is visible, until the hold is released and 2 is applied."""
    sc = scenario("hold", TWO_PAGES, sink, [{"position": 2, "behavior": "hold", "release_after": 30.0}])
    explore_all(sc)
    run = replay(sc, "safe", ())
    assert "blocked" in run.trace.step
    first_barrier = run.trace.step.index("barrier")
    assert run.trace.time[first_barrier] >= 30.0


@pytest.mark.parametrize("sink", SINKS)
def test_empty_pages_with_advancing_tokens(sink):
    """C2 and C3 are empty but return new tokens: zero-item pages that pass the barrier without moving
    applied_position (step 7), and are not the end of the stream: 4 and 5 come after them."""
    sc = scenario("empty_advancing", [("C1", [1, 2], "C2"), ("C2", [], "C3"), ("C3", [], "C4"),
                                      ("C4", [4, 5], "C5"), ("C5", [], "C5")], sink)
    explore_all(sc)
    run = replay(sc, "safe", ())
    assert run.trace.step.count("barrier") == 4 and run.as_dict()["final_checkpoint"]["resume_cursor"] == "C5"
    # ground truth: each barrier over an empty page moves the cursor on and leaves applied_position as it was
    empty = {c for _s, _t, _w, c, _n, ids in run.world.provider.log if not ids}
    over_empty = [(b, a) for _s, _t, _w, kind, b, a in run.world.store.writes
                  if kind == "barrier" and b.resume_cursor in empty]
    assert [(b.resume_cursor, a.resume_cursor) for b, a in over_empty] == [("C2", "C3"), ("C3", "C4")]
    assert all(a.applied_position == b.applied_position == 2 for b, a in over_empty)


@pytest.mark.parametrize("sink", SINKS)
def test_non_advancing_tokens(sink):
    """C2 answers twice with an empty page and its own token back before serving 3 and 4: the consumer backs
    off instead of spinning or publishing (step 7), and the end of the stream does the same."""
    sc = scenario("non_advancing", [("C1", [1, 2], "C2"), ("C2", [3, 4], "C3", 2), ("C3", [], "C3")], sink)
    explore_all(sc)
    run = replay(sc, "safe", ())
    assert run.trace.step.count("caught_up") >= 3 and run.verdict.completed
    assert [c for c in run.world.provider.log if c[3] == "C2"][0][4] == "C2"  # the token came back unchanged
