"""Seed 004 ("Durable consumer checkpoints") and feed-notes.md, one named test per rule.

Every test runs twice: against the pure model in process (``model``) and against ``simkit serve`` over a real
HTTP connection to a uvicorn server on 127.0.0.1 (``http``). Set-up that is not part of the contract (adding
subjects, appending changes, revoking a credential, taking and restoring a backup, corrupting storage) goes
to the model object directly; every call the contract describes goes through the transport.
"""
from __future__ import annotations

import json

import pytest
from served import over, shared_server  # noqa: F401 -- the fixture over uses

from simkit.service import DEV_SCOPE, DEV_TENANT, MAX_REQUEST_BYTES, dev_service
from simkit.service.checkpoints import ROUTES
from simkit.service.contract import digest
from simkit.service.transport import ReplyLost

CHANGES, READ, WRITE = (
    "/api/v1/memory/changes",
    "/api/v1/memory/checkpoints/read",
    "/api/v1/memory/checkpoints",
)
QUERY = "/api/v1/memory/query"
OTHER_SCOPE = {**DEV_SCOPE, "agent_id": "other-agent"}


class Env:
    """One fresh service (five changes in the dev journal) and a transport to it."""

    def __init__(self, svc, transport):
        self.svc, self.t = svc, transport

    @property
    def jid(self):
        return self.svc.journal_id(DEV_TENANT, DEV_SCOPE)

    def cursor(self, seq, version=1, scope=DEV_SCOPE, tenant=DEV_TENANT):
        j = self.svc.journals[(tenant, tuple(scope.values()))]
        return j.cursor(seq, version)

    def append(self, n=1, scope=DEV_SCOPE, tenant=DEV_TENANT, prefix="r"):
        for i in range(n):
            self.svc.append(tenant, scope, "created", f"{prefix}{i}")

    def changes(self, after=None, through=None, limit=None, version=1, scope=DEV_SCOPE, credential="dev",
                faults=()):
        query = {"after": after, "through": through}
        if limit is not None:
            query["limit"] = limit
        return self.t.post(CHANGES, {"contract_version": version, "scope": scope, "query": query}, credential,
                           faults)

    def read(self, consumer="cc", version=1, scope=DEV_SCOPE, credential="dev", faults=()):
        return self.t.post(READ, {"contract_version": version, "scope": scope, "consumer_id": consumer},
                           credential, faults)

    def command(self, cursor, expected, key, consumer="cc", version=1, expected_digest=None, scope=DEV_SCOPE):
        cmd = {"contract_version": version, "idempotency_key": key, "consumer_id": consumer,
               "expected_revision": expected, "cursor": cursor}
        if version == 2:
            cmd["expected_digest"] = expected_digest
        return {"scope": dict(scope), "command": cmd}

    def write(self, cursor, expected, key, consumer="cc", version=1, expected_digest=None, scope=DEV_SCOPE,
              credential="dev", faults=()):
        body = self.command(cursor, expected, key, consumer, version, expected_digest, scope)
        return self.t.post(WRITE, body, credential, faults)


@pytest.fixture(params=["model", "http"])
def env(request):
    svc = dev_service()
    with over(request, svc) as transport:
        yield Env(svc, transport)


def code(r):
    return r.body["error"]["code"]


# -- Identity and authority ----------------------------------------------------------------------------------
@pytest.mark.parametrize("caps", [["memory_read"], ["memory_checkpoint"]])
def test_both_checkpoint_routes_require_memory_read_and_memory_checkpoint(env, caps):
    env.svc.add_subject("half", credentials=["half"])
    env.svc.grant("half", DEV_SCOPE, caps)
    assert env.read(credential="half").status == 403
    assert env.write(env.cursor(1), 0, "k1", credential="half").status == 403
    assert env.read(credential="dev").status == 404      # the full grant reaches the state check


def test_grant_must_be_for_the_exact_resource_scope(env):
    env.svc.add_subject("near", credentials=["near"])
    env.svc.grant("near", OTHER_SCOPE, ["memory_read", "memory_checkpoint"])
    env.svc.grant("near", {**DEV_SCOPE, "mission_id": "m1"}, ["memory_read", "memory_checkpoint"])
    assert env.read(credential="near").status == 403
    assert env.changes(credential="near").status == 403


