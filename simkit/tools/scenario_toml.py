"""A scenario as scenario TOML: the scripted form of a run (:func:`scripted_data`), any scenario as a dict
(:func:`scenario_data`, :mod:`simkit.scenario.write`'s, answered here) and as text (:func:`toml_text`), and
the ``simkit run`` command that replays it (:func:`replay_command`); docs/scenarios.md is the format.
:mod:`simkit.tools.shrink` writes what it shrinks with them."""
from __future__ import annotations

import dataclasses
import hashlib
import re
import shlex

from simkit.errors import SimkitError, printable
from simkit.model import REPLY_LOST, REQUEST_LOST, EventSpec, Fault, RandomFaults
from simkit.runner import Run
from simkit.scenario.write import scenario_data
from simkit.truth.trace import CURSOR_REFUSED

__all__ = ["scenario_data", "toml_text", "scripted_data", "replay_command", "shell_word", "file_stem"]


def replay_command(target: str, strategy: str, seed: int | None = None, settlement: str | None = None,
                   store: str | None = None, crashes=()) -> str:
    """The ``simkit run`` command line (docs/cli.md) that replays a run of
    ``target``, shell-quoted: the strategy as the user named it (a name or a
    ``path.py:Class`` reference), then the overrides the file does not carry."""
    cmd = ["simkit", "run", target, "--strategy", strategy]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    for opt, value in (("settlement", settlement), ("store", store)):
        if value:
            cmd += [f"--{opt}", value]
    cmd += [x for c in crashes for x in ("--crash", c)]
    return " ".join(shell_word(x) for x in cmd)


def shell_word(arg: str) -> str:
    """``arg`` as a shell takes it back, on one line of printable characters: ``shlex.quote``'s, or, for an
    argument with a character a terminal would obey or a byte that is no UTF-8 (a file name Python read as a
    lone surrogate, ``\\udcff``), bash's ``$'...'`` with that byte or character as ``\\xNN`` escapes:
    :func:`~simkit.errors.printable` of the quoted word printed ``'\\udcff.toml'``, a name no shell undoes."""
    if arg.isprintable() and not any(0xD800 <= ord(c) <= 0xDFFF for c in arg):
        return shlex.quote(arg)
    out = []
    for c in arg:
        o = ord(c)
        if c in "'\\":
            out.append("\\" + c)
        elif 0xDC80 <= o <= 0xDCFF:             # surrogateescape's stand-in for the byte o - 0xDC00
            out.append(f"\\x{o - 0xDC00:02x}")
        elif 0xD800 <= o <= 0xDFFF:             # no byte stands behind it: its code point, as bash spells it
            out.append(f"\\u{o:04x}")
        elif c.isprintable():
            out.append(c)
        else:
            out.append("".join(f"\\x{b:02x}" for b in c.encode("utf-8")))
    return "$'" + "".join(out) + "'"


# -- scenarios as TOML ---------------------------------------------------------------------------------------
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string of ASCII characters. ``json.dumps`` wrote a character past U+FFFF as a
    UTF-16 surrogate pair (``\\ud83d\\ude00``), which TOML refuses: ``shrink --out`` wrote files ``simkit
    run`` could not read back. Here it is ``\\U0001f600``."""
    out = []
    for c in text:
        o = ord(c)
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif 0x20 <= o < 0x7F:
            out.append(c)
        elif 0xD800 <= o <= 0xDFFF:
            raise SimkitError(f"cannot write {text[:60]!r} as TOML: a lone surrogate (U+{o:04X}) is no "
                              f"character")
        else:
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SimkitError(f"cannot write {type(v).__name__} {v!r} as TOML")


def toml_text(data: dict, comment: str = "") -> str:
    """A scenario dict (as :func:`~simkit.scenario.read.parse` reads it) as TOML text. The comment's control
    characters are written as their escapes (``\\x7f``): TOML refuses them in a comment, and a replay command
    holds a path or a strategy as the user typed it."""
    lines = [f"# {printable(line)}".rstrip() for line in comment.splitlines()]
    tables, arrays = [], []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        elif isinstance(value, (list, tuple)) and value and all(isinstance(x, dict) for x in value):
            arrays.append((key, value))
        elif isinstance(value, (list, tuple)) and not value:
            continue  # an empty [[pages]], [[events]] or [[faults]]: nothing to write
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines += ["", f"[{key}]"] + [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    for key, rows in arrays:
        for row in rows:
            lines += ["", f"[[{key}]]"] + [f"{k} = {_toml_value(v)}" for k, v in row.items()]
    return "\n".join(lines) + "\n"


# -- a run as a scripted scenario ----------------------------------------------------------------------------
def _lost_fetches(run: Run) -> list[Fault]:
    """Fetch responses lost in the run (by the provider or a fault), as explicit faults. A ``lost_response``
    counts replies: a refused cursor and a request that never arrived (``request lost``, a ``lost_request``
    fault, already among the faults that fired) have none."""
    tr, out = run.trace, []
    count: dict[int, int] = {}
    for worker, step, outcome in zip(tr.worker, tr.step, tr.outcome):
        if step == "fetch" and outcome not in (CURSOR_REFUSED, REQUEST_LOST):
            n = count[worker] = count.get(worker, 0) + 1
            if outcome == REPLY_LOST:
                out.append(Fault("lost_response", None, None, n, worker, op="fetch"))
    return out


def scripted_data(run: Run) -> dict:
    """The scenario of ``run`` as a scripted scenario dict:
    its provider's pages, explicit faults, no randomness."""
    world, sc = run.world, run.world.scenario
    provider = world.provider
    pages = [{"cursor": c, "positions": tuple(x.position for x in events), "ids": tuple(x.id for x in events),
              "next_cursor": next_cursor, "stuck": stuck}
             for c, events, next_cursor, stuck in provider.script()]
    specs = {}
    for ev in sorted(provider.events.values(), key=lambda x: x.position):
        if ev.behavior != "ok" or ev.position in sc.events:
            specs[ev.position] = dataclasses.replace(sc.events.get(ev.position, EventSpec()),
                                                     behavior=ev.behavior)
    faults = list(world.faults.fired)
    for f in _lost_fetches(run):
        if f not in faults:
            faults.append(f)
    initial = dataclasses.replace(sc.initial, resume_cursor=sc.initial.resume_cursor or provider.start)
    new = dataclasses.replace(sc, pages=tuple(pages), generate=None, events=specs, faults=tuple(faults),
                              random_faults=RandomFaults(), initial=initial)
    return scenario_data(new)


#: The most characters of a name :func:`file_stem` keeps whole (a file name holds at most 255 bytes)
_STEM = 120


def file_stem(name: str) -> str:
    """``name`` (a consumer's: ``simkit-audit-CLASS.toml``) as part of a file name: ASCII letters, digits,
    ``_ . -``, every other character ``_``; past :data:`_STEM` characters (a long class name, an ``exec:``
    command with its arguments) cut there and ended by a digest of the whole. Whole, the file name was too
    long for the file system: ``audit`` refused an ``--out`` nobody gave, for a consumer it would write
    nothing of."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    if len(stem) <= _STEM:
        return stem
    return f"{stem[:_STEM]}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
