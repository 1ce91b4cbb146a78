"""The trace's outcomes are compared with named constants,
never parsed: which ``fetch`` rows handed a page."""
import pytest

import simkit
from simkit.truth.trace import CURSOR_REFUSED, NO_PAGE, REPLY_LOST, REQUEST_LOST, fetched_outcome, is_fetched


def test_a_fetch_hands_a_page_unless_the_cursor_was_refused_or_the_reply_or_request_lost():
    assert is_fetched("fetch", fetched_outcome(3)) and is_fetched("fetch", fetched_outcome(0))
    assert NO_PAGE == {CURSOR_REFUSED, REPLY_LOST, REQUEST_LOST}
    assert not any(is_fetched("fetch", o) for o in NO_PAGE)
    assert not is_fetched("commit", "applied") and not is_fetched("load", "")


@pytest.mark.parametrize("name", ["retry_walkthrough", "gauntlet", "transient_storm", "lost_barrier_reply"])
def test_every_fetch_row_of_a_run_is_a_page_or_names_why_not(name):
    trace = simkit.simulate(simkit.load(name)).trace
    pages = {fetched_outcome(k) for k in range(1000)}
    fetches = [o for s, o in zip(trace.step, trace.outcome) if s == "fetch"]
    assert fetches and all((o in pages) == is_fetched("fetch", o) and (o in pages or o in NO_PAGE)
                           for o in fetches)
