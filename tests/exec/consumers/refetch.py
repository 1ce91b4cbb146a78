"""Fetches the first page N times (the argument), reading each answer, then stops (exit 0): a consumer that
never ends its first life, as a long stream's would not."""
import json
import sys

sys.stdin.readline()
print(json.dumps({"op": "load"}), flush=True)
cursor = json.loads(sys.stdin.readline())["value"]["resume_cursor"]
for _ in range(int(sys.argv[1])):
    print(json.dumps({"op": "fetch", "cursor": cursor}), flush=True)
    sys.stdin.readline()
