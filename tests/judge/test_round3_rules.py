"""Issue 26, items 1-5: the rules the audit was fooled past, each shown failing a consumer that breaks it and
passing one that keeps it (docs/verdict.md: ``halt_justified``, ``unhalted``, invariant 2, ``completed``,
``settlement_violations``, "Crashes are real")."""
from __future__ import annotations

from mutants.correct import RereadsBeforeHalting

import simkit
from simkit import Consumer
from simkit.model import COMMITTED, Reply
from simkit.ops import LOST, Call, Fetch, Halt, Load, Reserve, Settle, Wait


def run(scenario, cls, seed=None, **kw):
    sc = simkit.load(scenario) if isinstance(scenario, str) else simkit.parse(scenario)
    return simkit.simulate(sc, cls, sc.seed if seed is None else seed, **kw).verdict


# -- halts judged both ways (item 1) -------------------------------------------------------------------------
class RefusedTwice(Consumer):
    """Fetches "" twice (refused both times), then halts:
    a refused cursor is never one the provider issued."""

    def run(self):
        yield Load()
        yield Fetch("")
        yield Fetch("")
        yield Halt("provider refused cursor '' (halting for the migration)")


def test_a_second_refusal_of_a_made_up_cursor_does_not_justify_a_halt():
    """A consumer that halts without cause is not ok on any bundled scenario."""
    for name in simkit.bundled():
        v = run(name, RefusedTwice)
        assert v.halt_justified is False and not v.completed and not v.ok, name


def test_loads_between_the_fetch_and_the_halt_change_nothing():
    for name in ("gap_behind_applied", "overlap_new_identity"):
        v = run(name, RereadsBeforeHalting)
        assert v.halt_justified is True and v.ok, (name, v)


class SortsThePage(Consumer):
    """Sorts a page served out of order and processes it, where step 3 stops."""

    def validate(self, checkpoint, page, ids_at):
        return None


def test_a_consumer_that_goes_on_after_a_breach_it_saw_is_unhalted():
    for name in ("gap_behind_applied", "overlap_new_identity"):
        v = run(name, SortsThePage)
        assert v.unhalted and not v.ok, name
        assert "where step 3 stops the attempt" in v.unhalted[0]["detail"]
        assert "unhalted" in v.as_dict()


def test_each_breach_a_consumer_can_see_is_named():
    """The gap behind the loaded applied_position and the receipt for another id at one position each fire."""
    assert "showed gap: e3" in run("gap_behind_applied", SortsThePage).unhalted[0]["detail"]
    assert (
        "showed conflicting identity at position 3"
        in run("overlap_new_identity", SortsThePage).unhalted[0]["detail"]
    )


def test_safe_is_never_unhalted_on_the_bundled_scenarios():
    for name in simkit.bundled():
        sc = simkit.load(name)
        assert run(name, Consumer, sc.seed).unhalted == [], name


REGRESSING = {"name": "regressing", "pages": [
    {"cursor": "C1", "positions": [1, 3, 2], "next_cursor": "C2"},
    {"cursor": "C2", "positions": [], "next_cursor": "C2"}]}


def test_a_regression_inside_a_page_is_a_breach_to_stop_at():
    assert run(REGRESSING, Consumer).ok
    v = run(REGRESSING, SortsThePage)
    assert v.unhalted and "inside the page" in v.unhalted[0]["detail"] and not v.ok


# -- invariant 2 by what the writer held (item 2) ------------------------------------------------------------
class SkipsUnknownBackfill(Consumer):
    """Takes everything at or below its loaded applied_position for a replay, receipts or not."""

    def is_replay(self, event, receipts, applied_position):
        return event.position <= applied_position


def test_a_commit_over_a_late_event_of_its_own_page_breaks_invariant_2():
    v = run("shortcut_watermark_only_dedup", SkipsUnknownBackfill)
    assert 2 in v.invariants_broken
    assert any("e105" in x["detail"] for x in v.invariant_violations if x["invariant"] == 2)


