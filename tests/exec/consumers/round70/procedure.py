"""Round 70's wire consumers: examples/consumers/python/consumer.py (seed 000's procedure with seed 001's
settlement, protocol 1, standard library only), with one bug switched on by the mode named on the command line
(``python3 procedure.py MODE``). Each mode's class below names the rule it breaks.
"""
import json
import sys

TERMINAL = ("applied", "ignored", "quarantined")
LOST, BLOCKED, COMMITTED = "lost", "blocked", "committed"


class Stopped(Exception):
    """stdin closed: simkit is done with this life."""


class Procedure:
    """The full procedure, the ``safe`` strategy; the modes below each change one method."""

    def __init__(self, contract, worker):
        self.backfills = contract["backfills"]
        self.external_sink = contract["external_sink"]
        self.worker = worker

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
        # Step 5: every event has a durable outcome: compare-and-swap the page barrier.
        return self.barrier(cursor, version, page, applied)

    def barrier(self, cursor, version, page, applied):
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
                result = self.commit(event, "ignored", target)
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


class HeldReservation(Procedure):
    """Seed 001 step 2: "A changed request or authorization context requires a new reservation and
    generation." Keeps each event's first reservation of this life and calls every retry with it, so a retry
    after a credential rotation goes out under the old binding."""

    def __init__(self, contract, worker):
        super().__init__(contract, worker)
        self.held = {}

    def settle_effect(self, event):
        if event["id"] not in self.held:
            _, operation = self.ask("reserve", event=event)
            if operation["state"] == COMMITTED:
                return COMMITTED
            self.held[event["id"]] = operation["reservation"]
        reservation = self.held[event["id"]]
        _, reply = self.ask("call", event=event, reservation=reservation)
        _, state = self.ask("settle", event=event, reservation=reservation, observation=reply)
        return COMMITTED if state == COMMITTED else BLOCKED


class LateTimeoutIsSuccess(Procedure):
    """Seed 001 step 5 and "Limits": a timeout is provisional, never success. After a timeout it backs off and
    reserves again; a record still ``provisional`` then is taken for "the late reply must have landed"."""

    def settle_effect(self, event):
        state = super().settle_effect(event)
        if state != BLOCKED:
            return state
        self.ask("wait", reason="blocked")
        _, operation = self.ask("reserve", event=event)
        return COMMITTED if operation["state"] in (COMMITTED, "provisional") else BLOCKED


class OverwriteAfterRestart(Procedure):
    """Seed 000 invariant 3 (compare-and-swap, never regress): the first barrier of a life that loses its
    compare-and-swap is written anyway (Overwrite), "the other worker must have died"."""

    first = True

    def barrier(self, cursor, version, page, applied):
        status = super().barrier(cursor, version, page, applied)
        first, self.first = self.first, False
        if status != "rejected" or not first:
            return status
        kind, _ = self.ask("overwrite", next_cursor=page["next_cursor"], next_version=version + 1,
                           applied_position=applied)
        return "lost" if kind == "lost" else "advanced"


class LostLastCommit(Procedure):
    """Seed 000 step 4: a lost reply "may or may not have taken effect". A lost commit of the last event of a
    page is taken as done, and the page's barrier goes on."""

    def process(self, checkpoint, page, receipts):
        self.last = page["events"][-1]["id"] if page["events"] else None
        return super().process(checkpoint, page, receipts)

    def commit(self, event, outcome, applied_position, with_effect=False):
        done = super().commit(event, outcome, applied_position, with_effect)
        return True if done == LOST and event["id"] == self.last else done


class AnyReceipt(Procedure):
    """Seed 000 step 4: only a durable terminal receipt proves replay. It notes a non-terminal outcome durably
    as a receipt (for the operators), and takes any receipt, such a note too, for a replay."""

    def is_replay(self, event, receipts, applied):
        self.current = event
        return event["id"] in receipts or super().is_replay(event, receipts, applied)

    def process(self, checkpoint, page, receipts):
        self.noted = None
        status, applied = super().process(checkpoint, page, receipts)
        if status == "blocked" and self.noted:
            self.commit(self.current, self.noted, applied)
        return status, applied

    def ask(self, op, **fields):
        kind, value = super().ask(op, **fields)
        if op == "handle" and value not in ("apply", "ignore", "quarantine"):
            self.noted = value
        return kind, value


class ThirdWorkerOverwrites(Procedure):
    """Seed 000 invariant 3: workers 3 and up (a "helper pool" added later) publish with Overwrite, not the
    compare-and-swap: a stale one keeps writing after another took the page over."""

    def barrier(self, cursor, version, page, applied):
        if self.worker < 3:
            return super().barrier(cursor, version, page, applied)
        kind, _ = self.ask("overwrite", next_cursor=page["next_cursor"], next_version=version + 1,
                           applied_position=applied)
        return "lost" if kind == "lost" else "advanced"


MODES = {"held-reservation": HeldReservation, "late-timeout": LateTimeoutIsSuccess,
         "overwrite-after-restart": OverwriteAfterRestart, "lost-last-commit": LostLastCommit,
         "any-receipt": AnyReceipt, "third-worker-overwrites": ThirdWorkerOverwrites}


def main():
    line = sys.stdin.readline()
    if not line:
        return
    hello = json.loads(line)
    if hello.get("type") != "hello" or hello["value"]["protocol"] != 1:
        sys.exit(f"expected simkit's protocol 1 handshake, got {line.strip()}")
    try:
        MODES[sys.argv[1]](hello["value"]["contract"], hello["value"]["worker"]).run()
    except Stopped:
        pass


if __name__ == "__main__":
    main()
