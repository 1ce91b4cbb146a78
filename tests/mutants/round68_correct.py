"""Round 68's correct consumers (a fresh tester): ``Scratch`` is seed 000's procedure written again from the
seed and docs/protocol.md (its own ``run``, none of ``safe``'s steps), and each other class a variant of it
with a docstring arguing from the seeds why it is correct. Every one passed ``simkit audit`` on its default
run (60 s budget); the seven that passed all 250 cases are in ``roster.CORRECT``. A lease variant that claimed
each page before fetching it (a version-raising swap) was left out: with three or more workers the claims
fence each other for ever (``three_workers``: incomplete), which the audit rightly reports. The consumers over
the wire are in ``tests/exec/consumers/round68/``."""

from simkit import Consumer
from simkit.model import COMMITTED, TIMEOUT
from simkit.ops import (
    LOST,
    Barrier,
    Call,
    Commit,
    Fetch,
    Halt,
    Handle,
    Load,
    Lookup,
    Reserve,
    Settle,
    Skip,
    Wait,
)

__all__ = ["Scratch", "NoSkipNotes", "FetchRetries", "RecheckReceipt", "ReloadBeforeCommit", "HoldPrefix",
           "DecideThenCommit", "DoubleFetch", "CallAgain", "ConfirmBarrier", "Cautious", "NoSettleTimeout",
           "ResolveLost", "Chunked", "RefusedRetry", "ClaimStuck", "RecordHold", "HandleTwice", "ReadAhead",
           "StrictMemory", "TwoStepBarrier", "SelfRejectMismatch", "CachedDecision", "YieldOnOthersReceipt"]

TERMINAL = {"applied", "ignored", "quarantined"}
OUTCOME = {"apply": "applied", "ignore": "ignored", "quarantine": "quarantined"}


