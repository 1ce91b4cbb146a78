"""Consumers of the seed 004 service: one that uses it correctly, and three that do not.

Like :class:`simkit.Consumer`, a client does no I/O: :meth:`Client.run` is a generator that yields requests
(:class:`Call`, :class:`Apply`, :class:`ApplyRecord`, :class:`Reconcile`, :class:`Wait`, :class:`Halt`) and
receives their results, so a driver can lose replies, crash it anywhere, or point it at ``simkit serve``.

The correct client follows seed 004 "Retry and reconnect correctly", steps 1-5:

1. read the current checkpoint. 404: *"follow the feed's initial reconciliation procedure and start from the
   appropriate cursor"* (:meth:`Client.initial_reconciliation`): with ``initial_scan`` (a consumer of existing
   records, some of which its journal may not describe), scan them with the memory query until ``next_after``
   is null, empty pages included, keeping the ``feed_cursor`` of the first page, and create the checkpoint
   there; without it (a consumer of changes only, or a namespace whose journal holds its whole history, as in
   the older scenarios), start from the feed's beginning;
2. read the next page with its cursor as the exclusive ``after``, keeping a ``through`` fence per cycle;
3. apply each entry idempotently by its delivery identity before acknowledging the page;
4. save ``next_cursor`` with the current revision and a new idempotency key; on a lost reply, retry the
   identical command with the same key;
5. on a revision conflict, reread current progress and reconcile; never overwrite newer progress.

And "Recovery and limits": a cursor ahead of the restored journal, foreign to it, or (version 2) from a
history it does not have returns 409; the client reconciles explicitly (:class:`Reconcile` records which
effects the server no longer backs) and restarts from the server's checkpoint. It never resets silently.
*"Restoring an older backup can put the server behind external consumer effects"* with no cursor ahead: a
client that crashed after applying a page and before saving it finds its restored checkpoint consistent, and
only its ledger knows. In version 2 the feed then serves, at a ``(journal_id, sequence)`` the ledger holds,
an entry of another history (:data:`DIVERGED`): the client reconciles there too (it left those effects
unreported, ``unreconciled``).

The wrong clients override one decision each:

- :class:`NewKeyRetry` retries a lost write as a *new* command: reread the revision, resend with a new key;
- :class:`ResetOn409` answers any 409 by jumping to the feed's current high watermark;
- :class:`StopOnEmptyPage` ends the initial scan at the first empty query page (seed 004: *"An empty query
  page with next_after still requires continuation"*).
"""
from __future__ import annotations

from dataclasses import dataclass

from simkit.ops import LOST, Halt, Wait

__all__ = [
    "CHANGES", "CLIENTS", "DIVERGED", "HISTORY_CONFLICTS", "QUERY", "READ", "WRITE", "Apply", "ApplyRecord",
    "Call", "Client", "NewKeyRetry", "Reconcile", "ResetOn409", "State", "StopOnEmptyPage",
]

CHANGES, READ, WRITE = (
    "/api/v1/memory/changes",
    "/api/v1/memory/checkpoints/read",
    "/api/v1/memory/checkpoints",
)
QUERY = "/api/v1/memory/query"
#: 409 codes that mean "the server does not have the history this cursor came from": reconcile explicitly.
HISTORY_CONFLICTS = ("cursor_ahead", "foreign_cursor", "divergent_history", "journal_switch",
                     "journal_not_active")


@dataclass(frozen=True, slots=True)
class Call:
    """Send one request. Result: a :class:`~simkit.service.transport.Response`, or ``LOST``."""
    route: str
    body: dict


#: :class:`Apply`'s result when the durable ledger holds an effect at the entry's ``(journal_id, sequence)``
#: from another history (version 2): the server was restored behind that effect, and nothing ran.
DIVERGED = "diverged"


@dataclass(frozen=True, slots=True)
class Apply:
    """Apply an entry's external effect unless the durable ledger already holds ``identity``.
    Result: ``True`` if it ran now, ``False`` if the ledger proved it done, :data:`DIVERGED` if the ledger
    holds an effect of the entry's ``(journal_id, sequence)`` under another identity (another history)."""
    identity: tuple
    entry: dict


@dataclass(frozen=True, slots=True)
class ApplyRecord:
    """Apply an existing record's current state, found by the initial scan, unless the durable ledger already
    holds ``identity`` (``("record", record_id, record_revision)``). Result: ``True`` if it ran now."""
    identity: tuple
    record: dict


@dataclass(frozen=True, slots=True)
class Reconcile:
    """Explicit reconciliation after a restore: every ledger entry beyond ``keep`` (the server's checkpoint
    cursor) whose entry the server's journal no longer has (``have``: sequence -> change digest, read from the
    feed, by (journal_id, sequence)) is reported as an effect the server no longer backs, and dropped from the
    ledger so that re-used sequence numbers apply again. Entries the restored journal still has stay done.
    Result: those reported."""
    keep: dict | None
    have: dict
    reason: str


@dataclass(frozen=True, slots=True)
class State:
    """Progress as last read or acknowledged: cursor (``None``: never created), revision and digest."""
    cursor: dict | None
    revision: int
    digest: str | None


