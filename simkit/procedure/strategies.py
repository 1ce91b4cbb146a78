"""The seven "Common unsafe shortcuts" of seed 000, each the smallest honest change to :class:`Consumer`,
and the registry that resolves ``--strategy``, user consumers included (docs/vocabulary.md, "Unsafe shortcuts";
docs/cli.md, "Command line")."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
import sysconfig
from pathlib import Path

from simkit.errors import SIGNALLED, ConsumerError, StrategyError, told
from simkit.model import Checkpoint, Event, Page
from simkit.ops import LOST, Barrier, Commit, Effect, Overwrite, malformed

from .consumer import Consumer, HookError
from .external import PREFIX, ExternalConsumer, exec_consumer

__all__ = ["PersistTokenOnFetch", "MaxPositionWatermark", "increment_token", "CompareTokens", "NoVersionCheck",
           "WatermarkOnlyDedup", "SuccessBeforeEffect", "InMemoryQuarantine", "STRATEGIES", "SHORTCUTS", "resolve",
           "strategy_name", "strategy_ref", "consumer_error", "refuse_malformed", "RAISED"]


class PersistTokenOnFetch(Consumer):
    """"Persisting the returned token immediately after a successful fetch."

    Publishes ``next_cursor`` with the barrier's compare-and-swap right after the fetch, then processes the
    page. A crash mid-page resumes after the page: its unprocessed events are lost. Breaks invariant 1.
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

    Each commit writes the page's largest position as ``applied_position``; after a crash the watermark
    "proves" the rest of the page was done, and it is skipped. Breaks invariant 2.
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
    incrementing its own token instead: a stuck page is skipped, and a token the provider never issued is
    published. Breaks invariants 1 and 3.
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

    The barrier writes the next cursor unconditionally. A worker that paused with a stale page overwrites
    the newer progress of another worker: the checkpoint regresses. Breaks invariant 3.
    """

    name = "no_version_check"

    def page_barrier(self, checkpoint, page, applied_position):
        target = self.barrier_target(checkpoint, page)
        done = yield Overwrite(target, checkpoint.checkpoint_version + 1, applied_position)
        return "lost" if done is LOST else "advanced"


class WatermarkOnlyDedup(Consumer):
    """"Relying on a watermark when the provider permits backfills behind it."

    Detects replays by ``position <= applied_position`` alone. A backfilled event behind the watermark is
    taken for a replay and skipped; the barrier then moves past it. Breaks invariant 1.
    """

    name = "watermark_only_dedup"

    def is_replay(self, event: Event, receipts: dict[str, str], applied_position: int) -> bool:
        return event.position <= applied_position


class SuccessBeforeEffect(Consumer):
    """"Recording success before a non-idempotent external effect is durably known."

    Commits the ``applied`` receipt and ``applied_position`` first, then calls the external sink. A crash
    between the two leaves a receipt that claims an effect that never happened; the replay trusts it.
    Breaks invariant 2.
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
    The barrier passes events with no durable outcome. Breaks invariants 1 and 5.
    """

    name = "in_memory_quarantine"

    def is_terminal(self, decision: str) -> bool:
        return decision in ("operator_review", "reversible_hold")

    def quarantine(self, event: Event, applied_position: int):
        return True                 # decided in memory; no durable receipt
        yield  # pragma: no cover


STRATEGIES: dict[str, type[Consumer]] = {
    cls.name: cls
    for cls in (Consumer, PersistTokenOnFetch, MaxPositionWatermark, CompareTokens, NoVersionCheck,
                WatermarkOnlyDedup, SuccessBeforeEffect, InMemoryQuarantine)
}
SHORTCUTS = tuple(n for n in STRATEGIES if n != "safe")


def resolve(ref: str, param: str | None = "strategy") -> type[Consumer]:
    """A strategy by name, ``path/to/file.py:ClassName``, ``package.module:ClassName`` or ``exec:COMMAND`` (a
    process per worker life speaking docs/protocol.md: :mod:`simkit.procedure.external`).

    Raises:
        StrategyError: unknown name, missing file or module, missing class, or not a Consumer subclass; its
            message opens with ``param`` (``simkit audit``, whose consumer is no flag, passes ``None``).
    """
    def refused(problem: str) -> StrategyError:
        return StrategyError(f"{param} {ref}: {problem}" if param else f"{ref}: {problem}", param=param)

    if ref in STRATEGIES:
        return STRATEGIES[ref]
    if ref.startswith(PREFIX):
        try:
            return exec_consumer(ref[len(PREFIX):])
        except StrategyError as exc:
            raise refused(str(exc)) from None
    if ":" not in ref:
        raise refused(f"unknown strategy (known: {', '.join(STRATEGIES)}; "
                      "or path/to/file.py:ClassName, package.module:ClassName, exec:COMMAND)")
    where, _, cls_name = ref.rpartition(":")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise refused(f"no such file {where}")
        spec = importlib.util.spec_from_file_location(f"simkit_user_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except RAISED as exc:                   # sys.exit() or a str() that raises too: one line all the same
            if isinstance(exc, SIGNALLED):
                raise
            raise refused(f"{where} failed to import: {type(exc).__name__}: {_one_line(told(exc))}") from None
    else:
        try:
            module = importlib.import_module(where)
        except RAISED as exc:
            if isinstance(exc, SIGNALLED):
                raise
            raise refused(f"cannot import module {where}: {_one_line(told(exc))}") from None
    cls = getattr(module, cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Consumer)):
        what = "is not a subclass of simkit.Consumer" if cls is not None else "has no class of that name"
        raise refused(f"{where} {what} ({cls_name})")
    return cls


def strategy_name(cls: type[Consumer]) -> str:
    """The name a strategy class reports in verdicts."""
    return cls.name if STRATEGIES.get(cls.name) is cls else cls.__name__


def strategy_ref(cls: type) -> str:
    """How a user names ``cls`` on the command line: a built-in name, ``file.py:Class`` or ``module:Class``."""
    if STRATEGIES.get(getattr(cls, "name", None)) is cls:
        return cls.name
    if isinstance(cls, type) and issubclass(cls, ExternalConsumer) and cls.command is not None:
        return PREFIX + cls.command
    module = getattr(cls, "__module__", "") or ""
    if module.startswith("simkit_user_"):           # loaded from a file by resolve()
        try:
            return f"{Path(inspect.getsourcefile(cls) or module).name}:{cls.__qualname__}"
        except TypeError:
            pass
    return f"{module}:{cls.__qualname__}"


_PACKAGE = str(Path(__file__).resolve().parents[1])
_LIBRARIES = tuple({str(Path(p).resolve()) for k, p in sysconfig.get_paths().items()
                    if k in ("stdlib", "platstdlib", "purelib", "platlib")})


def _where(exc: BaseException) -> str:
    """`` in HOOK (file.py:LINE)`` for the frame that raised: the deepest one in the consumer's own code (not
    simkit's, not the standard library's or an installed package's), else the deepest of all."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return ""

    def own(tb) -> bool:
        path = str(Path(tb.tb_frame.f_code.co_filename).resolve())
        return not path.startswith(_PACKAGE) and not path.startswith(_LIBRARIES)

    tb = next((t for t in reversed(frames) if own(t)), frames[-1])
    code = tb.tb_frame.f_code
    return f" in {code.co_name} ({Path(code.co_filename).name}:{tb.tb_lineno})"


