"""Shrinking: a failing run reduced to a minimal scripted scenario that still fails the same way.

1. The failing run (a generated scenario with seeded random faults, say) becomes a scripted scenario: the
   provider's chain of pages with their opaque tokens, event behaviours as ``[[events]]``, and every fault
   that struck as an explicit ``[[faults]]`` entry (``FaultPlan.fired``, plus the fetch responses the
   provider itself lost). It must replay to the same failure, or shrinking stops with an error.
2. Delta debugging (Zeller's ddmin) then removes, while the failure kind stays the same (lost, duplicated,
   regressions, which of seed 000's invariants are broken, incomplete, which seed 001 settlement violations;
   see :func:`~simkit.tools.explore.failure_kind`):
   whole pages (the chain is relinked, tokens unchanged), events, second deliveries of overlapping events,
   faults, event behaviours, stuck tokens, initial receipts, the second worker. A fault or behaviour at a
   position no page carries any more goes with it (the file format refuses it). It repeats until no single
   removal keeps the failure.
3. The result is written as a scenario TOML that ``simkit run FILE --strategy S`` replays to the same failure.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import count

from simkit.errors import SimkitError, printable
from simkit.judge.report import counts_line
from simkit.model import Scenario, default_id
from simkit.procedure.strategies import strategy_name
from simkit.runner import Run, checked, judged
from simkit.scenario.read import parse

from .exploration import describe_kind, failure_kind
from .scenario_toml import replay_command, scenario_data, scripted_data, toml_text
from .schedules import strategy_class

__all__ = ["Shrunk", "shrink", "scenario_data", "toml_text", "scripted_data", "replay_command"]


# -- delta debugging -----------------------------------------------------------------------------------------
def _ddmin(items: list, fails) -> list:
    """A 1-minimal sublist of ``items`` for which ``fails`` still holds (Zeller and Hildebrandt's ddmin)."""
    if items and fails([]):
        return []
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        for k in range(len(chunks)):
            rest = [x for j, c in enumerate(chunks) if j != k for x in c]
            if fails(rest):
                items, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(2 * n, len(items))
    return items


def _chain(data: dict) -> tuple[list[dict], list[dict]]:
    """The pages on the chain from the initial cursor (the last one the end of the stream), and the others."""
    by = {p["cursor"]: p for p in data["pages"]}
    chain, seen = [], set()
    c = data.get("initial", {}).get("resume_cursor", data["pages"][0]["cursor"])
    while c in by and c not in seen:
        seen.add(c)
        chain.append(by[c])
        c = by[c]["next_cursor"]
    return chain, [p for p in data["pages"] if p["cursor"] not in seen]


def _relink(data: dict, kept: list[dict], end: dict, off: list[dict]) -> dict:
    """``data`` with the chain made of ``kept`` pages (in order) and then ``end``, tokens unchanged."""
    pages = [dict(p) for p in kept] + [dict(end)]
    for a, b in zip(pages, pages[1:]):
        a["next_cursor"] = b["cursor"]
    out = dict(data, pages=pages + off)
    out["initial"] = dict(data.get("initial", {}), resume_cursor=pages[0]["cursor"])
    return _carried(out)


def _carried(data: dict) -> dict:
    """``data`` without the ``[[events]]`` and ``[[faults]]`` entries whose position no page carries any more
    (nor ``[initial] receipts``): :func:`~simkit.scenario.read.parse` refuses those (docs/scenarios.md: a
    target must be a position some page carries), and a reduction that removes a position removes what targets
    it with it."""
    have = set(data.get("initial", {}).get("receipts", ())) | {
        x for p in data["pages"] for x in p["positions"]
    }
    out = dict(data)
    for key in ("events", "faults"):
        if key in data:
            out[key] = [e for e in data[key] if e.get("position") is None or e["position"] in have]
    return out


@dataclass
class Shrunk:
    """The outcome of :func:`shrink`."""

    scenario: str
    strategy: str
    seed: int
    failure: str
    original: dict          # sizes: pages, events, faults
    shrunk: dict
    runs: int               # runs tried while shrinking
    data: dict              # the shrunk scenario, as a dict parse() accepts
    run: Run                # its run
    reference: str = ""     # the strategy as the user named it (a name, or a path.py:Class reference)

    def replay(self, path: str = "THIS_FILE") -> str:
        """The ``simkit run`` command that replays the shrunk file."""
        return replay_command(path, self.reference or self.strategy, self.seed)

    def toml(self) -> str:
        return toml_text(self.data, f"Replay: {self.replay()}\nExpected failure: {self.failure}")

    def summary(self, out: str | None = None) -> str:
        """What ``simkit shrink`` prints."""
        a, b = self.original, self.shrunk
        size = lambda d: ", ".join(f"{n} {k[:-1] if n == 1 else k}" for k, n in d.items())
        lines = [f"shrink {self.scenario} · {printable(self.strategy)} · seed {self.seed}: {self.failure}",
                 f"  from {size(a)} to {size(b)} ({self.runs} runs tried)",
                 f"  shrunk run: {counts_line(self.run.verdict, brief=True)}"]
        if out:
            lines.append(f"  wrote {printable(out)}: replay with {printable(self.replay(out))}")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"scenario": self.scenario, "strategy": self.strategy, "seed": self.seed,
                "failure": self.failure,
                "original": self.original, "shrunk": self.shrunk, "runs": self.runs,
                "verdict": self.run.as_dict()}


