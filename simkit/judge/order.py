"""Seed 000 step 4 judged from ground truth (docs/verdict.md, ``unhalted``): "Process events in source order
... Stop at the first outcome that is not durable and terminal".

*An inversion is a broken step 4.* A worker that writes an event's terminal receipt or effect (its first: a
claim the judge counts as no outcome still shows where the worker went) while an earlier event of the page it
acted on, or of its attempt's page (:class:`~simkit.judge.halts.Attempts`), has no terminal receipt, and gets
one only later, went past that event where the procedure stops: it processed the page newest first, or the
page it read ahead before its attempt's, or went on past a failure, a review, a hold or an external call not
settled (a lost reply: the effect is made, the outcome is not durable) and came back for it. Nothing need
be lost, and a consumer careful to keep ``applied_position`` at the prefix breaks no invariant, so this is the
only field that can say so. An earlier event that never gets a terminal receipt is ``lost`` or ``pending``
already, which fails the run unless a justified halt ended it: there (a worker went past a review, then
halted on a page it read ahead) it counts as receipted after every write. A page served out of order is step
3's (:func:`~simkit.judge.halts.unhalted`).

``safe``'s first writes come in position order but for events that join the stream late (a backfill, done
after the events above it, served first): an inversion is looked for only where they are not in order, and
blamed only within the two pages named.
"""
from __future__ import annotations

from array import array
from itertools import accumulate, islice, repeat
from operator import and_, gt, itemgetter, le, lt

from simkit.model import COMMITTED, TERMINAL
from simkit.truth.derived import disordered_pages
from simkit.truth.ground import View

from .halts import Attempts
from .outcomes import NONE, Outcomes

__all__ = ["inversions"]

#: The first terminal receipt of an event that never had one, in a run a justified halt ended: after every
#: write
_NEVER = 1 << 62


def _in_lockstep(truth, stream) -> bool:
    """The usual run, told without a Python call per row: each receipt written with its event's effect, in
    stream order, and before the next event's effect (a transactional sink's commits, or external calls
    settled and receipted one at a time), so that no first write comes before an earlier event's receipt."""
    receipts, effects = View(truth.store.receipt_log), View(truth.sink.effects)
    ranks = stream.ranks(receipts)
    if ranks != stream.ranks(effects) or not all(map(le, ranks, islice(ranks, 1, None))):
        return False
    first = itemgetter(0)           # (read in step, no copy: a check's peak stays under 40 bytes an event)
    return all(map(lt, map(first, receipts.fields(0, 4)), islice(map(first, effects.fields(0, 2)), 1, None)))


def _first_writes(truth, stream) -> tuple[array, array]:
    """By rank in the stream, the sequence number of each event's first terminal receipt or effect, whoever
    wrote it (where a worker went), and of its first terminal receipt or ``committed`` settlement of its call
    (from when its outcome was durable: an effect whose call is ``pending`` or ``provisional`` is not), each
    :data:`NONE` where there is none."""
    first = array("q", [NONE]) * len(stream)
    receipts, effects = View(truth.store.receipt_log), View(truth.sink.effects)
    for (seq, outcome), i in zip(receipts.fields(0, 4), stream.ranks(receipts)):
        if i >= 0 and outcome in TERMINAL and (first[i] == NONE or seq < first[i]):
            first[i] = seq
    durable = array("q", first)
    ledger = truth.store.operations
    for t in ledger.history if ledger is not None else ():     # a call settled committed (seed 001)
        i = stream.rank(t.operation_id) if t.after == COMMITTED else None
        if i is not None and (durable[i] == NONE or t.seq < durable[i]):
            durable[i] = t.seq
    for (seq, _w), i in zip(effects.fields(0, 2), stream.ranks(effects)):
        if i >= 0 and (first[i] == NONE or seq < first[i]):
            first[i] = seq
    return first, durable


def _later_done(at, durable) -> list[int]:
    """The ranks whose first write (by a worker: sequence number above 0) came before the first terminal
    receipt of an event at a lower rank; none when they are in stream order (checked without a Python call
    per event)."""
    highs = list(accumulate(map(max, durable, repeat(0)), max))      # the latest receipt up to each rank
    if not any(map(and_, map(gt, highs, at[1:]), map(gt, at[1:], repeat(0)))):
        return []
    out, high = [], 0
    for i, s in enumerate(at):
        if 0 < s < high:
            out.append(i)
        high = max(high, durable[i])
    return out


def _writes(truth, seqs: set[int]) -> dict[int, tuple[float, int, str, str]]:
    """The receipt or effect rows at ``seqs``: seq -> (time, worker, event id, what it was)."""
    out: dict[int, tuple[float, int, str, str]] = {}
    for seq, t, w, eid, outcome in View(truth.store.receipt_log):
        if seq in seqs:
            out[seq] = (t, w, eid, f"{outcome} receipt for {eid}")
    for seq, t, w, eid in View(truth.sink.effects):
        if seq in seqs:
            out[seq] = (t, w, eid, f"effect of {eid}")
    return out


def inversions(truth, found: Outcomes, halted: bool = False) -> list[dict]:
    """Step 4's inversions: per page, the first terminal receipt or effect a worker wrote for an event of it
    while an earlier event (by position) of that page or of its attempt's page (not one served out of order)
    had no terminal receipt, and got one later, or never did in a run a justified halt ended (``halted``).
    Each as ``{time, worker, detail}``, as :func:`~simkit.judge.halts.unhalted` gives step 3's."""
    stream = found.stream
    if not halted and _in_lockstep(truth, stream):
        return []
    (at, durable), ids = _first_writes(truth, stream), stream.ids
    if halted:                      # an event never written is pending, and a justified halt fails nothing
        durable = array("q", (_NEVER if s == NONE else s for s in durable))
    ranks = _later_done(at, durable)
    if not ranks:
        return []
    writes = _writes(truth, {at[i] for i in ranks})
    attempts = Attempts(truth)
    log, disordered, positions = truth.provider.log, disordered_pages(truth), stream.positions
    served: dict[int | None, list[int]] = {None: []}   # a page's row -> the ranks it served, in order
    first: dict[int, tuple[int, dict]] = {}
    for i in ranks:
        seq = at[i]
        time, worker, eid, what = writes.get(seq, (0.0, 0, ids[i], ""))
        row = attempts.page_of(worker, seq, eid) if worker and eid == ids[i] else None
        if row is None or (row in first and first[row][0] < seq):
            continue
        attempt = attempts.attempt_page(worker, seq)
        for k in (row, attempt):
            if k not in served:
                served[k] = _ranks(log[k], stream, disordered)
        earlier = next(((k, page) for page in (row, attempt) for k in served[page]
                        if positions[k] < positions[i] and durable[k] > seq), None)
        if earlier is not None:
            k, page = earlier
            assert page is not None                 # served[None] is empty
            detail = (f"{what} before {ids[k]} (position {positions[k]}), earlier in page "
                      f"{attempts.cursor(page)!r}, had a durable outcome, where step 4 processes events in "
                      f"source order and stops at the first outcome that is not durable and terminal")
            first[row] = (seq, {"time": time, "worker": worker, "detail": detail})
    return [entry for _seq, entry in first.values()]


def _ranks(response, stream, disordered) -> list[int]:
    """The ranks of the events a response served, in its order; none for a page served out of order (where
    "earlier" is step 3's business)."""
    _s, _t, _w, cursor, _n, page = response
    return [] if cursor in disordered else [r for r in map(stream.rank, page) if r is not None]
