"""What ``simkit audit`` tries (docs/verdict.md, "simkit audit"): the cases, each one scenario, seed and
search, listed cheapest first so that a budget leaves out the dearest.

1. **bundled**: every bundled scenario as written (several seeds for a generated one), and the **corners** no
   bundled scenario has (a regression inside a page, at its start, middle or end, or deep in a page of 1,000;
   two ids at one position; a gap after a page's first event, on a page of one event, served to two workers; a
   new id at a receipted position on a page wholly behind the prefix, at its cursor's second answer; a gap
   and a regression at large positions; a backfill far behind a checkpoint at version 0, and backfills at
   large positions; a checkpoint_version ahead of every position served; positions past 32 bits; ids a
   byte-exact comparison alone tells apart; three and eight workers on one checkpoint, and a stale worker at
   large versions; tokens a byte-exact comparison alone tells apart, or too long for a column or a buffer,
   on a page or as an empty page's new token, or that a query string would decode; ids and tokens a language
   takes for false or for its own names; positions across every power of ten; with backfills, one at a
   multiple of 10 and a regression; a dead letter);
2. **wide**: streams as wide as real ones, which no bundled scenario is: pages of 50 events, a page of 4,100,
   2,000 events behind 400 barriers (with one worker and with two), blocks that last dozens of attempts, and a
   failure, a dead letter and a stuck token that last a thousand, an external service and a store that drop
   an event's first 25 requests, an ignored event on an external sink, a credential rotation between a lost
   reply and its retry, and between a lost request and its retry, a late reply that commits before the retry,
   crossed replies differing in each field of the reservation tuple, a crossed reply to a retry after a
   timeout, a rotation between an event's first and third tries, a backfill whose call fails behind a
   receipted event, and every handler decision at every last digit of a position;
3. **sweep**: the generated scenarios under seeded random crashes, pauses, lost replies and lost requests;
4. **explore**: every schedule of up to two faults on each small scripted scenario, of up to three lost
   requests of one operation, and the crashes around a scenario's own late and crossed replies.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cache

from simkit.model import CROSSED_FIELDS, LOST_OPS, Scenario
from simkit.scenario.read import bundled, load, parse

from .audit_corners import CORNERS
from .audit_corners import chain as _pages
from .explore import fault_free

__all__ = ["BOUNDS", "CORNERS", "SMALL", "SWEEP_FAULTS", "WIDE", "Case", "cases", "twins", "wide"]

#: A scripted scenario with at most this many events is explored.
SMALL = 12
#: Exploration bounds: (max_crashes, lost_responses, lost_requests), each at most two faults in all.
BOUNDS = ((2, 0, 0), (1, 1, 0), (1, 0, 1))
#: Lost requests in a row of one operation explored (a consumer that takes the third as done is caught).
LOST_IN_A_ROW = 3
#: Seeded faults added to a generated scenario for the sweep.
SWEEP_FAULTS = {"crash": 0.03, "pause": 0.01, "lost_response": 0.02, "lost_request": 0.02}
#: Faults of a scenario that stay in every explored schedule, so that crashes are explored around them.
_KEPT = ("late_reply", "crossed_reply")


@dataclass(frozen=True)
class Case:
    """One thing to try: ``kind`` (bundled, corner, wide, sweep, explore), the scenario, the seed, and for an
    exploration its bounds, the only operations whose requests it loses (``ops``) and whether the scenario's
    own faults stay (``keep_faults``)."""

    kind: str
    scenario: Scenario = field(compare=False)
    name: str
    seed: int
    bounds: tuple[int, int, int] | None = None
    ops: tuple[str, ...] | None = None
    keep_faults: bool = False

    @property
    def label(self) -> str:
        where = f"{self.name} seed {self.seed}"
        if self.bounds is None:
            return where
        crashes, replies, requests = self.bounds
        parts = [f"{crashes} crash{'es' if crashes != 1 else ''}"] if crashes else []
        parts += [f"{replies} lost repl{'ies' if replies != 1 else 'y'}"] if replies else []
        of = f" of {'/'.join(self.ops)}" if self.ops else ""
        parts += [f"{requests} lost request{'s' if requests != 1 else ''}{of}"] if requests else []
        around = f" around its {'/'.join(_kept(self.scenario))}" if self.keep_faults else ""
        return f"{where}, ≤{' + '.join(parts)}{around}"

    @property
    def cost(self) -> float:
        """A rough order of what the case costs, for running the cheapest first: events × workers, times the
        number of schedules an exploration grows by per fault."""
        sc = self.scenario
        size = (sc.generate["events"] if sc.generate is not None else _events(sc)) * sc.workers
        if self.bounds is None:
            return size
        return size * (4 * size * sc.workers) ** min(2, sum(self.bounds)) / (len(LOST_OPS) if self.ops else 1)


def _events(sc: Scenario) -> int:
    return len({p for page in sc.pages for p in page["positions"]}) if sc.pages is not None else 0


def _kept(sc: Scenario) -> list[str]:
    return sorted({f.kind.replace("_", " ") for f in sc.faults if f.kind in _KEPT})


#: The time limit of the cases that are long by design: many events (``wide_pages``, ``long_stream``,
#: ``big_page``, where ``safe`` itself takes 2,400, 5,500 and 8,400 of the default 10,000) or dozens of
#: attempts (``long_blocks``, ``long_outage``). Ten times the default, so that a correct consumer doing more
#: timed work per event (a reservation made ahead) or backing off longer between blocked attempts (doubling
#: to 64 back-offs) completes; at the default each was judged incomplete (``big_page``, ``long_blocks``).
_PATIENT = {"time_limit": 100_000.0}
#: ``thousand_attempts``: 3,000 attempts, each of which a consumer backing off to 64 back-offs (of 5) waits
#: 320 for; ``safe`` takes 18,000.
_LONGER = {"time_limit": 2_000_000.0}
_GENERATED = {"overlap": 0.3, "backfill": 0.1, "empty_pages": 0.1, "stuck": 0.1, "lost_fetch": 0.05,
              "poison": 0.03, "transient": 0.05, "review": 0.02, "hold": 0.02}


def _every_digit(sink: str) -> dict:
    """Every decision the handler makes at every last digit of a position (and of an id): ``(d + p) % 5`` over
    the decade ``d`` and digit ``p`` deals poison, ignore, transient, review and hold over positions 1-50 so
    that each meets each digit once; 1-5 on pages of one event (one of each), the rest on pages of 7 (prime to
    10: each meets every place in a page), then 20 ``ok`` events. Generated streams put every other decision
    at a multiple of 10 only: a consumer that skipped a step at positions ending in 7 passed the rest."""
    kinds = ("poison", "ignore", "transient", "review", "hold")
    extra: dict[str, dict[str, object]] = {"transient": {"failures": 1}, "hold": {"release_after": 1.0},
                                           "review": {"resolve_after": 1.0, "resolution": "apply"}}
    events = []
    for p in range(1, 51):
        kind = kinds[(p // 10 + p % 10) % 5]
        events.append({"position": p, "behavior": kind, **extra.get(kind, {})})
    chain = [[1], [2], [3], [4], [5], *(list(range(i, min(i + 7, 71))) for i in range(6, 71, 7))]
    return {"description": f"Every decision of the handler at every last digit of a position, on a {sink} "
                           "sink: poison, ignore, transient, review and hold at 1-50, then 20 ok events; "
                           "pages of one event, then of 7",
            "sink": sink, "pages": _pages(*chain), "events": events}


#: The wide cases as scenario files, by name.
WIDE: dict[str, dict] = {
    "wide_pages": {
        "description": "Pages of 50 events, overlapping, with backfills, poison, transient, review and hold "
                       "events, and seeded crashes",
        "sink": "idempotent", "backfills": True, "timing": _PATIENT,
        "generate": {"events": 600, "page_size": 50, **_GENERATED},
        "random_faults": {"crash": 0.01, "lost_response": 0.01}},
    "long_stream": {
        "description": "2,000 events behind about 400 page barriers, with empty pages and non-advancing "
                       "tokens",
        "sink": "transactional", "backfills": True, "timing": _PATIENT,
        "generate": {"events": 2000, "page_size": 5, **_GENERATED}},
    "big_page": {
        "description": "A page of 4,100 events, a transient failure near its end, then a page of 100: wider "
                       "than a bulk limit a consumer might cut a page to, 1,000 or a buffer of 1,024, 2,048 "
                       "or 4,096 (the other pages hold at most 50)",
        "sink": "idempotent", "pages": _pages(list(range(1, 4101)), list(range(4101, 4201))),
        "timing": _PATIENT, "events": [{"position": 4000, "behavior": "transient", "failures": 2}]},
    "long_blocks": {
        "description": "Blocks that last dozens of attempts: 25 transient failures, a review resolved "
                       "after 250, a hold released after 250, then 50 (past a retry cap of 25 or 30)",
        "sink": "idempotent", "pages": _pages([1, 2, 3], [4, 5, 6]), "timing": _PATIENT,
        "events": [{"position": 2, "behavior": "transient", "failures": 25},
                   {"position": 4, "behavior": "review", "resolve_after": 250.0, "resolution": "apply"},
                   {"position": 5, "behavior": "hold", "release_after": 250.0},
                   {"position": 6, "behavior": "transient", "failures": 50}]},
    "long_outage": {
        "description": "Long outages: the service drops e2's first 25 requests (25 timeouts of one "
                       "reservation before its effect runs, seed 001), and the store e3's first 25 commits",
        "sink": "idempotent", "pages": _pages([1, 2, 3]), "timing": _PATIENT,
        "faults": [{"kind": "lost_request", "op": op, "position": p, "occurrence": k}
                   for op, p in (("effect", 2), ("checkpoint_write", 3)) for k in range(1, 26)]},
    "ignored_external": {
        "description": "An event the handler ignores on an external sink, between two applied ones: a "
                       "durable ignored receipt, no call to the service (no other case has both)",
        "sink": "idempotent", "pages": _pages([1, 2, 3]),
        "events": [{"position": 2, "behavior": "ignore"}]},
    "rotation_before_retry": {
        "description": "Seed 001: the credential rotates between a lost reply and its retry",
        "sink": "idempotent", "auth": {"rotate_at": [3.0]}, "timing": {"timeout": 5.0},
        "pages": _pages([1, 2]),
        "faults": [{"kind": "lost_response", "op": "effect", "position": 1}]},
    "rotation_after_lost_request": {
        "description": "Seed 001: the credential rotates between a lost request and its retry: the effect "
                       "never ran, and the retry's reservation is a new one; a retry that takes the old "
                       "reservation's timeout for the effect commits a receipt for none",
        "sink": "idempotent", "auth": {"rotate_at": [3.0]}, "timing": {"timeout": 5.0},
        "pages": _pages([1, 2]),
        "faults": [{"kind": "lost_request", "op": "effect", "position": 1}]},
    "late_reply_before_retry": {
        "description": "Seed 001: e1's reply comes after its timeout but before the blocked page's retry, "
                       "and commits the record; the credential rotates in between: a retry that calls again "
                       "after committed success goes out bound to the old principal (the committed record "
                       "keeps its reservation)",
        "sink": "idempotent", "auth": {"rotate_at": [16.0]}, "pages": _pages([1, 2]),
        "faults": [{"kind": "late_reply", "position": 1, "delay": 12.0}]},
    "crossed_each_field": {
        "description": "Seed 001: crossed replies, each differing from its request's tuple in one field",
        "sink": "idempotent", "auth": {"rotate_at": [2.0]},
        "pages": _pages([1, 2, 3, 4]),
        "faults": [{"kind": "crossed_reply", "position": p, "differs": d}
                   for p, d in enumerate(CROSSED_FIELDS, 2)]},
    "crossed_after_timeout": {
        "description": "Seed 001 on a retry: e1's first request never reaches the service (a timeout, the "
                       "record provisional), and the retry's reply is crossed: a retry that takes a success "
                       "reply for committed without settling it commits a receipt for no effect",
        "sink": "idempotent", "pages": _pages([1, 2]),
        "faults": [{"kind": "lost_request", "op": "effect", "position": 1},
                   {"kind": "crossed_reply", "position": 1, "differs": "fingerprint"}]},
    "rotation_between_retries": {
        "description": "Seed 001 step 2 on a third try: e1's first two replies are lost and the credential "
                       "rotates after the first: a retry that reserves again on its second try but reuses an "
                       "earlier tuple on a later one calls bound to the old principal (round 70)",
        "sink": "idempotent", "auth": {"rotate_at": [3.0]}, "timing": {"timeout": 5.0},
        "pages": _pages([1, 2]),
        "faults": [{"kind": "lost_response", "op": "effect", "position": 1, "occurrence": k}
                   for k in (1, 2)]},
    "blocked_behind_receipts": {
        "description": "Seed 000 invariant 5 with backfills: e2 and e4 join behind receipted e3 and e5, "
                       "each on a page of its own; e2's first request never reaches the service and e4 fails "
                       "once: a consumer that lets an event pass because a later event of its page holds a "
                       "receipt loses it (round 70)",
        "sink": "idempotent", "backfills": True, "pages": _pages([1, 3, 5], [2, 3], [4, 5, 6]),
        "events": [{"position": 4, "behavior": "transient", "failures": 1}],
        "faults": [{"kind": "lost_request", "op": "effect", "position": 2}]},
    "every_digit": _every_digit("transactional"),
    "every_digit_external": _every_digit("idempotent"),
    "thousand_attempts": {
        "description": "Waits a thousand attempts long: e1 fails 1,000 times, the handler dead-letters e2 "
                       "1,000 times, then C2 answers its own token 1,000 times before it serves e3: a "
                       "consumer that caps its retries or redrives below a thousand (3, 60, 500) quarantines "
                       "e1 or e2, one that takes the same token back that often for the end stops (round 65; "
                       "long_blocks stops at 50 failures, dead_letter_blocks at 2)",
        "sink": "idempotent", "timing": _LONGER,
        "pages": [{"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
                  {"cursor": "C2", "positions": [3], "next_cursor": "C3", "stuck": 1000},
                  {"cursor": "C3", "positions": [], "next_cursor": "C3"}],
        "events": [{"position": 1, "behavior": "transient", "failures": 1000},
                   {"position": 2, "behavior": "dead_letter", "failures": 1000}]},
}
WIDE["two_workers_long_stream"] = {**WIDE["long_stream"], "workers": 2, "random_faults": {"pause": 0.01},
                                   "description": "long_stream raced by two workers that pause now and then: "
                                                  "the only case where a worker goes stale past version 50"}

#: The wide cases small enough to explore (long_blocks has few events but hundreds of crash-point passes).
_EXPLORED_WIDE = ("ignored_external", "rotation_before_retry", "crossed_each_field")
#: The corners explored (the others are one run each: a missing halt needs no fault to show)
_EXPLORED_CORNERS = ("page_out_of_order",)


@cache
def wide(name: str) -> Scenario:
    """The wide case or corner ``name`` as a scenario."""
    return parse({"name": name, **(WIDE.get(name) or CORNERS[name])}, f"<audit case {name}>", name)


def cases(seeds: int = 3, sweep_seeds: int = 20) -> list[Case]:
    """Every case of an audit, cheapest first (bundled, wide and sweep cases before explorations)."""
    scenarios = {name: load(name) for name in bundled()}
    out = [Case("bundled", sc, name, seed) for name, sc in scenarios.items() for seed in _seeds(sc, seeds)]
    out += [Case("corner", wide(name), name, 0) for name in CORNERS]
    out += [Case("wide", wide(name), name, seed) for name in WIDE for seed in _seeds(wide(name), 2)]
    for name, sc in scenarios.items():
        if sc.generate is not None:
            rf = dataclasses.replace(sc.random_faults, **{k: max(getattr(sc.random_faults, k), v)
                                                          for k, v in SWEEP_FAULTS.items()})
            faulty = dataclasses.replace(sc, random_faults=rf)
            out += [Case("sweep", faulty, name, seed) for seed in range(sweep_seeds)]
    explored = []
    for name, sc in [*scenarios.items(), *((n, wide(n)) for n in [*_EXPLORED_CORNERS, *_EXPLORED_WIDE])]:
        if sc.pages is None or _events(sc) > SMALL:
            continue
        explored += [Case("explore", sc, name, sc.seed, b) for b in BOUNDS]
        explored += [Case("explore", sc, name, sc.seed, (0, 0, LOST_IN_A_ROW), (op,)) for op in LOST_OPS]
        if _kept(sc):
            explored.append(Case("explore", sc, name, sc.seed, (1, 0, 0), keep_faults=True))
    return out + sorted(explored, key=lambda c: c.cost)


def _seeds(sc: Scenario, n: int) -> list[int]:
    return [sc.seed] if sc.generate is None else [sc.seed + i for i in range(n)]


def twins(todo: list[Case]) -> dict[int, list[int]]:
    """Cases that run exactly what an earlier case runs, by the index of the earliest: ``{i: [j, …]}``, each
    ``j > i``, only where there is one. Two cases are twins when the scenario each runs (an exploration's
    :func:`~simkit.tools.explore.fault_free` base) is the same but for its name, description and source file,
    with the same seed, bounds, operations and kept faults: a run never reads those three (a consumer sees
    its worker and contract, not the scenario), only a verdict's ``scenario`` names it. ``late_retry`` and
    ``shortcut_no_version_check`` differ only in a scripted pause, which exploration drops: their seven
    explorations were a quarter of the audit's CPU, run twice."""
    out: dict[int, list[int]] = {}
    firsts: dict[tuple, list[tuple[int, Scenario]]] = {}
    for j, case in enumerate(todo):
        same = firsts.setdefault((case.seed, case.bounds, case.ops, case.keep_faults), [])
        inputs = _inputs(case)
        i = next((i for i, sc in same if sc == inputs), None)
        if i is None:
            same.append((j, inputs))
        else:
            out.setdefault(i, []).append(j)
    return out


def _inputs(case: Case) -> Scenario:
    """What a case runs: its scenario (an exploration's base), with no name, description or source."""
    sc = case.scenario if case.bounds is None else fault_free(case.scenario, case.keep_faults)
    return dataclasses.replace(sc, name="", description="", source="")
