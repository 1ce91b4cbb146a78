"""Seed 004 clients judged from ground truth: the correct one is ok under lost write replies, a concurrent
writer, crashes and a restore; the two wrong ones are shown failing, each for the reason it is wrong."""
from __future__ import annotations

import pytest

from simkit.ops import LOST
from simkit.service import DEV_SCOPE, dev_service
from simkit.service.clients import WRITE, Apply, Call, Client, Halt, Reconcile, Wait
from simkit.service.http import create_app, running
from simkit.service.sim import explore_service, run_service_scenario
from simkit.service.transport import HttpTransport, ReplyLost


@pytest.mark.parametrize("version", [1, 2])
def test_correct_client_is_ok_under_lost_write_replies_and_a_concurrent_writer(version):
    run = run_service_scenario("checkpoint_service", "correct", version)
    d = run.as_dict()
    assert run.verdict.ok, d
    assert d["lost_replies"] == 3 and d["conflicts"] > 0          # the faults really happened


def test_correct_client_is_ok_in_every_schedule_of_up_to_two_crashes_and_one_lost_reply():
    runs = list(explore_service("checkpoint_service", "correct", max_crashes=2, lost_replies=1, horizon=2))
    assert len(runs) == 66
    assert [r.world.sc for r in runs if not r.verdict.ok] == []


@pytest.mark.parametrize("version", [1, 2])
def test_retrying_a_lost_write_with_a_new_idempotency_key_acknowledges_a_page_twice(version):
    run = run_service_scenario("checkpoint_service", "new_key_retry", version)
    assert not run.verdict.ok and run.verdict.duplicate_acks >= 1
    assert run.verdict.lost == [] and run.verdict.regressions == 0   # the server's CAS still held


@pytest.mark.parametrize("version", [1, 2])
def test_resetting_the_cursor_after_a_409_loses_entries(version):
    run = run_service_scenario("checkpoint_service", "reset_on_409", version)
    assert not run.verdict.ok and run.verdict.lost


@pytest.mark.parametrize("version", [1, 2])
def test_after_a_restore_a_consumer_ahead_gets_409_and_reconciles_explicitly(version):
    run = run_service_scenario("restore_from_backup", "correct", version)
    assert run.verdict.ok, run.as_dict()
    assert run.verdict.conflicts >= 1 and run.verdict.reconciliations == 1
    assert run.world.reconciled[0][2] == "cursor_ahead" and run.world.reconciled[0][3]   # effects reported


def test_after_a_restore_resetting_silently_loses_entries_and_hides_orphaned_effects():
    run = run_service_scenario("restore_from_backup", "reset_on_409", 1)
    assert not run.verdict.ok and run.verdict.lost and run.verdict.unreconciled


def test_version_1_cannot_tell_reused_numbers_and_verified_version_2_can():
    v1 = run_service_scenario("restore_reused_numbers", "correct", 1)
    v2 = run_service_scenario("restore_reused_numbers", "correct", 2)
    assert (
        not v1.verdict.ok and v1.verdict.lost and v1.verdict.unreconciled and v1.verdict.reconciliations == 0
    )
    assert v2.verdict.ok and v2.world.reconciled[0][2] == "divergent_history"


def test_correct_client_is_ok_in_every_schedule_after_a_restore_with_verified_progress():
    runs = list(explore_service("restore_reused_numbers", "correct", 2, max_crashes=1, lost_replies=1,
                                horizon=2))
    assert [r.world.sc for r in runs if not r.verdict.ok] == []


def test_runs_are_deterministic():
    a = run_service_scenario("checkpoint_service", "new_key_retry", 1).as_dict()
    b = run_service_scenario("checkpoint_service", "new_key_retry", 1).as_dict()
    assert a == b


def test_the_correct_client_against_simkit_serve_over_http_with_a_lost_write_reply():
    """The same client generator, driven over a real HTTP connection; the second write's reply is dropped
    by the server (X-Simkit-Fault: lose-reply) and retried with the same idempotency key."""
    svc = dev_service()
    with running(create_app(svc)) as url:
        t = HttpTransport(url)
        gen = Client(1, "context-cache", dict(DEV_SCOPE), limit=2).run()
        result, writes, ledger, lost = None, 0, set(), 0
        try:
            for _ in range(200):
                op = gen.send(result)
                if type(op) is Call:
                    faults = ()
                    if op.route == WRITE:
                        writes += 1
                        faults = ("lose-reply",) if writes == 2 else ()
                    try:
                        result = t.post(op.route, op.body, faults=faults)
                    except ReplyLost:
                        lost, result = lost + 1, LOST
                elif type(op) is Apply:
                    result = op.identity not in ledger
                    ledger.add(op.identity)
                elif type(op) is Wait:
                    break
                else:
                    assert type(op) not in (Halt, Reconcile), op
        finally:
            gen.close()
            t.close()
    assert lost == 1
    cp = svc.checkpoints[("dev", ("tenant", tuple(DEV_SCOPE.values())), 1, "context-cache")]
    assert cp.cursor["sequence"] == 5 and len(ledger) == 5
    assert [w.after["cursor"]["sequence"] for w in svc.writes] == [2, 4, 5]  # the lost write committed once


def test_operator_routes_of_simkit_serve_append_back_up_and_restore():
    """The /_simkit routes let a workshop's operator restore a backup under a running client."""
    svc = dev_service()
    svc.add_subject("operator", credentials=["ops"], roles=["operator"])
    ops = {"Authorization": "Bearer ops"}
    with running(create_app(svc, admin=True)) as url:
        t = HttpTransport(url)
        try:
            assert t.client.post("/_simkit/backup", headers=ops).json() == {"backup": 1}
            assert t.client.post("/_simkit/append", json={"record_id": "extra"},
                                 headers=ops).json()["entry"]["cursor"]["sequence"] == 6
            body = {"contract_version": 1, "scope": DEV_SCOPE, "query": {"limit": 10}}
            assert t.post("/api/v1/memory/changes", body)["high_watermark"]["sequence"] == 6
            assert t.client.post("/_simkit/restore", json={"backup": 1},
                                 headers=ops).json() == {"restored": 1}
            assert t.post("/api/v1/memory/changes", body)["high_watermark"]["sequence"] == 5
            assert t.client.post("/_simkit/restore", json={"backup": 9}, headers=ops).status_code == 400
        finally:
            t.close()


def test_the_service_write_sequence_is_read_only_and_counts_checkpoint_writes():
    """The simulated world records each write reply with the service's sequence number, read through its
    public ``seq`` (docs/architecture.md, "No reach-ins")."""
    run = run_service_scenario("checkpoint_service", "correct", 2)
    svc = run.world.svc
    assert svc.seq == len(svc.writes) + len(svc.restores) > 0
    assert {seq for seq, *_rest in run.world.write_replies} <= set(range(1, svc.seq + 1))
    with pytest.raises(AttributeError):
        svc.seq = 0
