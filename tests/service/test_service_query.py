"""Seed 004, "Read or create progress", its last three sentences before the write example, executed:

    "Use the change feed to obtain the cursor and complete initial reconciliation when
    consuming existing records. During the initial memory query scan, set filter.scan_limit
    independently of filter.limit to bound work even when many candidate records are
    unavailable. An empty query page with next_after still requires continuation."

Every rule test runs against the pure model in process (``model``) and against ``simkit serve`` over a real
HTTP connection (``http``). The dev namespace holds, before its journal, ``archive-1`` (deleted),
``archive-2`` (private to another subject) and ``archive-3``; then the journal's ``note-1``, ``note-2`` and
``summary-1``.
"""
from __future__ import annotations

import json

import pytest
from served import over, shared_server  # noqa: F401 -- the fixture over uses

from simkit.ops import LOST
from simkit.service import DEV_SCOPE, DEV_TENANT, dev_service
from simkit.service.clients import (
    CLIENTS,
    QUERY,
    READ,
    WRITE,
    Apply,
    ApplyRecord,
    Call,
    Client,
    Halt,
    Reconcile,
    StopOnEmptyPage,
    Wait,
)
from simkit.service.http import create_app, running
from simkit.service.sim import SCENARIOS, ServiceWorld, explore_service, run_service_scenario
from simkit.service.transport import HttpTransport, ModelTransport, ReplyLost

CHANGES = "/api/v1/memory/changes"
OTHER_SCOPE = {**DEV_SCOPE, "agent_id": "other-agent"}


class Env:
    def __init__(self, svc, transport, app=None):
        self.svc, self.t, self.app = svc, transport, app

    def use(self, svc):
        """Serve another service from here on."""
        self.svc = svc
        if self.app is None:
            self.t.svc = svc
        else:
            self.app.state.service = svc

    def query(self, after=None, limit=None, scan_limit=None, version=1, scope=DEV_SCOPE, credential="dev"):
        f = {"next_after": after}
        if limit is not None:
            f["limit"] = limit
        if scan_limit is not None:
            f["scan_limit"] = scan_limit
        return self.t.post(QUERY, {"contract_version": version, "scope": scope, "filter": f}, credential)

    def changes(self, after=None, version=1):
        return self.t.post(CHANGES, {"contract_version": version, "scope": DEV_SCOPE,
                                     "query": {"after": after, "through": None, "limit": 256}})

    def scan(self, limit, scan_limit, version=1):
        """Every page of one complete scan."""
        pages, after = [], None
        while True:
            page = self.query(after, limit, scan_limit, version)
            assert page.status == 200, page.body
            pages.append(page)
            if page["next_after"] is None:
                return pages
            after = page["next_after"]


@pytest.fixture(params=["model", "http"])
def env(request):
    svc = dev_service()
    with over(request, svc) as transport:
        app = request.getfixturevalue("shared_server")[0] if request.param == "http" else None
        yield Env(svc, transport, app)


def ids(page):
    return [r["record_id"] for r in page["records"]]


def code(r):
    return r.body["error"]["code"]


# -- scan_limit and the empty page ---------------------------------------------------------------------------
def test_an_empty_page_with_next_after_is_not_the_end_of_the_scan(env):
    first = env.query(limit=2, scan_limit=2)
    assert first.status == 200 and first.headers["cache-control"] == "no-store"
    assert first.body == {"contract_version": 1, "records": [], "scanned": 2, "next_after": "archive-2",
                          "feed_cursor": {"journal_id": env.svc.journal_id(DEV_TENANT, DEV_SCOPE),
                                          "sequence": 5}}
    second = env.query("archive-2", limit=2, scan_limit=2)
    assert ids(second) == ["archive-3", "note-1"] and second["next_after"] == "note-1"
    third = env.query("note-1", limit=2, scan_limit=2)
    assert ids(third) == ["note-2", "summary-1"] and third["next_after"] is None  # now the scan is complete


def test_unavailable_candidates_use_up_scan_limit_and_limit_bounds_what_is_returned(env):
    page = env.query(limit=256, scan_limit=3)
    assert ids(page) == ["archive-3"] and page["scanned"] == 3 and page["next_after"] == "archive-3"
    page = env.query(limit=1, scan_limit=4096)              # limit first: one record after examining three
    assert ids(page) == ["archive-3"] and page["scanned"] == 3 and page["next_after"] == "archive-3"
    page = env.query(limit=256, scan_limit=4096)            # both bounds generous: all of it in one page
    assert ids(page) == ["archive-3", "note-1", "note-2", "summary-1"] and page["next_after"] is None


