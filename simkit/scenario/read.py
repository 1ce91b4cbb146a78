"""Scenario files (docs/scenarios.md): TOML in, a validated :class:`~simkit.model.Scenario` out.

Every problem is reported as one :class:`ScenarioError` line naming the file, the key and what is wrong: the
rules are in :mod:`simkit.scenario.checks`, a fault's in :mod:`simkit.scenario.faults`; this module reads the
file and answers all their public names.

Seed 001 adds, for runs whose sink is external (``idempotent`` or ``unsafe``):

``settlement = "fenced"``
    docs/vocabulary.md, "Settlement": ``fenced``, ``last_write_wins``, ``unfenced`` or
    ``split_validate_write``.
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

Both name the call with ``position``, ``occurrence`` and
``worker``, like ``lost_response`` with ``op = "effect"``.

``[[faults]] kind = "lost_request"``, ``op = "fetch" | "effect" | "checkpoint_write"`` (default ``fetch``)
    the request never reaches the provider, sink or store: it takes no effect, and its caller times out
    exactly as when a ``lost_response`` loses the reply of a request that did. Matched like ``lost_response``,
    except that ``occurrence`` counts requests of the op, not replies. ``[random_faults] lost_request`` is its
    probability per request. Seed 001's ``Reserve`` and ``Settle`` transactions are never lost (see
    :func:`~simkit.ops.lost_op`).
"""
from __future__ import annotations

import os
import tomllib
from importlib.resources import files
from pathlib import Path

from simkit.errors import ScenarioError, described, long_integer, printable
from simkit.model import POLICIES, SINKS, Scenario

from .checks import (
    GENERATE_DEFAULTS,
    MAX_EVENTS,
    MAX_FILE_BYTES,
    MAX_INT,
    MAX_WORKERS,
    Checker,
    check_auth,
    check_events,
    check_generate,
    check_initial,
    check_pages,
    check_random_faults,
    check_timing,
    show,
)
from .faults import parse_crash_arg, parse_fault
from .keydepth import too_deep
from .start import check_start
from .stream import carried_positions, check_cursors, check_targets, check_walked, missing_position

__all__ = ["SCENARIO_DIR", "SETTLEMENTS", "STORES", "GENERATE_DEFAULTS", "MAX_INT", "MAX_EVENTS",
           "MAX_WORKERS", "MAX_FILE_BYTES", "bundled", "load", "read_bytes", "scenario_file",
           "folder_spelled", "parse", "parse_fault", "parse_crash_arg", "carried_positions",
           "missing_position"]

# Package data (pyproject.toml): found the same way in a wheel, a zip and the editable checkout. A
# Traversable, a Path when installed as files: use /, iterdir(), is_file(), read_text() and name only.
SCENARIO_DIR = files("simkit.scenario") / "bundled"
#: The ``settlement`` key's values: the settlement policies (:data:`simkit.model.POLICIES`).
SETTLEMENTS = POLICIES
STORES = ("memory", "sqlite")
_TOP = {"name", "description", "sink", "backfills", "workers", "seed", "settlement", "store",
        "initial", "timing", "pages", "generate", "events", "faults", "random_faults", "auth"}


def bundled() -> list[str]:
    """Names of the bundled scenarios (``simkit/scenario/bundled``; ``simkit list``)."""
    return sorted(p.name.removesuffix(".toml") for p in SCENARIO_DIR.iterdir() if p.name.endswith(".toml"))


