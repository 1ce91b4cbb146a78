"""Hostile input, nineteenth round (a fresh tester): wrong verdicts. Step 3's missing halt was judged by the
writes a worker made "before it fetched again", and a gap against the ``applied_position`` it loaded: a
consumer that fetched the next page before processing a page served out of order, and sorted it instead of
halting, was ok; the project's own correct ``PipelinedReadAhead`` was NOT ok when that next page, out of
order, overlapped the current one by one event; and a consumer that processed a gap behind the prefix was ok
when it loaded nothing after its barrier. An external call with a request body of the consumer's own (a
fingerprint that is not the event's) was credited to the event as its effect.

Held: the careless shortcuts (receipt before the effect, the page maximum as ``applied_position``, the
watermark with backfills, a barrier lowering ``checkpoint_version`` or sending the
cursor back), one id at two positions (refused by the scenario's validation). Left alone: a consumer that
reads ahead to a later page that breaks the contract and halts there, before processing the pages behind it
(they stay pending; the halt is justified).

Each: the verdict the same run earns.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import simkit
from simkit.model import COMMITTED, fingerprint
from simkit.ops import LOST, Call, Fetch, Reserve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mutants.correct import ReceiptsOnly, RememberedIdentity  # noqa: E402
from mutants.unseen import PipelinedReadAhead  # noqa: E402


def _scenario(tmp_path: Path, name: str, pages: list[tuple[str, list[int], str]],
              head: tuple[str, ...] = ()) -> simkit.Scenario:
    lines = [f'description = "{name}"', *head]
    for cursor, positions, next_cursor in pages:
        lines += ["[[pages]]", f'cursor = "{cursor}"', f"positions = {positions}",
                  f'next_cursor = "{next_cursor}"']
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return simkit.load(str(path))


# -- 1. a page served out of order, processed sorted after a read-ahead ------------------------------------
class SortsOutOfOrderPages(simkit.Consumer):
    """Unsafe (step 3): a page served out of order is sorted and processed, not halted on."""

    def validate(self, checkpoint, page, ids_at):
        return None

    def process(self, checkpoint, page, receipts):
        page = replace(page, events=tuple(sorted(page.events, key=lambda e: e.position)))
        return (yield from super().process(checkpoint, page, receipts))


class SortsAfterReadingAhead(SortsOutOfOrderPages):
    """The same, fetching the next page first (a read-ahead, which seed 000 allows)."""

    def after_fetch(self, checkpoint, page):
        yield Fetch(page.next_cursor)
        return None


def test_a_read_ahead_does_not_hide_a_missing_halt(tmp_path):
    """Page C1 serves 2 then 1. Sorting it instead of halting is reported in ``unhalted`` (nothing is lost,
    so it is the only field that can say so). The same consumer that fetched C2 before processing C1 was
    judged ok: the checker looked only at what a worker wrote before it fetched again. Now a write is judged
    by the page it acted on (the worker's latest response to the durable cursor that serves the event), so
    the read-ahead changes nothing."""
    sc = _scenario(tmp_path, "disorder", [("C1", [2, 1], "C2"), ("C2", [], "C2")])
    plain = simkit.simulate(sc, SortsOutOfOrderPages).as_dict()
    ahead = simkit.simulate(sc, SortsAfterReadingAhead).as_dict()
    assert not plain["ok"] and len(plain["unhalted"]) == 1 and not plain["lost"]
    assert not ahead["ok"] and len(ahead["unhalted"]) == 1 and not ahead["lost"]
    assert "after page 'C1' showed a source-order regression" in ahead["unhalted"][0]["detail"]
    assert simkit.simulate(sc, "safe").as_dict()["ok"]


# -- 2. a correct pipelined read-ahead, the next page out of order and overlapping by one event -------------
def test_a_pipelined_read_ahead_is_not_blamed_for_the_page_it_read_ahead(tmp_path):
    """C1 serves 1, 2, 3; C2 serves 3, 5, 4 (out of order, overlapping C1 by e3). ``safe`` processes C1,
    passes its barrier and halts on C2: ok. ``PipelinedReadAhead`` (tests/mutants/unseen.py, correct) fetches
    C2 before processing C1, commits the same receipts and halts on C2 too, but was NOT ok: its commit of e3,
    an event of C1, came after C2's response and before its next fetch, and was reported as a write that
    went on after C2 showed its disorder. Now e3's commit acts on C1, the attempt's page: ok, as ``safe``."""
    sc = _scenario(tmp_path, "overlap_disorder", [("C1", [1, 2, 3], "C2"), ("C2", [3, 5, 4], "C3"),
                                                  ("C3", [], "C3")])
    safe = simkit.simulate(sc, "safe").as_dict()
    piped = simkit.simulate(sc, PipelinedReadAhead).as_dict()
    assert safe["ok"] and safe["halted"]
    assert piped["unhalted"] == [] and piped["ok"], piped
    assert piped["final_checkpoint"] == safe["final_checkpoint"]


# -- 3. an external call with a request body of the consumer's own ------------------------------------------
class CallsWithABodyOfItsOwn(simkit.Consumer):
    """Unsafe (seed 001 step 2): reserves the event's operation, then calls the service under its operation id
    with a request of its own making (a fingerprint that is not the event's canonical request), and counts
    the reply as done."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        mine = replace(operation.reservation,
                       fingerprint=fingerprint({"operation_id": event.id, "amount": 100 * event.position}))
        reply = yield Call(event, mine)
        if reply is LOST or reply == "timeout":
            return LOST
        return COMMITTED


def test_an_effect_of_another_request_body_is_not_the_events_effect(tmp_path):
    """With an idempotent sink and no fault, the consumer above sends each event's operation id with a body
    that is not the event's, and commits ``applied``. The service recorded the effect under the operation id,
    so the checker took it for the event's: ok, although no event's own request ever ran. Now an effect is
    the event's only when its request carries the fingerprint of the event's canonical request; another one
    is an effect no handler decided (invariant 5), and the events, passed with no effect of their own, are
    lost."""
    sc = _scenario(tmp_path, "external", [("C1", [1, 2, 3], "C2"), ("C2", [], "C2")],
                   head=('sink = "idempotent"',))
    assert simkit.simulate(sc, "safe").as_dict()["ok"]
    v = simkit.simulate(sc, CallsWithABodyOfItsOwn).as_dict()
    assert not v["ok"] and v["lost"] == ["e1", "e2", "e3"]
    assert any(d["invariant"] == 5 and d["detail"].startswith("effect of e1/")
               for d in v["invariant_violations"])


# -- 4. a gap behind the prefix, processed by a consumer that remembers the checkpoint it wrote -------------
class ProcessesTheGap(ReceiptsOnly):
    """Unsafe (step 3): without backfills, an event behind ``applied_position`` with no receipt is processed
    instead of halted on (nothing is lost: it lets only receipts prove a replay)."""

    def validate(self, checkpoint, page, ids_at):
        return None


class ProcessesTheGapLoadingNothing(RememberedIdentity):
    """The same, taking the checkpoint its own barrier wrote as the next attempt identity (as the correct
    ``RememberedIdentity`` does) instead of loading it."""

    is_replay = ReceiptsOnly.is_replay

    def validate(self, checkpoint, page, ids_at):
        return None


def test_a_missing_halt_on_a_gap_is_seen_without_a_load():
    """``gap_behind_applied``: C2 serves e3 behind ``applied_position`` 5. Processing it instead of halting is
    reported in ``unhalted``; the same consumer that loaded nothing after its barrier was ok: a gap was judged
    against the ``applied_position`` a worker loaded, and it had loaded 0. Now also against the checkpoint
    its own barrier wrote, which it holds as well; the correct ``RememberedIdentity`` still halts, ok."""
    sc = simkit.load("gap_behind_applied")
    for consumer in (ProcessesTheGap, ProcessesTheGapLoadingNothing):
        v = simkit.simulate(sc, consumer).as_dict()
        assert not v["ok"] and not v["lost"] and len(v["unhalted"]) == 1, (consumer, v)
        assert "gap: e3 at position 3 is behind applied_position 5" in v["unhalted"][0]["detail"]
    assert simkit.simulate(sc, RememberedIdentity).as_dict()["ok"]
