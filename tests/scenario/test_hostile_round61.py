"""Round 61: hostile input, fresh (issue 32), every command's files, flags and environment and the public API.

What was found, one test each:

1. ``simulate()`` from several threads, with a consumer of the user's own file: while one thread ran that
   file's module afresh for a worker life, every ``simulate()`` another thread started raised simkit's
   internal ``_Rerun`` (a BaseException) to its caller, 12 runs of 18 in three threads; the count of modules
   being run afresh is now each thread's own (simkit/procedure/lives.py).
2. A consumer file Python imports as it is, but not as UTF-8 text: one with an encoding declaration
   (``# -*- coding: latin-1 -*-`` and a ``café`` in it) or a UTF-8 BOM. Each worker life reads the file
   again to run its module afresh, and read it as UTF-8 text: ``simkit run retry_walkthrough --strategy
   latin.py:Mine`` was ``simkit: strategy latin.py:Mine raised UnicodeDecodeError: 'utf-8' codec can't
   decode byte 0xe9 ...``, exit 2, and the BOM a ``SyntaxError: invalid non-printable character U+FEFF``,
   both blamed on the consumer; the file is now read as bytes, as ``import`` reads it.
3. A consumer file edited and run again in the same process, by its path (``simulate(sc, "mine.py:Mine")``
   twice, the file fixed between) or reloaded (``importlib.reload``, a notebook's autoreload): each life ran
   the module's code as first compiled (cached by path), so the fixed consumer was judged by its old, failing
   code (``transient_storm``: NOT ok), and one whose file was since removed or broken was
   ``raised FileNotFoundError ... in _code (lives.py:72)``, simkit's reading blamed on the consumer. A class
   the file as first compiled no longer defines as imported (its methods' code) has the file compiled again
   if it changed since; a file that cannot be read or compiled leaves the class judged as it was given.
4. A consumer imported from a zip archive on ``PYTHONPATH`` (zipimport, ``__file__`` ``cons.zip/zmod.py``):
   ``simkit run retry_walkthrough --strategy zmod:Mine`` was ``simkit: strategy zmod:Mine raised
   NotADirectoryError: [Errno 20] Not a directory: '.../cons.zip/zmod.py' in _code (lives.py:72)``, exit 2;
   a module whose file cannot be read again is now judged as a class with no module body to run again.
5. Two ``simkit.audit()`` calls at once, in two threads (a test suite's thread pool): the audit under way was
   a module global, which each audit set as it began, so one audit's forked processes judged the other's
   consumer: ``audit(Fine)`` of a consumer that is ``safe`` itself came back NOT ok with 3 failures, in one
   try of four (budget 4, jobs 2), next to ``audit(MoveOn)``; in this process (jobs 1, no budget) the second
   audit's end left the first an ``AssertionError``. The audit under way is now bound to its work function
   (simkit/tools/audit.py).
6. ``explore()`` in a thread of a program that ignores SIGCHLD (a daemon's habit; a consumer may set it too):
   ``explore(load("gauntlet"), "safe", max_crashes=1)`` forks to share prefixes, and set SIGCHLD back to its
   default to wait for each fork, which only the main thread may do: ``ValueError: signal only works in main
   thread of the main interpreter``, a traceback. There the kernel now reaps the fork, and simkit waits for it
   all the same (simkit/tools/forked.py).
7. ``simkit serve --config ""`` (``--config "$CONFIG"``, the variable unset) started the service without a
   word, without the subjects, credentials, grants, journals and faults the file was to add; every other
   option naming a file refuses an empty one. Now ``simkit: --config '': names no file; give one, or leave the
   option out``, exit 2 (simkit/service/config.py).
8. A hook patched onto a consumer class of a file (``mock.patch.object(Mine, "is_terminal", fixed)``, or
   ``Mine.is_terminal = fixed`` in a notebook) was lost: each life took the class from its file run afresh,
   so ``simulate`` judged the file's failing hook (``transient_storm``: NOT ok, patched or not). A class with
   a method written elsewhere than its file is now judged as it is, its class attributes copied for each life
   (simkit/procedure/lives.py).
"""
from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import types
import zipfile

import pytest

from simkit import Consumer, audit, load, resolve, simulate
from simkit.service.cli import flagged
from simkit.service.config import ServiceConfigError, build_service
from simkit.tools import audit as audit_module
from simkit.tools.explore import explore


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


@pytest.mark.parametrize("head", [b"# -*- coding: latin-1 -*-\n# caf\xe9\n", b"\xef\xbb\xbf"],
                         ids=["coding-cookie", "bom"])
