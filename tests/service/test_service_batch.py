"""Seed 004: "Checkpoint and receipt commit in one synchronous WAL batch in the memory store."

A crash between the two writes must be impossible. simkit's service writes them as one batch
(``store="batched"``); to show what that prevents it also has stores that split them, with the
``crash-mid-write`` fault dying between:

- ``split`` (checkpoint, then receipt): the crash loses the receipt. The identical retry of the lost-reply
  command, seed 004's one recovery, finds no receipt, is judged as a new command with a stale
  ``expected_revision``, and gets 409 ``revision_conflict``, not "its original receipt" (nor a second revision
  bump: the compare-and-set holds);
- ``split_receipt_first``: the crash loses the checkpoint. The retry gets a 200 receipt for progress that was
  never stored; only a read shows it.

With the batch the retry gets the original receipt and the read agrees. Each case runs in the model, over real
HTTP, in the simulation (``crash_mid_checkpoint_write``) and on the command line.
"""
from __future__ import annotations

import json

import pytest

from simkit.cli import main
from simkit.service import DEV_SCOPE, DEV_TENANT, dev_service
from simkit.service.checkpoints import STORES
from simkit.service.config import FaultSpec, build_service
from simkit.service.http import create_app, running
from simkit.service.sim import explore_service, run_service_scenario
from simkit.service.transport import HttpTransport, ModelTransport, ReplyLost

READ, WRITE = "/api/v1/memory/checkpoints/read", "/api/v1/memory/checkpoints"


def command(svc, key, expected, seq):
    cursor = {"journal_id": svc.journal_id(DEV_TENANT, DEV_SCOPE), "sequence": seq}
    return {"scope": DEV_SCOPE, "command": {"contract_version": 1, "idempotency_key": key,
                                            "consumer_id": "cc",
                                            "expected_revision": expected, "cursor": cursor}}


def read(t):
    return t.post(READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "cc"})


def crash_then_retry(svc, t):
    """Save sequence 2, then sequence 4 with a crash between the two writes, then the identical retry.
    Returns (retry reply, read reply)."""
    assert t.post(WRITE, command(svc, "page-1", 0, 2)).status == 200
    with pytest.raises(ReplyLost):
        t.post(WRITE, command(svc, "page-2", 1, 4), faults=("crash-mid-write",))
    return t.post(WRITE, command(svc, "page-2", 1, 4)), read(t)


EXPECTED = {
    # store: (retry status, retry's revision or error code, checkpoint revision and sequence a read shows)
    "batched": (200, 2, (2, 4)),
    "split": (409, "revision_conflict", (2, 4)),
    "split_receipt_first": (200, 2, (1, 2)),
}


def outcome(retry, current):
    what = retry["receipt"]["checkpoint"]["revision"] if retry.status == 200 else retry["error"]["code"]
    cp = current["checkpoint"]
    return retry.status, what, (cp["revision"], cp["cursor"]["sequence"])


@pytest.mark.parametrize("store", STORES)
def test_a_crash_between_checkpoint_and_receipt_in_the_model(store):
    svc = dev_service(store=store)
    retry, current = crash_then_retry(svc, ModelTransport(svc))
    assert outcome(retry, current) == EXPECTED[store]
    committed = [w.idempotency_key for w in svc.writes]
    assert committed == (["page-1"] if store == "split_receipt_first" else ["page-1", "page-2"])
    receipts = {k[2] for k in svc.receipts}
    assert receipts == ({"page-1"} if store == "split" else {"page-1", "page-2"})


@pytest.mark.parametrize("store", STORES)
def test_a_crash_between_checkpoint_and_receipt_over_http(store):
    svc = dev_service(store=store)
    with running(create_app(svc)) as url:
        t = HttpTransport(url)
        try:
            retry, current = crash_then_retry(svc, t)
            again = t.post(WRITE, command(svc, "page-2", 1, 4))
        finally:
            t.close()
    assert outcome(retry, current) == EXPECTED[store]
    assert again.body == retry.body                              # whatever the retry got, it gets for ever


def test_with_the_batch_the_retry_gets_the_original_receipt():
    """The receipt the lost reply carried is the one the retry returns: the digest of the stored receipt,
    written in the same batch as the checkpoint, and the read agrees with it."""
    svc = dev_service()
    t = ModelTransport(svc)
    retry, current = crash_then_retry(svc, t)
    (fp, stored), = [v for k, v in svc.receipts.items() if k[2] == "page-2"]
    assert retry["receipt"] == stored and current["checkpoint"] == stored["checkpoint"]
    assert len(svc.writes) == 2


def test_split_store_the_receipt_is_gone_so_the_client_cannot_learn_its_commands_fate_from_a_retry():
    svc = dev_service(store="split")
    t = ModelTransport(svc)
    retry, current = crash_then_retry(svc, t)
    assert retry["error"]["code"] == "revision_conflict"
    assert current["checkpoint"]["cursor"]["sequence"] == 4        # yet the command did commit
    assert not any(k[2] == "page-2" for k in svc.receipts)


