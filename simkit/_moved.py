"""Old flat module names (``simkit.checker``, ``simkit.plot``, ...) keep importing after the layers became
subpackages: each resolves, with a :class:`DeprecationWarning`, to the module that holds the code now
(docs/architecture.md has the table). The four names that are packages now (``simkit.world``, ``simkit.store``,
``simkit.scenario``, ``simkit.live``) answer their old module's names through the package's ``__getattr__``."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__all__ = ["MOVED", "install", "forward"]

#: old module name -> the module that holds its code now
MOVED = {
    "simkit.consumer": "simkit.procedure.consumer", "simkit.strategies": "simkit.procedure.strategies",
    "simkit.provider": "simkit.world.provider", "simkit.sink": "simkit.world.sink",
    "simkit.external": "simkit.world.external", "simkit.faults": "simkit.world.faults",
    "simkit.clock": "simkit.truth.clock", "simkit.collector": "simkit.truth.collector",
    "simkit.sqlite_store": "simkit.store.sqlite", "simkit.sql": "simkit.store.sql",
    "simkit.durable": "simkit.store.durable", "simkit.settlement": "simkit.store.settlement",
    "simkit.log": "simkit.truth.log", "simkit.trace": "simkit.truth.trace",
    "simkit.checker": "simkit.judge.checker", "simkit.claims": "simkit.judge.claims",
    "simkit.explore": "simkit.tools.explore", "simkit.shrink": "simkit.tools.shrink",
    "simkit.sweep": "simkit.tools.sweep", "simkit.auditor": "simkit.tools.audit",
    "simkit.bench": "simkit.tools.bench", "simkit.pool": "simkit.tools.pool",
    "simkit.live_worker": "simkit.live.worker",
    "simkit.plot": "simkit.viz.plot", "simkit.swimlane": "simkit.viz.swimlane",
    "simkit.widgets": "simkit.viz.widgets", "simkit.report": "simkit.judge.report",
    "simkit.viz.report": "simkit.judge.report",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        # the import system returns what sys.modules holds under the name after this, so the old name is the
        # very module object of the new one (monkeypatching either patches both)
        warnings.warn(f"{module.__name__} moved to {MOVED[module.__name__]}", DeprecationWarning, stacklevel=2)
        sys.modules[module.__name__] = importlib.import_module(MOVED[module.__name__])


def install() -> None:
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.append(_Alias())


def forward(package: str, module: str):
    """A package ``__getattr__`` that answers the names of the flat module the package replaced."""
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return getattr(importlib.import_module(module), name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
    return __getattr__
