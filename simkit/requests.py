"""The requests a consumer yields, declared once, as data (docs/protocol.md, "Requests";
docs/vocabulary.md, "Crash points").

One row per request: its name on the wire (``op``), its result, what it does, the crash points
before and after it, the ``op`` that ``lost_response`` and ``lost_request`` faults name it by,
whether it concerns one event (the position a fault on its points applies to) and whether it takes
simulated time. Its fields are those of its record in :mod:`simkit.ops`, the class of the same name
(``fetch``: ``Fetch``); importing :mod:`simkit.ops` fails if a row and a record do not pair up.

Everything else derives from :data:`REQUESTS`: the crash points in the order an attempt reaches them
(:data:`CRASH_POINTS`, which is :data:`simkit.model.CRASH_POINTS`), those of one event
(:data:`EVENT_POINTS`), the lost ops (:data:`LOST_OPS`), :func:`simkit.ops.crash_points` and
:func:`simkit.ops.lost_op`, the drivers' tables (:class:`simkit.procedure.driver.Driver` refuses a
driver whose methods disagree, when its class is created), the wire protocol's names and the docs
tables (``tests/vocabulary/test_requests.py`` compares them). To add a crash point, give it to its
request here and add its row to docs/vocabulary.md's table. Data only: this module imports nothing
of simkit, so that :mod:`simkit.model`, below the records, derives from it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CRASH_POINTS", "EVENT_POINTS", "LOST_OPS", "POINTS", "REQUESTS", "WAIT_REASONS", "Point",
           "Request", "crash_point_table"]


@dataclass(frozen=True, slots=True)
class Point:
    """A crash point: a crash there ends the worker's process, memory lost, durable state kept."""

    name: str
    #: where it falls (docs/vocabulary.md, "Crash points")
    where: str