class Scratch(Consumer):
    """Seed 000 steps 1-7 from the seed's text, one attempt a page, written without the inherited hooks."""

    note_skips = True
    fetch_retries = 0            # extra fetches of the same cursor after a LOST, inside the attempt
    recheck_receipt = False      # Lookup([event]) again right before handling it
    reload_before_commit = False  # Load before every commit; give the attempt up if the checkpoint moved
    hold_prefix = False          # commits keep the loaded applied_position; the barrier raises it
    decide_first = False         # ask the handler about every event, then commit the decided prefix
    double_fetch = False         # fetch the page twice; start over if the two answers differ
    call_retries = 0             # seed 001: call again with the same reservation after a timeout
    confirm_barrier = False      # Load after a barrier
    settle_timeouts = True       # seed 001 step 5 permits (not requires) writing provisional on a timeout
    resolve_lost = False         # after a LOST commit, read the receipt back and go on if it is there
    chunk = 0                    # at most this many handled events per attempt (0: no limit)
    refused_retries = 0          # a refused cursor is fetched again (after a fresh Load) before halting
    record_hold = False          # a non-terminal decision is recorded as a durable non-terminal receipt
    handle_twice = False         # ask the handler again right before committing; act on the second answer
    claim_stuck = False          # a non-advancing page with events still gets a version-raising CAS

    def run(self):
        while True:
            status = yield from self.one_page()
            if status in ("caught_up", "blocked"):
                yield Wait(status)

    def after_barrier(self, page, swapped):
        pass

    def fetch(self, cursor):
        page = yield Fetch(cursor)
        tries = self.fetch_retries
        while page is LOST and tries > 0:
            tries -= 1
            yield Wait("blocked")
            page = yield Fetch(cursor)
        return page

    def one_page(self):
        cp = yield Load()
        self.attempt_cursor = cp.resume_cursor
        page = yield from self.fetch(cp.resume_cursor)
        if page is LOST:
            return "lost"
        tries = self.refused_retries
        while page is None and tries > 0:
            tries -= 1
            yield Wait("blocked")
            now = yield Load()
            if (now.resume_cursor, now.checkpoint_version) != (cp.resume_cursor, cp.checkpoint_version):
                return "rejected"
            page = yield from self.fetch(cp.resume_cursor)
            if page is LOST:
                return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {cp.resume_cursor!r}")
        if self.double_fetch:
            again = yield from self.fetch(cp.resume_cursor)
            if again is LOST:
                return "lost"
            if again is None:
                yield Halt(f"provider refused cursor {cp.resume_cursor!r} on a second fetch")
            if [(e.id, e.position) for e in again.events] != [(e.id, e.position) for e in page.events] \
                    or again.next_cursor != page.next_cursor:
                return "lost"                     # the answer moved: start over from durable state
        outcomes, ids_at = yield Lookup(tuple(page.events))
        reason = self.check(cp, page, ids_at)
        if reason:
            yield Halt(reason)
        if not page.events and page.next_cursor == cp.resume_cursor:
            return "caught_up"
        status, prefix = yield from self.process(cp, page, outcomes)
        if status is not None:
            return status
        if page.next_cursor == cp.resume_cursor and not (self.claim_stuck and page.events):
            return "caught_up"
        swapped = yield Barrier(cp.resume_cursor, cp.checkpoint_version, page.next_cursor,
                                cp.checkpoint_version + 1, prefix)
        if swapped is LOST:
            return "lost"
        if self.confirm_barrier:
            yield Load()
        self.after_barrier(page, swapped)
        if swapped and page.next_cursor == cp.resume_cursor:
            return "caught_up"              # claim_stuck: the token did not advance (step 7)
        return "advanced" if swapped else "rejected"

    def check(self, cp, page, ids_at):
        """Step 3: order inside the page, one id per position, no gap behind the prefix without backfills."""
        last = None
        seen = set()
        for e in page.events:
            if last is not None and e.position <= last:
                return f"source order regression at {e.position} after {last}"
            if e.id in seen:
                return f"id {e.id} twice in one page"
            seen.add(e.id)
            last = e.position
            holder = ids_at.get(e.position)
            if holder is not None and holder != e.id:
                return f"conflicting identity at {e.position}: {holder} and {e.id}"
            if not self.contract.backfills and e.position <= cp.applied_position and holder is None:
                return f"gap: {e.id} at {e.position} behind applied {cp.applied_position}"
        return None

    def is_replay_(self, e, outcomes, cp):
        if outcomes.get(e.id) in TERMINAL:
            return True
        return not self.contract.backfills and e.position <= cp.applied_position

    def process(self, cp, page, outcomes):
        prefix = cp.applied_position
        todo = []
        handled = 0
        for e in page.events:
            if self.is_replay_(e, outcomes, cp):
                if self.note_skips:
                    yield Skip(e)
                prefix = max(prefix, e.position)
                todo.append((e, None))
                continue
            if self.recheck_receipt:
                again, _ = yield Lookup((e,))
                if again.get(e.id) in TERMINAL:
                    prefix = max(prefix, e.position)
                    todo.append((e, None))
                    continue
            if self.chunk and handled >= self.chunk:
                return "chunk", prefix
            handled += 1
            decision = self.__dict__.get("memo", {}).get(e.id)     # CachedDecision's, else None
            if decision is None:
                decision = yield Handle(e)
            if self.handle_twice and decision in OUTCOME:
                decision = yield Handle(e)
            if decision not in OUTCOME:
                if self.record_hold:
                    yield Commit(e, decision, prefix, False)
                todo.append((e, "stop"))
                break
            if self.decide_first:
                todo.append((e, decision))
                continue
            status = yield from self.make_durable(cp, e, decision, max(prefix, e.position))
            if status is not None:
                return status, prefix
            prefix = max(prefix, e.position)
        if self.decide_first:
            return (yield from self.commit_decided(cp, todo))
        if todo and todo[-1][1] == "stop":
            return "blocked", prefix
        return None, prefix

    def commit_decided(self, cp, todo):
        prefix = cp.applied_position
        for e, decision in todo:
            if decision == "stop":
                return "blocked", prefix
            if decision is not None:
                status = yield from self.make_durable(cp, e, decision, max(prefix, e.position))
                if status is not None:
                    return status, prefix
            prefix = max(prefix, e.position)
        return None, prefix

    def make_durable(self, cp, e, decision, position):
        """Step 4 for one event: settle (seed 001) then commit; None when it is done, else the status."""
        if decision == "apply" and self.contract.external_sink:
            state = yield from self.settle(e)
            if state is LOST:
                return "lost"
            if state != COMMITTED:
                return "blocked"
        if self.reload_before_commit:
            now = yield Load()
            if (now.resume_cursor, now.checkpoint_version) != (cp.resume_cursor, cp.checkpoint_version):
                return "rejected"
        written = position if not self.hold_prefix else cp.applied_position
        done = yield Commit(e, OUTCOME[decision], written,
                            decision == "apply" and not self.contract.external_sink)
        if done is LOST:
            if self.resolve_lost:
                back, _ = yield Lookup((e,))
                if back.get(e.id) in TERMINAL:
                    return None
            return "lost"
        return None

    def settle(self, e):
        op = yield Reserve(e)
        if op.state == COMMITTED:
            return COMMITTED
        tries = 1 + self.call_retries
        state = op.state
        while tries > 0:
            tries -= 1
            if tries < self.call_retries:      # a retry: the authorization context may have changed
                op = yield Reserve(e)          # (seed 001 step 2: then a new reservation is required)
                if op.state == COMMITTED:
                    return COMMITTED
            reply = yield Call(e, op.reservation)
            if reply == TIMEOUT and not self.settle_timeouts:
                return op.state
            state = yield Settle(e, op.reservation, reply)
            if state == COMMITTED or reply != TIMEOUT:
                return state
        return state


