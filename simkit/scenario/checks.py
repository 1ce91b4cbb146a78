"""The rules a scenario file's tables obey (docs/scenarios.md, each section's keys; "Validation errors"):
:class:`Checker` reads one key at a time and fails with one line naming the file and the key, and a
``check_<table>`` function per table builds its part of the :class:`~simkit.model.Scenario`."""
from __future__ import annotations

import math
import reprlib

from simkit.errors import ScenarioError, printable
from simkit.model import (
    BEHAVIORS,
    LOST_FAULTS,
    EventSpec,
    Initial,
    RandomFaults,
    Timing,
    default_id,
)

__all__ = ["Checker", "GENERATE_DEFAULTS", "MAX_INT", "MAX_EVENTS", "MAX_PAGES", "MAX_WORKERS",
           "MAX_FILE_BYTES", "check_auth", "check_events", "check_generate", "check_initial", "check_pages",
           "check_random_faults", "check_timing", "show", "too_many_pages",
           # where they were until the stream's rules moved to .stream
           "carried_positions", "check_cursors", "check_targets", "missing_position"]

#: ``[generate]``'s keys and their defaults (docs/scenarios.md, "Generated streams").
GENERATE_DEFAULTS = {
    "events": 40, "page_size": 5, "overlap": 0.0, "backfill": 0.0, "empty_pages": 0.0, "stuck": 0.0,
    "lost_fetch": 0.0, "poison": 0.0, "transient": 0.0, "review": 0.0, "hold": 0.0,
}
_RATES = [k for k in GENERATE_DEFAULTS if k not in ("events", "page_size")]

#: Upper bounds (issue 20). Every integer key holds at most MAX_INT in magnitude: SQLite's INTEGER and the
#: trace's and logs' 64-bit columns stop at 2**63 - 1, and a checkpoint_version must leave room for a run's
#: increments; 2**53 is also the largest integer a float (and JSON readers that use one) holds exactly.
MAX_INT = 2**53
#: ``[generate] events`` (and ``page_size``): the whole stream is built before the run, whatever its time
#: limit, and a run of 10**6 events takes about 20 s and 0.5 GB (10**7, the earlier bound, was killed at 1.4
#: GB after a minute with no output; ``2**63 - 1`` a MemoryError after minutes). The benchmark's memory figure
#: runs exactly 10**6.
MAX_EVENTS = 1_000_000
#: pages a generated stream may need (about ``events / (1 - empty_pages)`` at worst)
MAX_PAGES = 2 * MAX_EVENTS
#: ``workers``: one SimPy process each (one OS process each in ``simkit live``).
MAX_WORKERS = 64
#: A scenario file is read whole: a bigger one is refused before it is read. TOML is parsed at about a
#: megabyte a second: 64 MiB of ``1,1,1,...`` took five minutes to be refused for its positions. A stream of
#: 1,000,000 positions is a 7 MB file.
MAX_FILE_BYTES = 16 * 1024 * 1024