def test_a_record_is_unavailable_when_deleted_or_private_to_another_subject(env):
    env.svc.mutate(DEV_TENANT, DEV_SCOPE, "created", "mine", author="dev", private_to="dev")
    env.svc.mutate(DEV_TENANT, DEV_SCOPE, "deleted", "note-2")
    assert ids(env.query()) == ["archive-3", "mine", "note-1", "summary-1"]
    env.svc.add_subject("archivist", credentials=["archivist"])
    env.svc.grant("archivist", DEV_SCOPE, ["memory_read"])
    assert ids(env.query(credential="archivist")) == ["archive-2", "archive-3", "note-1", "summary-1"]


def test_records_carry_their_current_revision_kind_and_author(env):
    page = env.query(limit=256)
    note_1 = next(r for r in page["records"] if r["record_id"] == "note-1")
    assert set(note_1) == {"record_id", "record_revision", "kind", "author", "updated_at_millis"}
    assert (note_1["record_revision"], note_1["kind"], note_1["author"]) == (2, "updated", "dev-writer")
    entries = [e for e in env.changes()["changes"] if e["record_id"] == "note-1"]
    assert [e["record_revision"] for e in entries] == [1, 2]         # the journal and the record agree


def test_many_unavailable_candidates_give_several_empty_pages_in_a_row(env):
    env.use(dev_service(records=[(f"gone-{i:02d}", "deleted") for i in range(10)] + [("kept", "visible")]))
    pages = env.scan(limit=5, scan_limit=3)
    assert [ids(p) for p in pages] == [[], [], [], ["kept", "note-1"], ["note-2", "summary-1"]]
    assert [p["scanned"] for p in pages] == [3, 3, 3, 3, 2]
    assert [p["next_after"] for p in pages] == ["gone-02", "gone-05", "gone-08", "note-1", None]


def test_the_feed_cursor_is_the_feeds_high_watermark_at_the_page(env):
    page = env.query(limit=1, scan_limit=1)
    assert page["feed_cursor"] == env.changes()["high_watermark"]
    env.svc.append(DEV_TENANT, DEV_SCOPE, "created", "later")
    assert env.query(page["next_after"])["feed_cursor"]["sequence"] == 6
    v2 = env.query(version=2)
    assert v2["contract_version"] == 2 and v2["feed_cursor"] == env.changes(version=2)["high_watermark"]
    assert "history_digest" in v2["feed_cursor"]


def test_before_the_journal_is_active_the_scan_works_and_there_is_no_cursor_yet(env):
    env.svc.grant("dev", OTHER_SCOPE, ["memory_read"])
    env.svc.import_record(DEV_TENANT, OTHER_SCOPE, "old")
    page = env.query(scope=OTHER_SCOPE)
    assert ids(page) == ["old"] and page["next_after"] is None and page["feed_cursor"] is None


def test_a_query_changes_nothing(env):
    before = env.svc.state_digest()
    env.scan(limit=1, scan_limit=1)
    assert env.svc.state_digest() == before


# -- errors: the seed's table --------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [
    {"limit": 0}, {"limit": 257}, {"limit": "2"}, {"limit": True}, {"limit": 1.5}, {"limit": None},
    {"scan_limit": 0}, {"scan_limit": 4097}, {"scan_limit": "4"}, {"scan_limit": False},
], ids=repr)
def test_bad_limits_are_400_malformed_bounds(env, bad):
    body = {"contract_version": 1, "scope": DEV_SCOPE, "filter": {"limit": 2, "scan_limit": 2, **bad}}
    r = env.t.post(QUERY, body)
    assert r.status == 400 and code(r) == "malformed_bounds" and r.headers["cache-control"] == "no-store"


