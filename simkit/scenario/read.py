"""Scenario files (CONTRACT §5): TOML in, a validated :class:`~simkit.model.Scenario` out.

Every problem is reported as one :class:`ScenarioError` line naming the file, the key and what is wrong.

Seed 001 adds, for runs whose sink is external (``idempotent`` or ``unsafe``):

``settlement = "fenced"``
    CONTRACT §3b: ``fenced``, ``last_write_wins``, ``unfenced`` or ``split_validate_write``.
``[auth] rotate_at = [t1, t2, ...]``
    the credential rotates at these simulated times (increasing): the authorization binding is ``P1`` until
    ``t1``, then ``P2``, ... A record not yet committed is reserved again under the new binding.
``[[faults]] kind = "late_reply"``, ``delay = D``
    the reply of an external call arrives ``D`` after the request ran. When ``D`` reaches ``[timing] timeout``
    the caller has already settled a timeout; the late reply is settled by the policy when it arrives.
``[[faults]] kind = "crossed_reply"``, ``differs = "fingerprint" | "binding" | "generation"``
    the call never reaches the service; the reply it gets belongs to another request that reused the operation
    id, with a different request body, a different (the previous, after a rotation) principal, or a stale
    generation.

Both name the call with ``position``, ``occurrence`` and ``worker``, like ``lost_response`` with ``op = "effect"``.

``[[faults]] kind = "lost_request"``, ``op = "fetch" | "effect" | "checkpoint_write"`` (default ``fetch``)
    the request never reaches the provider, sink or store: it takes no effect, and its caller times out exactly
    as when a ``lost_response`` loses the reply of a request that did. Matched like ``lost_response``, except that
    ``occurrence`` counts requests of the op, not replies. ``[random_faults] lost_request`` is its probability per
    request. Seed 001's ``Reserve`` and ``Settle`` transactions are never lost (see :func:`~simkit.ops.lost_op`).
"""
from __future__ import annotations

import math
import re
import reprlib
import tomllib
from importlib.resources import files
from pathlib import Path

from simkit.errors import ScenarioError, printable
from simkit.model import (
    CROSSED_FIELDS,
    BEHAVIORS, CRASH_POINTS, FAULT_KINDS, LOST_FAULTS, LOST_OPS, REPLY_FAULTS, SINKS,
    EventSpec, Fault, Initial, RandomFaults, Scenario, Timing,
)

# Package data (pyproject.toml): found the same way in a wheel, a zip and the editable checkout. A Traversable,
# a Path when installed as files: use /, iterdir(), is_file(), read_text() and name only.
SCENARIO_DIR = files("simkit.scenario") / "bundled"
SETTLEMENTS = ("fenced", "last_write_wins", "unfenced", "split_validate_write")
STORES = ("memory", "sqlite")

GENERATE_DEFAULTS = {
    "events": 40, "page_size": 5, "overlap": 0.0, "backfill": 0.0, "empty_pages": 0.0, "stuck": 0.0,
    "lost_fetch": 0.0, "poison": 0.0, "transient": 0.0, "review": 0.0, "hold": 0.0,
}
_RATES = [k for k in GENERATE_DEFAULTS if k not in ("events", "page_size")]

#: Upper bounds (issue 20). Every integer key holds at most MAX_INT in magnitude: SQLite's INTEGER and the
#: trace's and logs' 64-bit columns stop at 2**63 - 1, and a checkpoint_version must leave room for a run's
#: increments; 2**53 is also the largest integer a float (and JSON readers that use one) holds exactly.
MAX_INT = 2**53
#: ``[generate] events`` (and ``page_size``): a run keeps about 1 KB and takes about 10 µs per event, so 10**7 is
#: some 10 GB; ``2**63 - 1`` was a MemoryError after minutes.
MAX_EVENTS = 10_000_000
#: ``workers``: one SimPy process each (one OS process each in ``simkit live``).
MAX_WORKERS = 64
#: A scenario file is read whole: a bigger one is refused before it is read.
MAX_FILE_BYTES = 64 * 1024 * 1024
_show = reprlib.Repr()
_show.maxstring = _show.maxother = 60
_show.maxlevel = 3
_TOP = {"name", "description", "sink", "backfills", "workers", "seed", "settlement", "store",
        "initial", "timing", "pages", "generate", "events", "faults", "random_faults", "auth"}


