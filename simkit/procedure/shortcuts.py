"""The seven "Common unsafe shortcuts" of seed 000, each the smallest honest change to :class:`Consumer`, and
:data:`DECLARED`: the one declaration of each shortcut's scenario, hooks and harm (docs/vocabulary.md, "Unsafe
shortcuts"). The strategy registry, ``simkit.SHORTCUTS``, the widgets' "own scenario" and the docs table all
come from :data:`DECLARED`; adding a shortcut is a class and one entry here, its scenario file, its docs row.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from simkit.errors import StrategyError
from simkit.model import Checkpoint, Event, Page
from simkit.ops import LOST, Barrier, Commit, Effect, Overwrite

from .consumer import Consumer

__all__ = ["PersistTokenOnFetch", "MaxPositionWatermark", "increment_token", "CompareTokens",
           "NoVersionCheck", "WatermarkOnlyDedup", "SuccessBeforeEffect", "InMemoryQuarantine", "Breaks",
           "Shortcut", "DECLARED", "overridden_hooks", "scenario_of", "exposing"]


class PersistTokenOnFetch(Consumer):
    """"Persisting the returned token immediately after a successful fetch."

    Publishes ``next_cursor`` with the barrier's compare-and-swap right after the fetch, then processes the
    page.
    """

    name = "persist_token_on_fetch"

    def after_fetch(self, checkpoint, page):
        if self.is_caught_up(checkpoint, page):
            return None
        swapped = yield Barrier(checkpoint.resume_cursor, checkpoint.checkpoint_version, page.next_cursor,
                                checkpoint.checkpoint_version + 1, checkpoint.applied_position)
        if swapped is LOST:
            return "lost"
        return None if swapped else "rejected"

    def page_barrier(self, checkpoint, page, applied_position):
        return "advanced"           # already published on fetch
        yield  # pragma: no cover


class MaxPositionWatermark(Consumer):
    """"Setting the applied watermark to the largest position present in the page."

    Each commit writes the page's largest position as ``applied_position``.
    """

    name = "max_position_watermark"

    def resulting_applied_position(self, event: Event, page: Page, applied_position: int) -> int:
        return max(applied_position, max(e.position for e in page.events))


def increment_token(token: str) -> str:
    """What a consumer that believes tokens are counters computes as "the next token"."""
    m = re.search(r"(\d+)$", token)
    if m:
        return token[: m.start()] + str(int(m.group(1)) + 1)
    return token[:-1] + chr(ord(token[-1]) + 1) if token else "1"


class CompareTokens(Consumer):
    """"Comparing or incrementing opaque provider tokens as if they were event positions."

    Treats a returned token that does not sort after the request token as "no progress" and moves on by
    incrementing its own token instead (:func:`increment_token`).
    """

    name = "compare_tokens"

    def is_caught_up(self, checkpoint: Checkpoint, page: Page) -> bool:
        return False

    def barrier_target(self, checkpoint: Checkpoint, page: Page) -> str:
        if page.next_cursor > checkpoint.resume_cursor:
            return page.next_cursor
        return increment_token(checkpoint.resume_cursor)


class NoVersionCheck(Consumer):
    """"Letting a late retry overwrite a newer checkpoint without a version check."

    The barrier writes the next cursor unconditionally.
    """

    name = "no_version_check"

    def page_barrier(self, checkpoint, page, applied_position):
        target = self.barrier_target(checkpoint, page)
        done = yield Overwrite(target, checkpoint.checkpoint_version + 1, applied_position)
        return "lost" if done is LOST else "advanced"


class WatermarkOnlyDedup(Consumer):
    """"Relying on a watermark when the provider permits backfills behind it."

    Detects replays by ``position <= applied_position`` alone.
    """

    name = "watermark_only_dedup"

    def is_replay(self, event: Event, receipts: dict[str, str], applied_position: int) -> bool:
        return event.position <= applied_position


class SuccessBeforeEffect(Consumer):
    """"Recording success before a non-idempotent external effect is durably known."

    Commits the ``applied`` receipt and ``applied_position`` first, then calls the external sink.
    """

    name = "success_before_effect"

    def apply(self, event: Event, applied_position: int):
        if not self.contract.external_sink:
            return (yield from super().apply(event, applied_position))
        committed = yield Commit(event, "applied", applied_position)
        if committed is LOST or not committed:
            return committed
        return (yield Effect(event))


class InMemoryQuarantine(Consumer):
    """"Treating an in-memory, review-pending, or reversible quarantine as a durable terminal outcome."

    Decides quarantine in memory and moves on; counts ``operator_review`` and ``reversible_hold`` as final.
    """

    name = "in_memory_quarantine"

    def is_terminal(self, decision: str) -> bool:
        return decision in ("operator_review", "reversible_hold")

    def quarantine(self, event: Event, applied_position: int):
        return True                 # decided in memory; no durable receipt
        yield  # pragma: no cover


# -- the declaration -----------------------------------------------------------------------------------------
def overridden_hooks(cls: type) -> set[str]:
    """The public methods of :class:`Consumer` (its hooks, docs/hooks.md) that ``cls`` itself defines anew."""
    base = vars(Consumer)
    return {h for h, v in vars(cls).items() if h in base and not h.startswith("_") and callable(v)}


@dataclass(frozen=True)
class Breaks:
    """What the checker reports for a shortcut on its scenario (docs/verdict.md), where ``safe`` reports
    nothing: the verdict's fields of the same names; ``unjustified_halt`` is ``halt_justified`` false."""

    invariants_broken: tuple[int, ...]
    lost: tuple[str, ...] = ()
    duplicated: tuple[str, ...] = ()
    regressions: int = 0
    unjustified_halt: bool = False

    def __post_init__(self):
        if not self.invariants_broken or not set(self.invariants_broken) <= {1, 2, 3, 4, 5}:
            raise ValueError(f"invariants_broken {self.invariants_broken}: one or more of seed 000's 1..5")

    def __str__(self) -> str:
        """As docs/vocabulary.md writes it: ``e3, e4 lost; invariant 3; an unjustified halt``."""
        parts = [f"{', '.join(ids)} {harm}"
                 for ids, harm in ((self.lost, "lost"), (self.duplicated, "duplicated"))
                 if ids]
        if self.regressions:
            parts.append("a regression" if self.regressions == 1 else f"{self.regressions} regressions")
        plural = "s" if len(self.invariants_broken) > 1 else ""
        parts.append(f"invariant{plural} {', '.join(map(str, self.invariants_broken))}")
        if self.unjustified_halt:
            parts.append("an unjustified halt")
        return "; ".join(parts)


