"""The reference Python consumer (examples/consumers/python) with one bug: without an external sink it calls
the sink unsettled (``effect``) before the commit that carries the effect, so each applied event's effect runs
twice (invariant 4)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples" / "consumers" / "python"))
import consumer  # noqa: E402


class Double(consumer.Procedure):
    def apply(self, event, applied_position):
        if not self.external_sink:
            self.ask("effect", event=event)
        return super().apply(event, applied_position)


consumer.main(Double)
