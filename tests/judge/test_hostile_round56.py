"""Round 56 (a fresh tester): 22 correct consumers written from the seeds alone
(``tests/mutants/round56.py``), none judged wrongly; three join ``roster.CORRECT``. Found:
docs/verdict.md did not say that a ``Skip`` counts against the progress guard's step budget, so a correct
consumer that rebuilt its state for every event and noted a ``Skip`` for each done event at every attempt
(quadratic in the page's size) was stopped on the 4,100-event ``big_page`` with nothing in the docs to
say why. The docs say so now; this test is the claim, on a page small enough for a test, with the guard's
budget lowered as the guard's own tests do.
"""
from __future__ import annotations

import pytest
from mutants.round56 import NoSkipNotes, OneEventPerAttempt, RereadBeforeCommit, WaitAfterLost

import simkit
import simkit.world.guard as guard
from simkit.ops import Skip
from simkit.tools.explore import explore

PAGE = simkit.parse({"name": "one_page", "sink": "transactional",
                     "pages": [{"cursor": "C1", "positions": list(range(1, 101)), "next_cursor": "C2"},
                               {"cursor": "C2", "positions": [], "next_cursor": "C2"}]})


class OneEventPerAttemptWithSkips(OneEventPerAttempt):
    """``OneEventPerAttempt`` as first written: a ``Skip`` for every done event, at every attempt (on PAGE
    the done events are the page's prefix), then the same attempt."""

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if not self.is_replay(event, receipts, applied):
                break
            yield Skip(event)
            applied = max(applied, event.position)
        return (yield from super().process(checkpoint, page, receipts))


def test_a_skip_counts_against_the_step_budget(monkeypatch):
    monkeypatch.setattr(guard, "STEP_BASE", 1_000)
    monkeypatch.setattr(guard, "STEPS_PER_ITEM", 10)      # earned: 10 an event with a receipt
    without = simkit.simulate(PAGE, OneEventPerAttempt)
    assert without.verdict.ok
    skipping = simkit.simulate(PAGE, OneEventPerAttemptWithSkips)
    assert skipping.as_dict()["stopped"].startswith("progress guard: the step budget")
    assert not skipping.verdict.completed


@pytest.mark.parametrize("cls", [WaitAfterLost, RereadBeforeCommit, NoSkipNotes], ids=lambda c: c.__name__)
def test_the_liberties_docs_protocol_names_pass_every_lost_reply(cls):
    """docs/protocol.md: the procedure over the wire is one answer the audit passes, not the only one; a
    consumer may also wait after a ``lost``, load more often, or note no ``skip``."""
    explored = explore(simkit.load("transient_storm"), cls, max_crashes=0, lost_responses=1)
    assert explored.first_violation is None
