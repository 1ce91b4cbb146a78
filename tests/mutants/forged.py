"""A correct consumer that lies about where events are: ``safe``, sending every request about one event with
the event 1,000 positions on. The world takes an event where the stream holds it (round 17, in the simulation
and in ``simkit live``), so its runs are ``safe``'s. Not in the gallery: it is loaded by path, as a user's
file, by the tests that need it."""
import dataclasses

import simkit
from simkit.model import Event


class ForgesEveryPosition(simkit.Consumer):
    """``safe``, sending back every event of every request about one event at a position 1,000 on."""

    def run(self):
        gen, result = super().run(), None
        while True:
            request = gen.send(result)
            event = getattr(request, "event", None)
            if isinstance(event, Event):
                request = dataclasses.replace(request, event=Event(event.id, event.position + 1000,
                                                                   event.behavior))
            result = yield request
