"""Hostile input, twenty-third round (a fresh tester): round 20's step 4 rule (``unhalted``: a worker writing
an event's first terminal receipt or effect while an earlier event of its page had none, and got one later)
attacked from both sides. Two wrong verdicts, both buggy consumers judged ok:

- an earlier event whose external call had made its effect but was not settled (a lost reply: ``provisional``,
  not durable) counted as done, so a consumer going on past that timeout and coming back for it later was ok,
  where the same consumer after a lost *request* was not. Now an earlier event counts from its first terminal
  receipt, or its call settled ``committed`` (seed 001's durable record), never from the effect alone;
- an earlier event that never got a write did not count at all ("``lost`` or ``pending`` already"), but after
  a justified halt ``pending`` fails nothing: a consumer that went past a review, wrote the rest of the page,
  then halted on a page it read ahead was ok. In a run a justified halt ended, such an event now counts as
  done after every write.

Held (no false positive): ``safe`` and the correct consumers (reading ahead, pipelined, remembered identity,
fresh receipts, receipts only) with two to four workers racing on one page, pausing or crashing mid-page, late
barriers, lost commit replies, overlaps, backfills after the events above them, initial receipts, empty and
stuck pages, ignore and quarantine decisions, transient failures, an idempotent sink with late and crossed
replies and a rotation; 1,500 generated scenarios (one to four workers, every sink, heavy random faults) and
every schedule of one crash or pause and one lost reply on six small scripted ones (on one, with a lost
request too: 70,242 schedules), none flagged; the audits of ``ReadAhead`` and ``PipelinedReadAhead``; the
golden verdicts; the mutant gallery's correct consumers on every bundled scenario (its buggy ones only gain
entries where they already failed).

Left alone: a consumer that settles each external call ``committed`` and writes the receipts afterwards, in
order, is not flagged (the committed record is durable). Two workers cooperating through a channel outside the
store (a file) so that one writes a later page's events without ever fetching the blocked page are not judged:
the write is blamed only within the pages its worker was served.

Each: the verdict the same run earns.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.model import Page
from simkit.ops import Fetch, Halt, Load, Lookup, Wait

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutants.correct import (  # noqa: E402
    FreshReceiptsPatientBackoff,
    ReadAhead,
    ReceiptsOnly,
    RememberedIdentity,
)
from mutants.unseen import PipelinedReadAhead  # noqa: E402
from scenario.test_hostile_round20 import GoesPastFailures  # noqa: E402

_CORRECT = ("safe", ReadAhead, PipelinedReadAhead, RememberedIdentity, FreshReceiptsPatientBackoff,
            ReceiptsOnly)


def _scenario(tmp_path: Path, name: str, text: str) -> simkit.Scenario:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'description = "{name}"\n' + text)
    return simkit.load(str(path))


def _pages(*pages: tuple[str, list[int], str]) -> str:
    return "".join(f'[[pages]]\ncursor = "{c}"\npositions = {p}\nnext_cursor = "{n}"\n' for c, p, n in pages)


def _step4(v: dict) -> list[str]:
    return [d["detail"].split(", had")[0] for d in v["unhalted"]
            if "where step 4 processes events in source" in d["detail"]]


# -- 1. going on past an external call whose reply was lost -------------------------------------------------
@pytest.mark.parametrize("kind", ["lost_response", "lost_request"])
def test_going_past_an_unsettled_call_is_not_ok(tmp_path, kind):
    """Idempotent sink; C1 serves 1, 2, 3; e2's call is lost. The consumer settles it ``provisional``
    (BLOCKED), goes on and applies e3 holding the prefix at 1, and settles e2 on its next attempt. After a
    lost request it was NOT ok; after a lost reply (the effect made, the outcome not durable) it was ok, since
    e2's effect counted as its outcome. NOT ok both ways now; ``safe`` ok."""
    sc = _scenario(tmp_path, "unsettled", 'sink = "idempotent"\n'
                   + _pages(("C1", [1, 2, 3], "C2"), ("C2", [], "C2"))
                   + f'[[faults]]\nkind = "{kind}"\nop = "effect"\nposition = 2\n')
    v = simkit.simulate(sc, GoesPastFailures).as_dict()
    assert not v["ok"] and not v["lost"] and not v["invariant_violations"] and v["completed"], v
    assert _step4(v) == ["effect of e3 before e2 (position 2), earlier in page 'C1'"]
    assert simkit.simulate(sc, "safe").as_dict()["ok"]


