"""4df1ddf's shortcut in the checker, held to the path it shortcuts: a published page whose events all hold an
outcome is judged by rank, from the provider's table (``ProviderTruth.served_ranks``), instead of by id. The
verdicts must be those of the id path, on every bundled scenario and strategy, faults included; and the
shortcut must be taken, or the comparison proves nothing."""
from __future__ import annotations

import dataclasses

import pytest

import simkit
from simkit.judge.checker import check
from simkit.judge.halts import _shared, breaches
from simkit.judge.outcomes import Outcomes
from simkit.tools.bench import generated
from simkit.truth.derived import stream_index
from simkit.truth.ground import as_truth

#: the bundled scenarios, and generated streams of consecutive events (the ones whose table ranks them:
#: without backfills), plain and under random crashes, pauses and lost replies, in pages of 10 and 100
SCENARIOS = [*map(simkit.load, simkit.bundled()),
             *(simkit.parse(generated(600, faults, size)) for faults in (False, True) for size in (10, 100))]


def _without_ranks(truth):
    return dataclasses.replace(truth, provider=dataclasses.replace(truth.provider, served_ranks=None))


@pytest.mark.parametrize("strategy", sorted(simkit.STRATEGIES))
def test_judging_by_rank_gives_the_verdicts_of_judging_by_id(strategy):
    ranked = 0
    for sc in SCENARIOS:
        truth = as_truth(simkit.simulate(sc, simkit.STRATEGIES[strategy], sc.seed).world)
        served = truth.provider.served_ranks
        if served is not None:
            ranked += sum(served(k) is not None for k in range(len(truth.provider.log)))
        assert check(truth).as_dict() == check(_without_ranks(truth)).as_dict(), (sc.name, strategy)
    assert ranked, "no page was judged by rank: the comparison proves nothing"


def test_a_breach_is_found_as_the_ids_find_it_where_the_first_position_is_read_by_rank():
    """Step 3's missing halts: with one id per position and no backfills, a page is read only if its first
    position, from the provider's table, is at or below the ``applied_position`` its worker loaded. The
    breaches found are those of reading every page's ids, and a gap is among them (or this proves nothing)."""
    seen = []
    for sc in SCENARIOS:
        for strategy in sorted(simkit.STRATEGIES):
            truth = as_truth(simkit.simulate(sc, simkit.STRATEGIES[strategy], sc.seed).world)
            found = breaches(truth, _outcomes(truth))
            assert found == breaches(_without_ranks(truth), _outcomes(truth)), (sc.name, strategy)
            if truth.provider.served_ranks is not None and _shared(truth.provider.events) == {}:
                seen += [why for why in found.values() if why.startswith("gap:")]
    assert seen, "no gap was found where pages are read by rank: the comparison proves nothing"


def _outcomes(truth) -> Outcomes:
    return Outcomes(truth.store.receipt_log, truth.sink.effects, stream_index(truth))
