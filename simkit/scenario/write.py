"""A Scenario back as the dict of its file (docs/scenarios.md): the one writer of :func:`scenario_data`, for
:func:`simkit.runner.checked` (which reads an edited Scenario again as its file would be read) and for
:mod:`simkit.tools.scenario_toml` (which writes what ``shrink`` and ``audit`` found as TOML).

It is tolerant: a field holding what no key of a file could be read into (``timing = None``, a page that is a
string, ``workers = True``) is written as it is, for :func:`~simkit.scenario.read.parse` to name with its key,
never dropped or "repaired". A value is left out only when it is its default, of the default's very type.
"""
from __future__ import annotations

import dataclasses

from simkit.errors import SimkitError
from simkit.model import EventSpec, Fault, Initial, RandomFaults, Scenario, Timing, default_id

__all__ = ["scenario_data"]

#: the top-level keys of a file, in its order; the first of them always written
_KEYS = ("name", "description", "sink", "backfills", "workers", "seed", "settlement", "store")
_ALWAYS = ("name", "sink", "workers", "seed")
#: the fields written as tables or arrays of tables (``rotate_at`` as ``[auth]``); ``source`` is not a key
_OTHERS = ("initial", "timing", "pages", "generate", "events", "faults", "random_faults", "rotate_at",
           "source")
#: a page's keys, in the order a file gives them
_PAGE_KEYS = ("cursor", "positions", "ids", "next_cursor", "stuck")


def scenario_data(sc: Scenario, faults: tuple[Fault, ...] | None = None) -> dict:
    """``sc`` as a dict :func:`~simkit.scenario.read.parse` reads back into it, ``faults`` replacing its own;
    what is malformed in it is passed through for ``parse`` to name.

    Raises:
        SimkitError: the scenario has a field this writer does not know how to write.
    """
    known = set(_KEYS) | set(_OTHERS)
    for f in dataclasses.fields(sc):
        if f.name not in known and getattr(sc, f.name) != _default(f):
            raise SimkitError(f"cannot write scenario field {f.name!r} of {sc.source}")
    d = {k: getattr(sc, k) for k in _KEYS if k in _ALWAYS or not _same(getattr(sc, k), _DEFAULTS[k])}
    for key, kind in (("initial", Initial), ("timing", Timing)):
        if type(table := _table(getattr(sc, key), kind)) is not dict or table:
            d[key] = table
    if sc.pages is not None:
        d["pages"] = [_page(p) for p in sc.pages] if isinstance(sc.pages, (tuple, list)) else sc.pages
    if sc.generate is not None:         # neither, or both: parse names it
        d["generate"] = dict(sc.generate) if isinstance(sc.generate, dict) else sc.generate
    if not isinstance(sc.events, dict):
        d["events"] = sc.events
    elif sc.events:
        items = list(sc.events.items())
        if all(type(pos) is int for pos in sc.events):
            items.sort(key=lambda item: item[0])
        d["events"] = [{"position": pos, **_event(spec)} if type(spec) is EventSpec else spec
                       for pos, spec in items]
    faults = sc.faults if faults is None else faults
    if not isinstance(faults, (tuple, list)) or faults:
        d["faults"] = [_fault(f) for f in faults] if isinstance(faults, (tuple, list)) else faults
    if type(table := _table(sc.random_faults, RandomFaults)) is not dict or table:
        d["random_faults"] = table
    if not _same(sc.rotate_at, ()):
        d["auth"] = {"rotate_at": _listed(sc.rotate_at)}
    return d


def _default(f: dataclasses.Field):
    """The value of field ``f`` in a scenario that does not set it: its default, or a fresh one from its
    factory."""
    if f.default is not dataclasses.MISSING or not callable(f.default_factory):
        return f.default
    return f.default_factory()


_DEFAULTS = {f.name: _default(f) for f in dataclasses.fields(Scenario) if f.name in _KEYS}


def _same(value, default) -> bool:
    """``value`` is ``default`` as a file that leaves its key out gives it: equal, and of its very type
    (``workers = True`` equals 1, and is written for ``parse`` to refuse)."""
    return type(value) is type(default) and value == default


def _listed(value):
    return list(value) if isinstance(value, tuple) else value


def _table(value, kind) -> object:
    """A table's record (``Timing``, ...) as its keys that are not their default; anything else as it is."""
    if type(value) is not kind:
        return value
    return {f.name: _listed(getattr(value, f.name)) for f in dataclasses.fields(kind)
            if not _same(getattr(value, f.name), f.default)}


def _page(p) -> object:
    """A page as its ``[[pages]]`` table: ``ids`` left out when they are the positions' default ids, ``stuck``
    when 0; a page that is no dict, or a key no page has, as it is."""
    if not isinstance(p, dict):
        return p
    out = {k: _listed(p[k]) for k in (*_PAGE_KEYS, *(k for k in p if k not in _PAGE_KEYS)) if k in p}
    positions, ids = out.get("positions"), out.get("ids")
    if (type(positions) is list and type(ids) is list and all(type(x) is int for x in positions)
            and all(type(x) is str for x in ids) and ids == [default_id(x) for x in positions]):
        del out["ids"]
    if _same(out.get("stuck"), 0):
        del out["stuck"]
    return out


def _event(spec: EventSpec) -> dict:
    """An event's keys as its file gives them: ``behavior`` and those it changes (``failures`` means nothing
    for a ``review``: the file leaves it out)."""
    return {f.name: getattr(spec, f.name) for f in dataclasses.fields(EventSpec)
            if f.name == "behavior" or not _same(getattr(spec, f.name), f.default)}


def _fault(f) -> object:
    """A fault as its ``[[faults]]`` table; an ``occurrence`` or ``worker`` that is 1 of another type
    (``True``, ``1.0``) is written, for ``parse`` to refuse; what is no Fault as it is."""
    if not isinstance(f, Fault):
        return f
    out = f.as_dict()
    for key in ("occurrence", "worker"):
        if not _same(getattr(f, key), 1):
            out[key] = getattr(f, key)
    return out