def _sizes(data: dict) -> dict:
    ids = {i for p in data["pages"] for i in p.get("ids", list(map(default_id, p["positions"])))}
    return {"pages": len(data["pages"]), "events": len(ids), "faults": len(data.get("faults", []))}


class _Oracle:
    """Does a candidate scenario still fail the same way? Cached, counted."""

    def __init__(self, cls, seed: int, kind: tuple, source: str):
        self.cls, self.seed, self.kind, self.source = cls, seed, kind, source
        self.runs = 0
        self._cache: dict[str, bool] = {}

    def __call__(self, data: dict | None) -> bool:
        if data is None or not data.get("pages"):
            return False
        key = json.dumps(data, sort_keys=True, default=list)
        if key not in self._cache:
            self.runs += 1
            try:
                run = judged(parse(data, source=self.source), self.cls, self.seed)   # parsed: checked
                self._cache[key] = failure_kind(run.verdict) == self.kind
            except SimkitError:
                self._cache[key] = False
        return self._cache[key]


def _passes(data: dict, still: _Oracle) -> dict:
    """One round of every reduction; returns the (possibly) smaller scenario."""
    # whole pages of the chain (the final page, the end of the stream, stays)
    chain, off = _chain(data)
    if len(chain) > 1:
        body, end = chain[:-1], chain[-1]
        keep = _ddmin(body, lambda ps: still(_relink(data, ps, end, off)))
        data = _relink(data, keep, end, off)
    # events, everywhere they are delivered
    ids = sorted({i for p in data["pages"] for i in _ids(p)}, key=lambda i: (_pos(data, i), i))
    kept_ids = set(_ddmin(ids, lambda kept: still(_only_events(data, set(kept)))))
    data = _only_events(data, kept_ids)
    # second deliveries of overlapping events
    seen, extra = set(), []
    for k, p in enumerate(data["pages"]):
        for i in _ids(p):
            if i in seen:
                extra.append((k, i))
            seen.add(i)
    if extra:
        drop = [x for x in extra if x not in set(_ddmin(extra,
                                                        lambda ks: still(_drop(data, set(extra) - set(ks)))))]
        data = _drop(data, set(drop))
    # faults, behaviours, stuck tokens, initial receipts
    for key in ("faults", "events"):
        if data.get(key):
            kept = _ddmin(list(data[key]), lambda xs, data=data, key=key: still(_with(data, key, xs)))
            data = _with(data, key, kept)
    stuck = [p["cursor"] for p in data["pages"] if p.get("stuck")]
    if stuck:
        unstuck = set(_ddmin(stuck, lambda cs: still(_unstick(data, set(cs)))))
        data = _unstick(data, unstuck)
    receipts = data.get("initial", {}).get("receipts", [])
    if receipts:
        kept = _ddmin(list(receipts),
                      lambda rs: still(_carried(dict(data, initial=dict(data["initial"], receipts=rs)))))
        data = _carried(dict(data, initial=dict(data["initial"], receipts=kept)))
    if data.get("workers", 1) > 1:
        faults = data.get("faults", [])
        mine = [f for f in faults if f.get("worker", 1) == 1]
        # the other's faults, on worker 1
        moved = [{k: v for k, v in f.items() if k != "worker"} for f in faults]
        for candidate in (mine, moved):
            one = _with(dict(data, workers=1), "faults", candidate)
            if still(one):
                data = one
                break
    return data