# -- step 7's stop and the end of a run (item 5) -------------------------------------------------------------
class StopsWhenCaughtUp(Consumer):
    """Step 7: "stop or back off": its run() returns at the end of the stream."""

    def run(self):
        while True:
            result = yield from self.attempt()
            if result == "caught_up":
                return
            if result == "blocked":
                yield Wait(result)


class StopsAtOnce(Consumer):
    def run(self):
        yield Load()


class BacksOffTwiceMore(Consumer):
    """Fetches the end page twice more before it declares itself caught up: the workers never wait at one
    instant, yet each catches up."""

    def run(self):
        extra = 0
        while True:
            result = yield from self.attempt()
            if result == "caught_up":
                extra += 1
                if extra > 2:
                    yield Wait("caught_up")
                    extra = 0
                continue
            extra = 0
            if result == "blocked":
                yield Wait(result)


def test_a_run_that_returns_at_the_end_of_the_stream_is_complete():
    for name in ("retry_walkthrough", "fence_race", "quarantine_boundary"):
        v = run(name, StopsWhenCaughtUp)
        assert v.ok and v.completed, name


def test_a_run_that_returns_at_a_token_stuck_before_the_end_is_not_complete():
    """gauntlet's provider answers some cursors with their own token a few times before it advances: stopping
    there is stopping before the end of the stream."""
    v = run("gauntlet", StopsWhenCaughtUp)
    assert not v.completed and v.pending and not v.lost


def test_a_run_that_returns_before_the_end_is_not_complete():
    v = run("retry_walkthrough", StopsAtOnce)
    assert not v.completed and not v.ok


def test_two_workers_that_catch_up_at_different_instants_complete():
    for name in ("gauntlet", "fence_race", "late_retry"):
        sc = simkit.load(name)
        r = simkit.simulate(sc, BacksOffTwiceMore, sc.seed)
        assert r.verdict.ok, (name, r.verdict)
        assert r.world.clock.now < sc.timing.time_limit, name


# -- real crashes (item 4) -----------------------------------------------------------------------------------
class EditsItsCheckpoint(Consumer):
    """Moves the loaded checkpoint's cursor in place, with no write."""

    def attempt(self):
        result = yield from super().attempt()
        if result == "caught_up":
            return result
        checkpoint = yield Load()
        object.__setattr__(checkpoint, "resume_cursor", "nowhere")
        return result


def test_a_checkpoint_handed_to_a_consumer_is_a_copy():
    r = simkit.simulate(simkit.load("retry_walkthrough"), EditsItsCheckpoint)
    assert r.verdict.ok and r.world.store.checkpoint.resume_cursor != "nowhere"