def test_tenant_administration_alone_does_not_grant_access(env):
    env.svc.add_subject("admin", credentials=["admin"], tenant_admin=True)
    env.svc.grant("admin", DEV_SCOPE, ["tenant_admin"])
    assert env.read(credential="admin").status == 403
    assert env.write(env.cursor(1), 0, "k1", credential="admin").status == 403
    assert env.changes(credential="admin").status == 403


@pytest.mark.parametrize("field", ["subject", "tenant_id", "subject_id"])
def test_request_cannot_select_another_subject_or_tenant(env, field):
    body = env.command(env.cursor(1), 0, "k1")
    body[field] = "someone-else"
    assert code(env.t.post(WRITE, body)) == "unknown_field"
    body = env.command(env.cursor(1), 0, "k1")
    body["command"][field] = "someone-else"
    assert env.t.post(WRITE, body).status == 400
    read = {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "cc", field: "x"}
    assert env.t.post(READ, read).status == 400
    assert not env.svc.checkpoints


def test_checkpoint_belongs_to_subject_and_consumer_id(env):
    assert env.write(env.cursor(2), 0, "k1", consumer="alpha").status == 200
    assert env.read("alpha")["checkpoint"]["cursor"]["sequence"] == 2
    assert env.read("beta").status == 404
    assert env.write(env.cursor(1), 0, "k2", consumer="beta").status == 200   # beta has its own progress


def test_different_subjects_have_separate_progress_even_for_shared_memory(env):
    env.svc.add_subject("other", credentials=["other"])
    env.svc.grant("other", DEV_SCOPE, ["memory_read", "memory_checkpoint"])
    assert env.write(env.cursor(3), 0, "k1").status == 200
    assert env.read(credential="other").status == 404
    r = env.write(env.cursor(1), 0, "k1", credential="other")  # same key and consumer id: another subject
    assert r.status == 200 and r["receipt"]["checkpoint"]["revision"] == 1
    assert env.read()["checkpoint"]["cursor"]["sequence"] == 3


@pytest.mark.parametrize("consumer", ["", " ", "\t", "a\x00b", "a\nb", "a\x7fb", "a\x85b", "x" * 129,
                                      "é" * 65, 7, None, ["cc"], "\ud800"], ids=repr)
def test_consumer_id_is_1_to_128_utf8_bytes_without_control_characters_or_blank(env, consumer):
    # \ud800 travels as a JSON escape
    raw = json.dumps(env.command(env.cursor(1), 0, "k1", consumer=consumer))
    r = env.t.post(WRITE, raw.encode())
    assert r.status == 400 and code(r) == "malformed_identity"
    r = env.t.post(READ, json.dumps({"contract_version": 1, "scope": DEV_SCOPE,
                                     "consumer_id": consumer}).encode())
    assert r.status == 400


@pytest.mark.parametrize("consumer", ["c", "x" * 128, "é" * 64, "context cache", "缓存"])
def test_consumer_id_at_the_limits_is_accepted(env, consumer):
    assert env.write(env.cursor(1), 0, "k1", consumer=consumer).status == 200
    assert env.read(consumer).status == 200


def test_credential_rotation_within_the_same_subject_preserves_ownership(env):
    assert env.write(env.cursor(2), 0, "k1").status == 200
    env.svc.add_credential("dev-rotated", "dev")
    env.svc.revoke("dev")
    r = env.read(credential="dev-rotated")
    assert r.status == 200 and r["checkpoint"]["revision"] == 1
    assert env.write(env.cursor(3), 1, "k2", credential="dev-rotated").status == 200


def test_a_new_subject_starts_independent_progress(env):
    assert env.write(env.cursor(4), 0, "k1").status == 200
    env.svc.add_subject("newcomer", credentials=["newcomer"])
    env.svc.grant("newcomer", DEV_SCOPE, ["memory_read", "memory_checkpoint"])
    assert env.read(credential="newcomer").status == 404


