"""What notebook 07 (the checkpoint service of seed 004) calls: the seed's requests as a client of
the in-process service, and the tables it shows of simulated runs, so that the notebook only asks
its questions and shows results.

A cursor is shown as ``journal:sequence`` with the journal_id cut to its last four digits, as the
service's checker names entries (:class:`simkit.service.verdict.Entry`); verdict lists are read
through :meth:`~simkit.service.verdict.ServiceVerdict.entries`, never by splitting their names."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import pandas as pd

from ..service import DEV_SCOPE, DEV_TENANT, CheckpointService, ManualClock, dev_service
from ..service.clients import CHANGES, QUERY, READ, WRITE
from ..service.sim import ServiceRun
from ..service.transport import ModelTransport, ReplyLost
from ..service.verdict import Entry

__all__ = [
    "CONSUMER", "ROUTE", "SECTION_1", "FeedClient", "Service", "acknowledged_before_applied",
    "checkpoint_writes", "crash_and_retry", "entry_spans", "reconciliations", "reply_outcome", "requests_of",
    "scan", "service_before", "short", "verdict_table",
]

#: the consumer_id of every request the notebook sends
CONSUMER = "context-cache"
#: a route as the tables show it
ROUTE = {CHANGES: "changes", READ: "checkpoints/read", WRITE: "checkpoints"}


def short(cursor: dict | None) -> str:
    """A cursor for display: the last four digits of its journal_id, and its sequence (``-`` for
    none)."""
    return "-" if cursor is None else str(Entry.of(cursor["journal_id"], cursor["sequence"]))


class FeedClient:
    """Seed 004's request bodies, sent through ``transport`` (a
    :class:`~simkit.service.transport.ModelTransport`, which speaks the routes and JSON bodies an
    HTTP client sends to ``simkit serve``)."""

    def __init__(self, transport: ModelTransport):
        self.transport = transport

    def changes(self, after=None, through=None, limit=2, version=1):
        """POST /api/v1/memory/changes."""
        return self.transport.post(
            CHANGES,
            {
                "contract_version": version,
                "scope": DEV_SCOPE,
                "query": {"after": after, "through": through, "limit": limit},
            },
        )

    def read(self, version=1):
        """POST /api/v1/memory/checkpoints/read."""
        return self.transport.post(
            READ, {"contract_version": version, "scope": DEV_SCOPE, "consumer_id": CONSUMER}
        )

    @staticmethod
    def command(key, expected_revision, cursor, version=1, expected_digest=None) -> dict:
        """The body of POST /api/v1/memory/checkpoints; version 2 commands also carry the expected
        checkpoint_digest."""
        cmd = {
            "contract_version": version,
            "idempotency_key": key,
            "consumer_id": CONSUMER,
            "expected_revision": expected_revision,
            "cursor": cursor,
        }
        if version == 2:
            cmd["expected_digest"] = expected_digest
        return {"scope": DEV_SCOPE, "command": cmd}

    def save(self, key, expected_revision, cursor, version=1, expected_digest=None, faults=()):
        """POST /api/v1/memory/checkpoints with :meth:`command`'s body; ``faults`` as the transport
        takes them."""
        return self.transport.post(
            WRITE,
            self.command(key, expected_revision, cursor, version, expected_digest),
            faults=faults,
        )

    def query(self, next_after=None, limit=2, scan_limit=2):
        """POST /api/v1/memory/query."""
        return self.transport.post(
            QUERY,
            {
                "contract_version": 1,
                "scope": DEV_SCOPE,
                "filter": {"limit": limit, "scan_limit": scan_limit, "next_after": next_after},
            },
        )


class Service(NamedTuple):
    """Notebook 07's service at one point of its story: its manual clock, the model, and a client of it."""

    clock: ManualClock
    svc: CheckpointService
    api: FeedClient

    def digest(self) -> tuple[int, str, int]:
        """What the story did to the service: the clock's time, the digest of everything stored, and how
        many commands committed."""
        return self.clock.now_millis, self.svc.state_digest(), len(self.svc.writes)


def _cursor(svc: CheckpointService, sequence: int) -> dict:
    return {"journal_id": svc.journal_id(DEV_TENANT, DEV_SCOPE), "sequence": sequence}


def _paging(clock, svc, api) -> None:
    """1a: a writer commits change 6 after the first page (the feed reads change nothing)."""
    clock.advance(1_000)
    svc.append(DEV_TENANT, DEV_SCOPE, "created", "note-3", author="writer")


