#!/usr/bin/env python3
"""Seed 000 over the wire (docs/protocol.md), batched: it asks the handler about the page's events in
source order up to the first non-terminal decision, then commits the decided ones in source order, each
receipt holding the loaded applied_position; the barrier alone raises applied_position to the page's
prefix. Flags:
  --reload   Load before every commit; give the attempt up if the checkpoint moved (step 5: a stale attempt
             rereads state)
  --stateless  recompute the prefix for the barrier from a fresh lookup of the page's receipts (no in-memory
             progress is trusted)
Correct by invariant 2 (applied_position never raised before the work is durable: it is raised later, never
earlier), invariant 1 (the barrier only after every event is durable), invariant 4 (receipts prove replay)."""
import json
import sys

TERMINAL = {"applied", "ignored", "quarantined"}
OUTCOME = {"apply": "applied", "ignore": "ignored", "quarantine": "quarantined"}
FLAGS = set(sys.argv[1:])


def ask(op, **fields):
    fields = {"op": op, **fields}
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    msg = json.loads(line)
    if msg["type"] == "lost":
        raise Lost
    return msg["value"]


class Lost(Exception):
    pass


def validate(cp, page, ids_at, backfills):
    last = None
    seen = set()
    for e in page["events"]:
        if last is not None and e["position"] <= last:
            return "regression"
        if e["id"] in seen:
            return "id twice"
        seen.add(e["id"])
        last = e["position"]
        holder = ids_at.get(str(e["position"]))
        if holder is not None and holder != e["id"]:
            return "conflicting identity"
        if not backfills and e["position"] <= cp["applied_position"] and holder is None:
            return "gap"
    return None


def settle(e):
    op = ask("reserve", event=e)
    if op["state"] == "committed":
        return True
    obs = ask("call", event=e, reservation=op["reservation"])
    return ask("settle", event=e, reservation=op["reservation"], observation=obs) == "committed"


def attempt(contract):
    cp = ask("load")
    page = ask("fetch", cursor=cp["resume_cursor"])
    if page is None:
        ask("halt", reason="refused cursor")
    rec = ask("lookup", events=page["events"])
    reason = validate(cp, page, rec["ids_at"], contract["backfills"])
    if reason:
        ask("halt", reason=reason)
    if not page["events"] and page["next_cursor"] == cp["resume_cursor"]:
        return "caught_up"
    decided = []
    blocked = False
    for e in page["events"]:
        replay = rec["outcomes"].get(e["id"]) in TERMINAL or (
            not contract["backfills"] and e["position"] <= cp["applied_position"])
        if replay:
            decided.append((e, None))
            continue
        d = ask("handle", event=e)
        if d not in OUTCOME:
            blocked = True
            break
        decided.append((e, d))
    prefix = cp["applied_position"]
    for e, d in decided:
        if d is not None:
            if d == "apply" and contract["external_sink"] and not settle(e):
                return "blocked"
            if "--reload" in FLAGS:
                now = ask("load")
                if (now["resume_cursor"], now["checkpoint_version"]) != (cp["resume_cursor"],
                                                                          cp["checkpoint_version"]):
                    return "rejected"
            ask("commit", event=e, outcome=OUTCOME[d], applied_position=cp["applied_position"],
                with_effect=d == "apply" and not contract["external_sink"])
        prefix = max(prefix, e["position"])
    if blocked:
        return "blocked"
    if page["next_cursor"] == cp["resume_cursor"]:
        return "caught_up"
    if "--stateless" in FLAGS:
        fresh = ask("lookup", events=page["events"])["outcomes"]
        prefix = cp["applied_position"]
        for e in page["events"]:
            if fresh.get(e["id"]) not in TERMINAL and not (
                    not contract["backfills"] and e["position"] <= cp["applied_position"]):
                return "blocked"
            prefix = max(prefix, e["position"])
    ask("barrier", cursor=cp["resume_cursor"], version=cp["checkpoint_version"],
        next_cursor=page["next_cursor"], next_version=cp["checkpoint_version"] + 1, applied_position=prefix)
    return "advanced"


def main():
    hello = json.loads(sys.stdin.readline())
    if hello["value"]["protocol"] != 1:
        print("unknown protocol", file=sys.stderr)
        sys.exit(3)
    contract = hello["value"]["contract"]
    while True:
        try:
            status = attempt(contract)
        except Lost:
            continue
        if status in ("caught_up", "blocked"):
            ask("wait", reason=status)


main()