def test_processes_sharing_a_consumer_id_share_one_checkpoint_and_coordinate_through_its_revision(env):
    assert env.write(env.cursor(1), 0, "p1-a").status == 200
    seen_by_1 = env.read()["checkpoint"]["revision"]
    seen_by_2 = env.read()["checkpoint"]["revision"]        # reading grants no exclusive ownership
    assert env.write(env.cursor(3), seen_by_2, "p2-a").status == 200
    r = env.write(env.cursor(2), seen_by_1, "p1-b")
    assert r.status == 409 and code(r) == "revision_conflict"
    assert env.read()["checkpoint"]["cursor"]["sequence"] == 3


# -- Read or create progress ---------------------------------------------------------------------------------
def test_read_returns_contract_version_scope_and_checkpoint(env):
    env.write(env.cursor(2), 0, "k1")
    r = env.read()
    assert r.status == 200 and set(r.body) == {"contract_version", "scope", "checkpoint"}
    assert r["contract_version"] == 1 and r["scope"] == DEV_SCOPE
    assert set(r["checkpoint"]) == {"consumer_id", "cursor", "revision", "updated_at_millis",
                                    "checkpoint_digest"}


def test_never_created_checkpoint_returns_404(env):
    r = env.read("never")
    assert r.status == 404 and code(r) == "checkpoint_not_found"


def test_expected_revision_zero_only_creates_missing_progress(env):
    assert env.write(env.cursor(1), 0, "k1").status == 200
    r = env.write(env.cursor(2), 0, "k2")
    assert r.status == 409 and code(r) == "revision_conflict"


def test_creating_progress_requires_expected_revision_zero(env):
    r = env.write(env.cursor(1), 1, "k1")
    assert r.status == 409 and code(r) == "revision_conflict"
    assert env.read().status == 404


def test_success_increments_revision_and_returns_receipt_with_digest(env):
    r1 = env.write(env.cursor(1), 0, "k1")
    r2 = env.write(env.cursor(3), 1, "k2")
    assert r1.status == r2.status == 200
    assert set(r2.body) == {"contract_version", "receipt"}
    receipt = r2["receipt"]
    assert set(receipt) == {"contract_version", "idempotency_key", "checkpoint", "receipt_digest"}
    assert receipt["idempotency_key"] == "k2" and receipt["checkpoint"]["revision"] == 2
    assert receipt["receipt_digest"] == digest({k: receipt[k]
                                                for k in ("contract_version", "idempotency_key",
                                                          "checkpoint")})
    assert env.read()["checkpoint"] == receipt["checkpoint"]


def test_cursor_must_belong_to_the_current_journal(env):
    r = env.write({"journal_id": "00000000-0000-4000-8000-000000000042", "sequence": 1}, 0, "k1")
    assert r.status == 409 and code(r) == "foreign_cursor"
    env.svc.activate_journal(DEV_TENANT, OTHER_SCOPE)
    r = env.write(env.cursor(0, scope=OTHER_SCOPE), 0, "k2")          # another namespace's journal
    assert r.status == 409 and code(r) == "foreign_cursor"


def test_cursor_cannot_exceed_the_journal_high_watermark(env):
    r = env.write(env.cursor(0) | {"sequence": 6}, 0, "k1")
    assert r.status == 409 and code(r) == "cursor_ahead"
    assert env.write(env.cursor(5), 0, "k2").status == 200


def test_sequence_zero_is_accepted_when_the_journal_exists(env):
    r = env.write(env.cursor(0), 0, "k1")
    assert r.status == 200 and r["receipt"]["checkpoint"]["cursor"]["sequence"] == 0


def test_no_checkpoint_can_be_created_before_journal_activation(env):
    env.svc.grant("dev", OTHER_SCOPE, ["memory_read", "memory_checkpoint"])
    page = env.changes(scope=OTHER_SCOPE)
    assert page.status == 200 and page["next_cursor"] is None and page["high_watermark"] is None
    r = env.write({"journal_id": env.jid, "sequence": 0}, 0, "k1", scope=OTHER_SCOPE)
    assert r.status == 409 and code(r) == "journal_not_active"
    env.svc.activate_journal(DEV_TENANT, OTHER_SCOPE)
    assert env.write(env.cursor(0, scope=OTHER_SCOPE), 0, "k2", scope=OTHER_SCOPE).status == 200


