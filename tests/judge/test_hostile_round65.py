"""Round 65 (a fresh tester, as an adversary): buggy consumers whose bug hides from small cases
(tests/mutants/round65.py, tests/exec/consumers/round65/). Found:

1. A consumer whose behaviour depends on state a new life does not wipe (a life counter in ``os.environ``,
   docs/verdict.md "Crashes are real") is not deterministic, and exploration rests on determinism: a
   schedule's run repeats its parent's up to the parent's last fault. ``simkit explore`` and ``simkit
   audit`` (its explore cases) ended in ``AssertionError: a schedule's last fault fires: its run is its
   parent's up to there``, a traceback, where the same consumer over ``exec:`` is named in one line ("the
   consumer is not deterministic"). Now :func:`simkit.tools.schedules.extensions` raises a
   :class:`~simkit.errors.ConsumerError` saying so: one line, exit status 2.
"""
from __future__ import annotations

import os

import pytest

import simkit
from simkit.errors import ConsumerError
from simkit.tools.explore import explore

_LIVES = "SIMKIT_ROUND65_LIVES"


class LivesInEnviron(simkit.Consumer):
    """Counts its lives in an environment variable; every third life a retry_later counts as done."""

    def __init__(self, contract):
        super().__init__(contract)
        n = int(os.environ.get(_LIVES, "0")) + 1
        os.environ[_LIVES] = str(n)
        self.moves_on = n % 3 == 0

    def is_terminal(self, decision):
        return self.moves_on


def test_a_consumer_that_is_not_deterministic_is_named_not_an_assertion(monkeypatch):
    monkeypatch.setenv(_LIVES, "0")
    with pytest.raises(ConsumerError, match="the consumer is not deterministic"):
        explore(simkit.load("transient_storm"), LivesInEnviron, share_prefixes=False)