# -- 2. going past a review, then halting on a page read ahead ---------------------------------------------
class PastReviewThenHealthCheck(GoesPastFailures):
    """Unsafe (step 4): goes on past a review, applies the rest of the page, and while blocked reads the next
    page ahead "to check the provider's health", halting on a breach there."""

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "blocked":
                checkpoint = yield Load()
                page = yield Fetch(checkpoint.resume_cursor)
                if isinstance(page, Page) and page.next_cursor != checkpoint.resume_cursor:
                    ahead = yield Fetch(page.next_cursor)
                    if isinstance(ahead, Page):
                        _receipts, ids_at = yield Lookup(ahead.events)
                        problem = self.validate(checkpoint, ahead, ids_at)
                        if problem:
                            yield Halt(problem)
            if result in ("blocked", "caught_up"):
                yield Wait(result)


def test_going_past_a_review_then_halting_is_not_ok(tmp_path):
    """C1 serves 1, 2, 3 with e2 under review for 500; C2 serves 5, 4. The consumer applies e3, reads C2 ahead
    and halts there, justified: e2 is pending, which a justified halt allows, so it was ok. NOT ok now
    ("effect of e3 before e2"); ``safe`` waits for the review, then halts at C2: ok."""
    sc = _scenario(tmp_path, "review_then_halt",
                   _pages(("C1", [1, 2, 3], "C2"), ("C2", [5, 4], "C3"), ("C3", [], "C3"))
                   + '[[events]]\nposition = 2\nbehavior = "review"\nresolve_after = 500.0\n'
                   + 'resolution = "apply"\n')
    v = simkit.simulate(sc, PastReviewThenHealthCheck).as_dict()
    assert v["halt_justified"] and v["pending"] == ["e2", "e4", "e5"] and not v["ok"], v
    assert _step4(v) == ["effect of e3 before e2 (position 2), earlier in page 'C1'"]
    s = simkit.simulate(sc, "safe").as_dict()
    assert s["ok"] and s["halt_justified"] and s["unhalted"] == [], s