def test_existing_progress_cannot_move_backward(env):
    assert env.write(env.cursor(4), 0, "k1").status == 200
    r = env.write(env.cursor(3), 1, "k2")
    assert r.status == 409 and code(r) == "cursor_backward"


def test_existing_progress_cannot_switch_journal_identities(env):
    assert env.write(env.cursor(4), 0, "k1").status == 200
    env.svc.replace_journal(DEV_TENANT, DEV_SCOPE)
    env.append(5)
    r = env.write(env.cursor(5), 1, "k2")
    assert r.status == 409 and code(r) == "journal_switch"


def test_same_cursor_with_new_key_and_correct_revision_advances_revision(env):
    assert env.write(env.cursor(2), 0, "k1").status == 200
    r = env.write(env.cursor(2), 1, "k2")
    assert r.status == 200 and r["receipt"]["checkpoint"]["revision"] == 2
    assert r["receipt"]["checkpoint"]["cursor"]["sequence"] == 2


def test_competing_command_for_the_old_revision_returns_409(env):
    assert env.write(env.cursor(1), 0, "k1").status == 200
    assert env.write(env.cursor(2), 1, "worker-a").status == 200
    r = env.write(env.cursor(3), 1, "worker-b")
    assert r.status == 409 and code(r) == "revision_conflict"


def test_checkpoint_writes_emit_no_memory_change_events(env):
    before = env.changes()["high_watermark"]
    for i, seq in enumerate([1, 2, 2, 5]):
        assert env.write(env.cursor(seq), i, f"k{i}").status == 200
    after = env.changes()
    assert after["high_watermark"] == before and len(after["changes"]) == 5


# -- Retry and reconnect correctly ---------------------------------------------------------------------------
def test_identical_retry_returns_the_original_receipt(env):
    first = env.write(env.cursor(2), 0, "k1")
    again = env.write(env.cursor(2), 0, "k1")
    assert again.status == 200 and again.body == first.body
    assert env.read()["checkpoint"]["revision"] == 1 and len(env.svc.writes) == 1


def test_identical_retry_returns_its_original_receipt_even_after_progress_advanced(env):
    first = env.write(env.cursor(2), 0, "k1")
    assert env.write(env.cursor(4), 1, "k2").status == 200
    again = env.write(env.cursor(2), 0, "k1")
    assert again.status == 200 and again.body == first.body
    assert again["receipt"]["checkpoint"]["revision"] == 1          # older than the current checkpoint
    assert env.read()["checkpoint"]["revision"] == 2


def test_lost_reply_retried_with_the_same_key_is_committed_once(env):
    with pytest.raises(ReplyLost):
        env.write(env.cursor(3), 0, "k1", faults=("lose-reply",))
    r = env.write(env.cursor(3), 0, "k1")
    assert r.status == 200 and r["receipt"]["checkpoint"]["revision"] == 1
    assert len(env.svc.writes) == 1


@pytest.mark.parametrize("change", ["cursor", "consumer", "expected_revision"])
def test_reusing_an_idempotency_key_for_another_command_returns_409(env, change):
    assert env.write(env.cursor(1), 0, "k1").status == 200
    assert env.write(env.cursor(1), 0, "k0", consumer="other").status == 200
    args = {"cursor": env.cursor(1), "expected": 0, "key": "k1", "consumer": "cc"}
    args.update({"cursor": {"cursor": env.cursor(2)}, "consumer": {"consumer": "other"},
                 "expected_revision": {"expected": 1}}[change])
    r = env.write(**args)
    assert r.status == 409 and code(r) == "idempotency_conflict"


def test_credentials_and_revocation_are_checked_on_retries(env):
    assert env.write(env.cursor(2), 0, "k1").status == 200
    env.svc.revoke("dev")
    r = env.write(env.cursor(2), 0, "k1")
    assert r.status == 401 and code(r) == "revoked_credential"


def test_current_scope_grants_are_checked_on_retries(env):
    assert env.write(env.cursor(2), 0, "k1").status == 200
    env.svc.ungrant("dev", DEV_SCOPE)
    assert env.write(env.cursor(2), 0, "k1").status == 403


