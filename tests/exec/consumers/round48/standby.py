#!/usr/bin/env python3
"""Seed 000's procedure over the consumer protocol, plain Python, where two workers coordinate by rank:
worker 1 works at once; any other worker is a hot standby that backs off once before each of its attempts, so
that it mostly finds the page done and its barrier loses the compare-and-swap.

Why it is allowed: seed 004, "Multiple processes using the same subject and consumer ID share one checkpoint
and must coordinate through its revision": every attempt of either worker is the full procedure, and the
barrier's compare-and-swap (seed 000 step 5) is the only coordination the seeds require; how eagerly a worker
tries is its own affair. Each event is processed in source order with receipts proving replays.
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


def invalid(checkpoint, events, ids_at, backfills):
    previous = None
    for e in events:
        if previous is not None and e["position"] <= previous:
            return "regression"
        previous = e["position"]
        holder = ids_at.get(str(e["position"]))
        if holder is not None and holder != e["id"]:
            return "conflicting identity"
        if holder is None and not backfills and e["position"] <= checkpoint["applied_position"]:
            return "gap"
    return None


def outcome_of(e, contract):
    """None when the event is done now, else the status that ends the attempt."""
    _, decision = ask({"op": "handle", "event": e})
    if decision not in OUTCOME:
        return "blocked"
    if decision == "apply" and contract["external_sink"]:
        _, op = ask({"op": "reserve", "event": e})
        if op["state"] != "committed":
            _, reply = ask({"op": "call", "event": e, "reservation": op["reservation"]})
            _, state = ask({"op": "settle", "event": e, "reservation": op["reservation"],
                            "observation": reply})
            if state != "committed":
                return "blocked"
    return decision


def attempt(contract):
    _, cp = ask({"op": "load"})
    kind, page = ask({"op": "fetch", "cursor": cp["resume_cursor"]})
    if kind == "lost":
        return "lost"
    if kind == "none":
        ask({"op": "halt", "reason": "refused cursor"})
    events = page["events"]
    _, receipts = ask({"op": "lookup", "events": events})
    problem = invalid(cp, events, receipts["ids_at"], contract["backfills"])
    if problem:
        ask({"op": "halt", "reason": problem})
    if not events and page["next_cursor"] == cp["resume_cursor"]:
        return "caught_up"
    applied = cp["applied_position"]
    for e in events:
        if receipts["outcomes"].get(e["id"]) in TERMINAL or (
                not contract["backfills"] and e["position"] <= cp["applied_position"]):
            ask({"op": "skip", "event": e})
        else:
            decision = outcome_of(e, contract)
            if decision not in OUTCOME:
                return decision
            kind, _ = ask({"op": "commit", "event": e, "outcome": OUTCOME[decision],
                           "applied_position": max(applied, e["position"]),
                           "with_effect": decision == "apply" and not contract["external_sink"]})
            if kind == "lost":
                return "lost"
        applied = max(applied, e["position"])
    if page["next_cursor"] == cp["resume_cursor"]:
        return "caught_up"
    ask({"op": "barrier", "cursor": cp["resume_cursor"], "version": cp["checkpoint_version"],
         "next_cursor": page["next_cursor"], "next_version": cp["checkpoint_version"] + 1,
         "applied_position": applied})
    return "next"


def main():
    hello = json.loads(sys.stdin.readline())["value"]
    if hello["protocol"] != 1:
        sys.stderr.write("unknown protocol\n")
        sys.exit(3)
    standby = hello["worker"] != 1
    while True:
        if standby:
            ask({"op": "wait", "reason": "caught_up"})
        status = attempt(hello["contract"])
        if status in ("caught_up", "blocked"):
            ask({"op": "wait", "reason": status})


main()