def bundled() -> list[str]:
    """Names of the bundled scenarios in ``simkit/scenarios``."""
    return sorted(p.name.removesuffix(".toml") for p in SCENARIO_DIR.iterdir() if p.name.endswith(".toml"))


def load(ref: str | Path) -> Scenario:
    """Load a bundled scenario by name, or a scenario file by path.

    Raises:
        ScenarioError: the file is missing, a folder, unreadable, too big, not TOML, or breaks a rule of
            CONTRACT §5.
    """
    path = Path(ref)
    name = printable(str(ref))                  # a message echoes the name as typed, escaped
    try:
        if not path.suffix and not path.exists():
            path = SCENARIO_DIR / f"{ref}.toml"
        if path.is_dir():
            raise ScenarioError(f"{name}: is a folder, not a scenario file")
        if not path.is_file():
            raise ScenarioError(f"{name}: no such scenario (bundled: {', '.join(bundled())})")
        name = printable(str(path))
        if (size := path.stat().st_size) > MAX_FILE_BYTES:
            raise ScenarioError(f"{name}: {size} bytes; a scenario file holds at most {MAX_FILE_BYTES}")
        text = path.read_text(encoding="utf-8-sig")           # a UTF-8 byte order mark is no error
    except OSError as exc:                                     # unreadable, a name too long, a loop of links
        raise ScenarioError(f"{name}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{name}: not valid TOML: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{name}: not valid TOML: arrays or inline tables nested too deeply") from None
    return parse(data, source=name, default_name=printable(Path(path.name).stem))


def parse(data: dict, source: str = "<scenario>", default_name: str = "scenario") -> Scenario:
    """Validate a scenario already read into a dict (as from TOML)."""
    c = _Checker(source)
    for key in data:
        if key not in _TOP:
            c.fail(key, "unknown key")
    sc = Scenario(name=c.text(data, "name", default_name), source=source)
    sc.description = c.get(data, "description", str, "")
    sc.sink = c.choice(data, "sink", SINKS, "transactional")
    sc.backfills = c.get(data, "backfills", bool, False)
    sc.workers = c.get(data, "workers", int, 1, minimum=1, maximum=MAX_WORKERS)
    sc.seed = c.get(data, "seed", int, 0)
    sc.settlement = c.choice(data, "settlement", SETTLEMENTS, "fenced")
    sc.store = c.choice(data, "store", STORES, "memory")
    sc.initial = _initial(c, c.get(data, "initial", dict, {}))
    sc.timing = _timing(c, c.get(data, "timing", dict, {}))
    has_pages, has_gen = "pages" in data, "generate" in data
    if has_pages == has_gen:
        c.fail("pages", "give exactly one of [[pages]] (scripted provider) or [generate]")
    if has_pages:
        sc.pages = _pages(c, c.get(data, "pages", list, []))
        _cursors(c, sc)
    else:
        sc.generate = _generate(c, c.get(data, "generate", dict, {}))
    sc.events = _events(c, c.get(data, "events", list, []))
    sc.faults = tuple(parse_fault(c, f, f"faults[{i}]") for i, f in enumerate(c.get(data, "faults", list, [])))
    _targets(c, sc)
    sc.random_faults = _random_faults(c, c.get(data, "random_faults", dict, {}))
    sc.rotate_at = _auth(c, c.get(data, "auth", dict, {}))
    return sc


