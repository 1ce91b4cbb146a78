"""Hostile input, twentieth round (a fresh tester): wrong verdicts. Step 4 ("process events in source order
... stop at the first outcome that is not durable and terminal") was judged only through invariant 2: a
consumer that processed each page newest first, or the page it read ahead before its attempt's, or went on
past a failure, a review or a hold and came back for it, was ok as long as it kept ``applied_position`` at the
prefix until the barrier, in Python and over ``exec:``. Now the first receipt or effect written for an event
while an earlier event of its page, or of its attempt's page, had none, and got one later, is reported in
``unhalted`` (the procedure's "went on where it had to stop"). And ``simkit audit`` ran ``ignore`` events only
on a transactional sink: a consumer that mishandled them only with an external sink passed it.

Held: the correct consumers that are not ``safe`` (reading ahead, before or after processing, a remembered
identity, receipts only, rereading before a halt, extra polls) in their audits; they and a reload before every
event, a prefix held until the barrier, a lookup before the barrier and a second reserve on every bundled,
corner, wide and sweep case; a backfill done after the events above it; the golden verdicts and explorations;
a barrier publishing the ``next_cursor`` of the page after its own (invariants 1 and 3, lost); strict wire
forms (``true`` or ``1.0`` for an integer, ``1`` for a boolean, an unknown key in an event).

Left alone: ``safe`` paused between its ``Reserve`` and its ``Call`` across a credential rotation sends the
reservation it holds, bound to the principal no longer in force, and is NOT ok (``stale_binding``); no
consumer can avoid it (it cannot see the pause), but allowing it needs the worker's own reservations, which
the ledger does not log when a reserve reuses a record, or a service that refuses a stale principal (a change
of seed 001's world and of golden traces). No audit case has an ``ignore`` event with two workers (a case
with two workers, explored, costs the audit about 10 s). A consumer that reads ahead to a later page that
breaks the contract and halts there (round 19's leftover) is still ok.

Each: the verdict the same run earns.
"""
from __future__ import annotations

import sys
from pathlib import Path

import simkit
from simkit.model import Page
from simkit.ops import BLOCKED, LOST, Fetch, Handle, Skip

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutants.correct import ReadAhead  # noqa: E402
from mutants.round46 import GoesPastFailures  # noqa: E402
from mutants.unseen import PipelinedReadAhead  # noqa: E402

_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "consumers" / "python"


def _scenario(tmp_path: Path, name: str, pages: list[tuple[str, list[int], str]],
              head: tuple[str, ...] = (), tail: tuple[str, ...] = ()) -> simkit.Scenario:
    lines = [f'description = "{name}"', *head]
    for cursor, positions, next_cursor in pages:
        lines += ["[[pages]]", f'cursor = "{cursor}"', f"positions = {positions}",
                  f'next_cursor = "{next_cursor}"']
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join([*lines, *tail]) + "\n")
    return simkit.load(str(path))


def _step4(v: dict) -> list[str]:
    return [d["detail"] for d in v["unhalted"] if "where step 4 processes events in source" in d["detail"]]


# -- 1. a page processed newest first, applied_position held at the prefix until the barrier -----------------
class CarefulNewestFirst(simkit.Consumer):
    """Unsafe (step 4): walks each page in reverse; no commit raises ``applied_position``, the barrier raises
    it once every event is done, so invariant 2 never sees it."""

    def process(self, checkpoint, page, receipts):
        held = checkpoint.applied_position
        for event in reversed(page.events):
            if self.is_replay(event, receipts, held):
                yield Skip(event)
                continue
            decision = yield Handle(event)
            if decision not in ("apply", "ignore", "quarantine"):
                return "blocked", held
            result = yield from getattr(self, decision)(event, held)
            if result is LOST or result is BLOCKED:
                return ("lost" if result is LOST else "blocked"), held
        return "done", max([held, *(e.position for e in page.events)])


