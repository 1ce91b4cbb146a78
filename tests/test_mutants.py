"""Issue 16, item 7: the mutant gallery (``tests/mutants``) against the independent checker.

Every mutant is a realistic buggy consumer whose docstring names the seed rule it breaks; every correct consumer
takes a liberty seed 000 allows. Each is judged on the same search ``simkit audit`` runs, cheapest case first:

1. every bundled scenario as written (seeds ``seed``, ``seed + 1``, ``seed + 2`` for a generated one);
2. every schedule of one crash plus one lost reply, then one crash plus one lost request, on the small scripted
   single-worker scenarios (:func:`simkit.explore.explore`).

A case *catches* a consumer when its verdict is not ok where ``safe``'s is. On an ``unsafe`` sink even ``safe``
duplicates an effect after a crash between the external call and its receipt, or after a lost call reply (seed
000, "Limits and validation"); those faults are left out of that scenario's exploration, which is then checked to
be clean for ``safe``. A mutant must be caught somewhere; a correct consumer must be caught nowhere.

``python tests/test_mutants.py`` prints the gallery as a markdown table with where each mutant is first caught.
"""
from __future__ import annotations

import inspect
import re
from functools import lru_cache

import pytest

import simkit
from simkit.explore import describe_kind, explore, failure_kind, fault_text, replay
from simkit.model import CRASH_POINTS, LOST_OPS

from mutants import correct, memory, outcomes, progress, unseen, validation


def _consumers(*modules) -> list[type[simkit.Consumer]]:
    return [c for m in modules for c in vars(m).values()
            if inspect.isclass(c) and issubclass(c, simkit.Consumer) and c.__module__ == m.__name__]


DISPUTED = [unseen.PipelinedReadAhead]
MUTANTS = _consumers(outcomes, progress, memory, validation) + [c for c in _consumers(unseen) if c not in DISPUTED]
CORRECT = _consumers(correct)

#: Mutants that the search cannot catch yet, with why (xfailed with that reason until the missing piece lands).
NEEDS: dict[str, str] = {
    "HttpCallInsideDbTransaction": "world: Commit(with_effect=True) runs an external sink's effect atomically with "
                                   "the receipt, a transaction no external sink offers; no crash can fall between",
    "CursorLivesInMemory": "checker: `completed` trusts the worker's Wait('caught_up') and the last cursor it "
                           "fetched, not the durable resume_cursor, which never moves here",
}
#: Correct consumers the checker flags, with why (xfailed: the checker, or the consumer, has to change).
DISPUTED_WHY = {
    "PipelinedReadAhead": "checker: a backfilled event joins the stream at the first response that served it, to "
                          "any worker, so prefetching a page turns safe's own commits into invariant 2 violations",
}

#: Exploration bounds: (max_crashes, lost_responses, lost_requests).
BOUNDS = ((1, 1, 0), (1, 0, 1))
_LOST_REQUESTS = "lost_requests" in inspect.signature(explore).parameters


# -- the search ---------------------------------------------------------------------------------------------------
def _seeds(sc: simkit.Scenario) -> list[int]:
    return [sc.seed] + ([sc.seed + 1, sc.seed + 2] if sc.generate is not None else [])


def _small(sc: simkit.Scenario) -> bool:
    return sc.generate is None and sc.workers == 1


@lru_cache(maxsize=None)
def cases() -> tuple[tuple, ...]:
    """Every case, cheapest first: ``("bundled", name, seed)`` then ``("explore", name, bounds)``."""
    scenarios = [_scenario(name) for name in simkit.bundled()]
    out = [("bundled", sc.name, seed) for sc in scenarios for seed in _seeds(sc)]
    bounds = BOUNDS if _LOST_REQUESTS else BOUNDS[:1]
    small = sorted((sc for sc in scenarios if _small(sc)), key=lambda sc: (sum(len(p["positions"]) for p in sc.pages),
                                                                           sc.name))
    out += [("explore", sc.name, b) for sc in small for b in bounds]      # the smallest stream first
    return tuple(out)


@lru_cache(maxsize=None)
def _scenario(name: str) -> simkit.Scenario:
    return simkit.load(name)


def _space(sc: simkit.Scenario, bounds) -> dict:
    """explore()'s keyword arguments for one case: the bounds, minus what seed 000's limits excuse."""
    crashes, replies, requests = bounds
    kw = {"max_crashes": crashes, "lost_responses": replies}
    if requests:
        kw["lost_requests"] = requests
    if sc.sink == "unsafe":
        kw["points"] = tuple(p for p in CRASH_POINTS if p != "after_effect")
        kw["ops"] = tuple(op for op in LOST_OPS if op != "effect")
    return kw