class Client:
    """The correct consumer of seed 004 (``correct``)."""

    name = "correct"

    def __init__(self, worker: int, consumer_id: str, scope: dict, version: int = 1, limit: int = 4,
                 incarnation: int = 0, credential: str = "dev", initial_scan: bool = False,
                 scan_limit: int = 16):
        self.worker, self.consumer_id, self.scope, self.version = worker, consumer_id, scope, version
        self.limit, self.incarnation, self.credential = limit, incarnation, credential
        self.initial_scan, self.scan_limit = initial_scan, scan_limit
        self._keys = 0

    # -- the procedure ---------------------------------------------------------------------------------------
    def run(self):
        while True:
            state = yield from self.load()
            if state.cursor is None and self.initial_scan:
                state = yield from self.initial_reconciliation()
                if state is None:
                    continue
            yield from self.consume(state)

    def initial_reconciliation(self):
        """Step 1 without a checkpoint, for a consumer of existing records (seed 004, "Read or create
        progress"): *"Use the change feed to obtain the cursor and complete initial reconciliation when
        consuming existing records."*

        Scan with the memory query, ``scan_limit`` set apart from ``limit``, applying each record found, until
        ``next_after`` is null: *"An empty query page with next_after still requires continuation."* The
        cursor is the first page's ``feed_cursor``, the feed's high watermark before any record was read, so
        every change committed during the scan is after it and the feed delivers it, even one to a record the
        scan had already passed (a cursor from the end of the scan would skip that change;
        :mod:`simkit.service.memory`). Then the checkpoint is created at that cursor (``expected_revision``
        0), which makes the reconciliation durable, and the feed is read from it. Returns the new state, or
        ``None`` to start again from :meth:`load`.
        """
        cursor, after, first = None, None, True
        while True:
            page = yield from self.call(QUERY, {"contract_version": self.version, "scope": self.scope,
                                                "filter": {"limit": self.limit, "scan_limit": self.scan_limit,
                                                           "next_after": after}})
            if page.status != 200:
                yield Halt(f"memory query returned {page.status}: {page.body}")
            if first:
                cursor, first = page["feed_cursor"], False
            for record in page["records"]:
                yield ApplyRecord(("record", record["record_id"], record["record_revision"]), record)
            if self.scan_complete(page):
                break
            after = page["next_after"]
        if cursor is None:
            yield Wait("journal not active")                  # no cursor to start from yet: scan again later
            return None
        return (yield from self.save(State(None, 0, None), cursor))

    def scan_complete(self, page) -> bool:
        """The scan is complete when ``next_after`` is null, whatever the page holds."""
        return page["next_after"] is None

    def load(self):
        """Step 1: read the current checkpoint."""
        r = yield from self.call(READ, {"contract_version": self.version, "scope": self.scope,
                                        "consumer_id": self.consumer_id})
        if r.status == 404:
            return State(None, 0, None)
        if r.status != 200:
            yield Halt(f"checkpoint read returned {r.status}: {r.body}")
        cp = r["checkpoint"]
        return State(cp["cursor"], cp["revision"], cp["checkpoint_digest"])

    def consume(self, state: State):
        """Steps 2-4, page after page, until a conflict sends us back to :meth:`load`."""
        after, through = state.cursor, None
        while True:
            page = yield from self.call(
                CHANGES,
                {
                    "contract_version": self.version,
                    "scope": self.scope,
                    "query": {"after": after, "through": through, "limit": self.limit},
                },
            )
            if page.status == 409:
                yield from self.on_feed_conflict(page)
                return
            if page.status != 200:
                yield Halt(f"feed returned {page.status}: {page.body}")
            nxt = page["next_cursor"]
            if nxt is None:
                yield Wait("journal not active")
                continue
            if through is None:
                through = page["high_watermark"]
            for entry in page["changes"]:
                if (yield Apply(self.identity(entry), entry)) == DIVERGED:
                    yield from self.reconcile("divergent_history")
                    return
            if state.cursor is None or nxt["sequence"] > state.cursor["sequence"]:
                state = yield from self.save(state, nxt)
                if state is None:
                    return
                assert state.cursor is not None           # a saved checkpoint always has its cursor
                if state.cursor["sequence"] > nxt["sequence"]:
                    through = None                        # adopted newer progress beyond this cycle's fence
            after = state.cursor
            if page["complete"] or through is None:
                through = None
                if not page["changes"]:
                    yield Wait("caught_up")

    def save(self, state: State, nxt: dict):
        """Step 4 and 5: save ``nxt``; returns the new state, or ``None`` to restart from :meth:`load`."""
        key, expected, digest = self.new_key(), state.revision, state.digest
        while True:
            r = yield Call(WRITE, self.command(nxt, expected, key, digest))
            if r is LOST:
                r = yield from self.on_lost_write(nxt, expected, key, digest)
                if isinstance(r, tuple):                   # a client that chose to send another command
                    expected, key, digest = r
                    continue
                if r is None:
                    return None
            if r.status == 200:
                cp = r["receipt"]["checkpoint"]
                return State(cp["cursor"], cp["revision"], cp["checkpoint_digest"])
            if r.status != 409:
                yield Halt(f"checkpoint write returned {r.status}: {r.body}")
            outcome = yield from self.on_write_conflict(r, nxt)
            if outcome is None or isinstance(outcome, State):
                return outcome
            expected, digest = outcome
            key = self.new_key()

    # -- decisions (the wrong clients override one each) -----------------------------------------------------
    def on_lost_write(self, nxt, expected, key, digest):
        """Step 4: a lost reply is retried as the identical command, same key, until a reply comes."""
        while True:
            r = yield Call(WRITE, self.command(nxt, expected, key, digest))
            if r is not LOST:
                return r

    def on_write_conflict(self, r, nxt):
        """Step 5: reread current progress. Newer progress is adopted, never
        overwritten; older progress in the same journal is advanced with the
        fresh revision as a new command; a history conflict is reconciled."""
        if r.body["error"]["code"] in HISTORY_CONFLICTS:
            yield from self.reconcile(r.body["error"]["code"])
            return None
        cur = yield from self.load()
        if cur.cursor is not None and cur.cursor["journal_id"] == nxt["journal_id"] \
                and cur.cursor["sequence"] >= nxt["sequence"]:
            return cur
        return cur.revision, cur.digest

    def on_feed_conflict(self, r):
        """Recovery and limits: our cursor is ahead of, or foreign to, the server's journal."""
        yield from self.reconcile(r.body["error"]["code"])

    def reconcile(self, reason: str):
        """Reread the server's progress, read what its journal holds after it, and reconcile our effects."""
        cur = yield from self.load()
        have: dict[tuple, str] = {}
        after = cur.cursor
        while True:
            page = yield from self.call(CHANGES, {"contract_version": self.version, "scope": self.scope,
                                                  "query": {"after": after, "through": None, "limit": 256}})
            if page.status != 200:
                yield Halt(f"feed returned {page.status} while reconciling: {page.body}")
            have.update(((e["cursor"]["journal_id"], e["cursor"]["sequence"]), e["change_digest"])
                        for e in page["changes"])
            if page["complete"] or page["next_cursor"] is None:
                break
            after = page["next_cursor"]
        yield Reconcile(cur.cursor, have, reason)

    # -- helpers ---------------------------------------------------------------------------------------------
    def call(self, route: str, body: dict):
        """Reads are safe to retry as they are."""
        while True:
            r = yield Call(route, body)
            if r is not LOST:
                return r

    def identity(self, entry: dict) -> tuple:
        """Step 3: the delivery identity, ``(journal_id, sequence)``; version 2 adds the exact history."""
        c = entry["cursor"]
        return (c["journal_id"], c["sequence"]) + ((c["history_digest"],) if self.version == 2 else ())

    def new_key(self) -> str:
        self._keys += 1
        return f"{self.consumer_id}-w{self.worker}-i{self.incarnation}-{self._keys}"

    def command(self, cursor, expected, key, digest) -> dict:
        cmd = {"contract_version": self.version, "idempotency_key": key, "consumer_id": self.consumer_id,
               "expected_revision": expected, "cursor": cursor}
        if self.version == 2:
            cmd["expected_digest"] = digest if expected else None
        return {"scope": self.scope, "command": cmd}