class _Show(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        return _big(x)            # repr() of an integer past 4,300 digits raises ValueError


_show = _Show()
_show.maxstring = _show.maxother = 60
_show.maxlevel = 3


def show(value) -> str:
    """``value`` as a message shows it: three levels, 60 characters a string, long integers by their size."""
    return _show.repr(value)


class Checker:
    """Reads the keys of one scenario ``source`` (a file name as shown): each method returns a key's value, or
    its default, or raises :class:`ScenarioError` ``SOURCE: key 'WHERE.KEY': PROBLEM``."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, problem: str):
        # str(): a dict given to simkit.parse, not read from TOML, may have a key of another type (3: ...)
        raise ScenarioError(f"{self.source}: key '{printable(str(key))}': {problem}")

    def get(self, table: dict, key: str, typ, default=None, *, where: str = "", minimum=None, maximum=None,
            required=False):
        """``table[key]`` of type ``typ`` (an int is taken as a float; a bool
        is neither), finite, within ``minimum`` and ``maximum`` (integers:
        :data:`MAX_INT`); ``default`` when missing unless ``required``."""
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
                self.fail(full, f"must be finite, got {_big(value)}")
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

    def position(self, key: str, value: int):
        """An event's position: an integer from 0 to :data:`MAX_INT` (an unnamed event's id is
        ``e<position>``, and the logs keep such ids as their non-negative positions)."""
        self.bounded(key, value)
        if value < 0:
            self.fail(key, f"positions are not negative, got {value}")

    def text(self, table: dict, key: str, default=None, *, where: str = "", required=False) -> str:
        """A string that prints as itself: no control characters (a terminal would obey them)."""
        value = self.get(table, key, str, default, where=where, required=required)
        if value is not None and not value.isprintable():
            self.fail(f"{where}.{key}" if where else key,
                      f"{_show.repr(value)} holds control characters; use printable text")
        return value

    def finite(self, key: str, value: float):
        """A number that can be compared and scheduled: ``nan`` compares false with everything (a run
        with it ends early and reads as a false verdict); ``inf`` never arrives (a run with it may never
        end)."""
        if math.isnan(value):
            self.fail(key, "expected a number, got nan")
        if math.isinf(value):
            self.fail(key, f"must be finite, got {value!r}")

    def choice(self, table, key, choices, default, *, where=""):
        """A string that is one of ``choices``."""
        value = self.get(table, key, str, default, where=where)
        if value not in choices:
            self.fail(f"{where}.{key}" if where else key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def rate(self, table, key, default, *, where):
        """A probability: a number from 0 to 1."""
        value = self.get(table, key, float, default, where=where)
        if not 0.0 <= value <= 1.0:
            self.fail(f"{where}.{key}", f"must be between 0 and 1, got {value!r}")
        return value

    def only(self, table: dict, allowed, where: str):
        """Every key of ``table`` is one of ``allowed``."""
        for key in table:
            if key not in allowed:
                self.fail(f"{where}.{key}", "unknown key")


def check_auth(c: Checker, t: dict) -> tuple[float, ...]:
    """``[auth] rotate_at``: increasing, non-negative simulated times."""
    c.only(t, ("rotate_at",), "auth")
    times = c.get(t, "rotate_at", list, [], where="auth")
    for i, x in enumerate(times):
        number = isinstance(x, (int, float)) and not isinstance(x, bool)
        if number and isinstance(x, int):
            c.bounded("auth.rotate_at", x)
        if number:
            c.finite("auth.rotate_at", x)
        if not number or x < 0:
            c.fail("auth.rotate_at", f"expected non-negative times, got {_show.repr(x)}")
        if i and x <= times[i - 1]:
            c.fail("auth.rotate_at", f"times must increase, got {x!r} after {times[i - 1]!r}")
    return tuple(float(x) for x in times)


def check_initial(c: Checker, t: dict) -> Initial:
    c.only(t, ("resume_cursor", "applied_position", "checkpoint_version", "receipts"), "initial")
    receipts = c.get(t, "receipts", list, [], where="initial")
    if len(receipts) > MAX_EVENTS:      # each an event of the stream: 1,900,000 ran two minutes in 700 MB
        c.fail("initial.receipts", f"{len(receipts)} positions; a scenario's stream holds at most "
                                   f"{MAX_EVENTS} events")
    seen: set[int] = set()
    for r in receipts:
        if not isinstance(r, int) or isinstance(r, bool):
            c.fail("initial.receipts", f"expected positions (integers), got {_show.repr(r)}")
        c.position("initial.receipts", r)
        if r in seen:                   # docs/scenarios.md: each position once (7,000,000 of one ran 80 s)
            c.fail("initial.receipts", f"position {r} is listed twice: each position once")
        seen.add(r)
    return Initial(
        resume_cursor=c.text(t, "resume_cursor", None, where="initial"),
        applied_position=c.get(t, "applied_position", int, 0, where="initial", minimum=0),
        checkpoint_version=c.get(t, "checkpoint_version", int, 0, where="initial", minimum=0),
        receipts=tuple(receipts),
    )


def check_timing(c: Checker, t: dict) -> Timing:
    timing = Timing()
    c.only(t, Timing.__slots__, "timing")
    for key in Timing.__slots__:
        setattr(timing, key, c.get(t, key, float, getattr(timing, key), where="timing", minimum=0.0))
    if timing.time_limit <= 0:
        c.fail("timing.time_limit", "must be positive")
    if timing.backoff == 0 and timing.fetch_latency == 0:   # no consumer can wait: round 37's false positive
        c.fail("timing.backoff", "must be positive when fetch_latency is 0: a worker that waits (blocked, "
               "caught up or retrying) would wait no simulated time and retry at one instant for ever")
    return timing


def check_pages(c: Checker, pages: list) -> tuple[dict, ...]:
    """``[[pages]]``: at most :data:`MAX_PAGES` pages carrying at most :data:`MAX_EVENTS` positions in all, as
    a generated stream (a page of 2,000,000 positions ran 150 s in 850 MB)."""
    if len(pages) > MAX_PAGES:
        c.fail("pages", f"{len(pages)} pages; a scenario has at most {MAX_PAGES}")
    seen: set[str] = set()
    out = []
    carried = 0
    for i, p in enumerate(pages):
        where = f"pages[{i}]"
        if not isinstance(p, dict):
            c.fail(where, "expected a table")
        c.only(p, ("cursor", "positions", "next_cursor", "ids", "stuck"), where)
        cursor = _token(c, p, "cursor", where)
        if cursor in seen:
            c.fail(f"{where}.cursor", f"duplicate cursor {_show.repr(cursor)}")
        seen.add(cursor)
        positions = c.get(p, "positions", list, where=where, required=True)
        carried += len(positions)
        if carried > MAX_EVENTS:
            c.fail(f"{where}.positions", f"the pages carry more than {MAX_EVENTS} positions in all (a "
                                          "position carried twice counts twice); a scenario's stream holds "
                                          "at most that many")
        for x in positions:
            if not isinstance(x, int) or isinstance(x, bool):
                c.fail(f"{where}.positions", f"expected integers, got {_show.repr(x)}")
            c.position(f"{where}.positions", x)
        ids = c.get(p, "ids", list, list(map(default_id, positions)), where=where)
        if len(ids) != len(positions) or not all(isinstance(x, str) and x for x in ids):
            c.fail(f"{where}.ids", "must be one non-empty string per position")
        if not all(x.isprintable() for x in ids):
            c.fail(f"{where}.ids", "ids hold control characters; use printable text")
        out.append({
            "cursor": cursor,
            "positions": tuple(positions),
            "ids": tuple(ids),
            "next_cursor": _token(c, p, "next_cursor", where),
            "stuck": c.get(p, "stuck", int, 0, where=where, minimum=0),
        })
    if not out:
        c.fail("pages", "at least one page is needed")
    return tuple(out)


def _token(c: Checker, page: dict, key: str, where: str) -> str:
    """A page's ``cursor`` or ``next_cursor``: printable text, not empty. The empty string is no token: the
    world reads it as "none given" (``[initial] resume_cursor``, a worker that has fetched nothing yet), so a
    run from ``resume_cursor = ""`` started at the first page, the file's state at time 0 silently not run."""
    token = c.text(page, key, where=where, required=True)
    if token == "":
        c.fail(f"{where}.{key}", "is empty; a cursor is a token of at least one character")
    return token