@lru_cache(maxsize=None)
def _safe_ok(case) -> bool:
    kind, name, arg = case
    sc = _scenario(name)
    if kind == "bundled":
        return simkit.simulate(sc, simkit.Consumer, arg).verdict.ok
    return explore(sc, simkit.Consumer, **_space(sc, arg)).ok


def judge(cls, case) -> str | None:
    """How ``cls`` fails on ``case`` where ``safe`` passes it, or ``None``."""
    kind, name, arg = case
    sc = _scenario(name)
    if kind == "bundled":
        v = simkit.simulate(sc, cls, arg).verdict
        if v.ok or not _safe_ok(case):
            return None
        return describe_kind(failure_kind(v)) + (f" (halted: {v.halted})" if v.halted else "")
    x = explore(sc, cls, **_space(sc, arg))
    if x.ok or not _safe_ok(case):
        return None
    faults, _run = x.first_violation
    assert replay(sc, simkit.Consumer, faults).verdict.ok      # the search's own claim, checked once more
    v = replay(sc, cls, faults).verdict
    return f"{describe_kind(failure_kind(v))} after {', '.join(fault_text(f) for f in faults)}"


def where(case) -> str:
    kind, name, arg = case
    if kind == "bundled":
        return f"{name} seed {arg}"
    crashes, replies, requests = arg
    return f"explore {name} ({crashes} crash + " + (f"{replies} lost reply)" if replies else f"{requests} lost request)")


def first_catch(cls) -> tuple[tuple, str] | None:
    """The first case that catches ``cls``, and how it failed there."""
    for case in cases():
        failure = judge(cls, case)
        if failure is not None:
            return case, failure
    return None


# -- the tests ----------------------------------------------------------------------------------------------------
#: "Breaks invariant 1: "…"", "Breaks seed 000 step 4: "…"", "Breaks seed 001 step 6: "…"": the rule, then its words.
RULE = re.compile(r'Breaks ((?:seed 00[01] )?(?:step|invariant) \d)[^"]*"([^"]+)"')


def test_gallery_shape():
    """At least 20 mutants and two correct consumers, each documented; every mutant names the rule it breaks."""
    assert len(MUTANTS) >= 20 and len(CORRECT) >= 2
    assert len({c.__name__ for c in MUTANTS + CORRECT}) == len(MUTANTS + CORRECT)
    for cls in MUTANTS:
        assert RULE.search(cls.__doc__ or ""), f"{cls.__name__}: docstring must name and quote the seed rule it breaks"
    for cls in CORRECT:
        assert cls.__doc__
    assert set(NEEDS) <= {c.__name__ for c in MUTANTS} and set(DISPUTED_WHY) <= {c.__name__ for c in DISPUTED}


def test_safe_passes_every_case():
    """The search's baseline: a case safe fails would catch nobody, so there must be none."""
    assert [where(case) for case in cases() if not _safe_ok(case)] == []


@pytest.mark.parametrize("cls", [pytest.param(c, id=c.__name__, marks=pytest.mark.xfail(reason=NEEDS[c.__name__]))
                                 if c.__name__ in NEEDS else pytest.param(c, id=c.__name__) for c in MUTANTS])
def test_mutant_is_caught(cls):
    assert first_catch(cls) is not None, f"{cls.__name__} passed every case: the checker was fooled"


@pytest.mark.parametrize("cls", CORRECT, ids=lambda c: c.__name__)
def test_correct_consumer_is_never_flagged(cls):
    flagged = [(where(case), failure) for case in cases() if (failure := judge(cls, case)) is not None]
    assert not flagged


@pytest.mark.parametrize("cls", [pytest.param(c, id=c.__name__, marks=pytest.mark.xfail(reason=DISPUTED_WHY[c.__name__]))
                                 for c in DISPUTED])
def test_disputed_consumer_is_not_flagged(cls):
    assert first_catch(cls) is None


def markdown() -> str:
    """The gallery as a README table: mutant, rule broken, where first caught."""
    rows = ["| mutant | rule broken | first caught |", "| --- | --- | --- |"]
    for cls in MUTANTS:
        rule, words = RULE.search(" ".join(cls.__doc__.split())).groups()
        if not rule.startswith("seed"):
            rule = "seed 000 " + rule
        hit = first_catch(cls)
        caught = f"{where(hit[0])}: {hit[1]}" if hit else f"not caught ({NEEDS.get(cls.__name__, '?')})"
        rows.append(f"| `{cls.__name__}` | {rule}: “{words}” | {caught} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown())
