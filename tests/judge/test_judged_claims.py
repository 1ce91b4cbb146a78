"""Receipts and halts are claims (docs/verdict.md): whole runs of consumers that claim what the handler never
decided, or stop without cause, written against the public plugin API and judged not ok; ``safe`` on the same
streams is ok."""
import pytest

import simkit
from simkit import Consumer
from simkit.ops import Commit, Halt, Handle

STREAM = {"name": "claims", "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
                                      {"cursor": "C2", "positions": [4, 5], "next_cursor": "C3"},
                                      {"cursor": "C3", "positions": [], "next_cursor": "C3"}],
          "events": [{"position": 2, "behavior": "ignore"}, {"position": 3, "behavior": "poison"},
                     {"position": 4, "behavior": "review", "resolve_after": 30.0, "resolution": "quarantine"},
                     {"position": 5, "behavior": "hold", "release_after": 30.0}]}


def run(consumer):
    return simkit.simulate(simkit.parse(STREAM, source="claims"), consumer)


class IgnoreEverything(Consumer):
    """Never asks the handler: every event gets a durable ``ignored`` receipt."""

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if not self.is_replay(event, receipts, applied):
                yield Commit(event, "ignored", event.position)
            applied = max(applied, event.position)
        return "done", applied


class _Closes(Consumer):
    """Asks the handler, then writes ``CLOSE[decision]`` as the event's durable receipt (default: as safe)."""

    CLOSE: dict = {}

    def process(self, checkpoint, page, receipts):
        applied = checkpoint.applied_position
        for event in page.events:
            if not self.is_replay(event, receipts, applied):
                decision = yield Handle(event)
                outcome = self.CLOSE.get(decision, {"apply": "applied", "ignore": "ignored",
                                                    "quarantine": "quarantined"}.get(decision))
                if outcome is None:
                    return "blocked", applied
                yield Commit(event, outcome, event.position, with_effect=outcome == "applied")
            applied = max(applied, event.position)
        return "done", applied


class QuarantineWhatWaits(_Closes):
    """Makes a review or a hold final: a durable quarantine receipt the handler never ordered."""

    CLOSE = {"operator_review": "quarantined", "reversible_hold": "quarantined"}


class IgnoreWhatWaits(_Closes):
    CLOSE = {"operator_review": "ignored", "reversible_hold": "ignored"}


class ApplyWhatWaits(_Closes):
    """Applies an event under review or on hold as if the handler had said apply."""

    CLOSE = {"operator_review": "applied", "reversible_hold": "applied"}


class QuarantineAsIgnored(_Closes):
    """Writes the poison event as ignored: terminal, but not the outcome the policy decided."""

    CLOSE = {"quarantine": "ignored"}


class HaltOnOverlap(Consumer):
    """Stops on any event at or below applied_position, which step 3 calls acceptable."""

    def validate(self, checkpoint, page, ids_at):
        if any(e.position <= checkpoint.applied_position for e in page.events):
            return "overlap"
        return super().validate(checkpoint, page, ids_at)


class OnlyHalts(Consumer):
    def attempt(self):
        yield Halt("nothing to see")


def test_safe_ignores_quarantines_and_waits_as_the_handler_decides():
    r = run(Consumer)
    assert r.verdict.ok, r.verdict
    receipts = {eid: out for eid, (out, _pos) in r.world.store.receipts.items()}
    assert receipts == {"e1": "applied", "e2": "ignored", "e3": "quarantined", "e4": "quarantined",
                        "e5": "applied"}


def test_ignoring_everything_is_caught():
    v = run(IgnoreEverything).verdict
    assert not v.ok and 5 in v.invariants_broken
    assert v.lost == ["e1", "e2", "e3", "e4", "e5"]     # never asked: not even e2's receipt is an outcome


@pytest.mark.parametrize("consumer", [QuarantineWhatWaits, IgnoreWhatWaits, ApplyWhatWaits,
                                      QuarantineAsIgnored])
def test_closing_what_the_handler_left_open_or_decided_otherwise_is_caught(consumer):
    v = run(consumer).verdict
    assert not v.ok and 5 in v.invariants_broken
    assert any(x["invariant"] == 5 and "while the handler's decision was" in x["detail"]
               for x in v.invariant_violations)


def test_a_halt_on_acceptable_overlap_is_unjustified():
    stream = dict(STREAM, pages=[{"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
                                 {"cursor": "C2", "positions": [2, 3], "next_cursor": "C3"},
                                 {"cursor": "C3", "positions": [], "next_cursor": "C3"}], events=[])
    v = simkit.simulate(simkit.parse(stream, source="overlap"), HaltOnOverlap).verdict
    assert v.halted == "overlap" and v.halt_justified is False and not v.completed and not v.ok
    assert simkit.simulate(simkit.parse(stream, source="overlap")).verdict.ok


def test_a_consumer_that_only_halts_never_completes():
    v = run(OnlyHalts).verdict
    assert v.halt_justified is False and not v.completed and not v.ok and not v.lost


class CallInsideTheTransaction(Consumer):
    """Asks for the external call "inside" the receipt's transaction, which no external sink offers."""

    def apply(self, event, applied_position):
        return (yield Commit(event, "applied", applied_position, with_effect=True))


def test_an_external_call_never_joins_the_stores_transaction():
    """On an external sink ``Commit(with_effect=True)`` is the call, then the commit: a crash between them
    (after_effect) leaves an effect without its receipt, and the retry calls again."""
    sc = simkit.load("shortcut_success_before_effect")                    # an unsafe (non-idempotent) sink
    faults = (simkit.parse_crash_arg("after_effect@106"),)
    v = simkit.simulate(sc, CallInsideTheTransaction, faults=faults).verdict
    assert v.duplicated == ["e106"] and 4 in v.invariants_broken