def check_generate(c: Checker, t: dict) -> dict:
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
    # (pages of one event at worst), so 1.0 never ends the stream, and a rate near it makes one too big to
    # build.
    if g["empty_pages"] >= 1.0:
        c.fail("generate.empty_pages", "must be below 1: a stream whose every page is empty never reaches "
                                       "its events")
    if g["lost_fetch"] >= 1.0:     # every fetch response lost: no consumer ever reads a page (round 37)
        c.fail("generate.lost_fetch", "must be below 1: a stream whose every fetch response is lost never "
                                      "serves a page")
    if (problem := too_many_pages(g["events"], g["empty_pages"])) is not None:
        c.fail("generate.empty_pages", problem)
    return g


def too_many_pages(events: int, empty_pages: float) -> str | None:
    """What is wrong with a generated stream of ``events`` whose pages are empty with chance ``empty_pages``
    (below 1): about ``events / (1 - empty_pages)`` pages past :data:`MAX_PAGES`; None when it is within."""
    if (pages := events / (1.0 - empty_pages)) > MAX_PAGES:
        return f"{empty_pages!r} with events = {events} makes about {pages:.3g} pages; at most {MAX_PAGES}"
    return None


#: The ``[[events]]`` keys that only some behaviours read, and which
_ONLY = {"failures": ("transient", "dead_letter"), "resolve_after": ("review",), "resolution": ("review",),
         "release_after": ("hold",)}


def check_events(c: Checker, events: list) -> dict[int, EventSpec]:
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
        behavior = c.choice(e, "behavior", BEHAVIORS, "ok", where=where)
        for key in e:                           # failures = 2 on an ok event was read, and meant nothing
            if (only := _ONLY.get(key)) is not None and behavior not in only:
                c.fail(f"{where}.{key}", f"means nothing for behavior {behavior!r}; it is for "
                       f"{' or '.join(map(repr, only))} only")
        out[pos] = EventSpec(
            behavior=behavior,
            failures=c.get(e, "failures", int, 1, where=where, minimum=0),
            resolve_after=c.get(e, "resolve_after", float, 30.0, where=where, minimum=0.0),
            resolution=c.choice(e, "resolution", ("quarantine", "apply"), "quarantine", where=where),
            release_after=c.get(e, "release_after", float, 30.0, where=where, minimum=0.0),
        )
    return out


def check_random_faults(c: Checker, t: dict) -> RandomFaults:
    rf = RandomFaults()
    c.only(t, RandomFaults.__slots__, "random_faults")
    for key in ("crash", *LOST_FAULTS, "pause"):
        setattr(rf, key, c.rate(t, key, 0.0, where="random_faults"))
    rf.pause_duration = c.get(t, "pause_duration", float, rf.pause_duration, where="random_faults",
                              minimum=0.0)
    rf.max_faults = c.get(t, "max_faults", int, rf.max_faults, where="random_faults", minimum=0)
    return rf


def _big(value: int) -> str:
    """An integer as a message shows it: whole, or its digit count when it is long. Past 4,300 digits Python
    refuses to print it (a hexadecimal literal in TOML is read whatever its length): its size is then counted
    from its bits."""
    if value.bit_length() > 14_000:             # 10**4214 < 2**14000: str() would raise ValueError
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    text = str(value)
    return text if len(text) <= 40 else f"an integer of {len(text.lstrip('-'))} digits"


# the rules that join tables live in .stream, which imports this module: answered here too, as before
from .stream import carried_positions, check_cursors, check_targets, missing_position  # noqa: E402
