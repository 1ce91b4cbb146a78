"""Hostile input, seventeenth round (a fresh tester): consumers that lie about where an event is (a position
of their own for an event of the stream, in Python or over ``exec:``), and a consumer whose base class,
imported from a helper module of its own, keeps its memory in a class attribute. Forged ids, events the
stream never served, a forged behaviour in a commit and ``applied_position`` raised past a forged receipt
were judged as they should be (invariants 2 and 5); consumers raising in ``__init__`` (in a later life too)
or whose ``run()`` is no generator were one line from ``run`` and ``audit``. Left as documented limits:
memory in another module's globals, in ``os.environ`` or reached as ``sys.modules[__name__]``
(docs/verdict.md: ``exec:`` for a real process per life).

Each: the verdict the same run earns, or one line naming the parameter, file, key or flag and the problem (a
:class:`simkit.SimkitError`, or exit status 2 and no traceback).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import simkit_in

import simkit
from simkit.model import Event
from simkit.ops import LOST, Commit, Effect

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from mutants.forged import ForgesEveryPosition  # noqa: E402


# -- 1. an event of the stream sent back at a position of the consumer's own --------------------------------
class EffectThenCommit(simkit.Consumer):
    """Runs the effect, then commits the receipt apart: a crash between the two runs the effect twice."""

    shift = 0

    def _told(self, event):
        return Event(event.id, event.position + self.shift, event.behavior)

    def apply(self, event, applied_position):
        if (yield Effect(self._told(event))) is LOST:
            return LOST
        return (yield Commit(self._told(event), "applied", applied_position))


class TellsItIsElsewhere(EffectThenCommit):
    """The same consumer, telling the world every event it runs and commits is a billion positions on."""

    shift = 10**9


def test_a_position_of_the_consumers_own_does_not_dodge_the_scenarios_crash():
    """``retry_walkthrough`` crashes before e107 commits (``position = 107``): the consumer above runs e107's
    effect a second time after it, and is judged NOT ok. The same consumer that sent ``Event("e107",
    1000000107)`` instead was judged ok with ``crashes: 0``: the world matched the scenario's faults against
    the position in the request, so the crash never struck, and a scenario written to catch the bug passed
    it. Now the world takes the event where the stream holds it (``EventTable.placed``): the crash strikes and
    the verdict is the honest twin's."""
    honest = simkit.simulate(simkit.load("retry_walkthrough"), EffectThenCommit).as_dict()
    liar = simkit.simulate(simkit.load("retry_walkthrough"), TellsItIsElsewhere).as_dict()
    assert honest["duplicated"] == ["e107"] and honest["crashes"] == 1
    assert {k: v for k, v in liar.items() if k != "strategy"} == {k: v for k, v in honest.items()
                                                                    if k != "strategy"}


@pytest.mark.parametrize("name", ["ignored_event", "transient_storm", "misbound_response", "gauntlet"])
def test_a_forged_position_decides_nothing(name):
    """The receipt of ``Commit(Event("e3", 1003), ...)`` was kept at position 1003: the next ``Lookup`` showed
    no holder at 3, so the consumer's own step 3 saw a gap and halted (``ignored_event``, ``transient_storm``,
    ``misbound_response``: NOT ok, halted without cause). Now the receipt is kept where the stream holds e3,
    the faults strike there and the call is fingerprinted from there: the run is ``safe``'s."""
    forged = simkit.simulate(simkit.load(name), ForgesEveryPosition).as_dict()
    safe = simkit.simulate(simkit.load(name), "safe").as_dict()
    assert {k: v for k, v in forged.items() if k != "strategy"} == {k: v for k, v in safe.items()
                                                                     if k != "strategy"}


FORGER = """import sys
sys.path.insert(0, {examples!r})
import consumer


class Forger(consumer.Procedure):
    def commit(self, event, outcome, applied_position, with_effect=False):
        return super().commit(dict(event, position=5), outcome, applied_position, with_effect)


consumer.main(Forger)
"""


def test_an_exec_consumer_that_commits_e106_at_position_5_is_kept_at_106(tmp_path):
    """Over ``exec:``, ``{"op": "commit", "event": {"id": "e106", "position": 5, ...}}`` was kept by the store
    as a receipt at position 5 (round 16 found it, and could not turn it into a wrong verdict: the position
    decided what the consumer's next ``Lookup`` saw, and which scripted fault struck). Now it is kept at 106,
    where the stream holds e106, and the run is the reference consumer's."""
    script = tmp_path / "forger.py"
    script.write_text(FORGER.format(examples=str(ROOT / "examples" / "consumers" / "python")))
    out = simkit_in(["run", "retry_walkthrough", "--json", "--strategy", f"exec:{sys.executable} {script}"],
                    cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    run = json.loads(out.stdout)
    assert run["ok"] and run["crashes"] == 1 and run["effects"] == 2
    world = simkit.simulate(simkit.load("retry_walkthrough"),
                            f"exec:{sys.executable} {script}").world
    assert world.store.id_at(106) == "e106" and world.store.id_at(5) is None


# -- 2. a consumer whose base class, in a helper module of its own, keeps memory in a class attribute -------
HELPER = '''import simkit
from simkit.ops import LOST, Commit, Effect


class Base(simkit.Consumer):
    """Runs the effect, then commits apart; remembers in a class attribute the effects it ran."""

    ran = set()

    def apply(self, event, applied_position):
        if event.id not in self.ran:
            if (yield Effect(event)) is LOST:
                return LOST
            self.ran.add(event.id)
        return (yield Commit(event, "applied", applied_position))
'''


def test_a_class_attribute_of_a_base_in_another_module_is_gone_after_a_crash(tmp_path, monkeypatch):
    """``mine.py`` (``from helper_r17 import Base; class Mine(Base): pass``), where ``Base`` keeps the effects
    it ran in ``ran = set()``: each life ran ``mine.py`` afresh, but ``helper_r17`` was imported once, so
    ``self.ran`` outlived the crash on ``retry_walkthrough`` and hid e107's second effect: ok, where the same
    classes in one file are NOT ok (duplicated e107). Now each life's class holds its own copy of its imported
    bases' class attributes, as a class defined in a function does (round 14): NOT ok either way."""
    (tmp_path / "helper_r17.py").write_text(HELPER)
    (tmp_path / "mine.py").write_text("from helper_r17 import Base\n\n\nclass Mine(Base):\n    pass\n")
    (tmp_path / "one.py").write_text(HELPER + "\n\nclass Mine(Base):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for path in ("one.py", "mine.py"):
        run = simkit.simulate(simkit.load("retry_walkthrough"), f"{tmp_path / path}:Mine")
        assert run.verdict.duplicated == ["e107"], path
