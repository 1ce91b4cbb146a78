"""Hostile input, fourteenth round (a fresh tester): the Python library as a notebook user calls it, plugin
consumers written to fool the checker, and figures of odd runs. A consumer defined in a function or a notebook
cell that keeps its memory in a class attribute through a crash; ... Each: the verdict the same consumer gets
from a file, or one line naming the parameter (a :class:`simkit.SimkitError`), never a traceback from deep
inside.
"""
from __future__ import annotations

import simkit
from simkit.ops import LOST, Commit, Effect


# -- 1. a consumer with no module body to run again keeps a class attribute through a crash ---------------------
def _effect_remembered():
    """Made in a function, as in a notebook cell: the class cannot be taken from its module afresh."""

    class EffectRemembered(simkit.Consumer):
        """Runs the effect on its own and keeps the ids whose effect ran in a set on the class, so that the
        receipt's retry after a crash skips the effect (in a real process the set is gone: it runs twice)."""

        done: set[str] = set()

        def apply(self, event, applied_position):
            if self.contract.external_sink:
                return (yield from super().apply(event, applied_position))
            if event.id not in self.done:
                if (yield Effect(event)) is LOST:
                    return LOST
                self.done.add(event.id)
            return (yield Commit(event, "applied", applied_position))

    return EffectRemembered


def test_a_class_attribute_of_a_consumer_made_in_a_function_is_gone_after_a_crash():
    """``retry_walkthrough`` crashes worker 1 after e107's effect, before its receipt: the next life runs the
    effect again, and the run is NOT ok (``duplicated: e107``), for this class from a file. Made in a function
    (or a notebook cell: no module body to run again), its lives shared the class's set and the run was ok:
    docs/verdict.md promises that "a class attribute ... from an earlier life, or an earlier run, is gone" for
    "a class passed to simulate". The set also outlived the run, so a second run of the same class differed.
    Now each life gets a subclass holding its own copy of the class attributes."""
    cls = _effect_remembered()
    scenario = simkit.load("retry_walkthrough")
    first = simkit.simulate(scenario, cls)
    assert not first.verdict.ok and first.verdict.duplicated == ["e107"], first.verdict
    assert first.strategy == "EffectRemembered"
    assert simkit.simulate(scenario, cls).verdict == first.verdict
    assert cls.done == set()                # the class as the caller made it, untouched