def test_split_receipt_first_acknowledges_progress_it_never_stored():
    svc = dev_service(store="split_receipt_first")
    t = ModelTransport(svc)
    retry, current = crash_then_retry(svc, t)
    assert retry["receipt"]["checkpoint"]["cursor"]["sequence"] == 4       # "saved", says the receipt
    assert current["checkpoint"]["cursor"]["sequence"] == 2  # the server's cursor says otherwise
    nxt = t.post(WRITE, command(svc, "page-3", 2, 5))                       # the revision the receipt gave
    assert nxt.status == 409 and nxt["error"]["code"] == "revision_conflict"


@pytest.mark.parametrize("route, body", [
    (READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "cc"}),
    ("/api/v1/memory/changes", {"contract_version": 1, "scope": DEV_SCOPE}),
    ("/api/v1/memory/query", {"contract_version": 1, "scope": DEV_SCOPE}),
])
def test_crash_mid_write_is_only_for_checkpoint_writes_and_only_for_the_fault_role(route, body):
    svc = dev_service(store="split")
    before = svc.state_digest()
    r = svc.call(route, "Bearer dev", json.dumps(body).encode(), faults=["crash-mid-write"])
    assert r.status == 400 and r.body["error"]["code"] == "bad_fault" and not r.lost
    svc.add_subject("plain", credentials=["plain"])
    svc.grant("plain", DEV_SCOPE, ["memory_read", "memory_checkpoint"])
    r = svc.call(WRITE, "Bearer plain", json.dumps(command(svc, "k", 0, 1)).encode(),
                 faults=["crash-mid-write"])
    assert r.status == 403 and not r.lost
    assert svc.state_digest() == before


def test_simkit_serve_store_and_start_up_crash_fault():
    svc, faults = build_service(store="split", faults=["crash-mid-write#2"])
    assert svc.store == "split" and faults == [FaultSpec("crash-mid-write", "write", 2)]
    with running(create_app(svc, faults)) as url:
        t = HttpTransport(url)
        try:
            retry, current = _startup(svc, t)
        finally:
            t.close()
    assert outcome(retry, current) == EXPECTED["split"]


def _startup(svc, t):
    """As :func:`crash_then_retry`, the crash coming from
    ``--fault crash-mid-write#2`` instead of the header."""
    assert t.post(WRITE, command(svc, "page-1", 0, 2)).status == 200
    with pytest.raises(ReplyLost):
        t.post(WRITE, command(svc, "page-2", 1, 4))
    return t.post(WRITE, command(svc, "page-2", 1, 4)), read(t)


@pytest.mark.parametrize("argv", [["serve", "--store", "wal"], ["serve", "--fault", "crash-mid-write@read"],
                                  ["service", "crash_mid_checkpoint_write", "--store", "wal"]])
def test_bad_store_or_crash_route_is_one_line_and_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: ") and err.count("\n") == 1


# -- the simulation ------------------------------------------------------------------------------------------
def test_simulated_the_batch_keeps_the_receipt_promise_and_a_split_store_breaks_it():
    runs = {store: run_service_scenario("crash_mid_checkpoint_write", "correct", store=store)
            for store in STORES}
    assert runs["batched"].verdict.ok, runs["batched"].as_dict()
    key = "context-cache-w1-i0-2"                                  # the 2nd command: the server died in it
    for store in ("split", "split_receipt_first"):
        v = runs[store].verdict
        assert not v.ok and v.broken_receipts == [key] and v.lost == [] and v.completed, store
    replies = {store: [(status, body.get("error", {}).get("code")) for _at, _w, cmd, status, body
                       in run.world.write_replies if cmd["idempotency_key"] == key]
               for store, run in runs.items()}
    assert replies == {"batched": [(200, None)], "split": [(409, "revision_conflict")],
                       "split_receipt_first": [(200, None)]}
    assert [w.idempotency_key for w in runs["split_receipt_first"].world.svc.writes].count(key) == 0


def test_simulated_the_correct_client_survives_every_schedule_with_the_batch_but_not_with_a_split_store():
    """With a split store the run fails whenever the identical retry reaches the server after the crash. It
    does not when the crashing write wrote nothing (it was itself a retry, answered from an earlier receipt)
    or when the client crashed before retrying (the receipt is lost all the same; nobody asked for it)."""
    batched, split = (list(explore_service("crash_mid_checkpoint_write", "correct", max_crashes=1,
                                           lost_replies=1,
                                           horizon=3, store=store)) for store in ("batched", "split"))
    assert len(batched) == len(split) == 40 and all(r.verdict.ok for r in batched)
    failing = [r for r in split if not r.verdict.ok]
    assert len(failing) == 28
    assert all(r.verdict.broken_receipts and not r.verdict.lost and r.verdict.completed for r in failing)


def test_broken_receipts_is_empty_for_every_client_of_the_other_scenarios():
    for name in ("checkpoint_service", "restore_from_backup", "restore_reused_numbers",
                 "initial_reconciliation"):
        for client in ("correct", "new_key_retry", "reset_on_409"):
            assert run_service_scenario(name, client).verdict.broken_receipts == [], (name, client)


def test_simkit_service_shows_the_three_stores_side_by_side(capsys):
    assert main(["service", "crash_mid_checkpoint_write", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["store"], r["ok"], len(r["broken_receipts"])) for r in out["results"]] == [
        ("batched", True, 0), ("split", False, 1), ("split_receipt_first", False, 1)]
    assert main(["service", "crash_mid_checkpoint_write"]) == 0
    table = capsys.readouterr().out
    assert "broken receipts" in table and table.count("correct ") == 3