# -- Recovery and limits -------------------------------------------------------------------------------------
def test_checkpoint_reads_observe_one_current_stored_value(env):
    env.write(env.cursor(1), 0, "k1")
    env.write(env.cursor(4), 1, "k2")
    assert env.read()["checkpoint"]["cursor"]["sequence"] == 4


def test_another_writer_may_append_between_page_and_checkpoint_and_an_earlier_cursor_stays_valid(env):
    page = env.changes(limit=2)
    env.append(3)                                             # another writer, between page and save
    r = env.write(page["next_cursor"], 0, "k1")
    assert r.status == 200 and r["receipt"]["checkpoint"]["cursor"]["sequence"] == 2
    assert env.changes(after=page["next_cursor"])["high_watermark"]["sequence"] == 8


def test_an_empty_page_can_retain_the_current_checkpoint(env):
    env.write(env.cursor(5), 0, "k1")
    page = env.changes(after=env.cursor(5))
    assert page.status == 200 and page["changes"] == [] and page["complete"] is True
    assert page["next_cursor"] == env.cursor(5)                # nothing new to save; the checkpoint stays
    assert env.read()["checkpoint"]["revision"] == 1


def test_restore_puts_the_server_behind_a_cursor_ahead_which_returns_409(env):
    env.write(env.cursor(2), 0, "k1")
    backup = env.svc.backup()
    env.append(3)
    env.write(env.cursor(8), 1, "k2")
    env.svc.restore(backup)
    r = env.write(env.cursor(0) | {"sequence": 8}, 1, "k3")
    assert r.status == 409 and code(r) == "cursor_ahead"
    r = env.changes(after=env.cursor(0) | {"sequence": 8})
    assert r.status == 409 and code(r) == "cursor_ahead"


def test_no_implicit_reset_rollback_or_checkpoint_deletion(env):
    env.write(env.cursor(3), 0, "k1")
    backup = env.svc.backup()
    env.append(2)
    env.write(env.cursor(7), 1, "k2")
    env.svc.restore(backup)
    assert env.write(env.cursor(0) | {"sequence": 7}, 2, "k3").status == 409
    r = env.read()
    # not reset, not deleted
    assert r["checkpoint"]["cursor"]["sequence"] == 3 and r["checkpoint"]["revision"] == 1
    assert set(ROUTES) == {CHANGES, QUERY, READ, WRITE}          # no reset, rollback or delete route


def test_a_replaced_journal_needs_a_new_consumer_identity_after_reconciliation(env):
    env.write(env.cursor(3), 0, "k1")
    env.svc.replace_journal(DEV_TENANT, DEV_SCOPE)
    env.append(2)
    assert env.write(env.cursor(0), 1, "k2").status == 409
    assert env.write(env.cursor(0), 0, "k3", consumer="cc-2").status == 200


@pytest.mark.parametrize("size", [MAX_REQUEST_BYTES + 1, 2 * MAX_REQUEST_BYTES])
def test_standard_64_kib_request_limit(env, size):
    body = env.command(env.cursor(1), 0, "k1")
    raw = json.dumps(body).encode()
    raw = raw[:-1] + b" " * (size - len(raw)) + b"}"
    assert len(raw) == size
    r = env.t.post(WRITE, raw)
    assert r.status == 413 and not env.svc.checkpoints
    at_limit = json.dumps(body).encode()
    at_limit = at_limit[:-1] + b" " * (MAX_REQUEST_BYTES - len(at_limit)) + b"}"
    assert env.t.post(WRITE, at_limit).status == 200


def test_cache_control_no_store_on_every_reply(env):
    replies = [env.changes(), env.read(), env.write(env.cursor(1), 0, "k1"), env.read(),
               env.read(credential="nobody"), env.changes(limit=0)]
    assert {r.headers.get("cache-control") for r in replies} == {"no-store"}


def test_checkpoints_and_retry_receipts_are_retained(env):
    bodies = [env.write(env.cursor(i), i, f"k{i}").body for i in range(5)]
    for i in range(5):
        assert env.write(env.cursor(i), i, f"k{i}").body == bodies[i]