def _ids(p: dict) -> list[str]:
    return list(p.get("ids", list(map(default_id, p["positions"]))))


def _pos(data: dict, eid: str) -> int:
    for p in data["pages"]:
        for i, x in zip(_ids(p), p["positions"]):
            if i == eid:
                return x
    return 0


def _page_with(p: dict, pairs: list[tuple[str, int]]) -> dict:
    out = dict(p, positions=[x for _i, x in pairs])
    if "ids" in p or any(i != default_id(x) for i, x in pairs):
        out["ids"] = [i for i, _x in pairs]
    return out


def _only_events(data: dict, keep: set[str]) -> dict:
    pages = [_page_with(p, [(i, x) for i, x in zip(_ids(p), p["positions"]) if i in keep])
             for p in data["pages"]]
    return _carried(dict(data, pages=pages))


def _drop(data: dict, pairs: set) -> dict:
    pages = [_page_with(p, [(i, x) for i, x in zip(_ids(p), p["positions"]) if (k, i) not in pairs])
             for k, p in enumerate(data["pages"])]
    return _carried(dict(data, pages=pages))


def _with(data: dict, key: str, items: list) -> dict:
    out = dict(data)
    if items:
        out[key] = items
    else:
        out.pop(key, None)
    return out


def _unstick(data: dict, keep: set[str]) -> dict:
    pages = []
    for p in data["pages"]:
        q = dict(p)
        if q.get("stuck") and q["cursor"] not in keep:
            q.pop("stuck")
        pages.append(q)
    return dict(data, pages=pages)


def shrink(scenario: Scenario, strategy="safe", seed: int | None = None, *, max_rounds: int | None = None
           ) -> Shrunk:
    """Shrink the failing run of ``strategy`` on ``scenario`` (at ``seed``) to a minimal scripted scenario:
    rounds of every reduction until one removes nothing (each that removes something leaves less to remove),
    or ``max_rounds`` of them.

    Raises:
        SimkitError: the run does not fail, or could not be made into a scripted scenario that fails the same
            way.
    """
    cls = strategy_class(strategy)              # resolved once a process, as explore's (cmd_explore)
    name = strategy_name(cls)
    checked(scenario)                           # ("retry_walkthrough" was an AttributeError: no seed)
    seed = scenario.seed if seed is None else seed
    original = judged(scenario, cls, seed)
    if original.verdict.ok:
        raise SimkitError(f"shrink: {scenario.name} · {name} · seed {seed} does not fail: nothing to shrink")
    kind = failure_kind(original.verdict)
    data = scripted_data(original)
    data["name"] = f"{scenario.name}_{name}_seed{seed}_shrunk"
    still = _Oracle(cls, seed, kind, data["name"])
    if not still(data):
        raise SimkitError(f"shrink: {scenario.name} · {name} · seed {seed}: its scripted form does not "
                          f"fail the same way ({describe_kind(kind)}); cannot shrink it")
    before = _sizes(data)
    for _ in range(max_rounds) if max_rounds is not None else count():
        smaller = _passes(data, still)
        if smaller == data:
            break
        data = smaller
    after = _sizes(data)
    data["description"] = (f"Shrunk by simkit shrink from {scenario.name} (seed {seed}) for {name}, which "
                           f"still fails here the same way: {describe_kind(kind)}. From {before['pages']} "
                           f"pages, {before['events']} events and {before['faults']} faults to "
                           f"{after['pages']}, {after['events']} and {after['faults']}.")
    data = {k: data[k] for k in ("name", "description",
                                 *[k for k in data if k not in ("name", "description")])}
    run = judged(parse(data, source=data["name"]), cls, seed)
    if (again := failure_kind(run.verdict)) != kind:        # what `simkit run FILE` would show instead
        raise SimkitError(f"shrink: {scenario.name} · {name} · seed {seed}: the shrunk scenario's replay "
                          f"gives {describe_kind(again)}, not {describe_kind(kind)}: the consumer is not "
                          "deterministic, and nothing was written")
    return Shrunk(scenario.name, name, seed, describe_kind(kind), before, after, still.runs, data, run,
                  strategy if isinstance(strategy, str) else name)
