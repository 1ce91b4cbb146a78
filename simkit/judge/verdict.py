"""The verdict's fields, declared once (docs/verdict.md, "Fields"). Each field of :class:`Verdict` carries a
:class:`Declared` as its dataclass metadata: its JSON name, whether it is a safety property (any of it fails
the run), a liveness property (the run fails without it) or context that explains one, how it reads in text,
its column in the command line's table and in a sweep's table. The rest derives from it: ``ok`` and
``as_dict``, how a run failed (:func:`failure_kind`, :func:`describe_kind`, :func:`harms`: explore, shrink,
audit and the crash matrices), the report's rows and lines (:mod:`simkit.judge.report`) and the sweep's
columns (:mod:`simkit.tools.sweep`).

A field declared after the first verdict's (``always`` false) is read in a line of text only where it failed,
so that adding one changes no output of a run it does not fail.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from simkit.errors import echoed

__all__ = ["CONTEXT", "DETAIL_AT_MOST", "FIELDS", "JUDGED", "LIVENESS", "NO_REASON", "SAFETY", "Declared",
           "Verdict", "count", "describe_kind", "failure_kind", "halt_reason", "harms"]

SAFETY, LIVENESS, CONTEXT = "safety", "liveness", "context"


@dataclass(frozen=True)
class Declared:
    """One verdict field as data; ``name`` and ``empty`` (its default) are filled in from the dataclass field.
    Texts left empty default to the name, ``_`` read as a space."""

    property: str                   #: SAFETY, LIVENESS or CONTEXT
    json: str = ""                  #: its key in the ``--json`` object
    label: str = ""                 #: how a line of text names it
    short: str = ""                 #: how the counts line names it; the label when empty
    word: str = ""                  #: its failure in a word when it has no kinds (``incomplete``); the label
    #: the named ways it failed (the invariants broken, the settlement kinds); else its word, if it failed
    kinds: Callable[[Any], tuple] | None = None
    says: Callable[[tuple], str] | None = None      #: its kinds in words; by default listed, ``_`` as a space
    items: Callable[[Any], Iterable] | None = None  #: what went wrong, item by item; by default its kinds
    always: bool = False            #: read in every line even when it holds (the first verdict's fields)
    table: str | None = None        #: its column in the command line's table (fields may share one)
    cell: Callable[[Any], str] | None = None    #: its cell there, from the verdict, if not from its value
    row: Callable[[dict], str] | None = None    #: the name of each of its entries, one a line in the summary
    rows: int | None = None         #: at most this many of those lines
    sweep: str | None = None        #: its column in a sweep's table
    sweep_value: Callable[[Any], Any] | None = None  #: the value there; by default its :func:`count`
    name: str = ""
    empty: Callable[[], Any] = lambda: None

    def of(self, verdict) -> Any:
        """This field of a :class:`Verdict`, or of its ``--json`` object (its default where that lacks it)."""
        value = (
            verdict.get(self.json, MISSING)
            if isinstance(verdict, dict)
            else getattr(verdict, self.name, MISSING)
        )
        return self.empty() if value is MISSING else value

    def failed(self, value) -> bool:
        """Does this value fail the run? A safety field when it holds anything, a liveness one when false."""
        return bool(value) if self.property == SAFETY else not value if self.property == LIVENESS else False

    def kinds_of(self, value) -> tuple:
        """The ways this value failed: ``()`` when it did not."""
        if self.kinds is not None:
            return self.kinds(value)
        return (self.word,) if self.failed(value) else ()

    def described(self, kinds: tuple) -> str:
        return self.says(kinds) if self.says else ", ".join(str(k).replace("_", " ") for k in kinds)

    def items_of(self, value) -> Iterable:
        return self.items(value) if self.items is not None else self.kinds_of(value)


def declare(prop: str, default: Any = MISSING, **reading) -> Any:
    """A dataclass field of :class:`Verdict` with its :class:`Declared` (an empty list unless ``default``)."""
    meta = {"verdict": Declared(prop, **reading)}
    if default is MISSING:
        return field(default_factory=list, metadata=meta)
    return field(default=default, metadata=meta)


def count(value) -> Any:
    """A field's count: how many entries a list holds; a number or a truth value as it is."""
    return len(value) if isinstance(value, list | tuple) else value


def _invariants(violations) -> tuple:
    return tuple(sorted({x["invariant"] for x in violations}))


def _settlement_kinds(violations) -> tuple:
    return tuple(sorted({x["kind"] for x in violations}))


#: the characters past which an invariant violation's ``detail`` keeps only its start, escaped, and its length
#: (:meth:`Verdict.violate`; the text output shows 1,000)
DETAIL_AT_MOST = 1000
#: what a halt whose reason is empty or blank shows (``Halt("")`` halts: it showed as no halt at all)
NO_REASON = "(no reason given)"


def halt_reason(halted: str) -> str:
    """A halt's reason as the text and tables show it: :data:`NO_REASON` when blank, else escaped and, past
    1,000 characters, its start and length (a consumer's reason is any text, megabytes of it included)."""
    return echoed(halted, 1000) if halted.strip() else NO_REASON


def _halt_cell(v) -> str:
    if v.halted is None:
        return "-"
    unjustified = " (unjustified)" if v.halt_justified is False else ""
    return halt_reason(v.halted) + unjustified


