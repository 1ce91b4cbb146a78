"""What every workshop check answers: a :class:`Check` that shows as its message and is true exactly when
the answer is right, and the guard that keeps a learner's answer from making a check raise."""
from __future__ import annotations

import functools
import numbers
from pathlib import Path

import simkit
from simkit.judge.report import verdict_line

__all__ = ["Check", "HOOKS", "Refused", "SWEEPS", "WATERMARK_RULE", "as_whole", "is_consumer", "is_number",
           "never_raises", "run_checked", "say", "verdict_text"]

#: seed 000, procedure step 4, word for word
WATERMARK_RULE = ("A high-water mark alone may prove replay only when positions are immutable and the stored "
                  "prefix is known complete.")

#: The hooks of simkit.Consumer a learner may name or override (the procedure itself is not a hook).
HOOKS = ("after_fetch", "is_replay", "resulting_applied_position", "is_terminal", "apply", "ignore",
         "quarantine", "settle_effect", "is_caught_up", "barrier_target", "page_barrier")

#: The checked-in sweeps of notebook 08: package data, so that an installed simkit answers their questions
#: too.
SWEEPS = Path(__file__).resolve().parent / "data" / "sweeps"


# -- the reply every check gives -----------------------------------------------------------------------------
class Check:
    """The outcome of one check: ``bool(check)`` says solved (or predicted right), ``repr`` is the message."""

    def __init__(self, solved: bool, text: str, mark: str | None = None):
        self.solved, self.text = solved, text
        self.mark = mark if mark is not None else ("✓ " if solved else "✗ not yet: ")

    def __bool__(self) -> bool:
        return self.solved

    def __repr__(self) -> str:
        return self.mark + self.text


def say(solved: bool, text: str) -> Check:
    return Check(solved, text)


class Refused(Exception):
    """Raised inside a check to end it with a ✗ and this text."""


def never_raises(check):
    """Turn every exception inside a check, the learner's own included, into a ✗ message naming it."""
    @functools.wraps(check)
    def checked(*answer) -> Check:
        try:
            return check(*answer)
        except Refused as refused:
            return say(False, str(refused))
        except Exception as error:      # a check reports, it does not stop the notebook
            return say(False, f"the check could not use your answer: {type(error).__name__}: {error}")
    return checked


def is_consumer(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, simkit.Consumer)


def is_number(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def as_whole(value):
    """``value`` as an ``int`` when it is a whole number written as a float (``70.0``), else as it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def run_checked(scenario, cls, faults=()) -> simkit.Run:
    """``cls`` on a scenario (a bundled name or a Scenario); the learner's exception becomes a ✗ naming it."""
    sc = simkit.load(scenario) if isinstance(scenario, str) else scenario
    try:
        return simkit.simulate(sc, cls, faults=tuple(faults))
    except Exception as error:          # the learner's hooks may raise anything
        raise Refused(f"on {sc.name} your consumer raised {type(error).__name__}: {error}") from error


def verdict_text(verdict) -> str:
    """A verdict in one line (:func:`simkit.judge.report.verdict_line`): safety first, then liveness."""
    return verdict_line(verdict)