def test_a_consumer_file_in_the_encoding_it_declares(tmp_path, head):
    path = tmp_path / "declared.py"
    path.write_bytes(head + b"from simkit import Consumer\n\n\nclass Mine(Consumer):\n    pass\n")
    assert simulate(load("retry_walkthrough"), f"{path}:Mine").verdict.ok


def test_a_consumer_file_edited_is_judged_by_its_new_code(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "round61_edited.py"
    failing = ("from simkit import Consumer\n\n\nclass Mine(Consumer):\n"
               "    def is_terminal(self, decision):\n        return decision == 'retry_later'\n")
    fixed = "from simkit import Consumer\n\n\nclass Mine(Consumer):\n    pass\n"
    path.write_text(failing)
    module = importlib.import_module("round61_edited")
    monkeypatch.setitem(sys.modules, "round61_edited", module)     # gone again after the test
    assert not simulate(load("transient_storm"), module.Mine).verdict.ok     # a retry_later taken as done
    path.write_text(fixed)
    os.utime(path, ns=(0, 10**9))                     # a new version, whatever the clock's resolution
    module = importlib.reload(module)
    assert simulate(load("transient_storm"), module.Mine).verdict.ok
    path.unlink()                                     # what was imported is still judged, not blamed
    assert simulate(load("transient_storm"), module.Mine).verdict.ok
    named = tmp_path / "round61_named.py"             # by its path, twice, the file fixed between
    named.write_text(failing)
    assert not simulate(load("transient_storm"), f"{named}:Mine").verdict.ok
    named.write_text(fixed)
    os.utime(named, ns=(0, 10**9))
    assert simulate(load("transient_storm"), f"{named}:Mine").verdict.ok


def test_a_consumer_imported_from_a_zip_archive(tmp_path, monkeypatch):
    archive = tmp_path / "cons.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("round61_zipped.py", "from simkit import Consumer\n\n\nclass Mine(Consumer):\n    pass\n")
    monkeypatch.syspath_prepend(str(archive))
    module = importlib.import_module("round61_zipped")
    monkeypatch.setitem(sys.modules, "round61_zipped", module)     # gone again after the test
    assert simulate(load("retry_walkthrough"), "round61_zipped:Mine").verdict.ok


def test_two_audits_at_once_in_two_threads_each_judge_their_own_consumer(monkeypatch):
    everything = audit_module.cases
    two = {c.name: c for c in everything(1, 0) if c.kind == "bundled"}
    monkeypatch.setattr(audit_module, "cases", lambda seeds, sweep_seeds: [two["transient_storm"],
                                                                          two["late_retry"]])
    other: list = []

    class MoveOn(Consumer):
        def is_terminal(self, decision):
            return decision == "retry_later"

    def audit_move_on() -> None:
        try:
            other.append(audit(MoveOn, seeds=1, sweep_seeds=0, shrink_first=False).ok)
        except BaseException as exc:        # noqa: BLE001 -- what that thread's caller got
            other.append(f"{type(exc).__name__}: {exc}")

    class Fine(Consumer):
        def is_terminal(self, decision):
            if not other:                   # the first time: another audit, start to end, meanwhile
                t = threading.Thread(target=audit_move_on)
                t.start()
                t.join()
            return super().is_terminal(decision)

    assert audit(Fine, seeds=1, sweep_seeds=0, shrink_first=False).ok
    assert other == [False]


def test_explore_in_a_thread_of_a_program_that_ignores_sigchld():
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    found: list = []

    def explore_here() -> None:
        try:
            x = explore(load("retry_walkthrough"), "safe", max_crashes=1, share_prefixes=True)
            found.append((x.schedules, x.violations))
        except BaseException as exc:        # noqa: BLE001 -- what that thread's caller got
            found.append(f"{type(exc).__name__}: {exc}")

    try:
        t = threading.Thread(target=explore_here)
        t.start()
        t.join()
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert found == [(9, 0)]


def test_serve_refuses_an_empty_config_path():
    with pytest.raises(ServiceConfigError, match=r"^--config '': names no file"), flagged():
        build_service(config="")                    # what simkit serve builds before it listens


def test_a_hook_patched_onto_a_consumer_class_of_a_file_is_judged(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "round61_patched.py").write_text(
        "from simkit import Consumer\n\n\nclass Mine(Consumer):\n"
        "    def is_terminal(self, decision):\n        return decision == 'retry_later'\n")
    module = importlib.import_module("round61_patched")
    monkeypatch.setitem(sys.modules, "round61_patched", module)     # gone again after the test
    assert not simulate(load("transient_storm"), module.Mine).verdict.ok

    def fixed(self, decision):
        return Consumer.is_terminal(self, decision)

    monkeypatch.setattr(module.Mine, "is_terminal", fixed)
    assert simulate(load("transient_storm"), module.Mine).verdict.ok