@dataclass(frozen=True)
class Shortcut:
    """One unsafe shortcut, declared: its consumer class (whose ``name`` is the strategy's and whose docstring
    opens with seed 000's words), the bundled scenario where it fails and ``safe`` does not, the hooks it
    overrides (checked against the class), what it breaks there and, in one line, why."""

    consumer: type[Consumer]
    scenario: str
    hooks: tuple[str, ...]
    breaks: Breaks
    why: str

    def __post_init__(self):
        cls = self.consumer
        if not (isinstance(cls, type) and issubclass(cls, Consumer)) or "name" not in vars(cls):
            raise TypeError(f"{cls!r}: a shortcut is a Consumer subclass with a name of its own")
        if set(self.hooks) != overridden_hooks(cls):
            raise TypeError(f"shortcut {cls.name} declares hooks {sorted(self.hooks)} but overrides "
                            f"{sorted(overridden_hooks(cls))}")
        if "\n" in self.why:
            raise ValueError(f"shortcut {cls.name}: its why is one line")

    @property
    def name(self) -> str:
        return self.consumer.name

    @property
    def quote(self) -> str:
        """Seed 000's words for it: the first line of the class docstring, without quotes and full stop."""
        return (self.consumer.__doc__ or "").strip().splitlines()[0].strip('"').rstrip(".")


#: Every shortcut, in seed 000's order: the one place each is declared.
DECLARED: dict[str, Shortcut] = {s.name: s for s in (
    Shortcut(PersistTokenOnFetch, "shortcut_persist_token_on_fetch", ("after_fetch", "page_barrier"),
             Breaks((1,), lost=("e107",)),
             "a crash mid-page resumes after the page: its unprocessed events are lost"),
    Shortcut(MaxPositionWatermark, "shortcut_max_position_watermark", ("resulting_applied_position",),
             Breaks((1, 2), lost=("e107",)),
             'after a crash the watermark "proves" the rest of the page was done, so it is skipped'),
    Shortcut(CompareTokens, "shortcut_compare_tokens", ("barrier_target", "is_caught_up"),
             Breaks((3,), lost=("e3", "e4"), unjustified_halt=True),
             "a token that does not sort after the last one is taken for no progress and incremented: "
             "pages are skipped and a token the provider never issued is published"),
    Shortcut(NoVersionCheck, "shortcut_no_version_check", ("page_barrier",),
             Breaks((3,), regressions=1),
             "a paused worker writes its stale cursor over another worker's newer progress: the checkpoint "
             "regresses"),
    Shortcut(WatermarkOnlyDedup, "shortcut_watermark_only_dedup", ("is_replay",),
             Breaks((1, 2), lost=("e105",)),
             "a backfilled event behind the watermark is taken for a replay and skipped"),
    Shortcut(SuccessBeforeEffect, "shortcut_success_before_effect", ("apply",),
             Breaks((1, 2), lost=("e107",)),
             "a crash between the receipt and the effect leaves a receipt claiming an effect that never ran"),
    Shortcut(InMemoryQuarantine, "shortcut_in_memory_quarantine", ("is_terminal", "quarantine"),
             Breaks((1, 2, 5), lost=("e211", "e212")),
             "the barrier passes events that have no durable outcome"),
)}


def scenario_of(shortcut: str) -> str:
    """The bundled scenario built to expose ``shortcut``.

    Raises:
        StrategyError: ``shortcut`` is not one of :data:`DECLARED`.
    """
    if shortcut not in DECLARED:
        raise StrategyError(f"shortcut {shortcut}: not a shortcut (known: {', '.join(DECLARED)})",
                            param="shortcut")
    return DECLARED[shortcut].scenario


def exposing(scenario: str) -> str | None:
    """The shortcut whose declared scenario ``scenario`` is, or ``None``."""
    return next((s.name for s in DECLARED.values() if s.scenario == scenario), None)
