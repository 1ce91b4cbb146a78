"""A worker life's consumer class, with fresh class and module state (docs/verdict.md, "Crashes are real").

A crash "ends the worker's process at that point: everything in memory is gone" (docs/vocabulary.md, "Crash
points"). Discarding the consumer object wipes its instance state, but a class attribute or a module global
would outlive it in one Python process, and so would hide a bug a real restart shows (a class-level "already
sent" set). So each life of a user's consumer runs a class taken from its defining module executed afresh: the
module's code is compiled once (again after a reload of its edited file) and run again into a new module
object, at the cost of running a module body (a fraction of a millisecond), not of starting a process. This
also keeps a run a pure function of its inputs: nothing a consumer kept in its class or module during one run
leaks into the next.

A module is run again a top-level statement at a time, and a statement that starts a simulation of its own
(:func:`not_rerunning`) is passed over, with any after it that fail for want of its result: a script that
defines its consumers and calls ``simulate()`` or ``audit()`` at top level has its definitions run afresh, not
its simulations again inside each life (which nested an audit in every one of its lives). What else it does at
top level (a ``print``) runs again; its ``if __name__ == "__main__":`` block does not.

A class with no module body to run again (defined inside a function, or in a notebook cell) is given to each
life as a subclass of its own whose class attributes are copies of those it and its user-written bases hold
(:func:`copied`): a set on the class filled in one life is empty again in the next, as it is for a class from
a file (and two workers no longer share it, as two processes do not).

A base class the consumer imports from another module of its own is not run again: each life's class is a
subclass holding copies of that base's class attributes, the same way (a helper's ``ran = set()`` filled by
``self.ran.add`` outlived a crash, where the same code in one file did not: round 17).

What this cannot wipe: state the consumer keeps in *another* module it imports (its globals, or in
``builtins``, or on disk; its own module reached as ``sys.modules[__name__]`` is the one first loaded), and,
for a class with no module body to run again, what its methods reach by name (the class itself by name, a
closure's variable, a notebook's global). For a consumer that must be judged as a real process,
``--strategy exec:COMMAND`` starts one per life. simkit's own strategies keep no class or module state and are
used as they are.
"""
from __future__ import annotations
import __future__

import ast
import atexit
import copy
import gc
import os
import sys
import threading
import types
from collections import deque

from .consumer import Contract, tampered
from .strategies import RAISED, at_qualname, consumer_error

__all__ = ["end", "fresh", "not_rerunning", "start"]


class _Rerun(BaseException):
    """A module run afresh reached a simulation of its own: that statement is passed over
    (:func:`not_rerunning`)."""


class _Depth(threading.local):
    """How many modules this thread is running afresh (:func:`fresh`) right now: a thread's own, so that
    another thread's ``simulate()`` is not taken for a statement of the module being run again (it raised
    this module's ``_Rerun`` to its caller: round 61)."""

    rerunning = 0


_DEPTH = _Depth()


def not_rerunning() -> None:
    """Called as a simulation starts: inside a module being run afresh, the statement that called it is passed
    over (the module docstring)."""
    if _DEPTH.rerunning:
        raise _Rerun


#: Each consumer file's (stamp, top-level statements) as last compiled (:func:`_code`)
_COMPILED: dict[str, tuple[tuple | None, tuple]] = {}


def _code(path: str, newest: bool = False) -> tuple | None:
    """The module's top-level statements as first compiled for ``path`` in this process, so that a file
    edited while an audit runs (an editor's autosave) is run afresh as the class was imported; with
    ``newest``, as the file holds them now, if it changed since (``importlib.reload``, a notebook's
    autoreload: its old code was judged). ``None`` where there is nothing (newer) to run: the file removed,
    unreadable or no longer compiling (that was the consumer's error, ``FileNotFoundError in _code``)."""
    cached = _COMPILED.get(path)
    if cached is not None and not newest:
        return cached[1]
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    if cached is not None and cached[0] == stamp or (statements := _compiled(path)) is None:
        return None
    _COMPILED[path] = (stamp, statements)
    return statements


