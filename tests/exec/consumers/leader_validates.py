"""The reference consumer, except that only worker 1 runs step 3: "the leader validates each page; the other
workers follow it". A follower served a page that breaks the provider contract processes it (round 31)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3] / "examples/consumers/python"))
import consumer  # noqa: E402  (the reference consumer, standard library only)


class Follower(consumer.Procedure):
    def validate(self, checkpoint, page, ids_at):
        return None


hello = json.loads(sys.stdin.readline())
make = consumer.Procedure if hello["value"]["worker"] == 1 else Follower
try:
    make(hello["value"]["contract"]).run()
except consumer.Stopped:
    pass
