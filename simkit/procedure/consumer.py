"""The consumer procedure of seed 000 ("Crash-safe cursor handoff for retried event pages"), steps 1-7.

:class:`Consumer` is the ``safe`` strategy and the documented base for every other consumer. It does no I/O:
:meth:`Consumer.run` is a generator that yields requests from :mod:`simkit.ops` and receives their results,
so the same code runs in the simulation and against a real store. A crash simply discards the generator.

Write your own consumer by subclassing and overriding hook methods::

    from simkit import Consumer

    class TrustTheWatermark(Consumer):
        '''Treats everything at or below the applied watermark as done, receipts or not.'''

        def is_replay(self, event, receipts, applied_position):
            return event.position <= applied_position

then ``simkit run gauntlet --strategy my_consumer.py:TrustTheWatermark``.

Hooks (each a small, documented decision of the procedure):

- :meth:`is_replay` — step 4, replay detection;
- :meth:`resulting_applied_position` — invariant 2, what ``applied_position`` a commit may write;
- :meth:`is_terminal` — invariants 1 and 5, which handler outcomes close the prefix;
- :meth:`apply`, :meth:`ignore` and :meth:`quarantine` — step 4, how an outcome is made durable;
- :meth:`barrier_target`, :meth:`is_caught_up` and :meth:`page_barrier` — steps 5 and 7;
- :meth:`after_fetch` — step 2, what happens to the returned token before processing;
- :meth:`settle_effect` — seed 001, how an external effect is reserved, called and settled.

Some hooks yield requests (:data:`YIELDING`), the others return a value at once (:data:`RETURNING`); one
written the other way is a :class:`HookError` naming the hook and the fix (docs/hooks.md has each hook with an
example).
"""
from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from inspect import CO_GENERATOR, isgeneratorfunction
from types import FunctionType, GeneratorType

from simkit.errors import described
from simkit.model import COMMITTED, TERMINAL, Checkpoint, Event, Page
from simkit.ops import (
    BLOCKED,
    LOST,
    Barrier,
    Call,
    Commit,
    Fetch,
    Halt,
    Handle,
    Load,
    Lookup,
    Reserve,
    Settle,
    Skip,
    Wait,
)
from simkit.requests import WAIT_REASONS

__all__ = ["ATTEMPT_STATUSES", "Contract", "Consumer", "HookError", "RETURNING", "YIELDING", "tampered"]

#: The hooks that are generators: they yield requests of :mod:`simkit.ops` and return a result
#: (docs/hooks.md).
YIELDING = ("run", "attempt", "after_fetch", "apply", "ignore", "quarantine", "settle_effect", "page_barrier")
#: The hooks that return their answer at once and yield nothing.
RETURNING = ("is_replay", "resulting_applied_position", "is_terminal", "is_caught_up", "barrier_target",
             "validate")


#: What :meth:`Consumer.attempt` returns (docs/hooks.md#attempt), and so what :meth:`Consumer.after_fetch` may
#: return to end the attempt with (else ``None``, to go on)
ATTEMPT_STATUSES = ("advanced", "caught_up", "blocked", "rejected", "lost")


class HookError(TypeError):
    """A hook written the wrong way round: one of :data:`YIELDING` returned a value without yielding, or one
    of :data:`RETURNING` is a generator; or a hook's answer is none it may give (:func:`_bad_answer`). Its
    message is the one line a consumer author sees."""


#: How each yielding hook returns its result (the fix :func:`_returned` names)
_HOW = {"apply": "return (yield Commit(event, 'applied', applied_position))",
        "ignore": "return (yield Commit(event, 'ignored', applied_position))",
        "quarantine": "return (yield Commit(event, 'quarantined', applied_position))",
        "page_barrier": "return 'advanced' if (yield Barrier(...)) else 'rejected'",
        "settle_effect": "return (yield from super().settle_effect(event))"}