def _cursors(c: "_Checker", sc: Scenario) -> None:
    """CONTRACT §5: every cursor a page or ``[initial]`` names is a page of the scenario, one id belongs to one
    position, and the only cycle of ``next_cursor`` is the last page's answer of its own token. A cursor naming no
    page was refused at run time as if the consumer were to blame (the verdict then blamed ``safe`` for lost
    events); one id at two positions was judged ok; a cycle ran until the time limit, or the progress guard."""
    pages = {p["cursor"]: i for i, p in enumerate(sc.pages)}
    start = sc.initial.resume_cursor
    if start is not None and start not in pages:
        c.fail("initial.resume_cursor", f"{_show.repr(start)} names no page{_known(pages)}")
    for i, p in enumerate(sc.pages):
        if p["next_cursor"] not in pages:
            c.fail(f"pages[{i}].next_cursor", f"{_show.repr(p['next_cursor'])} names no page{_known(pages)}")
    state: dict[str, int] = {}                  # 1: on the path being followed, 2: known to end in a self-loop
    for first in pages:
        path, cursor = [], first
        while state.get(cursor) is None:
            state[cursor] = 1
            path.append(cursor)
            cursor = sc.pages[pages[cursor]]["next_cursor"]
        if state[cursor] == 1 and cursor != path[-1]:
            loop = path[path.index(cursor):] + [cursor]
            shown = " -> ".join(_show.repr(x) for x in loop[:6]) + (" -> ..." if len(loop) > 6 else "")
            c.fail(f"pages[{pages[path[-1]]}].next_cursor",
                   f"cycle {shown}: the stream would never end (only its end page names itself)")
        for x in path:
            state[x] = 2
    where: dict[str, tuple[int, str]] = {}      # id -> (position, the key that first gave it)
    for i, p in enumerate(sc.pages):
        for k, (eid, pos) in enumerate(zip(p["ids"], p["positions"])):
            first = where.setdefault(eid, (pos, f"pages[{i}]"))
            if first[0] != pos:
                c.fail(f"pages[{i}].ids", f"id {_show.repr(eid)} at position {pos} here and at position {first[0]} "
                                          f"in {first[1]}: one id belongs to one position")
    carried = {pos for pos, _key in where.values()}
    for pos in sc.initial.receipts:             # a receipt's event no page carries is e<position>
        first = where.get(f"e{pos}") if pos not in carried else None
        if first is not None and first[0] != pos:
            c.fail("initial.receipts", f"position {pos} is event e{pos}, which {first[1]} carries at position "
                                       f"{first[0]}: one id belongs to one position")


def _known(pages: dict) -> str:
    names = list(pages)
    shown = ", ".join(_show.repr(x) for x in names[:8]) + (", ..." if len(names) > 8 else "")
    return f" (pages: {shown})"


def _targets(c: "_Checker", sc: Scenario) -> None:
    """Every ``[[events]]`` entry and fault names a position of the stream and a worker of the run: one that
    names neither would be accepted and never take effect. The carried positions are gathered once (a lookup
    per entry, not a scan of every page)."""
    carried = carried_positions(sc)
    for i, pos in enumerate(sc.events):
        if (problem := missing_position(sc, pos, carried)) is not None:
            c.fail(f"events[{i}].position", problem)
    for i, f in enumerate(sc.faults):
        if f.worker > sc.workers:
            c.fail(f"faults[{i}].worker", f"no worker {f.worker}: the scenario has workers = {sc.workers}")
        if f.position is not None and (problem := missing_position(sc, f.position, carried)) is not None:
            c.fail(f"faults[{i}].position", problem)


def carried_positions(sc: Scenario) -> frozenset[int] | None:
    """A scripted stream's positions: those its pages carry, plus ``[initial] receipts`` (the provider adds
    those events). ``None`` for a generated stream, whose positions :func:`missing_position` computes."""
    if sc.pages is None:
        return None
    return frozenset(sc.initial.receipts).union(x for p in sc.pages for x in p["positions"])


def missing_position(sc: Scenario, pos: int, carried: frozenset[int] | None = None) -> str | None:
    """Why no event of the stream can have position ``pos``, or ``None`` if one can.

    Scripted: :func:`carried_positions` (pass it as ``carried`` when asking about many positions).
    Generated: the i-th event has position 10·(i+1); backfills (only with ``backfill`` > 0) land between
    them, below the last one (see :func:`simkit.world.provider._arrivals`), at positions that depend on the seed.
    """
    if sc.pages is not None:
        if pos in (carried if carried is not None else carried_positions(sc)):
            return None
        return f"no page carries position {pos}"
    top = 10 * sc.generate["events"]
    if not 1 <= pos <= top:
        return f"position {pos} is outside the generated stream (1..{top} for events = {sc.generate['events']})"
    if pos % 10 and not sc.generate["backfill"]:
        return (f"position {pos} is not in the generated stream: with backfill = 0 its positions are "
                f"10, 20, ..., {top}")
    return None