class NoSkipNotes(Scratch):
    """Replays are passed over without a Skip request: the Skip "executes nothing" (docs/protocol.md), it is a
    note; seed 000 step 4 says only "treat it as replayed"."""

    note_skips = False


class FetchRetries(Scratch):
    """A lost fetch is retried with the same cursor up to 8 times, backing off between, inside one attempt.
    Seed 000 step 2 fetches "with that cursor"; a lost fetch published nothing, so the attempt identity
    stands, and the barrier still compares it (step 5): a retry of the fetch is a fetch of the same page."""

    fetch_retries = 8


class RecheckReceipt(Scratch):
    """Reads the event's receipt again right before asking the handler (invariant 4's "unique event receipt",
    checked twice). Extra reads change nothing durable."""

    recheck_receipt = True


class ReloadBeforeCommit(Scratch):
    """Re-reads the checkpoint before every commit and gives the attempt up when it moved (another worker
    passed the barrier): a stale attempt "must reread state rather than overwrite newer progress" (step 5);
    giving up earlier only costs work, and the receipts make the next attempt's replays harmless (step 6)."""

    reload_before_commit = True


class HoldPrefix(Scratch):
    """Every commit writes the loaded applied_position; only the barrier raises it to the page's prefix.
    Invariant 2 forbids raising applied_position early, never raising it late: the receipts prove replay (step
    4 uses per-event receipts), and the barrier raises it once the whole page is durable."""

    hold_prefix = True


class DecideThenCommit(Scratch):
    """Asks the handler about the page's events in order up to the first non-terminal decision, then commits
    the decided prefix in source order (a batch). Nothing is durable before its commit; every commit is in
    source order and carries the prefix through its event (invariant 2); the barrier waits for all (invariant
    1)."""

    decide_first = True


class DoubleFetch(Scratch):
    """Fetches each page twice and starts over when the two answers differ: extra caution. Both fetches use
    the attempt cursor; the barrier publishes the next_cursor of a page fetched with it (invariant 3)."""

    double_fetch = True


class CallAgain(Scratch):
    """Seed 001 step 2: "Reuse that exact tuple for every retry of the same logical request." After a timeout
    (provisional, step 5) it calls again, up to 4 times, before giving the attempt up as blocked; before each
    retry it reserves again, which gives the same tuple back unless "a changed request or authorization
    context requires a new reservation and generation" (a first version that called again with the tuple it
    held was caught by the audit: stale_binding after a credential rotation, rightly)."""

    call_retries = 4


