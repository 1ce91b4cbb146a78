"""Round 47 (examples/consumers/python/consumer.py with one change): an ignored event is committed like any
other, effect and all: "ignored" is a log level here (seed 000 invariant 1: intentionally ignored;
docs/verdict.md: a receipt the handler did not order breaks invariant 5).

Seed 000's procedure (steps 1-7, with seed 001's settlement of an external effect) as a process speaking
simkit's protocol 1 (docs/protocol.md): JSON lines on stdin and stdout, Python's standard library only.

A port of simkit/procedure/consumer.py, method for method. simkit starts one process per worker life and kills
it at a crash, so nothing here needs to survive one: durable state is the store's, behind the requests.

    simkit run retry_walkthrough --strategy exec:examples/consumers/python/run
"""
import json
import sys

TERMINAL = ("applied", "ignored", "quarantined")
LOST, BLOCKED, COMMITTED = "lost", "blocked", "committed"


class Stopped(Exception):
    """stdin closed: simkit is done with this life."""


class Procedure:
    """The full procedure, the ``safe`` strategy.
    ``publish_token_on_fetch`` is seed 000's first unsafe shortcut."""

    def __init__(self, contract, publish_token_on_fetch=False):
        self.backfills = contract["backfills"]
        self.external_sink = contract["external_sink"]
        self.publish_token_on_fetch = publish_token_on_fetch

    # -- the protocol: one request line out, one result line in ----------------------------------------------
    def ask(self, op, **fields):
        sys.stdout.write(json.dumps({"op": op, **fields}) + "\n")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            raise Stopped
        result = json.loads(line)
        return result["type"], result["value"]

    def halt(self, reason):
        self.ask("halt", reason=reason)     # never answered: simkit ends this life
        raise Stopped

    # -- the procedure ---------------------------------------------------------------------------------------
    def run(self):
        while True:
            status = self.attempt()
            if status in ("caught_up", "blocked"):
                self.ask("wait", reason=status)

    def attempt(self):
        # Step 1: load the checkpoint; its cursor and version are the attempt identity.
        _, checkpoint = self.ask("load")
        cursor, version = checkpoint["resume_cursor"], checkpoint["checkpoint_version"]
        # Step 2: fetch with that cursor; the next cursor stays in memory.
        kind, page = self.ask("fetch", cursor=cursor)
        if kind == "lost":
            return "lost"
        if kind == "none":
            self.halt(f"provider refused cursor {cursor!r}")
        if self.publish_token_on_fetch and not self.is_caught_up(checkpoint, page):     # the bug, on purpose
            kind, swapped = self.ask("barrier", cursor=cursor, version=version,
                                     next_cursor=page["next_cursor"],
                                     next_version=version + 1,
                                     applied_position=checkpoint["applied_position"])
            if kind == "lost":
                return "lost"
            if not swapped:
                return "rejected"
        _, receipts = self.ask("lookup", events=page["events"])
        # Step 3: validate source order and identities before any effect.
        problem = self.validate(checkpoint, page, receipts["ids_at"])
        if problem:
            self.halt(problem)
        # Step 7: an empty page with the request token back is no progress: back off, don't spin.
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        # Step 4: process events in source order; stop at the first outcome that is not durable and terminal.
        status, applied = self.process(checkpoint, page, receipts["outcomes"])
        if status != "done":
            return status
        if page["next_cursor"] == cursor:
            return "caught_up"
        if self.publish_token_on_fetch:
            return "advanced"
        # Step 5: every event has a durable outcome: compare-and-swap the page barrier.
        kind, swapped = self.ask("barrier", cursor=cursor, version=version, next_cursor=page["next_cursor"],
                                 next_version=version + 1, applied_position=applied)
        if kind == "lost":
            return "lost"
        return "advanced" if swapped else "rejected"

    def validate(self, checkpoint, page, ids_at):
        previous, applied = None, checkpoint["applied_position"]
        for e in page["events"]:
            position = e["position"]
            if previous is not None and position <= previous:
                return f"source-order regression: position {position} after {previous}"
            previous = position
            holder = ids_at.get(str(position))
            if holder is not None and holder != e["id"]:
                return f"conflicting identity at position {position}: {e['id']} but receipt for {holder}"
            if holder is None and not self.backfills and position <= applied:
                return (f"gap: {e['id']} at position {position} is behind applied_position {applied} with no "
                        f"receipt, and the provider contract has no backfills")
        return None

    def process(self, checkpoint, page, receipts):
        applied = checkpoint["applied_position"]
        for event in page["events"]:
            if self.is_replay(event, receipts, applied):
                self.ask("skip", event=event)
                applied = max(applied, event["position"])
                continue
            _, decision = self.ask("handle", event=event)
            target = max(applied, event["position"])
            if decision == "apply":
                result = self.apply(event, target)
            elif decision == "ignore":
                result = self.apply(event, target)
            elif decision == "quarantine":
                result = self.commit(event, "quarantined", target)
            else:
                return "blocked", applied   # invariant 5: a non-terminal outcome blocks the barrier
            if result in (LOST, BLOCKED):
                return result, applied
            applied = max(applied, target)
        return "done", applied

    def is_replay(self, event, receipts, applied):
        if receipts.get(event["id"]) in TERMINAL:
            return True
        return not self.backfills and event["position"] <= applied

    def is_caught_up(self, checkpoint, page):
        return not page["events"] and page["next_cursor"] == checkpoint["resume_cursor"]

    def commit(self, event, outcome, applied_position, with_effect=False):
        kind, done = self.ask("commit", event=event, outcome=outcome, applied_position=applied_position,
                              with_effect=with_effect)
        return LOST if kind == "lost" else done

    def apply(self, event, applied_position):
        if not self.external_sink:
            return self.commit(event, "applied", applied_position, with_effect=True)
        settled = self.settle_effect(event)
        if settled != COMMITTED:
            return settled
        return self.commit(event, "applied", applied_position)

    def settle_effect(self, event):
        """Seed 001: reserve (or reuse) the tuple, call unless
        already committed, settle the reply or timeout."""
        _, operation = self.ask("reserve", event=event)
        if operation["state"] == COMMITTED:
            return COMMITTED
        _, reply = self.ask("call", event=event, reservation=operation["reservation"])
        _, state = self.ask("settle", event=event, reservation=operation["reservation"], observation=reply)
        return COMMITTED if state == COMMITTED else BLOCKED


def main(make=Procedure):
    line = sys.stdin.readline()
    if not line:
        return
    hello = json.loads(line)
    if hello.get("type") != "hello" or hello["value"]["protocol"] != 1:
        sys.exit(f"expected simkit's protocol 1 handshake, got {line.strip()}")
    try:
        make(hello["value"]["contract"], "--publish-token-on-fetch" in sys.argv[1:]).run()
    except Stopped:
        pass


if __name__ == "__main__":
    main()
