"""A consumer that answers the handshake with a line that is not a request: its argument says which line."""
import sys

sys.stdin.readline()
sys.stdout.write({"json": "not json at all\n", "field": '{"op": "fetch", "cursor": 7}\n',
                  "op": '{"op": "jump"}\n'}[sys.argv[1]])
sys.stdout.flush()
sys.stdin.readline()