def _one_line(text: str, width: int = 300) -> str:
    """``text`` on one line of printable characters, cut at ``width``."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


#: What a consumer's own code may raise that simkit reports as its one-line error (exit 2): ``sys.exit()``, a
#: ``KeyboardInterrupt`` or a ``GeneratorExit`` of its own too (:func:`consumer_error` re-raises a real signal's).
RAISED = (Exception, SystemExit, KeyboardInterrupt, GeneratorExit)


def refuse_malformed(strategy: type, op) -> None:
    """For a request ``op`` that failed: raise the consumer's one-line error if one of its fields is malformed
    (:func:`simkit.ops.malformed`: a float ``applied_position``, a list for a cursor); else return (the failure is
    the driver's own, and its caller re-raises it)."""
    problem = malformed(op)
    if problem is not None:
        raise consumer_error(strategy, None, op, f"yielded a malformed request: {problem}")


def consumer_error(strategy: type, exc: BaseException | None, op=None, problem: str | None = None) -> ConsumerError:
    """The one-line error for a consumer whose own code raised ``exc``, or (``exc`` None) that yielded ``op``,
    which is not a request, or has another ``problem``: ``strategy mine.py:X raised ValueError: boom in is_replay
    (mine.py:12)``."""
    if isinstance(exc, ConsumerError):          # one line already (an exec: consumer's, docs/protocol.md)
        return ConsumerError(str(exc))
    ref = strategy_ref(strategy)
    if isinstance(exc, HookError):      # a hook written the wrong way round: its own line says the fix
        problem = str(exc)
    if problem is not None:
        return ConsumerError(f"strategy {ref}: {problem}")
    if exc is None:
        return ConsumerError(f"strategy {ref} yielded {_one_line(repr(op), 80)} ({type(op).__name__}), which is not a "
                             "request of simkit.ops")
    if isinstance(exc, SIGNALLED):              # Ctrl-C or SIGTERM while the consumer ran: the user's, not its
        raise exc
    message = _one_line(told(exc))
    return ConsumerError(f"strategy {ref} raised {type(exc).__name__}{': ' + message if message else ''}"
                         f"{_where(exc)}")