# -- the error table -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mutate", [
    lambda b: b.update(scope={**DEV_SCOPE, "visibility": "public"}),
    lambda b: b.update(scope={**DEV_SCOPE, "project_id": ""}),
    lambda b: b["scope"].pop("agent_id"),
    lambda b: b["command"].update(contract_version=3),
    lambda b: b["command"].update(contract_version="1"),
    lambda b: b["command"].pop("cursor"),
    lambda b: b["command"].update(idempotency_key=""),
    lambda b: b["command"].update(expected_revision=-1),
    lambda b: b["command"].update(expected_revision=True),
    lambda b: b["command"].update(cursor={"journal_id": "j", "sequence": -1}),
    lambda b: b["command"].update(cursor={"journal_id": "j", "sequence": 2**64}),
    lambda b: b["command"].update(cursor={"journal_id": "", "sequence": 1}),
], ids=["visibility", "blank-project", "missing-scope-key", "contract-3", "contract-string", "no-cursor",
        "blank-key", "negative-revision", "bool-revision", "negative-sequence", "sequence-over-u64",
        "blank-journal"])
def test_error_400_malformed_identities_or_contracts(env, mutate):
    body = env.command(env.cursor(1), 0, "k1")
    mutate(body)
    r = env.t.post(WRITE, body)
    assert r.status == 400, r.body
    assert not env.svc.checkpoints


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe"], ids=repr)
def test_error_400_body_is_not_a_json_object(env, raw):
    for route in ROUTES:
        assert env.t.post(route, raw).status == 400


@pytest.mark.parametrize("credential", [None, "", "wrong", "revoked"],
                         ids=["missing", "empty", "invalid", "revoked"])
def test_error_401_invalid_or_revoked_credentials(env, credential):
    env.svc.add_subject("old", credentials=["revoked"])
    env.svc.grant("old", DEV_SCOPE, ["memory_read", "memory_checkpoint"])
    env.svc.revoke("revoked")
    for r in (env.read(credential=credential), env.changes(credential=credential),
              env.write(env.cursor(1), 0, "k1", credential=credential)):
        assert r.status == 401
    assert not env.svc.checkpoints


def test_error_403_missing_capability_or_grant(env):
    env.svc.add_subject("nogrant", credentials=["nogrant"])
    assert env.read(credential="nogrant").status == 403
    assert env.changes(credential="nogrant").status == 403
    assert env.read(scope=OTHER_SCOPE).status == 403


def test_error_404_absent_progress(env):
    assert env.read("absent").status == 404
    assert env.read("absent", version=2).status == 404


@pytest.mark.parametrize("case", ["stale_revision", "nonmonotonic", "foreign", "ahead", "idempotency"])
def test_error_409_stale_revisions_nonmonotonic_foreign_ahead_cursors_and_idempotency_conflicts(env, case):
    assert env.write(env.cursor(3), 0, "k1").status == 200
    r = {
        "stale_revision": lambda: env.write(env.cursor(4), 0, "k2"),
        "nonmonotonic": lambda: env.write(env.cursor(2), 1, "k2"),
        "foreign": lambda: env.write({"journal_id": "elsewhere", "sequence": 4}, 1, "k2"),
        "ahead": lambda: env.write(env.cursor(0) | {"sequence": 99}, 1, "k2"),
        "idempotency": lambda: env.write(env.cursor(4), 1, "k1"),
    }[case]()
    assert r.status == 409
    assert env.read()["checkpoint"]["revision"] == 1


def test_error_500_detected_integrity_failure_of_a_checkpoint(env):
    env.write(env.cursor(2), 0, "k1")
    env.svc.corrupt_checkpoint("dev", DEV_SCOPE, "cc")
    for r in (env.read(), env.write(env.cursor(3), 1, "k2")):
        assert r.status == 500 and code(r) == "integrity_failure"


def test_error_500_detected_integrity_failure_of_a_receipt(env):
    env.write(env.cursor(2), 0, "k1")
    fp, receipt = env.svc.receipts[("dev", (DEV_TENANT, tuple(DEV_SCOPE.values())), "k1")]
    receipt["checkpoint"]["cursor"]["sequence"] = 4
    r = env.write(env.cursor(2), 0, "k1")
    assert r.status == 500 and code(r) == "integrity_failure"


