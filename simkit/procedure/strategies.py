"""The registry that resolves ``--strategy``: ``safe``, the shortcuts declared
in :mod:`.shortcuts`, and user consumers (docs/vocabulary.md, "Unsafe
shortcuts"; docs/cli.md, "Command line"); a consumer's one-line errors."""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import sys
import sysconfig
import textwrap
import types
from pathlib import Path

from simkit.errors import SIGNALLED, ConsumerError, SimkitError, StrategyError, a_or_an, described, told
from simkit.ops import malformed

from .consumer import Consumer, HookError
from .external import PREFIX, ExternalConsumer, exec_consumer, wrote
from .programs import not_a_file
from .shortcuts import (
    DECLARED,
    CompareTokens,
    InMemoryQuarantine,
    MaxPositionWatermark,
    NoVersionCheck,
    PersistTokenOnFetch,
    SuccessBeforeEffect,
    WatermarkOnlyDedup,
    increment_token,
    scenario_of,
)

__all__ = ["PersistTokenOnFetch", "MaxPositionWatermark", "increment_token", "CompareTokens",
           "NoVersionCheck", "WatermarkOnlyDedup", "SuccessBeforeEffect", "InMemoryQuarantine", "STRATEGIES",
           "SHORTCUTS", "scenario_of", "resolve", "strategy_name", "strategy_ref", "consumer_error",
           "refuse_malformed", "MALFORMED_SIGNS", "RAISED", "at_qualname", "docstring"]


#: ``--strategy`` by name: ``safe``, then each declared shortcut in seed 000's order.
STRATEGIES: dict[str, type[Consumer]] = {Consumer.name: Consumer,
                                         **{n: s.consumer for n, s in DECLARED.items()}}
#: The shortcuts' names (:data:`~simkit.procedure.shortcuts.DECLARED` holds the rest of each).
SHORTCUTS: tuple[str, ...] = tuple(DECLARED)


def resolve(ref: str, param: str | None = "strategy") -> type[Consumer]:
    """A strategy by name, ``path/to/file.py:ClassName``, ``package.module:ClassName`` or ``exec:COMMAND`` (a
    process per worker life speaking docs/protocol.md: :mod:`simkit.procedure.external`).

    Raises:
        StrategyError: unknown name, missing file or module, missing class, or not a Consumer subclass; its
            message opens with ``param`` (``simkit audit``, whose consumer is no flag, passes ``None``).
    """
    def refused(problem: str) -> StrategyError:
        return StrategyError(f"{param} {ref}: {problem}" if param else f"{ref}: {problem}", param=param)

    if not isinstance(ref, str):
        raise StrategyError(f"{param or 'strategy'} {described(ref)}: is no strategy name or reference (a "
                            "string, as --strategy takes)", param=param)
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
        module = _from_file(where, refused)
    else:
        try:
            module = importlib.import_module(where)
        except RAISED as exc:
            if isinstance(exc, SIGNALLED):
                raise
            raise refused(f"cannot import module {where}: {_one_line(told(exc))}") from None
    cls = at_qualname(vars(module), cls_name)         # Outer.Inner too, as simkit.testing names it
    if cls is None:
        raise refused(f"{where} has no class of that name ({cls_name})")
    if not (isinstance(cls, type) and issubclass(cls, Consumer)):
        kind = ("" if isinstance(cls, type) else "a function, " if callable(cls)
                else f"{a_or_an(type(cls).__name__)}, ")
        raise refused(f"{where}:{cls_name} is {kind}not a subclass of simkit.Consumer")
    return cls