def _compiled(path: str) -> tuple | None:
    """Each top-level statement of the file on its own (with the module's ``__future__`` features), so that a
    re-run can pass over one that starts a simulation of its own and go on. Read as bytes, as ``import``
    reads a file: its encoding declaration or BOM is honoured (read as UTF-8 text, a ``# -*- coding: latin-1
    -*-`` file was a UnicodeDecodeError, a BOM a SyntaxError, each blamed on the consumer)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            flags |= sum(getattr(__future__, alias.name).compiler_flag for alias in stmt.names)
    return tuple(compile(ast.Module([stmt], []), path, "exec", flags=flags, dont_inherit=True)
                 for stmt in tree.body)


def _codes(cls: type) -> dict[str, types.CodeType]:
    """The code of each function ``cls`` itself defines (its methods, static and class ones too), by name."""
    codes = ((k, getattr(getattr(v, "__func__", v), "__code__", None)) for k, v in vars(cls).items())
    return {k: c for k, c in codes if isinstance(c, types.CodeType)}


def _origins(cls: type) -> dict[str, tuple]:
    """Where each function ``cls`` itself defines was written (file, line, qualified name), by name: the same
    for the class its module defines however its code was compiled (pytest rewrites asserts), another for a
    method assigned to the class since (``mock.patch.object``)."""
    return {k: (c.co_filename, c.co_firstlineno, c.co_qualname) for k, c in _codes(cls).items()}


def _files(cls: type) -> set[str]:
    """The source files of the functions ``cls`` itself defines (its methods, static and class ones too)."""
    return {os.path.realpath(c.co_filename) for c in _codes(cls).values()}


def _ours(cls: type) -> bool:
    """Is ``cls`` simkit's own (its strategies keep no class or module state: used as they are)?"""
    return cls.__module__ == "simkit" or cls.__module__.startswith("simkit.")


def _module_of(cls: type):
    """The module object and source file that define ``cls``, or ``None`` where it cannot be run again: also
    where the module now registered under ``cls.__module__`` is another file's (it holds another class there,
    and ``cls``'s own methods were written in another file), which would judge that file's code as ``cls``."""
    if _ours(cls) or "<locals>" in cls.__qualname__:
        return None
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if module is None or not path or not path.endswith(".py"):
        return None
    if at_qualname(vars(module), cls.__qualname__) is not cls:     # (else the module is its own: no path)
        files = _files(cls)
        if files and os.path.realpath(path) not in files:
            return None
    return module, path


def fresh(cls: type) -> type:
    """``cls`` as a new process would first see it: taken from its module, executed afresh (see the module
    docstring); ``cls`` itself where that cannot be done, or where the module no longer defines it. The module
    as first compiled, while it defines ``cls`` as imported (its methods' code); else as its file is now, if
    that changed since (a reload: the old code was judged); else the first, as it is (pytest's assertion
    rewriting makes the imported code differ from the file's), unless a method of ``cls`` was written
    elsewhere than the file's (a hook patched onto the class: its file's was judged)."""
    found = _module_of(cls)
    if found is None:
        return copied(cls)
    module, path = found
    # a script's own module runs again under another name: its ``if __name__ == "__main__":`` block (which
    # would run the script again, simulate() and all, in each life) stays behind
    name = "__simkit_life__" if module.__name__ in ("__main__", "__mp_main__") else module.__name__
    first = _afresh(statements, module, name, path, cls) if (statements := _code(path)) is not None else None
    if first is None or _codes(first) != _codes(cls):
        newest = _code(path, newest=True)
        again = None if newest is None else _afresh(newest, module, name, path, cls)
        first = again if again is not None else first
    if first is None or _origins(first) != _origins(cls):     # (a hook patched since: it is judged)
        return copied(cls)
    # a base from another of the user's modules (a helper's ``ran = set()``) is not run again: copied
    return copied(first, run_again=name)


def _afresh(statements: tuple, module, name: str, path: str, cls: type) -> type | None:
    """``cls``'s namesake from ``statements`` run into a new module called ``name``, or ``None`` where they
    no longer run or define it."""
    again = types.ModuleType(name, module.__doc__)
    again.__file__, again.__package__ = path, module.__package__
    again.__spec__ = getattr(module, "__spec__", None)
    _DEPTH.rerunning += 1
    try:
        passed = False
        for statement in statements:
            try:
                exec(statement, again.__dict__)
            except (_Rerun, SystemExit):    # its own simulation, or its sys.exit(): passed over
                passed = True
            except Exception:
                if not passed:              # the module no longer runs as it did when it was loaded
                    return None
                # else: a statement that wanted what a passed-over one would have made (its result)
    finally:
        _DEPTH.rerunning -= 1
    new = at_qualname(again.__dict__, cls.__qualname__)
    return new if isinstance(new, type) and new.__name__ == cls.__name__ else None


def _state(cls: type, run_again: str | None = None) -> dict[str, object]:
    """The class attributes of ``cls`` and of its bases written outside simkit that are data (not a function,
    descriptor or class, which a life cannot change without assigning to its class by name), nearest first;
    none of a class defined by the module ``run_again`` names, whose body ran again for this life."""
    state: dict[str, object] = {}
    for base in cls.__mro__:
        if base is object or _ours(base) or base.__module__ == run_again:
            continue
        for name, value in vars(base).items():
            if (name not in state and not (name.startswith("__") and name.endswith("__"))
                    and not isinstance(value, type) and not hasattr(value, "__get__")):
                state[name] = value
    return state