@dataclass(frozen=True, slots=True)
class Request:
    """One request a consumer may yield: a row of :data:`REQUESTS`."""

    #: ``op`` on the wire and the name of the drivers' method; its record in simkit.ops is ``Name``
    name: str
    #: what a driver returns, as docs/protocol.md's table says it
    result: str
    #: what it does, with the step of seed 000's procedure it serves
    does: str
    before: Point | None = None
    after: Point | None = None
    #: the points instead of ``before`` and ``after`` when the request's ``outcome`` is
    #: ``quarantined`` (a commit of a quarantine receipt)
    quarantined: tuple[Point, Point] | None = None
    #: the ``op`` of ``lost_response`` and ``lost_request`` faults that loses it; ``None``: never
    lost: str | None = None
    #: it concerns one event (its record has ``event``): a fault on its points may name the event's
    #: position
    per_event: bool = False
    #: it takes simulated time: a driver with simulated time runs its method, a generator function,
    #: with ``yield from``; any other request's method is a plain function
    timed: bool = False
    #: said after the fields in docs/protocol.md's table
    fields_note: str = ""
    #: the names of ``before`` and ``after`` (``None`` where there is none), and of ``quarantined``
    around: tuple[str | None, str | None] = field(init=False, repr=False, compare=False)
    around_quarantined: tuple[str | None, str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        before, after = self.quarantined or (None, None)
        object.__setattr__(self, "around", (_name(self.before), _name(self.after)))
        object.__setattr__(self, "around_quarantined", (_name(before), _name(after)))

    @property
    def points(self) -> tuple[Point, ...]:
        """Every crash point around this request."""
        return tuple(p for p in (self.before, self.after, *(self.quarantined or ()))
                     if p is not None)


def _name(point: Point | None) -> str | None:
    return None if point is None else point.name


#: why a worker waits (step 7): the reasons ``wait`` takes, and the results of a page attempt that end in one
WAIT_REASONS = ("caught_up", "blocked")

# the points of two requests each
_BEFORE_EFFECT = Point("before_effect", "about to call an external sink for one event")
_AFTER_EFFECT = Point("after_effect", "the external call returned; its receipt not yet committed")
_BEFORE_BARRIER = Point("before_page_barrier",
                        "every event has an outcome; the barrier not yet attempted")
_AFTER_BARRIER = Point("after_page_barrier", "the barrier's compare-and-swap is durable")

#: Every request, in the order of an attempt (and of docs/protocol.md's table).
REQUESTS = (
    Request("load", result="`checkpoint`",
            does="read the durable checkpoint; its cursor and version are the attempt identity "
            "(1)"),
    Request("fetch", result="`page`, `none` (the provider refused the cursor) or `lost`",
            does="fetch the page at `cursor` (2)",
            after=Point("after_fetch", "a page was received; nothing of it processed yet"),
            lost="fetch", timed=True),
    Request("lookup", result="`receipts`", does="read the receipts of these events (3, 4)",
            fields_note="(an array of events)"),
    Request("skip", result="`none`", does="note a harmless replay; executes nothing (4)",
            per_event=True),
    Request("handle", result="`str`: `apply`, `ignore`, `quarantine`, or a non-terminal outcome "
            "(`retry_later`, `dead_letter`, `operator_review`, `reversible_hold`)",
            does="ask the handler what this event's outcome is now (4)", per_event=True),
    Request("effect", result="`bool` (`true`) or `lost`",
            does="call the external sink for this event, unsettled (only unsafe shortcuts do)",
            before=_BEFORE_EFFECT, after=_AFTER_EFFECT, lost="effect", per_event=True, timed=True),
    Request("reserve", result="`operation`",
            does="seed 001: reserve the event's operation record, or get its reservation back",
            per_event=True, timed=True),
    Request("call", result='`reply`, or `str` `"timeout"`',
            does="call the external service with exactly this reservation",
            before=_BEFORE_EFFECT, after=_AFTER_EFFECT, lost="effect", per_event=True, timed=True),
    Request("settle", result="`str`: `committed`, `provisional` or `pending`",
            does="settle what the call returned into the operation record",
            fields_note='(the `reply` value, or `"timeout"`)', per_event=True, timed=True),
    Request("commit", result="`bool` (`false`: a terminal receipt already exists) or `lost`",
            does="commit the receipt and `applied_position`, with the effect in the same "
            "transaction when `with_effect` (4)",
            before=Point("before_event_commit",
                         "about to commit one event's effect, receipt and `applied_position`"),
            after=Point("after_event_commit", "that commit is durable"),
            quarantined=(
                Point("before_quarantine_receipt", "about to write a durable quarantine receipt"),
                Point("after_quarantine_receipt", "that receipt is durable")),
            lost="checkpoint_write", per_event=True, timed=True),
    Request("barrier", result="`bool` (`false`: the checkpoint had moved) or `lost`",
            does="the page barrier's compare-and-swap (5)",
            before=_BEFORE_BARRIER, after=_AFTER_BARRIER, lost="checkpoint_write", timed=True),
    Request("overwrite", result="`bool` or `lost`",
            does="write the checkpoint without comparing (an unsafe shortcut)",
            before=_BEFORE_BARRIER, after=_AFTER_BARRIER, lost="checkpoint_write", timed=True),
    Request("wait", result="`none`", does="back off before the next attempt (7)",
            fields_note=f"(`{'` or `'.join(WAIT_REASONS)}`)", timed=True),
    Request("halt", result="never answered", does="stop for investigation (3)"),
)


def _points() -> dict[str, Point]:
    """Every crash point by name, in the order of :data:`REQUESTS`. One name is one point: declared
    twice, it must be the same, and of one event or of none each time."""
    points: dict[str, Point] = {}
    per_event: dict[str, bool] = {}
    for r in REQUESTS:
        for p in r.points:
            if (points.setdefault(p.name, p) != p
                    or per_event.setdefault(p.name, r.per_event) != r.per_event):
                raise TypeError(f"crash point {p.name!r} is declared twice, differently "
                                f"(request {r.name!r})")
    return points


#: Crash point name -> its :class:`Point`, in the order an attempt reaches them.
POINTS = _points()
CRASH_POINTS = tuple(POINTS)
#: Crash points that belong to one event; the others belong to a page attempt.
EVENT_POINTS = tuple(dict.fromkeys(p.name for r in REQUESTS if r.per_event for p in r.points))
#: The ops of ``lost_response`` and ``lost_request`` faults.
LOST_OPS = tuple(dict.fromkeys(r.lost for r in REQUESTS if r.lost))


def crash_point_table() -> str:
    """docs/vocabulary.md's table of crash points (Markdown)."""
    return "\n".join(["| point | where |", "| --- | --- |",
                      *(f"| `{p.name}` | {p.where} |" for p in POINTS.values())])