# -- held: correct consumers with several workers ------------------------------------------------------------
_HELD = {
    "three_workers_overlap": "workers = 3\n" + _pages(("C1", [1, 2, 3], "C2"), ("C2", [3, 4, 5], "C3"),
                                                      ("C3", [], "C3"))
    + '[[events]]\nposition = 2\nbehavior = "transient"\n'
    + '[[events]]\nposition = 4\nbehavior = "review"\nresolve_after = 20.0\nresolution = "apply"\n'
    + '[[faults]]\nkind = "pause"\npoint = "before_event_commit"\nposition = 3\nworker = 1\nduration = 30.0\n'
    + '[[faults]]\nkind = "crash"\npoint = "before_event_commit"\nposition = 5\nworker = 2\n',
    "late_reply_hold": 'workers = 2\nsink = "idempotent"\n'
    + _pages(("C1", [1, 2], "C2"), ("C2", [3, 4], "C3"), ("C3", [], "C3"))
    + '[[events]]\nposition = 3\nbehavior = "hold"\nrelease_after = 15.0\n'
    + '[[faults]]\nkind = "late_reply"\nposition = 1\ndelay = 12.0\n'
    + '[[faults]]\nkind = "lost_response"\nop = "effect"\nposition = 4\nworker = 2\n',
    "backfills_two_workers": 'workers = 2\nbackfills = true\nsink = "idempotent"\n'
    + _pages(("C1", [10, 20], "C2"), ("C2", [15, 30], "C3"), ("C3", [25, 40], "C4"), ("C4", [], "C4"))
    + '[[events]]\nposition = 15\nbehavior = "transient"\n'
    + '[[faults]]\nkind = "pause"\npoint = "before_event_commit"\nposition = 30\nworker = 1\n'
    + 'duration = 20.0\n',
    "ignore_poison_lost_commit": 'workers = 2\nsink = "idempotent"\n'
    + _pages(("C1", [1, 2, 3], "C2"), ("C2", [4], "C3"), ("C3", [], "C3"))
    + '[[events]]\nposition = 1\nbehavior = "ignore"\n[[events]]\nposition = 2\nbehavior = "poison"\n'
    + '[[faults]]\nkind = "lost_response"\nop = "checkpoint_write"\nposition = 2\n',
    "initial_receipt_empty_stuck": "workers = 4\n[initial]\nreceipts = [2]\n"
    + _pages(("C1", [1, 2, 3], "C2"), ("C2", [], "C3"), ("C3", [4, 5], "C4"), ("C4", [], "C4"))
    + "stuck = 1\n" + '[[events]]\nposition = 1\nbehavior = "transient"\nfailures = 2\n',
    "crossed_rotation": 'workers = 2\nsink = "idempotent"\n[auth]\nrotate_at = [3.0]\n'
    + _pages(("C1", [1, 2, 3], "C2"), ("C2", [], "C2"))
    + '[[faults]]\nkind = "crossed_reply"\nposition = 2\ndiffers = "binding"\n'
    + '[[faults]]\nkind = "lost_response"\nop = "effect"\nposition = 1\n',
}


@pytest.mark.parametrize("name", sorted(_HELD))
def test_correct_consumers_with_several_workers_are_no_inversion(tmp_path, name):
    """Workers racing on one page, one paused or crashed mid-page, lost replies of commits and calls, a late
    reply settled ``provisional`` then retried, holds, reviews, transient failures, backfills, initial
    receipts, empty and stuck pages, a crossed reply after a rotation: ok, with nothing in ``unhalted``, for
    ``safe`` and every correct consumer."""
    sc = _scenario(tmp_path, name, _HELD[name])
    for consumer in _CORRECT:
        v = simkit.simulate(sc, consumer).as_dict()
        assert v["ok"] and v["unhalted"] == [], (consumer, v)


def test_every_schedule_of_two_workers_is_no_inversion(tmp_path):
    """Every schedule of one crash or pause and one lost reply, two workers, ignore and poison on an
    idempotent sink: ``safe`` and a reader ahead stay ok in each."""
    from simkit.tools.explore import explore

    sc = _scenario(tmp_path, "explored", _HELD["ignore_poison_lost_commit"])
    for consumer in ("safe", ReadAhead):
        x = explore(sc, consumer, max_crashes=1, lost_responses=1, keep_faults=True)
        assert x.schedules > 100 and x.ok, (consumer, x.kinds, x.first_violation)


def test_generated_streams_with_four_workers_are_no_inversion():
    """A generated stream with every provider and event behaviour, four workers, an idempotent sink and heavy
    random crashes, pauses and lost replies and requests: no inversion for ``safe`` or a pipelined reader."""
    sc = simkit.parse({
        "name": "busy", "sink": "idempotent", "backfills": True, "workers": 4, "seed": 5,
        "generate": {"events": 40, "page_size": 3, "overlap": 0.3, "backfill": 0.2, "empty_pages": 0.2,
                     "stuck": 0.2, "poison": 0.1, "transient": 0.2, "review": 0.1, "hold": 0.1},
        "random_faults": {"crash": 0.08, "pause": 0.08, "lost_response": 0.08, "lost_request": 0.08,
                          "max_faults": 60},
    })
    for consumer in ("safe", PipelinedReadAhead):
        for seed in range(3):
            v = simkit.simulate(sc, consumer, seed=seed).as_dict()
            assert _step4(v) == [], (consumer, seed, v["unhalted"])
