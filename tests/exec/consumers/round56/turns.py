"""Round 56, a correct consumer over ``exec:`` (docs/protocol.md): two workers that take turns by the
checkpoint's version, in plain Python (examples/consumers/python/consumer.py's procedure, subclassed).

Worker ``w`` takes the page whose loaded ``checkpoint_version`` has the parity of ``w - 1``; at the other
parity it backs off once (``wait``) and loads again, and takes the page anyway the second time, so that a lone
worker, or one whose partner is down, still makes progress. Seed 004: "Multiple processes using the same
subject and consumer ID share one checkpoint and must coordinate through its revision"; the barrier is still
seed 000 step 5's compare-and-swap, and a turn is only ever a delay.

    simkit audit 'exec:python3 tests/exec/consumers/round56/turns.py'
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                                "examples", "consumers", "python"))

import consumer  # noqa: E402


class TakeTurns(consumer.Procedure):
    worker = 1
    passed = 0

    def attempt(self):
        _, checkpoint = self.ask("load")
        if checkpoint["checkpoint_version"] % 2 != (self.worker - 1) % 2 and not self.passed:
            self.passed = 1
            self.ask("wait", reason="blocked")
            return None
        self.passed = 0
        return super().attempt()


def main():
    import json
    line = sys.stdin.readline()
    if not line:
        return
    hello = json.loads(line)["value"]
    if hello["protocol"] != 1:
        sys.exit(f"expected protocol 1, got {line.strip()}")
    procedure = TakeTurns(hello["contract"])
    procedure.worker = hello["worker"]
    try:
        procedure.run()
    except consumer.Stopped:
        pass


if __name__ == "__main__":
    main()