def copied(cls: type, run_again: str | None = None) -> type:
    """``cls`` for one life when its module body cannot run again (the module docstring), or its bases' when
    they are another module's (``run_again``: :func:`_state`): a subclass holding a deep copy of each class
    attribute :func:`_state` finds, so that what one life put in it is gone in the next (one that cannot be
    copied, a lock, is inherited as it is); ``cls`` itself when none needs a copy (an int, a str, a tuple of
    them)."""
    if _ours(cls):
        return cls
    own = {}
    for name, value in _state(cls, run_again).items():
        try:
            if (again := copy.deepcopy(value)) is not value:
                own[name] = again
        except Exception:               # noqa: BLE001, S112 -- the caller's object: not copied
            continue
    if not own:
        return cls
    try:
        return type(cls)(cls.__name__, (cls,), {**own, "__module__": cls.__module__,
                                                "__qualname__": cls.__qualname__, "__doc__": cls.__doc__})
    except Exception:                   # noqa: BLE001 -- a metaclass or __init_subclass__ of its own refused
        return cls


def start(strategy: type, contract: Contract):
    """A new worker life: ``strategy`` fresh (:func:`fresh`) with its own
    copy of the contract, its ``run()`` generator. The consumer's own errors
    are one line (:func:`~simkit.procedure.strategies.consumer_error`)."""
    try:
        consumer = fresh(strategy)(Contract(contract.backfills, contract.external_sink))
        unset = not hasattr(consumer, "contract")
        gen = None if unset else consumer.run()
    except RAISED as exc:
        raise consumer_error(strategy, exc) from exc
    if unset:   # else an AttributeError 'contract' blaming simkit's consumer.py, and no word of what to do
        raise consumer_error(strategy, None, problem="its __init__ never called simkit.Consumer.__init__, "
                             "so self.contract is unset: call super().__init__(contract) in it (a @dataclass "
                             "writes an __init__ that does not: @dataclass(init=False) keeps Consumer's)")
    if (changed := tampered()) is not None:     # by this life's __init__, or by any code before it
        raise consumer_error(strategy, None, problem=f"simkit.Consumer.{changed} has been changed in this "
                             "process (found as this strategy started a worker life): safe and every "
                             "consumer's inherited hooks are no longer seed 000's; override a hook in your "
                             "own class (docs/hooks.md)")
    if not hasattr(gen, "send"):
        raise consumer_error(strategy, None, problem=f"run() returned {type(gen).__name__}, not a generator")
    return gen


#: Generators that would not close (a ``run()`` that yields again after GeneratorExit), kept from the
#: collector: collected, each was closed again, and Python printed "Exception ignored in" and a traceback
#: after the run's one line. At most :data:`KEEP_UNCLOSED` of them, the latest (each holds its consumer and
#: whatever it holds, one per run for ever in a notebook or a sweep); an older one is let go by
#: :func:`_let_go`, without the message.
_UNCLOSED: deque = deque()
KEEP_UNCLOSED = 8


@atexit.register
def _let_all_go() -> None:
    """At exit, where each was collected and its message printed after all the script printed, let all go."""
    while _UNCLOSED:
        _let_go()


def end(strategy: type, gen) -> None:
    """A life ends (a crash, a halt): the generator is closed, and its own cleanup may not raise."""
    try:
        gen.close()
    except RAISED as exc:
        _UNCLOSED.append(gen)
        del gen
        while len(_UNCLOSED) > KEEP_UNCLOSED:
            _let_go()
        raise consumer_error(strategy, exc) from exc


def _let_go() -> None:
    """Drop the oldest of :data:`_UNCLOSED`. Freed at once, it is closed again and refuses again: Python's
    report of that, made to ``sys.unraisablehook`` about this very generator, is passed over; every other
    report goes on as before. Its run's world may still hold it, in a cycle the collector has not freed yet (a
    SimPy process's frame): collected first. (One something else still holds is freed later, unwatched.)"""
    try:
        gen = _UNCLOSED.popleft()
    except IndexError:                      # another thread's run let it go
        return
    if sys.getrefcount(gen) > 2:            # this name and getrefcount's argument
        gc.collect()
    mine, before = id(gen), sys.unraisablehook

    def quiet(unraisable) -> None:
        if unraisable.object is None or id(unraisable.object) != mine:
            before(unraisable)

    sys.unraisablehook = quiet
    try:
        del gen
    finally:
        sys.unraisablehook = before