def _from_file(where: str, refused) -> types.ModuleType:
    """The module ``where`` (a ``.py`` path) defines, loaded from the file; a file inside a package whose load
    raises ``ImportError`` (``from .base import Loud``: "no known parent package") is imported as its
    package's module instead, the folder above its top package put on ``sys.path`` as ``python -m`` would."""
    path = Path(where)
    if (problem := not_a_file(path)) is not None:     # a named pipe would be waited on for ever
        raise refused(f"no such file {where}" if problem == "no such file" else f"{where} {problem}")
    spec = importlib.util.spec_from_file_location(_module_name(path), path)
    if spec is None or spec.loader is None:             # a .py path always has both; mypy cannot know
        raise refused(f"{where} cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except RAISED as exc:                   # sys.exit() or a str() that raises too: one line all the same
        if isinstance(exc, SIGNALLED):
            raise
        package = _package(path) if isinstance(exc, ImportError) else None
        if package is None:
            raise refused(f"{where} failed to import: {type(exc).__name__}: {_one_line(told(exc))}") from None
        del sys.modules[spec.name]
        module = _from_package(where, *package, refused)
    return module


def _package(path: Path) -> tuple[str, str] | None:
    """(the folder above its top package, its dotted module name) for a file inside a package (a folder with
    an ``__init__.py``, itself named as Python names one); ``None`` for a file outside any."""
    folder, parts = path.resolve().parent, [] if path.stem == "__init__" else [path.stem]
    while (folder / "__init__.py").is_file() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    if not parts or (folder / "__init__.py").is_file() or not all(p.isidentifier() for p in parts) \
            or parts == [path.stem]:
        return None
    return str(folder), ".".join(parts)


def _from_package(where: str, root: str, dotted: str, refused) -> types.ModuleType:
    """Module ``dotted`` imported with ``root`` first on ``sys.path``: it must be the file ``where`` names
    (not another package's module of that name, imported before)."""
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(dotted)
    except RAISED as exc:
        if isinstance(exc, SIGNALLED):
            raise
        raise refused(f"{where} failed to import as module {dotted}: {type(exc).__name__}: "
                      f"{_one_line(told(exc))}") from None
    found = getattr(module, "__file__", None)
    if not found or Path(found).resolve() != Path(where).resolve():
        raise refused(f"{where} is module {dotted} of its package, but {dotted} is imported from {found} "
                      "already")
    return module


def at_qualname(namespace: dict, qualname: str):
    """What ``qualname`` (``Outer.Inner``) names in a module's ``namespace``, or ``None``."""
    found: object = namespace
    for part in qualname.split("."):
        found = found.get(part) if isinstance(found, dict) else getattr(found, part, None)
        if found is None:
            return None
    return found


def _module_name(path: Path) -> str:
    """The module name a consumer file loads as: its stem and a digest of its whole resolved path, so that two
    files of one stem (``v1/consumer.py``, ``v2/consumer.py``) are two modules, each run afresh for a life
    from its own file (:func:`simkit.procedure.lives.fresh`); the same file resolved again is the same one."""
    digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in path.stem)
    return f"simkit_user_{stem}_{digest}"


def strategy_name(cls: type[Consumer]) -> str:
    """The name a strategy class reports in verdicts: a built-in's name, else the class's (a consumer's own
    ``name = ["a"]``, unhashable, was a TypeError traceback from the lookup)."""
    name = getattr(cls, "name", None)
    return name if isinstance(name, str) and STRATEGIES.get(name) is cls else cls.__name__


def strategy_ref(cls: type) -> str:
    """How a user names ``cls`` on the command line: a
    built-in name, ``file.py:Class`` or ``module:Class``."""
    name = getattr(cls, "name", None)
    if isinstance(name, str) and STRATEGIES.get(name) is cls:
        return name
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
    simkit's, not the standard library's or an installed package's), else the deepest of all. Where ``exc``'s
    own frames hold none, its cause's: a consumer's ``run`` that raised ``StopIteration`` is a
    ``RuntimeError`` raised at the frame that sent to it, simkit's (and another line of it where the world's
    quick path in C sent)."""
    def frames_of(e: BaseException) -> list:
        frames, tb = [], e.__traceback__
        while tb is not None:
            frames.append(tb)
            tb = tb.tb_next
        return frames

    def own(tb) -> bool:
        path = str(Path(tb.tb_frame.f_code.co_filename).resolve())
        return not path.startswith(_PACKAGE) and not path.startswith(_LIBRARIES)

    frames = frames_of(exc)
    if not frames:
        return ""
    if isinstance(exc, RuntimeError) and isinstance(exc.__cause__, StopIteration):
        frames += frames_of(exc.__cause__)
    tb = next((t for t in reversed(frames) if own(t)), frames[-1])
    code = tb.tb_frame.f_code
    return f" in {code.co_name} ({Path(code.co_filename).name}:{tb.tb_lineno})"


def _one_line(text: str, width: int = 300) -> str:
    """``text`` on one line of printable characters, cut at ``width``."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