class NewKeyRetry(Client):
    """Wrong: retries a lost write as a new command (reread the revision, resend with a new key)."""

    name = "new_key_retry"

    def on_lost_write(self, nxt, expected, key, digest):
        cur = yield from self.load()
        return cur.revision, self.new_key(), cur.digest


class ResetOn409(Client):
    """Wrong: answers any 409 by resetting its cursor to the feed's current high watermark."""

    name = "reset_on_409"

    def on_write_conflict(self, r, nxt):
        return (yield from self._reset())

    def on_feed_conflict(self, r):
        yield from self._reset()

    def _reset(self):
        head = yield from self.call(CHANGES, {"contract_version": self.version, "scope": self.scope,
                                              "query": {"after": None, "through": None, "limit": 1}})
        cur = yield from self.load()
        target = head["high_watermark"]
        while True:
            r = yield from self.call(WRITE, self.command(target, cur.revision, self.new_key(), cur.digest))
            if r.status == 200:
                cp = r["receipt"]["checkpoint"]
                return State(cp["cursor"], cp["revision"], cp["checkpoint_digest"])
            cur = yield from self.load()
            if cur.cursor is not None and cur.cursor["sequence"] >= target["sequence"]:
                return cur


class StopOnEmptyPage(Client):
    """Wrong: ends the initial scan at the first empty page, as if emptiness were the end (seed 000, step 7:
    "Do not equate emptiness with end of stream"), and starts the feed from there. Records after the deleted
    and private ones it stopped at, and never changed since, are never delivered by anything."""

    name = "stop_on_empty_page"

    def scan_complete(self, page) -> bool:
        return not page["records"] or page["next_after"] is None


CLIENTS = {cls.name: cls for cls in (Client, NewKeyRetry, ResetOn409, StopOnEmptyPage)}
