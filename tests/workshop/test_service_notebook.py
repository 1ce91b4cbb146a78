"""What notebook 07 calls (``simkit.workshop.service``): seed 004's request bodies sent in process,
and the tables of simulated runs, each checked here so that the notebook only shows them."""

from __future__ import annotations

from simkit.service import STORES, ManualClock, dev_service, run_service_scenario
from simkit.service.transport import ModelTransport
from simkit.service.verdict import Entry
from simkit.workshop.service import (
    CONSUMER,
    FeedClient,
    acknowledged_before_applied,
    checkpoint_writes,
    crash_and_retry,
    entry_spans,
    reconciliations,
    reply_outcome,
    requests_of,
    scan,
    short,
    verdict_table,
)


def client():
    return FeedClient(ModelTransport(dev_service(ManualClock())))


def test_short_shows_a_cursor_as_the_checker_names_its_entry():
    assert short(None) == "-"
    assert short({"journal_id": "00000000-0000-4000-8000-000000000001", "sequence": 4}) == "0001:4"


def test_the_feed_client_pages_reads_and_saves_with_the_seeds_bodies():
    api = client()
    page = api.changes(limit=2)
    assert [c["cursor"]["sequence"] for c in page["changes"]] == [1, 2] and not page["complete"]
    assert api.read().status == 404
    body = FeedClient.command("k", 0, page["next_cursor"])
    assert body["command"]["consumer_id"] == CONSUMER and "expected_digest" not in body["command"]
    assert (
        "expected_digest"
        in FeedClient.command("k", 0, page["next_cursor"], version=2, expected_digest="d")[
            "command"
        ]
    )
    saved = api.save("k", 0, page["next_cursor"])
    assert reply_outcome(saved) == "200 saved: rev 1"
    assert reply_outcome(api.read()) == "200 checkpoint at 2, rev 1"
    assert (
        reply_outcome(api.save("k", 0, {**page["next_cursor"], "sequence": 3}))
        == "409 idempotency_conflict"
    )
    assert (
        reply_outcome(api.changes(page["next_cursor"], limit=2))
        == "200 page [3, 4], complete=False"
    )


def test_scan_reads_past_an_empty_page_until_next_after_is_null():
    table = scan(client())
    assert table.records.tolist() == [[], ["archive-3", "note-1"], ["note-2", "summary-1"]]
    assert table.next_after.iloc[-1] == "null (complete)" and table.index.name == "page"


def test_entry_spans_join_consecutive_sequences_of_one_journal():
    assert entry_spans([]) == "-"
    es = [
        Entry("0001", 10),
        Entry("0001", 11),
        Entry("0001", 12),
        Entry("0001", 14),
        Entry("0002", 15),
    ]
    assert entry_spans(es) == "0001:10–12, 0001:14, 0002:15"


def test_the_verdict_table_reads_the_verdict_from_its_entries():
    runs = [run_service_scenario("restore_from_backup", c) for c in ("correct", "reset_on_409")]
    table = verdict_table(runs)
    assert table.index.names == ["client", "version"]
    assert table.loc[("correct", 1)].ok and table.loc[("correct", 1)].lost == "-"
    row = table.loc[("reset_on_409", 1)]
    assert not row.ok and row.lost == row.unreconciled == "0001:10–13"
    assert reconciliations(runs[0]).entry.tolist() == ["0001:10", "0001:11", "0001:12", "0001:13"]


def test_the_transport_log_tables_of_a_lost_write_reply():
    run = run_service_scenario("checkpoint_service", "correct")
    rows = requests_of(run).loc[8.0:13.0, ["route", "status", "committed key", "cursor"]]
    assert [tuple(x) for x in rows.values] == [
        ("checkpoints", "lost", "context-cache-w1-i0-2", "0001:6"),
        ("checkpoints", 200, "-", "-"),
        ("changes", 200, "-", "-"),
    ]
    assert checkpoint_writes(run, worker=2) == [(13.5, "lost", (2, 3, 9)), (17.5, 200, None)]
    assert acknowledged_before_applied(run) == []
    assert acknowledged_before_applied(run_service_scenario("checkpoint_service", "reset_on_409"))[
        0
    ] == (22.5, 17)


def test_crash_and_retry_shows_what_each_store_keeps_of_a_write_the_server_died_in():
    rows = {store: crash_and_retry(store) for store in STORES}
    assert {store: first for store, (first, _row) in rows.items()} == dict.fromkeys(STORES, 200)
    assert list(rows["batched"][1].values()) == ["200 receipt: rev 2, seq 4", "rev 2, seq 4", True]
    assert list(rows["split"][1].values()) == ["409 revision_conflict", "rev 2, seq 4", False]
