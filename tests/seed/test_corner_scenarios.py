"""The bundled scenarios for the corners the others leave open (issue: "the judge cannot be fooled"): each
runs ``safe`` to an ok verdict, and each catches the consumer its description names."""
from mutants.outcomes import IgnoreInMemory, IgnoreMeansApply
from mutants.validation import GapBlind

import simkit
from simkit import Consumer
from simkit.ops import LOST, Barrier, Overwrite


def run(name, consumer=Consumer):
    return simkit.simulate(simkit.load(name), consumer)


class IdentityBlind(Consumer):
    """Checks the source order but not identities: "position 3 is done" is taken as "x3 is done"."""

    def validate(self, checkpoint, page, ids_at):
        positions = [e.position for e in page.events]
        return None if positions == sorted(set(positions)) else "source-order regression"

    def is_replay(self, event, receipts, applied_position):
        return event.position <= applied_position


class Rewinder(Consumer):
    """On a blocked page, writes the previous page's cursor back "to retry from a known good place"."""

    previous = None

    def page_barrier(self, checkpoint, page, applied_position):
        self.previous = checkpoint.resume_cursor
        return (yield from super().page_barrier(checkpoint, page, applied_position))

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "blocked" and self.previous is not None:
                cp = yield from self._load()
                yield Overwrite(self.previous, cp.checkpoint_version + 1, cp.applied_position)
                self.previous = None
            if result in ("caught_up", "blocked"):
                from simkit.ops import Wait
                yield Wait(result)

    def _load(self):
        from simkit.ops import Load
        return (yield Load())


class TrustsLostBarrier(Consumer):
    """A barrier whose reply never came is taken as done, and the worker goes on with the identity it meant to
    write, without rereading."""

    def page_barrier(self, checkpoint, page, applied_position):
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, page.next_cursor,
                                checkpoint.checkpoint_version + 1, applied_position)
        return "advanced" if swapped is LOST or swapped else "rejected"


def test_overlap_new_identity_safe_halts_with_cause():
    v = run("overlap_new_identity").verdict
    assert v.ok and v.halted.startswith("conflicting identity at position 3") and v.halt_justified
    assert v.pending == ["x3", "e4"]


def test_overlap_new_identity_catches_a_consumer_blind_to_identity():
    v = run("overlap_new_identity", IdentityBlind).verdict
    assert v.lost == ["x3"] and not v.ok


def test_blocked_after_barrier_safe_waits_for_the_review():
    r = run("blocked_after_barrier")
    assert r.verdict.ok and r.world.store.receipts["e3"][0] == "quarantined"


def test_blocked_after_barrier_catches_a_rewinding_consumer():
    v = run("blocked_after_barrier", Rewinder).verdict
    assert v.regressions >= 1 and not v.ok


def test_fence_race_safe_is_fenced():
    r = run("fence_race")
    steps = r.trace.to_frame()
    assert r.verdict.ok
    assert list(steps.query("step == 'barrier_rejected'").worker) == [1]      # the stale worker lost the swap
    assert (steps.outcome == "reply lost").sum() == 1


def test_fence_race_catches_the_unfenced_write():
    v = run("fence_race", simkit.resolve("no_version_check")).verdict
    assert v.regressions == 1 and 3 in v.invariants_broken


def test_transient_storm_safe_waits_out_every_non_terminal_outcome():
    r = run("transient_storm")
    assert r.verdict.ok
    receipts = {eid: out for eid, (out, _p) in r.world.store.receipts.items()}
    assert receipts == {"e1": "applied", "e2": "applied", "e3": "applied", "e4": "quarantined",
                        "e5": "applied", "e6": "applied"}


def test_transient_storm_catches_in_memory_quarantine():
    v = run("transient_storm", simkit.resolve("in_memory_quarantine")).verdict
    assert set(v.lost) == {"e4", "e6"} and 5 in v.invariants_broken


def test_ignored_event_safe_receipts_the_ignore_and_runs_no_effect():
    r = run("ignored_event")
    assert r.verdict.ok and r.world.store.receipts["e2"][0] == "ignored"
    assert "e2" not in {row[3] for row in r.world.sink.effects}


def test_ignored_event_catches_an_ignore_kept_in_memory_and_one_applied_anyway():
    kept = run("ignored_event", IgnoreInMemory).verdict
    assert kept.lost == ["e2"] and 1 in kept.invariants_broken
    applied = run("ignored_event", IgnoreMeansApply).verdict
    assert not applied.ok and 5 in applied.invariants_broken and not applied.lost


def test_gap_behind_applied_safe_halts_with_cause():
    """Step 3's third halt, judged: an event behind
    applied_position, no receipt, no backfills in the contract."""
    v = run("gap_behind_applied").verdict
    assert v.halted.startswith("gap: e3") and v.halt_justified is True and v.completed and v.ok
    assert v.pending == ["e3", "e6"]


def test_gap_behind_applied_catches_a_consumer_blind_to_gaps():
    v = run("gap_behind_applied", GapBlind).verdict
    assert v.lost == ["e3"] and v.halted is None and 1 in v.invariants_broken