@pytest.mark.parametrize("body, expected", [
    ({"contract_version": 1, "scope": DEV_SCOPE, "filter": {"next_after": ""}}, "malformed_identity"),
    ({"contract_version": 1, "scope": DEV_SCOPE, "filter": {"next_after": "a\nb"}}, "malformed_identity"),
    ({"contract_version": 1, "scope": DEV_SCOPE, "filter": {"next_after": 7}}, "malformed_identity"),
    ({"contract_version": 1, "scope": DEV_SCOPE, "filter": {"cursor": None}}, "unknown_field"),
    ({"contract_version": 1, "scope": DEV_SCOPE, "filter": {}, "subject": "someone-else"}, "unknown_field"),
    ({"contract_version": 1, "scope": DEV_SCOPE, "filter": []}, "malformed_request"),
    ({"contract_version": 3, "scope": DEV_SCOPE}, "unsupported_contract"),
    ({"contract_version": 1}, "missing_field"),
], ids=lambda x: json.dumps(x)[:60] if isinstance(x, dict) else x)
def test_malformed_queries_are_400(env, body, expected):
    r = env.t.post(QUERY, body)
    assert r.status == 400 and code(r) == expected


def test_filter_is_optional_and_its_defaults_are_documented(env):
    r = env.t.post(QUERY, {"contract_version": 1, "scope": DEV_SCOPE})
    assert r.status == 200 and ids(r) == ["archive-3", "note-1", "note-2", "summary-1"]


@pytest.mark.parametrize("credential, status", [(None, 401), ("nope", 401)])
def test_a_query_needs_a_valid_credential(env, credential, status):
    assert env.query(credential=credential).status == status
    env.svc.revoke("dev")
    assert code(env.query()) == "revoked_credential"


def test_a_query_needs_memory_read_on_the_exact_scope(env):
    env.svc.add_subject("writer-only", credentials=["w"])
    env.svc.grant("writer-only", DEV_SCOPE, ["memory_checkpoint", "memory_write"])
    env.svc.add_subject("near", credentials=["near"])
    env.svc.grant("near", OTHER_SCOPE, ["memory_read"])
    env.svc.add_subject("admin", credentials=["admin"], tenant_admin=True)
    env.svc.grant("admin", DEV_SCOPE, ["tenant_admin"])
    for token in ("w", "near", "admin"):
        r = env.query(credential=token)
        assert r.status == 403 and code(r) == "forbidden", token
    env.svc.add_subject("reader", credentials=["reader"])
    env.svc.grant("reader", DEV_SCOPE, ["memory_read"])
    assert env.query(credential="reader").status == 200  # reading records needs no checkpoint right


# -- why the first page's cursor -----------------------------------------------------------------------------
def test_a_cursor_taken_after_the_scan_misses_a_change(env):
    """The scan is no snapshot: a change behind ``next_after`` during the scan
    is in no later page. The feed read from the first page's cursor delivers
    it; from a cursor taken at the end of the scan nothing ever would."""
    first = env.query(limit=2, scan_limit=2)
    second = env.query(first["next_after"], limit=2, scan_limit=2)       # archive-3, note-1
    env.svc.append(DEV_TENANT, DEV_SCOPE, "updated", "archive-3")        # behind next_after now
    env.svc.append(DEV_TENANT, DEV_SCOPE, "created", "aardvark")         # sorts before every scanned id
    third = env.query(second["next_after"], limit=2, scan_limit=2)
    assert third["next_after"] is None
    scanned = {r["record_id"]: r["record_revision"] for p in (first, second, third) for r in p["records"]}
    assert scanned["archive-3"] == 1 and "aardvark" not in scanned
    from_first = {(e["record_id"], e["record_revision"])
                  for e in env.changes(first["feed_cursor"])["changes"]}
    from_last = env.changes(third["feed_cursor"])["changes"]
    assert from_first == {("archive-3", 2), ("aardvark", 1)} and from_last == []


# -- the clients, over real HTTP -----------------------------------------------------------------------------
def drive(transport, client, lose_write=None):
    """Run a client generator against ``transport`` until it waits (caught up); returns what it applied and
    the checkpoint commands' replies."""
    gen, result, applied, writes = client.run(), None, [], 0
    ledger = set()
    try:
        for _ in range(500):
            op = gen.send(result)
            if type(op) is Call:
                faults = ()
                if op.route == WRITE:
                    writes += 1
                    faults = ("lose-reply",) if writes == lose_write else ()
                try:
                    result = transport.post(op.route, op.body, faults=faults)
                except ReplyLost:
                    result = LOST
            elif type(op) in (Apply, ApplyRecord):
                result = op.identity not in ledger
                if result:
                    applied.append(op.identity)
                ledger.add(op.identity)
            elif type(op) is Wait:
                return applied
            else:
                assert type(op) not in (Halt, Reconcile), op
        raise AssertionError("the client never caught up")
    finally:
        gen.close()