def _returned(hook: str, value) -> Generator:
    """``value``, what yielding ``hook`` gave back, if it is a generator; else
    the :class:`HookError` saying how to write it (``apply`` returning
    ``"applied"`` would otherwise be iterated: "yielded 'a', not a request")."""
    if isinstance(value, Generator):
        return value
    how = _HOW.get(hook, "return (yield request)")
    raise HookError(f"hook {hook}() returned {described(value)} ({type(value).__name__}) but must be a "
                    f"generator: yield its requests and return the result, as in {how}; with no request to "
                    f"make, put a bare yield after the return (docs/hooks.md#{hook})")


def _bad_answer(hook: str, value, must: str) -> HookError:
    """The :class:`HookError` of ``hook``, which returned ``value`` where it ``must`` return another: an
    ``after_fetch`` returning 0 began the next attempt for ever, until the progress guard ended the run with
    no word of the hook; a ``str`` subclass was blamed on the ``Halt`` or ``Wait`` it was put in, a request
    the author never wrote."""
    kind = type(value).__name__ + (", a subclass of str" if isinstance(value, str) and type(value) is not str
                                   else "")
    return HookError(f"hook {hook}() returned {described(value)} ({kind}) but must return {must} "
                     f"(docs/hooks.md#{hook})")


def _misused_hook(cls: type) -> str | None:
    """The first hook of ``cls`` that yields where it must return, as the line to raise; ``None`` if none. (A
    plain function's flag is read at once: a consumer's module runs again at every worker life, every class in
    it made anew, and ``isgeneratorfunction`` was half of that.)"""
    for hook in RETURNING:
        f = getattr(cls, hook, None)
        if (f.__code__.co_flags & CO_GENERATOR if type(f) is FunctionType else isgeneratorfunction(f)):
            return (f"hook {hook}() yields but must return its answer at once: remove its yield statements "
                    f"(docs/hooks.md#{hook})")
    return None


@dataclass(frozen=True, slots=True)
class Contract:
    """What the consumer is told about its world: the provider contract and the sink it writes to."""

    backfills: bool = False
    external_sink: bool = False


