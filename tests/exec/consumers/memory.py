"""A consumer that remembers what it has done in memory, in a module global, as if that outlived a crash.

It dedups by its ``DONE`` set instead of by receipts, and applies an event by calling the sink (``effect``)
and then committing the receipt. In one long-lived process nothing would look wrong; but a crash ends the
process and ``DONE`` with it (seed 000: "everything in memory is gone"), so the life after a crash behind a
committed event runs that event's effect again: on a sink without idempotency, a duplicated effect (invariant
4).
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3] / "examples/consumers/python"))
import consumer  # noqa: E402  (the reference consumer, standard library only)

DONE: set[str] = set()


class Remembers(consumer.Procedure):
    def is_replay(self, event, receipts, applied):
        return event["id"] in DONE

    def apply(self, event, applied_position):
        kind, _ = self.ask("effect", event=event)
        if kind == "lost":
            return consumer.LOST
        done = self.commit(event, "applied", applied_position)
        DONE.add(event["id"])
        return done


consumer.main(Remembers)