@dataclass
class Verdict:
    """A run's verdict (docs/verdict.md); what each field means is there, how each reads is declared here."""

    lost: list[str] = declare(SAFETY, always=True, items=list, table="lost", sweep="lost")
    duplicated: list[str] = declare(SAFETY, always=True, items=list, table="duplicated", sweep="duplicated")
    regressions: int = declare(SAFETY, 0, always=True, items=range, table="regressions",
                               sweep="regressions")
    invariant_violations: list[dict] = declare(
        SAFETY, label="invariants broken", kinds=_invariants, always=True, table="invariants broken",
        says=lambda ks: ("invariants " if len(ks) > 1 else "invariant ") + ", ".join(map(str, ks)),
        row=lambda x: f"invariant {x['invariant']}", rows=8,
        sweep="invariants", sweep_value=lambda x: ",".join(map(str, _invariants(x))))
    halted: str | None = declare(CONTEXT, None, always=True, table="halted", cell=_halt_cell,
                                 sweep="halted", sweep_value=lambda h: h is not None)
    #: ``None`` when nothing halted; else whether every halt had a cause (:mod:`simkit.judge.halts`)
    halt_justified: bool | None = declare(CONTEXT, None)
    pending: list[str] = declare(CONTEXT, always=True, sweep="pending")
    completed: bool = declare(LIVENESS, True, word="incomplete", always=True, sweep="completed")
    #: seed 001: ``{kind, time, worker, detail}`` (kinds: :data:`simkit.judge.settlement.SETTLEMENT_KINDS`)
    settlement_violations: list[dict] = declare(
        SAFETY, short="settlement", kinds=_settlement_kinds, table="invariants broken",
        row=lambda x: x["kind"], sweep="settlement_violations",
        sweep_value=lambda x: ",".join(_settlement_kinds(x)))
    #: steps 3 and 4: ``{time, worker, detail}`` for each attempt that went on after a page breaking the
    #: provider contract (:func:`simkit.judge.halts.unhalted`), or past an event of its page without an
    #: outcome (:func:`simkit.judge.order.inversions`)
    unhalted: list[dict] = declare(SAFETY, table="invariants broken", row=lambda x: "unhalted",
                                   sweep="unhalted")

    @property
    def ok(self) -> bool:
        """No field failed (docs/verdict.md, ``ok``)."""
        get = self.__dict__.get
        return not any(map(get, _ANY_FAILS)) and all(map(get, _NONE_FAILS))

    def violate(self, invariant: int, time: float, worker: int, detail: str) -> None:
        """Report a durable write that broke an invariant (docs/verdict.md, "Invariants as judged"). A detail
        past :data:`DETAIL_AT_MOST` characters keeps its start and its length: one quotes a cursor, any text a
        consumer writes, and a megabyte cursor published 400 times kept 400 MB of details (the text output
        showed 1,000 characters of each)."""
        if len(detail) > DETAIL_AT_MOST:
            detail = echoed(detail, DETAIL_AT_MOST - 100)
        self.invariant_violations.append({"invariant": invariant, "time": time, "worker": worker,
                                          "detail": detail})

    @classmethod
    def from_dict(cls, d: dict) -> Verdict:
        """A verdict from its ``--json`` object (:meth:`as_dict`, or a run's, which holds more)."""
        return cls(**{f.name: d[f.json] for f in FIELDS if f.json in d})

    @property
    def invariants_broken(self) -> list[int]:
        return list(_invariants(self.invariant_violations))

    def as_dict(self) -> dict:
        """The verdict's part of the ``--json`` object: ``ok``, then every field by its JSON name."""
        d: dict[str, Any] = {"ok": self.ok}
        d.update(zip(_JSON, map(self.__dict__.get, _NAMES)))
        return d


def _declared(f) -> Declared:
    """A dataclass field's :class:`Declared`, its name, default and texts filled in."""
    d: Declared = f.metadata["verdict"]
    empty = f.default_factory if f.default is MISSING else (lambda default=f.default: default)
    label = d.label or f.name.replace("_", " ")
    return replace(d, name=f.name, json=d.json or f.name, label=label, short=d.short or label,
                   word=d.word or label, empty=empty)


#: Every field of :class:`Verdict`, declared, in order (the order of the ``--json`` object).
FIELDS: tuple[Declared, ...] = tuple(_declared(f) for f in fields(Verdict))
#: The fields a run is judged by: safety and liveness, in order.
JUDGED: tuple[Declared, ...] = tuple(f for f in FIELDS if f.property != CONTEXT)
_NAMES, _JSON = tuple(f.name for f in FIELDS), tuple(f.json for f in FIELDS)
_ANY_FAILS = tuple(f.name for f in FIELDS if f.property == SAFETY)
_NONE_FAILS = tuple(f.name for f in FIELDS if f.property == LIVENESS)


def failure_kind(verdict) -> tuple:
    """How a run fails: the kinds of each judged field, in order (every one empty when ok). ``verdict``: a
    :class:`Verdict` or its ``--json`` object. Runs that fail the same way have the same kind (explore's
    counts, shrink's test of a smaller input, the audit's rows)."""
    return tuple(f.kinds_of(f.of(verdict)) for f in JUDGED)


def describe_kind(kind: tuple) -> str:
    """``lost, invariants 1, 2`` for a :func:`failure_kind`; ``ok`` for none."""
    return ", ".join(f.described(k) for f, k in zip(JUDGED, kind) if k) or "ok"


def harms(verdict) -> tuple[set, set]:
    """What went wrong in a verdict, item by item: the safety harms (each lost or duplicated event, each
    regression, each invariant broken, ...) and the liveness ones (the run did not complete)."""
    found: dict[str, set] = {SAFETY: set(), LIVENESS: set()}
    for f in JUDGED:
        found[f.property] |= {(f.name, item) for item in f.items_of(f.of(verdict))}
    return found[SAFETY], found[LIVENESS]
