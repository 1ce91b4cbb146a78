"""Loads, fetches and looks up the page's events as the protocol asks (``json.dumps``' default separators),
then stops (exit 0)."""
import json
import sys


def ask(request):
    print(json.dumps(request), flush=True)
    return json.loads(sys.stdin.readline())["value"]


sys.stdin.readline()
checkpoint = ask({"op": "load"})
page = ask({"op": "fetch", "cursor": checkpoint["resume_cursor"]})
ask({"op": "lookup", "events": page["events"]})