def _auth(c: "_Checker", t: dict) -> tuple[float, ...]:
    """``[auth] rotate_at``: increasing, non-negative simulated times."""
    c.only(t, ("rotate_at",), "auth")
    times = c.get(t, "rotate_at", list, [], where="auth")
    for i, x in enumerate(times):
        number = isinstance(x, (int, float)) and not isinstance(x, bool)
        if number:
            c.finite("auth.rotate_at", x)
        if not number or x < 0:
            c.fail("auth.rotate_at", f"expected non-negative times, got {x!r}")
        if i and x <= times[i - 1]:
            c.fail("auth.rotate_at", f"times must increase, got {x!r} after {times[i - 1]!r}")
    return tuple(float(x) for x in times)


class _Checker:
    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, problem: str):
        raise ScenarioError(f"{self.source}: key '{printable(key)}': {problem}")

    def get(self, table: dict, key: str, typ, default=None, *, where: str = "", minimum=None, maximum=None,
            required=False):
        full = f"{where}.{key}" if where else key
        if key not in table:
            if required:
                self.fail(full, "missing")
            return default
        value = table[key]
        ok = isinstance(value, typ) and not (typ in (int, float) and isinstance(value, bool))
        if typ is float and isinstance(value, int) and not isinstance(value, bool):
            try:
                value, ok = float(value), True
            except OverflowError:
                self.fail(full, f"must be finite, got an integer of {len(str(value))} digits")
        if not ok:
            name = {dict: "table", list: "array"}.get(typ, typ.__name__)
            self.fail(full, f"expected {name}, got {type(value).__name__} {_show.repr(value)}")
        if typ is float:
            self.finite(full, value)
        if typ is int:
            self.bounded(full, value, maximum)
        if minimum is not None and value < minimum:
            self.fail(full, f"must be at least {minimum}, got {value!r}")
        return value

    def bounded(self, key: str, value: int, maximum: int | None = None):
        """An integer within ``maximum`` (default :data:`MAX_INT`), and within -MAX_INT."""
        top = MAX_INT if maximum is None else maximum
        if value > top:
            self.fail(key, f"must be at most {top}, got {_big(value)}")
        if value < -MAX_INT:
            self.fail(key, f"must be at least {-MAX_INT}, got {_big(value)}")

    def text(self, table: dict, key: str, default=None, *, where: str = "", required=False) -> str:
        """A string that prints as itself: no control characters (a terminal would obey them)."""
        value = self.get(table, key, str, default, where=where, required=required)
        if value is not None and not value.isprintable():
            self.fail(f"{where}.{key}" if where else key,
                      f"{_show.repr(value)} holds control characters; use printable text")
        return value

    def finite(self, key: str, value: float):
        """A number that can be compared and scheduled: ``nan`` compares false with everything (a run
        with it ends early and reads as a false verdict); ``inf`` never arrives (a run with it may never end)."""
        if math.isnan(value):
            self.fail(key, "expected a number, got nan")
        if math.isinf(value):
            self.fail(key, f"must be finite, got {value!r}")

    def choice(self, table, key, choices, default, *, where=""):
        value = self.get(table, key, str, default, where=where)
        if value not in choices:
            self.fail(f"{where}.{key}" if where else key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def rate(self, table, key, default, *, where):
        value = self.get(table, key, float, default, where=where)
        if not 0.0 <= value <= 1.0:
            self.fail(f"{where}.{key}", f"must be between 0 and 1, got {value!r}")
        return value

    def only(self, table: dict, allowed, where: str):
        for key in table:
            if key not in allowed:
                self.fail(f"{where}.{key}", "unknown key")


def _initial(c: _Checker, t: dict) -> Initial:
    c.only(t, ("resume_cursor", "applied_position", "checkpoint_version", "receipts"), "initial")
    receipts = c.get(t, "receipts", list, [], where="initial")
    for r in receipts:
        if not isinstance(r, int) or isinstance(r, bool):
            c.fail("initial.receipts", f"expected positions (integers), got {_show.repr(r)}")
        c.bounded("initial.receipts", r)
    return Initial(
        resume_cursor=c.text(t, "resume_cursor", None, where="initial"),
        applied_position=c.get(t, "applied_position", int, 0, where="initial"),
        checkpoint_version=c.get(t, "checkpoint_version", int, 0, where="initial", minimum=0),
        receipts=tuple(receipts),
    )


def _timing(c: _Checker, t: dict) -> Timing:
    timing = Timing()
    c.only(t, Timing.__slots__, "timing")
    for key in Timing.__slots__:
        setattr(timing, key, c.get(t, key, float, getattr(timing, key), where="timing", minimum=0.0))
    if timing.time_limit <= 0:
        c.fail("timing.time_limit", "must be positive")
    return timing


def _pages(c: _Checker, pages: list) -> tuple[dict, ...]:
    seen: set[str] = set()
    out = []
    for i, p in enumerate(pages):
        where = f"pages[{i}]"
        if not isinstance(p, dict):
            c.fail(where, "expected a table")
        c.only(p, ("cursor", "positions", "next_cursor", "ids", "stuck"), where)
        cursor = c.text(p, "cursor", where=where, required=True)
        if cursor in seen:
            c.fail(f"{where}.cursor", f"duplicate cursor {_show.repr(cursor)}")
        seen.add(cursor)
        positions = c.get(p, "positions", list, where=where, required=True)
        for x in positions:
            if not isinstance(x, int) or isinstance(x, bool):
                c.fail(f"{where}.positions", f"expected integers, got {_show.repr(x)}")
            c.bounded(f"{where}.positions", x)
        ids = c.get(p, "ids", list, [f"e{x}" for x in positions], where=where)
        if len(ids) != len(positions) or not all(isinstance(x, str) and x for x in ids):
            c.fail(f"{where}.ids", "must be one non-empty string per position")
        if not all(x.isprintable() for x in ids):
            c.fail(f"{where}.ids", "ids hold control characters; use printable text")
        out.append({
            "cursor": cursor,
            "positions": tuple(positions),
            "ids": tuple(ids),
            "next_cursor": c.text(p, "next_cursor", where=where, required=True),
            "stuck": c.get(p, "stuck", int, 0, where=where, minimum=0),
        })
    if not out:
        c.fail("pages", "at least one page is needed")
    return tuple(out)


def _generate(c: _Checker, t: dict) -> dict:
    c.only(t, GENERATE_DEFAULTS, "generate")
    g = {
        "events": c.get(t, "events", int, GENERATE_DEFAULTS["events"], where="generate", minimum=1,
                        maximum=MAX_EVENTS),
        "page_size": c.get(t, "page_size", int, GENERATE_DEFAULTS["page_size"], where="generate", minimum=1,
                           maximum=MAX_EVENTS),
    }
    for key in _RATES:
        g[key] = c.rate(t, key, GENERATE_DEFAULTS[key], where="generate")
    # A page is empty with chance empty_pages, whatever is left: about events / (1 - empty_pages) pages in all
    # (pages of one event at worst), so 1.0 never ends the stream, and a rate near it makes one too big to build.
    if g["empty_pages"] >= 1.0:
        c.fail("generate.empty_pages", "must be below 1: a stream whose every page is empty never reaches its events")
    if (pages := g["events"] / (1.0 - g["empty_pages"])) > MAX_EVENTS:
        c.fail("generate.empty_pages", f"{g['empty_pages']!r} with events = {g['events']} makes about {pages:.3g} "
                                       f"pages; at most {MAX_EVENTS}")
    return g


def _events(c: _Checker, events: list) -> dict[int, EventSpec]:
    out: dict[int, EventSpec] = {}
    for i, e in enumerate(events):
        where = f"events[{i}]"
        if not isinstance(e, dict):
            c.fail(where, "expected a table")
        c.only(e, ("position", "behavior", "failures", "resolve_after", "resolution", "release_after"), where)
        pos = c.get(e, "position", int, where=where, required=True)
        if pos in out:
            first = list(out).index(pos)
            c.fail(f"{where}.position", f"duplicate position {pos} (events[{first}] already gives it)")
        out[pos] = EventSpec(
            behavior=c.choice(e, "behavior", BEHAVIORS, "ok", where=where),
            failures=c.get(e, "failures", int, 1, where=where, minimum=0),
            resolve_after=c.get(e, "resolve_after", float, 30.0, where=where, minimum=0.0),
            resolution=c.choice(e, "resolution", ("quarantine", "apply"), "quarantine", where=where),
            release_after=c.get(e, "release_after", float, 30.0, where=where, minimum=0.0),
        )
    return out


def parse_fault(c: _Checker, f: dict, where: str) -> Fault:
    """Validate one ``[[faults]]`` table."""
    if not isinstance(f, dict):
        c.fail(where, "expected a table")
    c.only(f, ("kind", "point", "position", "occurrence", "worker", "op", "duration", "delay", "differs"), where)
    kind = c.choice(f, "kind", FAULT_KINDS, None, where=where) if "kind" in f else c.fail(f"{where}.kind", "missing")
    point = f.get("point")
    if kind in ("crash", "pause"):
        point = c.choice(f, "point", CRASH_POINTS, None, where=where) if "point" in f else c.fail(f"{where}.point", "missing")
    elif point is not None:
        c.fail(f"{where}.point", f"a {kind} names a {'request' if kind == 'lost_request' else 'reply'}, not a point")
    op = None
    if kind in LOST_FAULTS:
        op = c.choice(f, "op", LOST_OPS, "fetch", where=where)
    elif "op" in f:
        c.fail(f"{where}.op", "only a lost_response names an op (or a lost_request)")
    elif kind in REPLY_FAULTS:
        op = "effect"
    if "delay" in f and kind != "late_reply":
        c.fail(f"{where}.delay", "only a late_reply has a delay")
    if "differs" in f and kind != "crossed_reply":
        c.fail(f"{where}.differs", "only a crossed_reply has differs")
    if kind == "late_reply" and "delay" not in f:
        c.fail(f"{where}.delay", "missing")
    return Fault(
        kind=kind, point=point, op=op,
        delay=c.get(f, "delay", float, 0.0, where=where, minimum=0.0),
        differs=c.choice(f, "differs", CROSSED_FIELDS, "binding", where=where) if kind == "crossed_reply" else None,
        position=c.get(f, "position", int, None, where=where),
        occurrence=c.get(f, "occurrence", int, 1, where=where, minimum=1),
        worker=c.get(f, "worker", int, 1, where=where, minimum=1),
        duration=c.get(f, "duration", float, 50.0, where=where, minimum=0.0),
    )


def _random_faults(c: _Checker, t: dict) -> RandomFaults:
    rf = RandomFaults()
    c.only(t, RandomFaults.__slots__, "random_faults")
    for key in ("crash", *LOST_FAULTS, "pause"):
        setattr(rf, key, c.rate(t, key, 0.0, where="random_faults"))
    rf.pause_duration = c.get(t, "pause_duration", float, rf.pause_duration, where="random_faults", minimum=0.0)
    rf.max_faults = c.get(t, "max_faults", int, rf.max_faults, where="random_faults", minimum=0)
    return rf


_CRASH_ARG = re.compile(r"^(?P<point>[a-z_]+)(?:@(?P<position>-?\d+))?(?:#(?P<occurrence>\d+))?$")


def parse_crash_arg(text: str) -> Fault:
    """``POINT[@POSITION][#OCCURRENCE]`` from ``--crash`` (CONTRACT §6); OCCURRENCE is at least 1, as a
    ``[[faults]]`` entry's ``occurrence`` (:func:`parse_fault`)."""
    m = _CRASH_ARG.match(text)
    if not m or m["point"] not in CRASH_POINTS:
        raise ScenarioError(f"--crash {text}: key 'point': expected POINT[@POSITION][#OCCURRENCE] "
                            f"with POINT one of {', '.join(CRASH_POINTS)}")
    occurrence = int(m["occurrence"]) if m["occurrence"] else 1
    if occurrence < 1:
        raise ScenarioError(f"--crash {text}: key 'occurrence': must be at least 1")
    for key, value in (("position", m["position"]), ("occurrence", m["occurrence"])):
        if value and abs(int(value)) > MAX_INT:
            raise ScenarioError(f"--crash {text}: key '{key}': must be within {MAX_INT} either side of 0")
    return Fault(kind="crash", point=m["point"],
                 position=int(m["position"]) if m["position"] else None, occurrence=occurrence)


def _big(value: int) -> str:
    """An integer as a message shows it: whole, or its digit count when it is long."""
    text = str(value)
    return text if len(text) <= 40 else f"an integer of {len(text.lstrip('-'))} digits"
