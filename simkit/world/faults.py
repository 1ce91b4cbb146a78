"""Fault injection: scripted faults matched by point,
position, occurrence and worker; seeded random faults."""
from __future__ import annotations

import random
from typing import NamedTuple

from simkit.model import REPLY_FAULTS, Fault, RandomFaults

__all__ = ["FaultPlan", "PassRow", "ReplyRow", "RequestRow"]

#: Which calls match a fault kind: a crash-point pass (by point), a request, a reply, or an external call's
#: reply altered (by op).
_FAMILY = {"crash": "point", "pause": "point", "lost_request": "lost_request",
           "lost_response": "lost_response", **{kind: "altered" for kind in REPLY_FAULTS}}


def _counted(f: Fault):
    """What a pass, request or reply that ``f`` may strike is counted under, besides its worker."""
    family = _FAMILY[f.kind]
    if family == "point":
        return f.point
    return ("request" if family == "lost_request" else "reply", f.op)


class PassRow(NamedTuple):
    """A crash-point pass, as :attr:`FaultPlan.passes` records it: a crash or pause there is
    ``Fault(kind, point, position, occurrence, worker)``."""
    worker: int
    point: str
    position: int | None
    occurrence: int         # of this point at this position


class ReplyRow(NamedTuple):
    """A reply, as :attr:`FaultPlan.replies` records it, and where it falls among the passes."""
    worker: int
    op: str
    position: int | None
    n_any: int              # the occurrence of this op's reply, at any position
    n_pos: int              # the occurrence of this op's reply at this position
    passes_before: int

    @property
    def occurrence(self) -> int:
        """The ``occurrence`` of a fault striking this reply: at its position, or of its op if it has none."""
        return self.n_pos if self.position is not None else self.n_any


class RequestRow(NamedTuple):
    """A request, as :attr:`FaultPlan.requests` records it,
    and where it falls among the passes and replies."""
    worker: int
    op: str
    position: int | None
    n_any: int              # the occurrence of this op's request, at any position
    n_pos: int              # the occurrence of this op's request at this position
    passes_before: int
    replies_before: int

    @property
    def occurrence(self) -> int:
        """The ``occurrence`` of a fault striking this request:
        at its position, or of its op if it has none."""
        return self.n_pos if self.position is not None else self.n_any