def test_over_http_the_correct_client_scans_past_the_empty_page_and_starts_the_feed_at_the_first_cursor():
    svc = dev_service()
    with running(create_app(svc)) as url:
        t = HttpTransport(url)
        try:
            client = Client(1, "context-cache", dict(DEV_SCOPE), limit=2, initial_scan=True, scan_limit=2)
            applied = drive(t, client, lose_write=1)  # the creating command's reply is lost
            svc.append(DEV_TENANT, DEV_SCOPE, "created", "after-the-scan")
            later = drive(t, Client(1, "context-cache", dict(DEV_SCOPE), limit=2, initial_scan=True,
                                    scan_limit=2))
        finally:
            t.close()
    assert applied == [("record", "archive-3", 1), ("record", "note-1", 2), ("record", "note-2", 2),
                       ("record", "summary-1", 1)]
    jid = svc.journal_id(DEV_TENANT, DEV_SCOPE)
    assert [(w.before, w.after["cursor"]) for w in svc.writes[:1]] == [(None,
                                                                        {"journal_id": jid, "sequence": 5})]
    assert later == [(jid, 6)]  # the reconnect reads the feed, not a scan
    assert [w.after["cursor"]["sequence"] for w in svc.writes] == [5, 6]   # the lost reply committed once


def test_over_http_a_client_that_stops_at_the_empty_page_misses_every_record():
    svc = dev_service()
    with running(create_app(svc)) as url:
        t = HttpTransport(url)
        try:
            applied = drive(t, StopOnEmptyPage(1, "cc", dict(DEV_SCOPE), limit=2, initial_scan=True,
                                               scan_limit=2))
        finally:
            t.close()
    assert applied == []                                                   # nothing: the first page was empty
    assert svc.writes[0].after["cursor"]["sequence"] == 5                  # and it took the same cursor


# -- the simulation and its checker --------------------------------------------------------------------------
def test_the_initial_reconciliation_scenarios_first_page_is_empty_and_continues():
    sc = SCENARIOS["initial_reconciliation"]
    world = ServiceWorld(sc)                                   # set up, not run
    page = ModelTransport(world.svc).post(QUERY, {"contract_version": 1, "scope": DEV_SCOPE,
                                                  "filter": {"limit": sc.limit, "scan_limit": sc.scan_limit}})
    assert page["records"] == [] and page["scanned"] == 4 and page["next_after"] == "mem-03"
    assert page["feed_cursor"]["sequence"] == sc.initial_changes
    run = run_service_scenario(sc, "correct")
    assert [c[2] for c in run.world.calls[:3]] == [READ, QUERY, QUERY]    # 404, then the scan goes on


def test_the_correct_client_reconciles_every_existing_record_and_the_checker_says_ok():
    run = run_service_scenario("initial_reconciliation", "correct")
    assert run.verdict.ok and run.verdict.missed == [], run.as_dict()
    visible = {f"mem-{i:02d}" for i, c in enumerate(SCENARIOS["initial_reconciliation"].existing_records)
               if c == "v"}
    assert visible <= {rid for _t, _w, rid, _rev in run.world.record_effects}


def test_a_client_that_stops_at_the_first_empty_page_misses_records_and_the_checker_says_so():
    run = run_service_scenario("initial_reconciliation", "stop_on_empty_page")
    v = run.verdict
    assert not v.ok and run.as_dict()["missed"] == v.missed
    assert v.missed == ["mem-04", "mem-05", "mem-07", "mem-10", "mem-16", "mem-18", "mem-19", "mem-21",
                        "mem-22", "note-0", "note-1", "note-2", "note-3"]
    assert v.lost == [] and v.completed                 # the feed part is fine; what it never scanned is not
    assert run.world.record_effects == []


@pytest.mark.parametrize("version", [1, 2])
def test_the_correct_client_reconciles_in_every_schedule_of_a_crash_and_a_lost_reply(version):
    runs = list(explore_service("initial_reconciliation", "correct", version, max_crashes=1, lost_replies=1,
                                horizon=3))
    assert len(runs) == 40 and [r.world.sc for r in runs if not r.verdict.ok] == []
    assert sum(r.world.crashes for r in runs) == 36


def test_missed_is_judged_only_where_the_consumer_must_scan():
    for name in ("checkpoint_service", "restore_from_backup", "restore_reused_numbers"):
        assert not SCENARIOS[name].initial_scan
        for client in ("correct", "reset_on_409"):
            assert run_service_scenario(name, client).verdict.missed == []
    assert "stop_on_empty_page" in CLIENTS
