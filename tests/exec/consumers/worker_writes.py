"""The reference consumer, except that worker WORKER's requests OP carry FIELD = VALUE (JSON): the arguments,
in that order. A cursor is set by its escape (``"\\udc00"``, which no store holds)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3] / "examples/consumers/python"))
import consumer  # noqa: E402  (the reference consumer, standard library only)

WORKER, OP, FIELD, VALUE = int(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])


class Writes(consumer.Procedure):
    worker = 0

    def ask(self, op, **fields):
        if op == OP and self.worker == WORKER:
            fields[FIELD] = VALUE
        return super().ask(op, **fields)


hello = json.loads(sys.stdin.readline())
procedure = Writes(hello["value"]["contract"])
procedure.worker = hello["value"]["worker"]
try:
    procedure.run()
except consumer.Stopped:
    pass