def test_error_500_inconsistent_journal_returns_no_partial_page(env):
    env.svc.corrupt_journal(DEV_TENANT, DEV_SCOPE, 3)
    r = env.changes()
    assert r.status == 500 and "changes" not in r.body
    assert env.changes(through=env.cursor(2)).status == 200     # the intact prefix is still served


def test_fault_header_corrupt_checkpoint_is_detected(env):
    env.write(env.cursor(2), 0, "k1")
    assert env.read(faults=("corrupt-checkpoint",)).status == 500


# -- the change feed (feed-notes.md) -------------------------------------------------------------------------
def test_feed_page_and_entry_fields(env):
    r = env.changes(limit=2)
    assert set(r.body) == {"contract_version", "changes", "next_cursor", "high_watermark", "complete"}
    e = r["changes"][0]
    assert set(e) == {"schema_version", "cursor", "kind", "record_id", "record_revision", "author",
                      "committed_at_millis", "change_digest"}
    assert e["cursor"] == env.cursor(1) and e["kind"] in ("created", "derived", "updated", "deleted",
                                                          "embedding_attached", "reviewed")
    assert [c["cursor"]["sequence"] for c in r["changes"]] == [1, 2]
    assert (
        r["next_cursor"] == env.cursor(2) and r["high_watermark"] == env.cursor(5) and r["complete"] is False
    )


def test_feed_after_is_exclusive_and_through_is_an_inclusive_fence(env):
    r = env.changes(after=env.cursor(1), through=env.cursor(3))
    assert [c["cursor"]["sequence"] for c in r["changes"]] == [2, 3]
    assert r["high_watermark"] == env.cursor(3) and r["complete"] is True


@pytest.mark.parametrize("limit", [0, 257, -1, "10", 1.5, True])
def test_feed_limit_outside_1_to_256_is_400(env, limit):
    r = env.changes(limit=limit)
    assert r.status == 400 and code(r) == "malformed_bounds"


@pytest.mark.parametrize("query", [[], 0, "", False], ids=repr)
def test_a_feed_query_that_is_not_an_object_is_400_not_the_default(env, query):
    r = env.t.post(CHANGES, {"contract_version": 1, "scope": DEV_SCOPE, "query": query})
    assert r.status == 400 and code(r) == "malformed_request"
    assert env.t.post(CHANGES, {"contract_version": 1, "scope": DEV_SCOPE, "query": None}).status == 200


@pytest.mark.parametrize("limit", [1, 256])
def test_feed_limit_bounds_are_inclusive(env, limit):
    assert len(env.changes(limit=limit)["changes"]) == min(limit, 5)


def test_feed_after_beyond_through_is_400(env):
    r = env.changes(after=env.cursor(4), through=env.cursor(2))
    assert r.status == 400 and code(r) == "malformed_bounds"


def test_feed_catch_up_then_poll(env):
    seen, after, through = [], None, None
    for _ in range(10):
        page = env.changes(after=after, through=through, limit=2)
        seen += [c["cursor"]["sequence"] for c in page["changes"]]
        after = page["next_cursor"]
        if through is None:
            through = page["high_watermark"]
            env.append(2)                                     # later writes: not in this cycle
        if page["complete"]:
            break
    assert seen == [1, 2, 3, 4, 5] and after == env.cursor(5)
    page = env.changes(after=after)                           # clear through: the next polling cycle
    assert [c["cursor"]["sequence"] for c in page["changes"]] == [6, 7] and page["complete"] is True


def test_feed_empty_page_with_complete_true_means_caught_up_not_closed(env):
    page = env.changes(after=env.cursor(5))
    assert page["changes"] == [] and page["complete"] is True
    env.append(1)
    assert [c["cursor"]["sequence"] for c in env.changes(after=page["next_cursor"])["changes"]] == [6]


def test_feed_inactive_journal_has_no_cursor_and_no_watermark(env):
    env.svc.grant("dev", OTHER_SCOPE, ["memory_read"])
    r = env.changes(scope=OTHER_SCOPE)
    assert r.body == {"contract_version": 1, "changes": [], "next_cursor": None, "high_watermark": None,
                      "complete": True}


