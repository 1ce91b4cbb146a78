"""Hostile consumers, the lead's round (stop 46): "``simkit audit MYCONSUMER`` passes means my consumer keeps
the rules", attacked through what the audit's streams leave out rather than through a rule
(``tests/mutants/round42.py``).

Found:

- every generated stream puts each event with a decision other than ``apply`` at a multiple of 10 (the i-th
  event is at 10·(i+1); backfills, at other positions, are always ``ok``), and the hand-written scenarios and
  corners put them at a few positions only. Across the audit's bundled, corner, wide and sweep cases the
  handler decided ``ignore`` only at positions ending in 2, ``quarantine`` at 0, 1, 3 and 4,
  ``reversible_hold`` at 0, 5 and 6. A consumer whose bug is keyed on the last digit of a position passed
  every case: ``InMemoryQuarantineAtSeven`` (an in-memory quarantine at …7, invariant 1) passed the full audit
  of 929787f (415 s, first_only), and ``HoldDoneAtNine`` (a hold at …9 taken as done, invariant 5) too. The
  wide cases ``every_digit`` (transactional sink) and ``every_digit_external`` (external) deal every decision
  over every last digit, on pages of one event and of 7: about 30 ms more an audit of ``safe``. Each consumer
  there writes ``applied_position`` over the event it skipped (invariant 2), then halts at the hole it left.

Held: string order for opaque tokens in step 7 (``default``), an ``ignore`` that runs the effect anyway
(``ignored_event``), an empty page taken for the end of the stream (``default``), the watermark trusted once
receipts exist (``default``), ``retry_later`` taken as done at …3 (``transient_storm``).

Left alone: a bug keyed on anything the audit's finite streams do not reach (an id shape, a position past
every case's, the hundredth page) still passes; the audit samples, and a consumer built to detect its cases
can hide from any finite set of them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import WIDE, cases, wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import roster, round42  # noqa: E402

_NEW = ("every_digit", "every_digit_external")
_DECISIONS = {"apply", "ignore", "quarantine", "retry_later", "operator_review", "reversible_hold"}


def _decided(run) -> dict[str, set[int]]:
    """Each decision the handler made in ``run``, by the last digits of the positions it made it at."""
    out: dict[str, set[int]] = {}
    for _seq, _time, _worker, eid, decision in run.world.sink.decisions:
        out.setdefault(decision, set()).add(int(eid[-1]))
    return out


@pytest.mark.parametrize("name", _NEW)
def test_every_decision_meets_every_last_digit(name):
    """The handler decides each of its six decisions at positions ending in each of 0-9."""
    assert name in WIDE and any(c.kind == "wide" and c.name == name for c in cases(1, 0))
    decided = _decided(simkit.simulate(wide(name), "safe"))
    assert set(decided) == _DECISIONS, decided
    assert all(digits == set(range(10)) for digits in decided.values()), decided


@pytest.mark.parametrize("name", _NEW)
def test_the_correct_consumers_pass_the_new_cases(name):
    for cls in roster.CORRECT:
        v = simkit.simulate(wide(name), cls).verdict
        assert v.ok and v.completed, (cls.__name__, v)


@pytest.mark.parametrize("cls", [round42.InMemoryQuarantineAtSeven, round42.HoldDoneAtNine])
@pytest.mark.parametrize("name", _NEW)
def test_a_bug_keyed_on_a_last_digit_is_caught(cls, name):
    """Each consumer writes ``applied_position`` over the event it skipped a step for (invariant 2), and the
    page after it finds the hole and halts."""
    v = simkit.simulate(wide(name), cls).verdict
    assert not v.ok and not v.completed, v
    assert any(d["invariant"] == 2 for d in v.invariant_violations), v.invariant_violations