class ConfirmBarrier(Scratch):
    """Reads the checkpoint back after each barrier (never trusts its own reply); changes nothing durable."""

    confirm_barrier = True


class Cautious(Scratch):
    """All the caution at once: receipts re-read, checkpoint re-read before each commit, pages fetched twice,
    lost fetches retried, timeouts called again with the same reservation, commits holding the prefix."""

    recheck_receipt = True
    reload_before_commit = True
    double_fetch = True
    fetch_retries = 3
    call_retries = 2
    hold_prefix = True
    note_skips = False


class NoSettleTimeout(Scratch):
    """Seed 001 step 5 *permits* a timeout to write the provisional state; it does not require it. This one
    settles only replies: after a timeout the record stays pending, the attempt ends blocked, and the next
    attempt reserves again (the same tuple, step 2) and calls again."""

    settle_timeouts = False


class ResolveLost(Scratch):
    """A commit whose reply is lost may or may not have taken effect: this reads the event's receipt back
    (step 4: "If a durable receipt proves the event already has its intended outcome") and goes on when it is
    there, instead of giving the attempt up."""

    resolve_lost = True


class Chunked(Scratch):
    """Handles at most 3 new events per attempt, then starts a new attempt from durable state (no barrier, no
    wait): the page's token stays pending until an attempt finds every event durable (invariant 1), and the
    receipts make the done events replays (step 6). Bounded work per attempt; "commit every k events"."""

    chunk = 3


class RefusedRetry(Scratch):
    """A refused cursor is a provider contract breach (step 3), but this one makes sure: it backs off, rereads
    the checkpoint (gives the attempt up if it moved: then the cursor was not its own to fetch) and fetches
    again, up to 3 times, before it halts for investigation."""

    refused_retries = 3


class ClaimStuck(Scratch):
    """On a page with events whose next_cursor is the request's own token, after the events are durable, a
    compare-and-swap to the same cursor and a greater version records applied_position through the page (it
    publishes no new cursor: docs/verdict.md, invariant 3), then backs off as caught up (step 7)."""

    claim_stuck = True


class RecordHold(Scratch):
    """Seed 000 names "a transient dead-letter entry, a pending operator decision, or a reversible hold": this
    one makes such a decision durable as a non-terminal receipt (outcome = the decision, applied_position =
    the prefix before the event, no effect), then stops as blocked. A non-terminal receipt closes nothing
    (invariant 5): it is never taken for a replay, and the barrier waits."""

    record_hold = True


class HandleTwice(Scratch):
    """Asks the handler a second time right before making an outcome durable and acts on the second answer: a
    decision is the handler's fact "now" (docs/protocol.md), so the latest one is the one to commit."""

    handle_twice = True


class ReadAhead(Scratch):
    """Pipelined: once every event of a page is durable it fetches the next page (with the page's next_cursor)
    before the barrier, and, when the barrier swapped and the next attempt loads that very cursor, processes
    the page it already holds instead of fetching it again. The barrier still compares the attempt's (cursor,
    version) and publishes the next_cursor of a page fetched with that cursor (docs/verdict.md, invariant 3:
    "Read-ahead and a remembered attempt identity are allowed"). The page read ahead is memory only: a crash
    drops it and the next life fetches."""

    ahead = None

    def fetch(self, cursor):
        held = self.ahead
        self.ahead = None
        if held is not None and held[0] == cursor and cursor == self.attempt_cursor:
            return held[1]
        return (yield from super().fetch(cursor))

    def process(self, cp, page, outcomes):
        status, prefix = yield from super().process(cp, page, outcomes)
        if status is None and page.next_cursor != cp.resume_cursor:
            nxt = yield Fetch(page.next_cursor)
            if nxt is not LOST and nxt is not None:
                self.pending = (page.next_cursor, nxt)
        return status, prefix

    def after_barrier(self, page, swapped):
        pending = getattr(self, "pending", None)
        self.pending = None
        if swapped and pending is not None and pending[0] == page.next_cursor:
            self.ahead = pending