class Consumer:
    """Seed 000's full procedure: the ``safe`` strategy."""

    name = "safe"
    #: set at class creation: a hook of this class written the wrong way round (:func:`_misused_hook`)
    _misused: str | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._misused = _misused_hook(cls)

    def __init__(self, contract: Contract):
        if self._misused is not None:
            raise HookError(self._misused)
        self.contract = contract

    # -- the procedure ----------------------------------------------------------------------------------
    def run(self):
        """Attempt pages forever; back off when caught up or blocked (steps 6 and 7)."""
        while True:
            result = yield from self.attempt()
            if result in WAIT_REASONS:
                yield Wait(result)
            # "advanced", "rejected", "lost": start the next attempt from durable state (step 6)

    def attempt(self):
        """One page attempt. Returns ``advanced``, ``caught_up``, ``blocked``, ``rejected`` or ``lost``."""
        # Step 1: load the checkpoint; its cursor and version are the attempt identity.
        checkpoint = yield Load()
        # Step 2: fetch with that cursor; the next cursor stays in memory.
        page = yield Fetch(checkpoint.resume_cursor)
        if page is LOST:
            return "lost"
        if page is None:
            yield Halt(f"provider refused cursor {checkpoint.resume_cursor!r}")
        steps = self.after_fetch(checkpoint, page)
        early = yield from (steps if type(steps) is GeneratorType else _returned("after_fetch", steps))
        if early is not None:
            if type(early) is not str or early not in ATTEMPT_STATUSES:
                raise _bad_answer("after_fetch", early, "None to go on, or the status that ends the attempt: "
                                 f"one of {', '.join(ATTEMPT_STATUSES)}")
            return early
        receipts, ids_at = yield Lookup(page.events)
        # Step 3: validate source order and identities before any effect.
        problem = self.validate(checkpoint, page, ids_at)
        if problem is not None:
            if type(problem) is not str:
                raise _bad_answer("validate", problem, "None (or \"\") to let the page through, or a str: "
                                 "the reason to halt")
            if problem:
                yield Halt(problem)
        # Step 7: an empty page with the request token back is no progress: back off, don't spin.
        if self.is_caught_up(checkpoint, page):
            return "caught_up"
        # Step 4: process events in source order; stop at the first outcome that is not durable and terminal.
        status, applied = yield from self.process(checkpoint, page, receipts)
        if status != "done":
            return status
        if self.barrier_target(checkpoint, page) == checkpoint.resume_cursor:
            return "caught_up"          # step 7: the token did not advance; nothing to publish
        # Step 5: every event has a durable outcome: compare-and-swap the page barrier.
        steps = self.page_barrier(checkpoint, page, applied)
        return (yield from (steps if type(steps) is GeneratorType else _returned("page_barrier", steps)))

    def validate(self, checkpoint: Checkpoint, page: Page, ids_at: dict[int, str]) -> str | None:
        """Step 3: overlap at or below the applied prefix is fine; a regression inside the page, a conflicting
        identity at one position, or (without backfills) an unknown event behind the prefix stops the attempt.

        Without backfills every position at or below ``applied_position`` was applied, ignored or quarantined,
        so it holds a terminal receipt; an event there without one is a gap the provider contract rules out.
        """
        previous = None
        backfills, applied = self.contract.backfills, checkpoint.applied_position
        for e in page.events:
            if previous is not None and e.position <= previous:
                return f"source-order regression: position {e.position} after {previous}"
            previous = e.position
            holder = ids_at.get(e.position)
            if holder is not None and holder != e.id:
                return f"conflicting identity at position {e.position}: {e.id} but receipt for {holder}"
            if holder is None and not backfills and e.position <= applied:
                return (f"gap: {e.id} at position {e.position} is behind applied_position {applied} with no "
                        f"receipt, and the provider contract has no backfills")
        return None

    def process(self, checkpoint: Checkpoint, page: Page, receipts: dict[str, str]):
        """Step 4 for every event of the page, in source order.

        Returns (``done``, ``blocked`` or ``lost``; the applied prefix the page proves, replays included).
        """
        applied = checkpoint.applied_position
        for event in page.events:
            if self.is_replay(event, receipts, applied):
                yield Skip(event)
                applied = max(applied, event.position)
                continue
            decision = yield Handle(event)
            target = self.resulting_applied_position(event, page, applied)
            if decision == "apply":
                steps = self.apply(event, target)
            elif decision == "ignore":
                steps = self.ignore(event, target)
            elif decision == "quarantine":
                steps = self.quarantine(event, target)
            elif self.is_terminal(decision):    # a shortcut treating a non-terminal outcome as terminal
                applied = max(applied, target)
                continue
            else:
                return "blocked", applied   # invariant 5: a non-terminal outcome blocks the barrier
            # the hook (named by its decision) must be a generator: checked without a call on the hot path
            result = yield from (steps if type(steps) is GeneratorType else _returned(decision, steps))
            if result is LOST:
                return "lost", applied
            if result is BLOCKED:
                return "blocked", applied   # an external operation not committed yet: non-terminal
            applied = max(applied, target)
        return "done", applied

    # -- hooks --------------------------------------------------------------------------------------------
    def after_fetch(self, checkpoint: Checkpoint, page: Page):
        """Step 2: hold the next cursor in memory; publish nothing yet. Return a status to end the attempt."""
        return None
        yield  # pragma: no cover - makes this a generator

    def is_replay(self, event: Event, receipts: dict[str, str], applied_position: int) -> bool:
        """Step 4: a durable terminal receipt proves replay; the
        watermark may only when backfills are impossible."""
        if receipts.get(event.id) in TERMINAL:
            return True
        return not self.contract.backfills and event.position <= applied_position

    def resulting_applied_position(self, event: Event, page: Page, applied_position: int) -> int:
        """Invariant 2: the prefix extends through this event, never to a position merely observed."""
        return max(applied_position, event.position)

    def is_terminal(self, decision: str) -> bool:
        """Invariants 1 and 5: ``retry_later``, ``operator_review``, ``reversible_hold`` are not terminal."""
        return False

    def apply(self, event: Event, applied_position: int):
        """Step 4 / invariant 4: effect and receipt with ``applied_position``, in one transaction when the
        sink is transactional; after the external operation is committed when it is not."""
        if self.contract.external_sink:
            steps = self.settle_effect(event)
            settled = yield from (steps if type(steps) is GeneratorType
                                  else _returned("settle_effect", steps))
            if settled is not COMMITTED:
                return settled
            return (yield Commit(event, "applied", applied_position))
        return (yield Commit(event, "applied", applied_position, with_effect=True))

    def settle_effect(self, event: Event):
        """Seed 001: the external effect as a retryable operation with a durable record.

        Reserve the tuple, or get back the one already reserved (steps 1-2: every retry, after a crash too,
        reuses it); call the service with it unless the record is already ``committed``; settle the reply or
        the timeout in one compare-and-set (steps 3-6). Returns ``committed``, or ``BLOCKED`` when the outcome
        is ``pending`` or ``provisional``: a non-terminal outcome that blocks the page barrier (seed 000
        invariant 5) until a later attempt, with the same reservation, settles it.
        """
        operation = yield Reserve(event)
        if operation.state == COMMITTED:
            return COMMITTED
        reply = yield Call(event, operation.reservation)
        state = yield Settle(event, operation.reservation, reply)
        return COMMITTED if state == COMMITTED else BLOCKED

    def ignore(self, event: Event, applied_position: int):
        """Step 4: an event the policy intentionally ignores (invariant 1's "intentionally ignored") is done
        once a durable receipt says so; it has no effect."""
        return (yield Commit(event, "ignored", applied_position))

    def quarantine(self, event: Event, applied_position: int):
        """Step 4: quarantine is terminal only once a durable
        receipt binds the event to the final disposition."""
        return (yield Commit(event, "quarantined", applied_position))

    def is_caught_up(self, checkpoint: Checkpoint, page: Page) -> bool:
        """Step 7: an empty page with the request token back is the end for now, not a page to publish."""
        return not page.events and page.next_cursor == checkpoint.resume_cursor

    def barrier_target(self, checkpoint: Checkpoint, page: Page) -> str:
        """Step 5: the cursor the barrier publishes: the
        page's own ``next_cursor``, opaque, never computed."""
        return page.next_cursor

    def page_barrier(self, checkpoint: Checkpoint, page: Page, applied_position: int):
        """Step 5 / invariant 3: compare-and-swap from the attempt's cursor and version to a greater version,
        recording the prefix the page's receipts prove. A loser rereads state (the next attempt loads it)
        rather than overwrite newer progress."""
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version,
                                self.barrier_target(checkpoint, page), checkpoint.checkpoint_version + 1,
                                applied_position)
        if swapped is LOST:
            return "lost"
        return "advanced" if swapped else "rejected"


#: simkit's own :class:`Consumer` as defined: every consumer inherits its hooks, and ``safe`` (the audit's
#: reference, whose failures excuse a case) is it
_AS_DEFINED = dict(vars(Consumer))


def tampered() -> str | None:
    """The first attribute of simkit's own :class:`Consumer` that code in this process has assigned, added or
    deleted since it was defined (``None`` if none). A consumer's ``__init__`` that set
    ``simkit.Consumer.is_terminal`` made ``safe`` move on past a retry too: it failed every case the consumer
    failed, and ``simkit audit`` counted none of them, "passes" (docs/verdict.md, "Crashes are real")."""
    now = vars(Consumer)
    if len(now) == len(_AS_DEFINED) and all(now.get(k, now) is v for k, v in _AS_DEFINED.items()):
        return None
    return min(k for k in now.keys() | _AS_DEFINED.keys() if now.get(k, now) is not _AS_DEFINED.get(k, now))