def test_a_page_processed_newest_first_is_not_ok(tmp_path):
    """C1 serves 1, 2, 3. The consumer above applies 3, 2, 1 and passes the barrier with 3: nothing lost, no
    invariant broken, and it was ok. Now ``unhalted`` says "effect of e3 before e1 (position 1), earlier in
    page 'C1', had a durable outcome, where step 4 processes events in source order"."""
    sc = _scenario(tmp_path, "three", [("C1", [1, 2, 3], "C2"), ("C2", [], "C2")])
    v = simkit.simulate(sc, CarefulNewestFirst).as_dict()
    assert not v["ok"] and not v["lost"] and not v["invariant_violations"], v
    assert _step4(v) == ["effect of e3 before e1 (position 1), earlier in page 'C1', had a durable outcome, "
                         "where step 4 processes events in source order and stops at the first outcome that "
                         "is not durable and terminal"]
    assert simkit.simulate(sc, "safe").as_dict()["ok"]


# -- 2. going on past a failure, and coming back for it -----------------------------------------------------
def test_going_on_past_a_failure_and_coming_back_is_not_ok(tmp_path):
    """C1 serves 1, 2, 3; e2 fails once (``retry_later``). The consumer commits e3 while e2 has nothing, holds
    the prefix at 1, backs off and applies e2 on its next attempt: ok before, as nothing was lost. Now NOT ok,
    "effect of e3 before e2 (position 2) ..." in ``unhalted``."""
    sc = _scenario(tmp_path, "transient", [("C1", [1, 2, 3], "C2"), ("C2", [], "C2")],
                   tail=("[[events]]", "position = 2", 'behavior = "transient"'))
    v = simkit.simulate(sc, GoesPastFailures).as_dict()
    assert not v["ok"] and not v["lost"] and not v["invariant_violations"] and v["completed"], v
    assert [d.split(",")[0] for d in _step4(v)] == ["effect of e3 before e2 (position 2)"]
    assert simkit.simulate(sc, "safe").as_dict()["ok"]


# -- 3. the page read ahead processed before the attempt's own ----------------------------------------------
class NextPageFirst(simkit.Consumer):
    """Unsafe (step 4): reads the next page ahead and applies its events first, ``applied_position`` held
    at the prefix, then processes its attempt's page and passes the barrier; the next attempt finds the
    read-ahead page's events replays."""

    def after_fetch(self, checkpoint, page):
        if page.next_cursor == checkpoint.resume_cursor:
            return None
        ahead = yield Fetch(page.next_cursor)
        for event in ahead.events if isinstance(ahead, Page) else ():
            if (yield Handle(event)) == "apply":
                yield from self.apply(event, checkpoint.applied_position)
        return None


def test_the_page_read_ahead_processed_first_is_not_ok(tmp_path):
    """C1 serves 1, 2; C2 serves 3, 4. The consumer applies e3 and e4 (read ahead) before e1 and e2, with
    ``applied_position`` 0 until C1's barrier: ok before (a write was judged only against the page it acted
    on). Now NOT ok: "effect of e3 before e1 (position 1), earlier in page 'C1'" (its attempt's page)."""
    sc = _scenario(tmp_path, "two_pages", [("C1", [1, 2], "C2"), ("C2", [3, 4], "C3"), ("C3", [], "C3")])
    v = simkit.simulate(sc, NextPageFirst).as_dict()
    assert not v["ok"] and not v["lost"] and not v["invariant_violations"] and v["completed"], v
    assert [d.split(", had")[0] for d in _step4(v)] == [
        "effect of e3 before e1 (position 1), earlier in page 'C1'"]


# -- 4. the same over exec:, with an external sink ----------------------------------------------------------
_NEWEST_FIRST = """
import sys
sys.path.insert(0, {folder!r})
from consumer import BLOCKED, LOST, Procedure, main


class NewestFirst(Procedure):
    def process(self, checkpoint, page, receipts):
        held = checkpoint["applied_position"]
        for event in reversed(page["events"]):
            if self.is_replay(event, receipts, held):
                self.ask("skip", event=event)
                continue
            _, decision = self.ask("handle", event=event)
            if decision == "apply":
                result = self.apply(event, held)
            elif decision in ("ignore", "quarantine"):
                result = self.commit(event, {{"ignore": "ignored"}}.get(decision, "quarantined"), held)
            else:
                return "blocked", held
            if result in (LOST, BLOCKED):
                return result, held
        return "done", max([held] + [e["position"] for e in page["events"]])


main(lambda contract, _buggy: NewestFirst(contract))
"""