class StrictMemory(Scratch):
    """Stricter step 3, without backfills: it remembers every (id, position) it was served in this life, and
    halts on a page that holds an id it was never served, without a terminal receipt, at a position below one
    it was served before: an event slipped in behind served positions, which a provider without backfills
    rules out ("a gap that violates the provider contract stops the attempt for investigation"). Memory only
    tightens the check; a new life starts with nothing remembered, which is the reference check."""

    def check(self, cp, page, ids_at):
        reason = super().check(cp, page, ids_at)
        if reason or self.contract.backfills:
            return reason
        served = getattr(self, "served", None)
        if served is None:
            served = self.served = {}
        top = max(served.values(), default=None)
        for e in page.events:
            if e.id not in served and top is not None and e.position < top and ids_at.get(e.position) != e.id:
                return f"{e.id} at {e.position} slipped in behind served position {top}"
        for e in page.events:
            served[e.id] = e.position
        return None


class TwoStepBarrier(Scratch):
    """The barrier in two compare-and-swaps: first (cursor, version) -> (cursor, version + 1) recording the
    page's applied_position (it publishes no cursor), then (cursor, version + 1) -> (next_cursor, version +
    2). Each compares what this worker last wrote or loaded, so a stale worker loses either (step 5);
    docs/verdict.md names "a claim of the page that raises only the version, the first of a barrier's two
    commits"."""

    def process(self, cp, page, outcomes):
        status, prefix = yield from super().process(cp, page, outcomes)
        if status is not None or page.next_cursor == cp.resume_cursor:
            return status, prefix
        first = yield Barrier(cp.resume_cursor, cp.checkpoint_version, cp.resume_cursor,
                              cp.checkpoint_version + 1, prefix)
        if first is LOST:
            return "lost", prefix
        if not first:
            return "rejected", prefix
        second = yield Barrier(cp.resume_cursor, cp.checkpoint_version + 1, page.next_cursor,
                               cp.checkpoint_version + 2, prefix)
        if second is LOST:
            return "lost", prefix
        return ("advanced" if second else "rejected"), prefix


class SelfRejectMismatch(Scratch):
    """Seed 001 step 6: "Reject and quarantine a response whose identifier matches but whose fingerprint,
    authorization binding, or generation differs. Do not expose its result or apply it to the current
    reservation." This one rejects such a reply itself: it compares the reply's identity with its reservation
    and does not settle a reply that differs (the record stays as it was); the attempt ends blocked and a
    later one calls again with the same reservation (step 2)."""

    def settle(self, e):
        op = yield Reserve(e)
        if op.state == COMMITTED:
            return COMMITTED
        reply = yield Call(e, op.reservation)
        if reply != TIMEOUT and reply.identity != op.reservation:
            return op.state
        return (yield Settle(e, op.reservation, reply))


class CachedDecision(Scratch):
    """Remembers (in this life) the terminal decision the handler gave for an event and, when that event's
    commit was lost and the attempt retried, commits it again without asking the handler twice: the decision
    was made, nothing durable says otherwise, and the commit itself refuses a second terminal receipt."""

    def make_durable(self, cp, e, decision, position):
        self.__dict__.setdefault("memo", {})[e.id] = decision
        return (yield from super().make_durable(cp, e, decision, position))


class YieldOnOthersReceipt(Scratch):
    """A commit answered False means a terminal receipt was already there: another worker is on this page.
    This one gives the attempt up then (as rejected), rereads durable state and starts again: extra caution,
    since the next attempt treats every receipted event as a replay (step 6)."""

    def make_durable(self, cp, e, decision, position):
        if self.contract.external_sink:
            return (yield from super().make_durable(cp, e, decision, position))
        done = yield Commit(e, OUTCOME[decision], position, decision == "apply")
        if done is LOST:
            return "lost"
        return None if done else "rejected"
