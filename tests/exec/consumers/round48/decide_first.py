#!/usr/bin/env python3
"""Seed 000's procedure over the consumer protocol, plain Python, that asks the handler about every event of a
page first and only then commits the outcomes in source order, stopping at the first that is not terminal.

Why it is allowed: asking the handler (``handle``) writes nothing durable; seed 000 step 4 orders the
*outcomes* ("Process events in source order ... Commit each effect together with its receipt ... Stop at the
first outcome that is not durable and terminal"), and each commit here is made in source order, for the
decision the handler gave, before any later event's. An event after a blocked one is decided and never
committed in that attempt.
"""
import json
import sys

TERMINAL = {"applied", "ignored", "quarantined"}
OUTCOME = {"apply": "applied", "ignore": "ignored", "quarantine": "quarantined"}


def ask(request):
    sys.stdout.write(json.dumps(request) + "\n")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    answer = json.loads(line)
    return answer["type"], answer["value"]


def settle(event):
    _, operation = ask({"op": "reserve", "event": event})
    if operation["state"] == "committed":
        return True
    _, reply = ask({"op": "call", "event": event, "reservation": operation["reservation"]})
    _, state = ask({"op": "settle", "event": event, "reservation": operation["reservation"],
                    "observation": reply})
    return state == "committed"


def invalid(checkpoint, events, ids_at, backfills):
    previous = None
    for e in events:
        if previous is not None and e["position"] <= previous:
            return f"regression at {e['position']}"
        previous = e["position"]
        holder = ids_at.get(str(e["position"]))
        if holder is not None and holder != e["id"]:
            return f"two ids at {e['position']}"
        if holder is None and not backfills and e["position"] <= checkpoint["applied_position"]:
            return f"gap at {e['position']}"
    return None


def attempt(contract):
    _, checkpoint = ask({"op": "load"})
    kind, page = ask({"op": "fetch", "cursor": checkpoint["resume_cursor"]})
    if kind == "lost":
        return "lost"
    if kind == "none":
        ask({"op": "halt", "reason": "provider refused the cursor"})
    events = page["events"]
    _, receipts = ask({"op": "lookup", "events": events})
    problem = invalid(checkpoint, events, receipts["ids_at"], contract["backfills"])
    if problem:
        ask({"op": "halt", "reason": problem})
    if not events and page["next_cursor"] == checkpoint["resume_cursor"]:
        return "caught_up"
    applied = checkpoint["applied_position"]
    todo = []
    for e in events:
        replay = receipts["outcomes"].get(e["id"]) in TERMINAL or (
            not contract["backfills"] and e["position"] <= checkpoint["applied_position"])
        decision = None if replay else ask({"op": "handle", "event": e})[1]
        todo.append((e, decision))
    for e, decision in todo:
        if decision is None:
            ask({"op": "skip", "event": e})
        elif decision not in OUTCOME:
            return "blocked"
        else:
            if decision == "apply" and contract["external_sink"] and not settle(e):
                return "blocked"
            with_effect = decision == "apply" and not contract["external_sink"]
            kind, _ = ask({"op": "commit", "event": e, "outcome": OUTCOME[decision],
                           "applied_position": max(applied, e["position"]), "with_effect": with_effect})
            if kind == "lost":
                return "lost"
        applied = max(applied, e["position"])
    if page["next_cursor"] == checkpoint["resume_cursor"]:
        return "caught_up"
    kind, _ = ask({"op": "barrier", "cursor": checkpoint["resume_cursor"],
                   "version": checkpoint["checkpoint_version"], "next_cursor": page["next_cursor"],
                   "next_version": checkpoint["checkpoint_version"] + 1, "applied_position": applied})
    return "lost" if kind == "lost" else "next"


def main():
    hello = json.loads(sys.stdin.readline())["value"]
    if hello["protocol"] != 1:
        sys.stderr.write("unknown protocol\n")
        sys.exit(3)
    while True:
        status = attempt(hello["contract"])
        if status in ("caught_up", "blocked"):
            ask({"op": "wait", "reason": status})


main()