@pytest.mark.parametrize("cursor", [{"journal_id": "elsewhere", "sequence": 1}, "ahead"])
def test_feed_foreign_or_ahead_cursor_is_409_never_reset_to_zero(env, cursor):
    c = env.cursor(0) | {"sequence": 50} if cursor == "ahead" else cursor
    r = env.changes(after=c)
    assert r.status == 409 and "changes" not in r.body


def test_feed_retry_may_redeliver_and_keeps_no_pagination_session(env):
    a = env.changes(after=env.cursor(1), limit=2)
    b = env.changes(after=env.cursor(1), limit=2)
    assert a.body == b.body


def test_feed_order_is_local_to_one_namespace(env):
    env.svc.grant("dev", OTHER_SCOPE, ["memory_read"])
    env.append(2, scope=OTHER_SCOPE)
    other = env.changes(scope=OTHER_SCOPE)
    assert other["high_watermark"]["sequence"] == 2 and other["high_watermark"]["journal_id"] != env.jid
    assert env.changes(scope=OTHER_SCOPE, after=env.cursor(1)).status == 409


# -- Verified progress in version 2 --------------------------------------------------------------------------
def test_version_1_checkpoints_are_not_silently_promoted_to_verified_progress(env):
    assert env.write(env.cursor(2), 0, "k1").status == 200
    assert env.read(version=2).status == 404
    r = env.write(env.cursor(2, version=2), 0, "k2", version=2)
    assert r.status == 200 and r["receipt"]["checkpoint"]["revision"] == 1
    assert env.read(version=1)["checkpoint"]["revision"] == 1


def test_version_2_compares_revision_plus_digest(env):
    r = env.write(env.cursor(1, version=2), 0, "k1", version=2)
    d1 = r["receipt"]["checkpoint"]["checkpoint_digest"]
    bad = "sha256:" + "0" * 64
    r = env.write(env.cursor(2, version=2), 1, "k2", version=2, expected_digest=bad)
    assert r.status == 409 and code(r) == "digest_conflict"
    assert env.write(env.cursor(2, version=2), 1, "k3", version=2, expected_digest=d1).status == 200


def test_version_2_detects_divergent_writes_when_old_sequence_and_revision_numbers_reappear(env):
    """After a restore, new writes reuse sequence and revision numbers. Version 1 accepts the stale cursor
    and revision; version 2's exact-history cursor and revision-plus-digest comparison refuse them."""
    for v in (1, 2):
        assert env.write(env.cursor(2, v), 0, f"v{v}-a", version=v).status == 200
    backup = env.svc.backup()
    env.append(3, prefix="old")                               # sequences 6-8, then progress at 8
    old = {v: env.write(env.cursor(8, v), 1, f"v{v}-b", version=v,
                        expected_digest=env.read(version=2)["checkpoint"]["checkpoint_digest"] if v == 2
                        else None)
           for v in (1, 2)}
    env.svc.restore(backup)
    env.append(4, prefix="new")                               # divergent sequences 6-9
    for v in (1, 2):                                          # another process writes revision 2 again
        d = env.read(version=v)["checkpoint"]["checkpoint_digest"] if v == 2 else None
        assert env.write(env.cursor(6, v), 1, f"v{v}-c", version=v, expected_digest=d).status == 200
    stale = {v: old[v]["receipt"]["checkpoint"] for v in (1, 2)}
    v1 = env.write(stale[1]["cursor"] | {"sequence": 9}, stale[1]["revision"], "v1-d")
    assert v1.status == 200                                   # version 1 cannot tell
    page = env.changes(after=stale[2]["cursor"], version=2)
    assert page.status == 409 and code(page) == "divergent_history"
    v2 = env.write(stale[2]["cursor"], stale[2]["revision"], "v2-d", version=2,
                   expected_digest=stale[2]["checkpoint_digest"])
    assert v2.status == 409 and code(v2) in ("divergent_history", "digest_conflict")
    fresh = env.changes(after=env.read(version=2)["checkpoint"]["cursor"], version=2)
    assert fresh.status == 200 and [c["record_id"] for c in fresh["changes"]] == ["new1", "new2", "new3"]