def test_an_exec_consumer_calling_the_service_newest_first_is_not_ok(tmp_path):
    """Over ``exec:`` with an idempotent external sink: each page's calls are made, settled and committed
    newest first, ``applied_position`` held until the barrier. It was ok; now NOT ok, reported in
    ``unhalted`` from the service's effects."""
    sc = _scenario(tmp_path, "external", [("C1", [1, 2], "C2"), ("C2", [], "C2")],
                   head=('sink = "idempotent"',))
    script = tmp_path / "newest_first.py"
    script.write_text(_NEWEST_FIRST.format(folder=str(_EXAMPLE)))
    v = simkit.simulate(sc, simkit.resolve(f"exec:{sys.executable} {script}")).as_dict()
    assert not v["ok"] and not v["lost"] and not v["invariant_violations"], v
    assert [d.split(",")[0] for d in _step4(v)] == ["effect of e2 before e1 (position 1)"]


# -- held: a backfill done after the events above it --------------------------------------------------------
def test_a_backfill_done_after_the_events_above_it_is_no_inversion(tmp_path):
    """With backfills, C2 serves e15 behind e20, which C1 served: ``safe`` and the correct readers ahead apply
    it after e20, in the order the pages came. ok, every one."""
    sc = _scenario(tmp_path, "backfill", [("C1", [10, 20], "C2"), ("C2", [15, 30], "C3"), ("C3", [], "C3")],
                   head=("backfills = true",))
    for consumer in ("safe", ReadAhead, PipelinedReadAhead):
        v = simkit.simulate(sc, consumer).as_dict()
        assert v["ok"] and v["unhalted"] == [], (consumer, v)


# -- 5. the audit had no ignored event on an external sink ---------------------------------------------------
class IgnoreThroughTheService(simkit.Consumer):
    """Unsafe (invariant 1's "intentionally ignored"): with an external sink, an ignored event is settled
    through the service like an applied one ("it dedupes anyway"), then receipted ``ignored``: an effect the
    handler never decided."""

    def ignore(self, event, applied_position):
        if self.contract.external_sink:
            settled = yield from self.settle_effect(event)
            if settled != "committed":
                return settled
        return (yield from super().ignore(event, applied_position))


class IgnoreInMemoryWhenExternal(simkit.Consumer):
    """Unsafe (invariant 1): with an external sink, nothing is called for an ignored event, so nothing is
    written either."""

    def ignore(self, event, applied_position):
        if self.contract.external_sink:
            return True
        return (yield from super().ignore(event, applied_position))


def test_the_audit_has_an_ignored_event_on_an_external_sink():
    """The only ``ignore`` events the audit ran were ``ignored_event``'s, on a transactional sink (generated
    streams have none): both consumers above passed ``simkit audit``. Now the wide case ``ignored_external``
    (explored too) judges them NOT ok (invariant 5; lost, invariant 1), and ``safe`` ok."""
    from simkit.tools.audit_cases import cases, wide

    sc = wide("ignored_external")
    assert {c.kind for c in cases(1, 0) if c.name == "ignored_external"} == {"wide", "explore"}
    assert simkit.simulate(sc, "safe").as_dict()["ok"]
    through = simkit.simulate(sc, IgnoreThroughTheService).as_dict()
    assert not through["ok"] and [d["invariant"] for d in through["invariant_violations"]] == [5], through
    in_memory = simkit.simulate(sc, IgnoreInMemoryWhenExternal).as_dict()
    assert not in_memory["ok"] and in_memory["lost"] == ["e2"], in_memory