def _create(clock, svc, api) -> None:
    """1b: the first page's cursor saved, creating the checkpoint (the 404 and the 400 change nothing)."""
    clock.advance(1_000)
    api.save("page-1", 0, _cursor(svc, 2))


def _lost_reply(clock, svc, api) -> None:
    """1c: page 2's cursor saved, the reply lost after the commit, the identical command retried."""
    clock.advance(1_000)
    try:
        api.save("page-2", 1, _cursor(svc, 4), faults=("lose-reply",))
    except ReplyLost:
        pass
    clock.advance(1_000)
    api.save("page-2", 1, _cursor(svc, 4))


def _late_retry(clock, svc, api) -> None:
    """1c: page 3's cursor saved, then page 1's command retried (answered from its receipt)."""
    clock.advance(1_000)
    api.save("page-3", 2, _cursor(svc, 5))
    api.save("page-1", 0, _cursor(svc, 2))


def _resave(clock, svc, api) -> None:
    """1d: the five refused commands change nothing; page 3's cursor saved again under a new key."""
    clock.advance(1_000)
    api.save("page-3-again", 3, _cursor(svc, 5))


_STEPS = {"1a": _paging, "1b": _create, "1c": _lost_reply, "1c late": _late_retry, "1d": _resave}
#: The steps of notebook 07 whose cells change the service, in order (``"4a"`` starts from all of section 1).
SECTION_1 = (*_STEPS, "4a")


def service_before(step: str) -> Service:
    """A fresh ``dev_service`` on a manual clock at 0, with what notebook 07's cells before ``step`` (one
    of :data:`SECTION_1`; ``"4a"``: all of section 1) did to it done again. A cell that changes the service
    starts from it, so that run twice, or after the cells below it, it shows what it showed the first time
    (the notebooks' promise: every cell safe to re-run); the proof cells under them check that the cells
    above did exactly this."""
    if step not in SECTION_1:
        raise ValueError(f"step {step!r}: not one of {', '.join(map(repr, SECTION_1))}")
    clock = ManualClock()
    svc = dev_service(clock)
    api = FeedClient(ModelTransport(svc))
    for name, done in _STEPS.items():
        if name == step:
            break
        done(clock, svc, api)
    return Service(clock, svc, api)


def scan(client: FeedClient, limit=2, scan_limit=2) -> pd.DataFrame:
    """The whole initial scan, page by page until ``next_after`` is null: what each page sent,
    returned and examined, and its ``feed_cursor``."""
    pages, after = [], None
    while True:
        page = client.query(after, limit, scan_limit)
        pages.append(
            {
                "next_after sent": after or "-",
                "records": [r["record_id"] for r in page["records"]],
                "scanned": page["scanned"],
                "next_after": page["next_after"] or "null (complete)",
                "feed_cursor": short(page["feed_cursor"]),
            }
        )
        if page["next_after"] is None:
            return pd.DataFrame(pages, index=pd.RangeIndex(1, len(pages) + 1, name="page"))
        after = page["next_after"]


def reply_outcome(reply) -> str:
    """One reply in a few words: an error's status and code, a checkpoint read, a saved receipt or a
    feed page."""
    if reply.status != 200:
        return f"{reply.status} {reply['error']['code']}"
    if "checkpoint" in reply.body:
        cp = reply["checkpoint"]
        return f"200 checkpoint at {cp['cursor']['sequence']}, rev {cp['revision']}"
    if "receipt" in reply.body:
        return f"200 saved: rev {reply['receipt']['checkpoint']['revision']}"
    sequences = [c["cursor"]["sequence"] for c in reply["changes"]]
    return f"200 page {sequences}, complete={reply['complete']}"


def entry_spans(entries: Iterable[Entry]) -> str:
    """Entries as one string, consecutive sequences of one journal joined: ``0001:10–11, 0001:14``
    (``-`` for none)."""
    spans: list[list] = []
    for e in entries:
        if spans and spans[-1][0] == e.journal and spans[-1][2] == e.sequence - 1:
            spans[-1][2] = e.sequence
        else:
            spans.append([e.journal, e.sequence, e.sequence])
    return ", ".join(f"{j}:{a}" if a == b else f"{j}:{a}–{b}" for j, a, b in spans) or "-"