#: What a consumer's own code may raise that simkit reports as its one-line error (exit 2): anything,
#: ``sys.exit()``, a ``KeyboardInterrupt``, a ``GeneratorExit`` or a ``BaseException`` subclass of its own too
#: (which ``simulate`` raised as it was, a traceback from inside SimPy); :func:`consumer_error` re-raises a
#: real signal's.
RAISED = (BaseException,)


#: What a driver's request fails with when the request may be malformed: a driver catching one asks
#: :func:`refuse_malformed` before it re-raises (the simulation's world and ``simkit live``'s worker alike)
MALFORMED_SIGNS = (TypeError, AttributeError, ValueError, KeyError, OverflowError)


def refuse_malformed(strategy: type, op, worker: int | None = None) -> None:
    """For a request ``op`` of ``worker`` that failed: raise the consumer's one-line error if one of its
    fields is malformed (:func:`simkit.ops.malformed`: a float ``applied_position``, a list for a cursor) or
    holds a value the store refused to hold (the one line of the exception being handled, a SimkitError naming
    the field: :class:`simkit.store.limits.Unstorable`, ``event.position is an integer of 71 bits, ...``, the
    same on either store); else return (the failure is the driver's own, and its caller re-raises it). An
    ``exec:`` consumer's line names the worker and the line it wrote, as its other bad lines do
    (docs/protocol.md, "When something is wrong")."""
    problem = malformed(op)
    refused = sys.exception()
    if problem is None and isinstance(refused, SimkitError) and getattr(refused, "field", None):
        problem = f"{type(op).__name__}.{told(refused)}"
    if problem is None:
        return
    if issubclass(strategy, ExternalConsumer) and worker is not None and (said := wrote(strategy, worker)):
        raise ConsumerError(f"{said}: {problem}")
    raise consumer_error(strategy, None, op, f"yielded a malformed request: {problem}")


def consumer_error(strategy: type, exc: BaseException | None, op=None,
                   problem: str | None = None) -> ConsumerError:
    """The one-line error for a consumer whose own code raised ``exc``, or (``exc``
    None) that yielded ``op``, which is not a request, or has another ``problem``:
    ``strategy mine.py:X raised ValueError: boom in is_replay (mine.py:12)``."""
    if isinstance(exc, ConsumerError):          # one line already (an exec: consumer's, docs/protocol.md)
        return ConsumerError(str(exc))
    ref = strategy_ref(strategy)
    if isinstance(exc, HookError):      # a hook written the wrong way round: its own line says the fix
        problem = str(exc)
    if problem is not None:
        return ConsumerError(f"strategy {ref}: {problem}")
    if exc is None:
        shown = _one_line(described(op, 80), 80)      # (an object's own repr may raise)
        return ConsumerError(f"strategy {ref} yielded {shown} ({type(op).__name__}), which is not a request "
                             "of simkit.ops")
    if isinstance(exc, SIGNALLED):  # Ctrl-C or SIGTERM while the consumer ran: the user's, not its
        raise exc
    message = _one_line(told(exc))
    return ConsumerError(f"strategy {ref} raised {type(exc).__name__}{': ' + message if message else ''}"
                         f"{_where(exc)}")


def docstring(cls: type) -> str:
    """``cls``'s docstring, read from its source when Python dropped it (``python -OO``, ``PYTHONOPTIMIZE=2``:
    ``simkit list`` showed every strategy without its description); ``""`` when it has none."""
    if cls.__doc__ is not None or sys.flags.optimize < 2:
        return cls.__doc__ or ""
    with contextlib.suppress(OSError, TypeError, SyntaxError, ValueError):
        node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
        if isinstance(node, ast.ClassDef):
            return ast.get_docstring(node) or ""
    return ""
