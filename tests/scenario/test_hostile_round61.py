"""Round 61: hostile input, fresh (issue 32), every command's files, flags and environment and the public API.

What was found, one test each:

1. ``simulate()`` from several threads, with a consumer of the user's own file: while one thread ran that
   file's module afresh for a worker life, every ``simulate()`` another thread started raised simkit's internal
   ``_Rerun`` (a BaseException) to its caller, 12 runs of 18 in three threads; the count of modules being run
   afresh is now each thread's own (simkit/procedure/lives.py).
"""
from __future__ import annotations

import sys
import threading
import types

from simkit import load, resolve, simulate


def test_simulate_in_another_thread_while_a_module_runs_afresh(tmp_path, monkeypatch):
    box = types.ModuleType("__round61_box__")
    box.armed, box.seen = False, []

    def other_thread_runs() -> None:
        try:
            box.seen.append(simulate(load("retry_walkthrough")).verdict.ok)
        except BaseException as exc:        # noqa: BLE001 -- _Rerun is one: what the caller got
            box.seen.append(f"{type(exc).__name__}: {exc}")

    box.other = other_thread_runs
    monkeypatch.setitem(sys.modules, "__round61_box__", box)
    path = tmp_path / "threaded_mine.py"
    path.write_text(
        "import sys, threading\n"
        "from simkit import Consumer\n"
        "box = sys.modules['__round61_box__']\n"
        "if box.armed:          # run afresh for a worker life: another thread simulates meanwhile\n"
        "    box.armed = False\n"
        "    t = threading.Thread(target=box.other)\n"
        "    t.start()\n"
        "    t.join()\n"
        "class Mine(Consumer):\n"
        "    pass\n")
    cls = resolve(f"{path}:Mine")
    box.armed = True
    assert simulate(load("retry_walkthrough"), cls).verdict.ok
    assert box.seen == [True]
