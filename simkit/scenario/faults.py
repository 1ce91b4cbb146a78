"""Faults written by hand: a ``[[faults]]`` table of a scenario file (docs/scenarios.md, "Faults") and a crash
given on the command line (``--crash POINT[@POSITION][#OCCURRENCE]``, docs/cli.md)."""
from __future__ import annotations

import re

from simkit.errors import ScenarioError, described, echoed
from simkit.model import CRASH_POINTS, CROSSED_FIELDS, FAULT_KINDS, LOST_FAULTS, LOST_OPS, REPLY_FAULTS, Fault

from .checks import MAX_INT, Checker

__all__ = ["parse_fault", "parse_crash_arg"]


def parse_fault(c: Checker, f: dict, where: str) -> Fault:
    """One ``[[faults]]`` table at key ``where`` as a
    :class:`~simkit.model.Fault` (docs/scenarios.md, "Faults")."""
    if not isinstance(f, dict):
        c.fail(where, "expected a table")
    c.only(f, ("kind", "point", "position", "occurrence", "worker", "op", "duration", "delay", "differs"),
           where)
    if "kind" not in f:
        c.fail(f"{where}.kind", "missing")
    kind = c.choice(f, "kind", FAULT_KINDS, None, where=where)
    point = f.get("point")
    if kind in ("crash", "pause"):
        if "point" not in f:
            c.fail(f"{where}.point", "missing")
        point = c.choice(f, "point", CRASH_POINTS, None, where=where)
    elif point is not None:
        c.fail(f"{where}.point", f"a {kind} names a {'request' if kind == 'lost_request' else 'reply'}, not "
                                 f"a point")
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
        differs=c.choice(f, "differs", CROSSED_FIELDS, "binding", where=where) if kind == "crossed_reply"
        else None,
        position=c.get(f, "position", int, None, where=where),
        occurrence=c.get(f, "occurrence", int, 1, where=where, minimum=1),
        worker=c.get(f, "worker", int, 1, where=where, minimum=1),
        duration=c.get(f, "duration", float, 50.0, where=where, minimum=0.0),
    )


# ASCII digits, and the whole text: \d took Arabic-Indic and full-width digits ('@١٠٦' crashed at 106), and $
# a trailing newline ('before_event_commit\n')
_CRASH_ARG = re.compile(r"(?P<point>[a-z_]+)(?:@(?P<position>-?[0-9]+))?(?:#(?P<occurrence>[0-9]+))?")


def parse_crash_arg(text: str) -> Fault:
    """A crash written ``POINT[@POSITION][#OCCURRENCE]`` (``simkit run --crash``, docs/cli.md); OCCURRENCE is
    at least 1, as a ``[[faults]]`` entry's ``occurrence`` (:func:`parse_fault`). Its errors open with ``crash
    TEXT`` (``param`` ``"crash"``), the position is checked against a scenario by
    :func:`~simkit.scenario.stream.missing_position`."""
    if not isinstance(text, str):              # None was re's TypeError: expected string or bytes-like object
        raise ScenarioError(f"crash {described(text)}: is of type {type(text).__name__}, not a string "
                            "POINT[@POSITION][#OCCURRENCE]", param="crash")
    m = _CRASH_ARG.fullmatch(text)
    if not m or m["point"] not in CRASH_POINTS:
        # escaped and bounded: the text as typed may hold a newline, or be 50,000 characters long
        raise ScenarioError(f"crash {echoed(text)}: expected POINT[@POSITION][#OCCURRENCE] "
                            f"with POINT one of {', '.join(CRASH_POINTS)}", param="crash")
    for key, value in (("position", m["position"]), ("occurrence", m["occurrence"])):
        # more than 4,300 digits: int() itself raises ValueError; 20 digits are past MAX_INT already
        if value and (len(value.lstrip("-0")) > 20 or abs(int(value)) > MAX_INT):
            shown = text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"
            raise ScenarioError(f"crash {shown}: key '{key}': must be within {MAX_INT} either side of 0",
                                param="crash")
    occurrence = int(m["occurrence"]) if m["occurrence"] else 1
    if occurrence < 1:
        raise ScenarioError(f"crash {text}: key 'occurrence': must be at least 1", param="crash")
    return Fault(kind="crash", point=m["point"],
                 position=int(m["position"]) if m["position"] else None, occurrence=occurrence)