def read_bytes(path: str | os.PathLike, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the file at ``path``, opened without blocking: a file regular by its
    mode that is a stream of the kernel's (``/proc/kmsg``) waited for ever for its next line, where every
    command ends in a bounded time (docs/cli.md, "Bounds"); now it is ``BlockingIOError``, an OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        chunks, size = [], 0
        # a MiB a read: one read of limit + 1 asked for 16 MiB of address space for a file of 1 KiB
        while size <= limit and (chunk := os.read(fd, min(limit + 1 - size, 1 << 20))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def folder_spelled(path: str | os.PathLike) -> bool:
    """Does ``path`` name a folder by its spelling (``x.toml/``, ``x.toml/.``), whatever is there? ``Path``
    drops the ending: ``simkit run new.toml/`` read the file ``new.toml``, which the system would not open."""
    text, seps = os.fsdecode(path), tuple(x for x in (os.sep, os.altsep) if x)
    return text.endswith(seps) or text.endswith(tuple(x + "." for x in seps))


def scenario_file(ref: str | os.PathLike) -> Path:
    """The file :func:`load` reads for ``ref``: a path as given, or, for a name with no suffix that is no
    path, the bundled scenario's file (an output path is checked against it: ``shrink retry_walkthrough --out
    .../bundled/retry_walkthrough.toml`` replaced the bundled file). It may not exist."""
    path = Path(ref)
    if not path.suffix and not path.exists():
        path = Path(str(SCENARIO_DIR / f"{os.fspath(ref)}.toml"))
    return path


def load(ref: str | Path) -> Scenario:
    """Load a bundled scenario by name, or a scenario file by path.

    Raises:
        ScenarioError: the file is missing, a folder, unreadable, too big, not TOML, or breaks a rule of
            docs/scenarios.md.
    """
    if not isinstance(ref, (str, os.PathLike)):    # Path(None) was pathlib's TypeError, from deep inside
        raise ScenarioError(f"ref {described(ref)}: is of type {type(ref).__name__}, not a scenario's name "
                            "or a path", param="ref")
    if not os.fspath(ref):                      # Path("") is the current folder, "is a folder" said nothing
        raise ScenarioError("ref '': names no scenario; give a bundled scenario's name or a file's path",
                            param="ref")
    name = printable(str(ref))                  # a message echoes the name as typed, escaped
    try:
        path = scenario_file(ref)
        if path.is_dir():
            raise ScenarioError(f"{name}: is a folder, not a scenario file")
        if folder_spelled(ref):
            raise ScenarioError(f"{name}: names a folder (a trailing '/'), and there is none; name the file "
                                "without it")
        # a loop of links, or a link to nothing: not a missing name
        if not path.exists() and path.is_symlink():
            path.stat()                                 # raises the OSError that says which
        if not path.exists():
            raise ScenarioError(f"{name}: no such scenario (bundled: {', '.join(bundled())})")
        if not path.is_file():                  # a FIFO or a device: reading it may never end
            raise ScenarioError(f"{name}: is not a regular file, not a scenario file")
        name = printable(str(path))
        if (size := path.stat().st_size) > MAX_FILE_BYTES:
            raise ScenarioError(f"{name}: {size} bytes; a scenario file holds at most {MAX_FILE_BYTES}")
        if len(raw := read_bytes(path, MAX_FILE_BYTES)) > MAX_FILE_BYTES:    # grown, or a size of 0 (/proc)
            raise ScenarioError(f"{name}: more than {MAX_FILE_BYTES} bytes; a scenario file holds at most "
                                f"{MAX_FILE_BYTES}")
        # a UTF-8 byte order mark is no error; newlines as read_text() translated them
        text = raw.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except OSError as exc:  # unreadable, a name too long, a loop of links
        raise ScenarioError(f"{name}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            f"{name}: not valid TOML: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    if (problem := too_deep(text)) is not None:    # tomllib's time is quadratic in a key's depth
        raise ScenarioError(f"{name}: {problem}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(f"{name}: not valid TOML: arrays or inline tables nested too deeply") from None
    except ValueError:  # Python's 4,300-digit limit on int(): tomllib raises it bare
        raise ScenarioError(
            f"{name}: {long_integer(text)}; every integer key holds at most {MAX_INT}"
        ) from None
    # a stem of blanks (`` .toml``) names nothing: a file written back with it (``explore --out``) was refused
    default = next((x for x in (Path(path.name).stem, path.name) if x.strip()), "scenario")
    return parse(data, source=name, default_name=printable(default))


def parse(data: dict, source: str = "<scenario>", default_name: str = "scenario") -> Scenario:
    """Validate a scenario already read into a dict (as from TOML).

    Raises:
        ScenarioError: ``data`` is not a dict (``param`` ``data``), or breaks a rule of docs/scenarios.md.
    """
    if not isinstance(data, dict):              # bytes or a str were an AttributeError from the key checks
        raise ScenarioError(f"data {described(data)}: is of type {type(data).__name__}, not a dict (a "
                            "scenario read from TOML: tomllib.loads gives one; simkit.load reads a file)",
                            param="data")
    c = Checker(source)
    for key in data:
        if key not in _TOP:
            c.fail(key, "unknown key")
    sc = Scenario(name=c.text(data, "name", default_name), source=source)
    if "name" in data and not sc.name.strip():  # a label of nothing, in every table and file name it heads
        c.fail("name", f"{show(sc.name)} is empty; give the scenario a name, or leave the key out")
    sc.description = c.get(data, "description", str, "")
    sc.sink = c.choice(data, "sink", SINKS, "transactional")
    sc.backfills = c.get(data, "backfills", bool, False)
    sc.workers = c.get(data, "workers", int, 1, minimum=1, maximum=MAX_WORKERS)
    sc.seed = c.get(data, "seed", int, 0)
    sc.settlement = c.choice(data, "settlement", SETTLEMENTS, "fenced")
    sc.store = c.choice(data, "store", STORES, "memory")
    sc.initial = check_initial(c, c.get(data, "initial", dict, {}))
    sc.timing = check_timing(c, c.get(data, "timing", dict, {}))
    has_pages, has_gen = "pages" in data, "generate" in data
    if has_pages == has_gen:
        c.fail("pages", "give exactly one of [[pages]] (scripted provider) or [generate]")
    if has_pages:
        sc.pages = check_pages(c, c.get(data, "pages", list, []))
        check_cursors(c, sc)
    else:
        sc.generate = check_generate(c, c.get(data, "generate", dict, {}))
    sc.events = check_events(c, c.get(data, "events", list, []))
    sc.faults = tuple(parse_fault(c, f, f"faults[{i}]")
                      for i, f in enumerate(c.get(data, "faults", list, [])))
    check_targets(c, sc)
    check_walked(c, sc)
    check_start(c, sc)
    sc.random_faults = check_random_faults(c, c.get(data, "random_faults", dict, {}))
    sc.rotate_at = check_auth(c, c.get(data, "auth", dict, {}))
    if sc.rotate_at and sc.sink == "transactional":         # accepted, and never took effect
        c.fail("auth.rotate_at", 'rotates the credential of external calls, and a transactional sink makes '
                                 'none: set sink = "idempotent" or "unsafe"')
    return sc