class FaultPlan:
    """Decides, at each crash-point pass, each request and each reply, whether a fault strikes
    (docs/scenarios.md, "Faults" and "Random faults").

    Requests and replies are counted apart: a ``lost_request`` with ``occurrence = n`` is the n-th request of
    its op (sent, whether it arrives or not), a ``lost_response`` the n-th reply (of a request that arrived).

    ``record``: keep every pass, request and reply (``passes``, ``requests``, ``replies``) for exploration. A
    plain run turns it off (they stay empty: a tuple per pass was the largest thing a faulty run kept), and
    once no scripted fault is left and no random one can strike, a pass costs nothing (:attr:`quiet`).
    Without recording, only what a scripted fault can match is counted (``(worker, point)``, a request or a
    reply of an op, :attr:`_watched`): any other pass, request or reply costs one set lookup, unless
    :meth:`count_all` (a fingerprint reads every count while scripted faults remain) or a random rate (its
    faults name the occurrence) asks for them all.

    Scripted faults are looked up, not scanned: each is filed under what a pass, request or reply must show to
    match it, ``(family, worker, point or op, position, occurrence)``, and a pass asks two keys, the one for
    its position and the one for faults that name none (every pass scanned every fault: 10,000 events and
    10,000 faults that never fire took 96 s). The first fault of the scenario's order that matches fires, as
    before.
    """

    def __init__(self, faults: tuple[Fault, ...], random_faults: RandomFaults, seed: int):
        self._faults = tuple(faults)
        self._fired_at: set[int] = set()        # indices of the scripted faults fired
        self._left = len(faults)                # scripted faults not yet fired
        self._index: dict[tuple, list[tuple[int, Fault]]] = {}
        for i, f in enumerate(faults):
            family = _FAMILY[f.kind]
            key = (family, f.worker, f.point if family == "point" else f.op, f.position, f.occurrence)
            self._index.setdefault(key, []).append((i, f))
        self._counts: dict[tuple, int] = {}
        #: the counts a scripted fault is matched against (:meth:`_count`'s first key)
        self._watched = frozenset((f.worker, _counted(f)) for f in faults)
        self._count_all = bool(random_faults.crash or random_faults.pause or random_faults.lost_request
                               or random_faults.lost_response)
        self._lean = False                  # count only what is watched (see the class doc)
        self._skipped = False               # a pass, request or reply went uncounted
        self._rf = random_faults
        self._seed = seed
        self._made: random.Random | None = None    # :attr:`_rng`, made at its first draw
        self._random_left = random_faults.max_faults
        self._record = True
        #: no fault can strike any more and nothing is recorded (:meth:`idle`), kept current as faults fire
        self.quiet = False
        #: every crash-point pass, every reply and every request, in order
        self.passes: list[PassRow] = []
        self.replies: list[ReplyRow] = []
        self.requests: list[RequestRow] = []
        self.fired: list[Fault] = []

    def _count(self, worker, name, position) -> tuple[int, int]:
        k1, k2 = (worker, name), (worker, name, position)
        n1 = self._counts[k1] = self._counts.get(k1, 0) + 1
        n2 = self._counts[k2] = self._counts.get(k2, 0) + 1
        return n1, n2

    @property
    def record(self) -> bool:
        return self._record

    @record.setter
    def record(self, keep: bool) -> None:
        if keep and self._skipped:
            raise RuntimeError("FaultPlan.record: passes went uncounted; set it before the run")
        self._record = keep
        self._lean = not (keep or self._count_all)
        self.quiet = self.idle()

    def count_all(self) -> None:
        """Count every pass, request and reply from now on, watched or not, so that :meth:`remaining` gives
        every count (a fingerprint reads them while scripted faults remain). Before the run."""
        if self._skipped:
            raise RuntimeError("FaultPlan.count_all: passes went uncounted; call it before the run")
        self._count_all, self._lean = True, False

    def _match(self, family: str, worker, value, position, n_any, n_pos) -> Fault | None:
        """The first scripted fault of ``family`` (:data:`_FAMILY`) that strikes
        here: one naming this position and matched by ``n_pos``, the passes of
        it at this position, or one naming none and matched by ``n_any``."""
        index = self._index
        here = index.get((family, worker, value, position, n_pos)) if position is not None else None
        anywhere = index.get((family, worker, value, None, n_any))
        if not here and not anywhere:
            return None
        found = here if not anywhere or (here and here[0][0] < anywhere[0][0]) else anywhere
        assert found                            # here or anywhere holds a fault (checked above)
        i, f = found.pop(0)
        self._fired_at.add(i)
        self._left -= 1
        self.fired.append(f)
        self.quiet = self.idle()
        return f

    @property
    def _rng(self) -> random.Random:
        """The seeded generator of random faults, made at the first draw: most plans (every explored
        schedule) draw nothing, and seeding one from a string cost a tenth of a small run's world."""
        if self._made is None:
            self._made = random.Random(f"faults:{self._seed}")
        return self._made

    def _draw(self, rate: float) -> bool:
        if rate > 0 and self._random_left > 0 and self._rng.random() < rate:
            self._random_left -= 1
            self.quiet = self.idle()
            return True
        return False

    def idle(self) -> bool:
        """No fault can strike any more (no scripted fault left, no random rate of any kind, lost requests
        included, or no random fault left to draw) and nothing is recorded: passes, requests and replies cost
        nothing, and the world may commit without them (``World._commit_at_once``). :attr:`quiet` holds it."""
        rf = self._rf
        random = self._random_left > 0 and (rf.crash or rf.pause or rf.lost_response or rf.lost_request)
        return not (self._record or self._left or random)

    def at_point(self, worker: int, point: str, position: int | None) -> Fault | None:
        """The crash or pause that strikes this pass of ``point``, if any."""
        if not (self._record or self._left or self._rf.crash or self._rf.pause):
            return None
        if self._lean and (worker, point) not in self._watched:
            self._skipped = True
            return None                     # no fault can strike here, and no one reads the count
        n_any, n_pos = self._count(worker, point, position)
        if self._record:
            self.passes.append(PassRow(worker, point, position, n_pos))
        # (a call only where a fault may strike: no scripted fault left, or a rate of 0, costs none)
        fault = None
        if self._left:
            fault = self._match("point", worker, point, position, n_any, n_pos)
        if fault is None and self._rf.crash > 0 and self._draw(self._rf.crash):
            fault = self._fired(Fault("crash", point, position, n_pos, worker))
        if fault is None and self._rf.pause > 0 and self._draw(self._rf.pause):
            fault = self._fired(Fault("pause", point, position, n_pos, worker,
                                      duration=self._rf.pause_duration))
        return fault

    def request_lost(self, worker: int, op: str, position: int | None) -> bool:
        """Is this request lost on its way (it never arrives, so it takes no effect and gets no reply)?

        Asked once per request of ``op`` (:func:`~simkit.ops.lost_op`) before it reaches the provider, sink or
        store; a request that arrives then counts as a reply for :meth:`reply_lost`, one that is lost does
        not.
        """
        if not (self._record or self._left or self._rf.lost_request):
            return False
        if self._lean and (worker, ("request", op)) not in self._watched:
            self._skipped = True
            return False
        n_any, n_pos = self._count(worker, ("request", op), position)
        if self._record:
            self.requests.append(RequestRow(worker, op, position, n_any, n_pos, len(self.passes),
                                            len(self.replies)))
        if self._left and self._match("lost_request", worker, op, position, n_any, n_pos):
            return True
        if self._rf.lost_request > 0 and self._draw(self._rf.lost_request):
            # a fault without a position matches the n-th request of its op (see _match): record that n
            self._fired(Fault("lost_request", None, position, n_pos if position is not None else n_any,
                              worker, op=op))
            return True
        return False

    def reply_lost(self, worker: int, op: str, position: int | None) -> bool:
        """Is the reply of this request lost (the request itself took effect)?"""
        if not (self._record or self._left or self._rf.lost_response):
            return False
        if self._lean and (worker, ("reply", op)) not in self._watched:
            self._skipped = True
            return False
        n_any, n_pos = self._count(worker, ("reply", op), position)
        if self._record:
            self.replies.append(ReplyRow(worker, op, position, n_any, n_pos, len(self.passes)))
        if self._left and self._match("lost_response", worker, op, position, n_any, n_pos):
            return True
        if self._rf.lost_response > 0 and self._draw(self._rf.lost_response):
            # a fault without a position matches the n-th reply of its op (see _match): record that n
            self._fired(Fault("lost_response", None, position, n_pos if position is not None else n_any,
                              worker, op=op))
            return True
        return False

    def reply_altered(self, worker: int, op: str, position: int | None) -> Fault | None:
        """The ``late_reply`` or ``crossed_reply`` that strikes the reply :meth:`reply_lost` just counted (and
        spared), if any. Scripted only: they draw nothing from the seeded random faults."""
        n_any = self._counts.get((worker, ("reply", op)), 0)
        n_pos = self._counts.get((worker, ("reply", op), position), 0)
        return self._match("altered", worker, op, position, n_any, n_pos) if self._left else None

    def remaining(self) -> tuple[tuple[Fault, ...], dict]:
        """The scripted faults still to fire and the pass counts (all of them under :meth:`count_all` or
        :attr:`record`; else those the faults are matched against)."""
        return tuple(f for i, f in enumerate(self._faults) if i not in self._fired_at), dict(self._counts)

    def _fired(self, fault: Fault) -> Fault:
        self.fired.append(fault)
        return fault