def verdict_table(runs: Iterable[ServiceRun]) -> pd.DataFrame:
    """One row per run, indexed by (client, version): the checker's verdict from ground truth, and
    the final checkpoint."""
    rows = []
    for r in runs:
        d, v = r.as_dict(), r.verdict
        cp = d["final_checkpoint"]
        rows.append(
            {
                "client": r.client,
                "version": r.version,
                "ok": d["ok"],
                "lost": entry_spans(v.entries("lost")),
                "duplicated": entry_spans(v.entries("duplicated")),
                "dup acks": d["duplicate_acks"],
                "regressions": d["regressions"],
                "unreconciled": entry_spans(v.entries("unreconciled")),
                "409s": d["conflicts"],
                "reconciled": d["reconciliations"],
                "final checkpoint": f"{short(cp['cursor'])} rev {cp['revision']}",
                "effects": d["effects"],
            }
        )
    return pd.DataFrame(rows).set_index(["client", "version"])


def requests_of(run: ServiceRun, worker=1, until=14.0) -> pd.DataFrame:
    """One worker's requests from the transport log up to ``until``: route, status, and the command
    it committed (if any), indexed by time."""
    rows = []
    for time, w, route, status, done in run.world.calls:
        if w == worker and time <= until:
            revision = (
                f"{done.before['revision'] if done.before else '-'} → {done.after['revision']}"
                if done
                else "-"
            )
            rows.append(
                {
                    "time": time,
                    "route": ROUTE[route],
                    "status": status,
                    "committed key": done.idempotency_key if done else "-",
                    "revision": revision,
                    "cursor": short(done.after["cursor"]) if done else "-",
                }
            )
    return pd.DataFrame(rows).set_index("time")


def checkpoint_writes(run: ServiceRun, worker=2, since=13.0, until=18.0) -> list[tuple]:
    """One worker's checkpoint writes between ``since`` and ``until``: time, status, and (revision
    before, after, cursor sequence) of what committed, or None."""
    return [
        (
            t,
            status,
            done
            and (done.before["revision"], done.after["revision"], done.after["cursor"]["sequence"]),
        )
        for t, w, route, status, done in run.world.calls
        if w == worker and route == WRITE and since <= t <= until
    ]


def acknowledged_before_applied(run: ServiceRun) -> list[tuple[float, int]]:
    """(time, sequence) of committed commands whose cursor covers an entry with no effect applied by
    then (seed 004, step 3)."""
    first_effect: dict[int, float] = {}
    for time, _worker, _journal, seq, _digest in run.world.effects:
        first_effect.setdefault(seq, time)
    return [
        (w.millis / 1000, w.after["cursor"]["sequence"])
        for w in run.world.svc.writes
        if any(
            first_effect.get(s, float("inf")) > w.millis / 1000
            for s in range(1, w.after["cursor"]["sequence"] + 1)
        )
    ]


def reconciliations(run: ServiceRun) -> pd.DataFrame:
    """Every explicit reconciliation: the effects it reported as no longer backed by the server's
    journal."""
    return pd.DataFrame(
        [
            {
                "time": t,
                "worker": w,
                "reason": reason,
                "entry": str(Entry.of(j, s)),
                "change_digest": d[:19] + "…",
            }
            for t, w, reason, items in run.world.reconciled
            for j, s, d in items
        ]
    )


def crash_and_retry(store: str) -> tuple[int, dict]:
    """Seed 004 section 5's batch, by hand on a fresh ``dev_service`` with ``store``: save sequence
    2 (``page-1``), then sequence 4 (``page-2``) with the server crashing mid-write, retry
    ``page-2`` identically and read the checkpoint. Returns the first save's status and a row: the
    retry's answer, the read, whether page-2's receipt is stored."""
    s = dev_service(ManualClock(), store=store)
    client = FeedClient(ModelTransport(s))
    journal_id = s.journal_id(DEV_TENANT, DEV_SCOPE)

    def cursor(seq):
        return {"journal_id": journal_id, "sequence": seq}

    first = client.save("page-1", 0, cursor(2)).status
    try:
        client.save("page-2", 1, cursor(4), faults=("crash-mid-write",))
    except ReplyLost:
        pass
    retry = client.save("page-2", 1, cursor(4))
    cp = client.read()["checkpoint"]
    answer = (
        f"receipt: rev {retry['receipt']['checkpoint']['revision']}, "
        f"seq {retry['receipt']['checkpoint']['cursor']['sequence']}"
        if retry.status == 200
        else retry["error"]["code"]
    )
    return first, {
        "identical retry of page-2": f"{retry.status} {answer}",
        "checkpoint read afterwards": f"rev {cp['revision']}, seq {cp['cursor']['sequence']}",
        "page-2 receipt stored": any(k[2] == "page-2" for k in s.receipts),
    }