# -- seed 001 complete (item 3) ------------------------------------------------------------------------------
class ForgesOnTimeout(Consumer):
    """Treats a timeout as success: settles a reply it made up."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        if not isinstance(reply, Reply):
            reply = Reply(operation.reservation, -1)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else LOST


def test_a_reply_to_no_request_the_service_saw_is_a_settlement_violation():
    never_arrives = {**ROTATING, "auth": {},
                     "faults": [{"kind": "lost_request", "op": "effect", "position": 1}]}
    assert run(never_arrives, Consumer).ok
    v = run(never_arrives, ForgesOnTimeout)
    assert "unknown_reply" in {x["kind"] for x in v.settlement_violations} and not v.ok


class OldPrincipal(Consumer):
    """Keeps the first reservation it got and retries with it, even after the credential rotated."""

    kept: dict

    def __init__(self, contract):
        super().__init__(contract)
        self.kept = {}

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reservation = self.kept.setdefault(event.id, operation.reservation)
        reply = yield Call(event, reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else LOST


ROTATING = {"name": "rotating", "sink": "idempotent", "auth": {"rotate_at": [3.0]},
            "timing": {"timeout": 5.0},
            "pages": [{"cursor": "C1", "positions": [1], "next_cursor": "C2"},
                      {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
            "faults": [{"kind": "lost_response", "op": "effect", "position": 1}]}


def test_a_call_bound_to_a_principal_no_longer_in_force_is_reported():
    assert run(ROTATING, Consumer).ok
    v = run(ROTATING, OldPrincipal)
    assert "stale_binding" in {x["kind"] for x in v.settlement_violations}, v


REMEMBERS = '''
from simkit import Consumer


class Remembers(Consumer):
    """Remembers in a class attribute which events it has handled, and takes them for replays."""

    handled = set()

    def is_replay(self, event, receipts, applied_position):
        if event.id in Remembers.handled:
            return True
        return super().is_replay(event, receipts, applied_position)

    def apply(self, event, applied_position):
        Remembers.handled.add(event.id)
        return (yield from super().apply(event, applied_position))
'''


def test_a_crash_wipes_class_state_as_a_new_process_would(tmp_path):
    """Crash before 107's commit: in memory the class-level set says e107 was
    handled, and a class surviving the crash would skip it (lost). A new
    process starts with the set empty and applies it: ok, as the seed says."""
    (tmp_path / "remembers.py").write_text(REMEMBERS)
    cls = simkit.resolve(f"{tmp_path / 'remembers.py'}:Remembers")
    crash = simkit.model.Fault("crash", "before_event_commit", position=107)
    for _ in range(2):                      # a second run starts afresh too: nothing leaks between runs
        r = simkit.simulate(simkit.load("retry_walkthrough"), cls, faults=[crash])
        assert r.world.crashes == 1 and r.verdict.ok, r.verdict
    assert cls.handled == set()             # the class the caller holds was never touched


class EditsItsOperation(Consumer):
    """Marks the operation record it was handed committed, in place, then asks the store again."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        object.__setattr__(operation, "state", COMMITTED)
        return (yield from super().settle_effect(event))


def test_an_operation_record_handed_to_a_consumer_is_a_copy():
    """Were it the store's own record, the second Reserve would say committed, no call would run, and the
    event would be lost."""
    r = simkit.simulate(simkit.parse({**ROTATING, "auth": {}, "faults": []}), EditsItsOperation)
    assert r.verdict.ok and r.world.sink.effect_count["e1"] == 1


class EditsItsPage(Consumer):
    """Renames every event of each page it is served, in place, once it has processed them."""

    def process(self, checkpoint, page, receipts):
        result = yield from super().process(checkpoint, page, receipts)
        for e in page.events:
            object.__setattr__(e, "id", "forged")
        return result


def test_a_scripted_page_handed_to_a_consumer_is_a_copy():
    """A worker that crashes before the barrier fetches the page again: the provider serves it as scripted,
    and its log says what it served."""
    crash = simkit.model.Fault("crash", "before_page_barrier")
    r = simkit.simulate(simkit.load("retry_walkthrough"), EditsItsPage, faults=[crash])
    assert r.verdict.ok and "forged" not in {eid for row in r.world.provider.log for eid in row[5]}
    assert all(e.id != "forged" for _c, events, _n, _s in r.world.provider.script() for e in events)


def test_a_reservation_bound_to_a_principal_out_of_force_is_reported():
    """A hand-made ledger (the world's driver always reserves with the binding in force)."""
    from simkit.judge.settlement import settlement_violations
    from simkit.store.settlement import Ledger
    from simkit.truth.clock import Clock

    clock = Clock()
    ledger = Ledger(clock)
    ledger.reserve(1, "e1", "f" * 64, "P1")
    clock.time = 5.0                        # past the rotation at 3.0: P2 is in force
    ledger.reserve(2, "e2", "f" * 64, "P1")
    sc = simkit.parse({**ROTATING, "faults": []})
    found = settlement_violations(ledger, None, sc)
    assert [(x["kind"], x["worker"]) for x in found] == [("stale_binding", 2)]
