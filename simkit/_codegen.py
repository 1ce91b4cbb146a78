"""The one place simkit turns generated source text into a function (the column appends of
:func:`simkit.truth.columns.adder`, the ``__init__`` of :func:`simkit.model.record`).

Generated code stays debuggable, as attrs keeps it (``attr._make._linecache_and_compile``): the source is
compiled under a filename of its own, ``<simkit generated Log.add>``, and registered with :mod:`linecache`
under that name, so a traceback through the method shows its real source lines instead of
``File "<string>"``, and :func:`inspect.getsource` finds it. Nothing in the generated code changes.
"""
from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

__all__ = ["compile_function"]


def compile_function(source: str, name: str, qualname: str, module: str, env: dict[str, Any]) -> Callable:
    """The function ``name`` that ``source`` defines, executed in the namespace ``env``, with its
    ``__qualname__`` and ``__module__`` set to ``qualname`` and ``module``.

    The filename is ``<simkit generated QUALNAME>``; a second, different source for the same qualname (a class
    of that name defined again, in a test or in another module) gets ``-2``, ``-3``, ... appended, so that a
    cached source line is never another function's.

    Raises:
        SyntaxError: ``source`` does not compile.
        KeyError: ``source`` defines no ``name``.
    """
    filename = _register(source, qualname)
    exec(compile(source, filename, "exec"), env)
    fn = env[name]
    fn.__qualname__, fn.__module__ = qualname, module
    return fn


def _register(source: str, qualname: str) -> str:
    """A filename for ``source`` that :mod:`linecache` serves it under (the same one for the same source)."""
    lines = source.splitlines(True)
    base = f"<simkit generated {qualname}>"
    filename, n = base, 1
    while True:
        cached = linecache.cache.get(filename)
        if cached is None or cached[2:3] == (lines,):     # free, or this very source
            # (size, mtime, lines, fullname); mtime None: linecache.checkcache never drops the entry
            linecache.cache[filename] = (len(source), None, lines, filename)
            return filename
        n += 1
        filename = f"{base[:-1]}-{n}>"
