"""Round 36: ``simkit live`` against ``simkit run`` on the same scenario and consumer (CHANGELOG, "Fixed").

Found: with ``[auth] rotate_at`` landing during a live run, ``safe`` (and any correct consumer) got dozens of
``stale_binding`` under ``live`` where ``run`` says ok: the reservation's binding was read before its store
transaction and stamped after it, and the call counted as issued after the reservation's commit (or after a
``Load``/``Lookup`` that takes no simulated time); a worker that waited for the write lock while the other
renewed the record renewed it back to an older principal. Now the binding is read and the record stamped at
one instant once the lock is held (``LiveClock.hold``), a call is issued at its worker's last timed result.

Held: every bundled scenario, ``safe`` with random kills: the same invariants/halted/pending/completed line as
``run``; ``misbound_response``, ``late_response`` with ``safe`` and tests/mutants/correct.py's consumers
killed at each crash point, and the gauntlet (two workers) at each point: ok as ``run``; correct.py and
round31.py's correct consumers on the gauntlet: ok; the shortcut strategies on their scenarios with ``--at``:
NOT ok as ``run``; an ``exec:`` consumer under rotations; SIGKILL of ``simkit live`` or of its work process:
no process, no temporary database left; a consumer sleeping or spinning for ever ends at ``--timeout``;
``--timeout`` of 1e-300, nan, inf, -1, 0.

Left alone: ``--at`` draws the pass 1-5 per start, so on ``shortcut_persist_token_on_fetch`` (two passes of
``before_event_commit``) seed 0 never kills (``lost: 0`` where ``run`` has e107; both NOT ok by invariant 1),
though docs/live.md says ``--at`` "hits a shortcut's window every time". Under ``unfenced`` and
``last_write_wins`` with two workers and rotations, ``live`` finds ``wrong_reservation`` that ``run``'s one
schedule does not: a real race of a policy documented as unsafe.
"""
from __future__ import annotations

import sqlite3

import pytest

import simkit
from simkit import Consumer
from simkit.live.run import live
from simkit.model import COMMITTED
from simkit.ops import BLOCKED, Call, Load, Lookup, Reserve, Settle, Wait


class StaleAfterBackoff(Consumer):
    """Backs off between its reservation and its call: the call goes out bound to a rotated principal."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        yield Wait("blocked")
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class LooksAgainBeforeItCalls(Consumer):
    """Reads its checkpoint and its receipts between its reservation and its call: requests that take no
    simulated time, so the call goes out at the reservation's instant, as ``safe``'s does. Correct."""

    def settle_effect(self, event):
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        yield Load()
        yield Lookup((event,))
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED


def _rotating(tmp_path, pages: int = 10, workers: int = 1):
    """An idempotent external sink whose credential rotates every half millisecond of live time."""
    rotations = ", ".join(str(0.5 * i) for i in range(1, 10_000))
    body = "".join(f'[[pages]]\ncursor = "C{i}"\npositions = [{3 * i + 1}, {3 * i + 2}, {3 * i + 3}]\n'
                   f'next_cursor = "C{i + 1}"\n' for i in range(pages))
    path = tmp_path / "rotating.toml"
    path.write_text(f'name = "rotating"\nsink = "idempotent"\nsettlement = "fenced"\nworkers = {workers}\n'
                    f'[initial]\nresume_cursor = "C0"\n[auth]\nrotate_at = [{rotations}]\n{body}'
                    f'[[pages]]\ncursor = "C{pages}"\npositions = []\nnext_cursor = "C{pages}"\n')
    return simkit.load(str(path))


@pytest.mark.parametrize("strategy, ok", [
    ("safe", True), (LooksAgainBeforeItCalls, True), (StaleAfterBackoff, False)])
def test_live_judges_bindings_under_rotations_as_run_does(tmp_path, strategy, ok):
    """``safe`` reserves and calls at one simulated instant: ``run`` says ok and so must ``live`` (it was
    NOT ok, dozens of ``stale_binding``: the rotation landed inside the reservation's transaction or before
    the call went out), and so must one that reads between the two. A consumer that backs off between the
    two is caught by both."""
    sc = _rotating(tmp_path)
    assert simkit.simulate(sc, strategy).verdict.ok is ok
    verdict = live(sc, strategy, kills=0, timeout=60).verdict
    assert verdict.completed and verdict.ok is ok, verdict.settlement_violations[:3]
    assert ok or {v["kind"] for v in verdict.settlement_violations} == {"stale_binding"}


def test_two_workers_reserving_one_event_never_renew_it_back_to_an_older_principal(tmp_path):
    """In the simulation a reservation reads the binding in force as it writes the record, so a renewal only
    goes forward. ``live`` read it before waiting for the store's write lock: a worker that waited while the
    other renewed the record to P496 renewed it back to P490 (and ``stale_binding`` flagged ``safe``). Now
    the binding is read, and the record stamped, once the lock is held: in commit order, per operation, the
    times of the transitions never go back, nor, per operation, the principals."""
    sc = _rotating(tmp_path, pages=12, workers=2)
    verdict = live(sc, "safe", kills=0, timeout=60, folder=tmp_path / "run").verdict
    assert verdict.ok and verdict.completed, verdict.settlement_violations[:3]
    with sqlite3.connect(tmp_path / "run" / "store.db") as db:
        rows = db.execute("SELECT operation_id, time, binding FROM operation_history ORDER BY seq").fetchall()
    assert [time for _, time, _ in rows] == sorted(time for _, time, _ in rows)
    principal: dict[str, int] = {}
    for operation, _, binding in rows:
        assert int(binding[1:]) >= principal.get(operation, 0), (operation, principal[operation], binding)
        principal[operation] = int(binding[1:])
