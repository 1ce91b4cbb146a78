"""Shared helpers: scenarios built from dicts, runs by
name; and how the suite splits over pytest-xdist workers.

The README's command runs the suite on every core (``pytest -n auto --dist loadgroup``). ``loadgroup`` hands
out one test at a time, except for the tests of one *group*, which run in order on one worker:

* each notebook under nbval: its cells share one kernel, in order (nbval's documentation asks for that);
* each test module with a module- or class-scoped fixture (a JupyterLab, a server, a built wheel, an audit),
  so that the fixture is built once, not once per worker.

The rest go one at a time to whichever worker is free, the most expensive first (:data:`FIRST`), so that no
long test starts last while the other worker sits idle. The order never decides an outcome: each test stands
alone.
"""
import copy
import hashlib
import inspect
import os
import pickle
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

import simkit
from simkit.scenario.read import SCENARIO_DIR

# The tests send SIGHUP to commands they start, which end with their one line. A suite started under
# ``nohup`` (or by a runner that ignores SIGHUP) would hand each such command an ignored SIGHUP, which the
# command keeps, as nohup asks (simkit._starting): each test would wait out its timeout. Children start here
# from the default.
signal.signal(signal.SIGHUP, signal.SIG_DFL)

#: The smallest scripted stream (docs/scenarios.md): page C1 carries positions 1 and 2, then C2 is the end.
TWO_PAGES = """
[[pages]]
cursor = "C1"
positions = [1, 2]
next_cursor = "C2"
[[pages]]
cursor = "C2"
positions = []
next_cursor = "C2"
"""


#: Consumers that hand a store a value no store holds (issue 32, "stores that disagree"), as a file's source:
#: a lone surrogate in a cursor, a position past 2**63 (named, and as a default id on the quick path).
UNSTORABLE = '''
from simkit import Consumer
from simkit.model import Event
from simkit.ops import Barrier, Commit, Load


class Surrogate(Consumer):
    def run(self):
        cp = yield Load()
        yield Barrier(cursor=cp.resume_cursor, version=cp.checkpoint_version, next_cursor="\\ud800",
                      next_version=cp.checkpoint_version + 1, applied_position=cp.applied_position)


class Past63Bits(Consumer):
    def run(self):
        yield Load()
        yield Commit(event=Event(id="e9", position=2**70, behavior="ok"), outcome="applied",
                     applied_position=1, with_effect=True)


class DefaultIdPast63(Consumer):
    """a default id, ``e<position>``: on the memory store, the commit's quick path (the world's journal)"""
    def run(self):
        yield Load()
        yield Commit(event=Event(id=f"e{2**63}", position=2**63, behavior="ok"), outcome="applied",
                     applied_position=1)
'''



#: Consumers that yield a request whose field has the wrong type (round 9), as a file's source: a bool
#: ``applied_position``, a string ``with_effect``, an int cursor; ``run`` and ``live`` refuse each first.
WRONG_TYPES = '''
from simkit import Consumer
from simkit.ops import Commit, Fetch, Wait


class BoolPosition(Consumer):
    def resulting_applied_position(self, event, page, applied_position):
        return True


class EffectAsText(Consumer):
    def apply(self, event, applied_position):
        return (yield Commit(event, "applied", applied_position, with_effect="no"))


class FetchesANumber(Consumer):
    def run(self):
        while True:
            yield Fetch(7)
            yield Wait("blocked")
'''

def scenario_dict(name: str) -> dict:
    """A bundled scenario as a mutable dict, to derive variants inside a test."""
    return tomllib.loads((SCENARIO_DIR / f"{name}.toml").read_text())


def variant(name: str, **changes) -> simkit.Scenario:
    """A bundled scenario with top-level keys replaced."""
    data = copy.deepcopy(scenario_dict(name))
    data.update(changes)
    return simkit.parse(data, source=f"{name} (variant)")


def run(name_or_scenario, strategy: str = "safe", **kw) -> simkit.Run:
    sc = simkit.load(name_or_scenario) if isinstance(name_or_scenario, str) else name_or_scenario
    return simkit.simulate(sc, simkit.resolve(strategy), **kw)


@pytest.fixture
def frame():
    """The trace of a run as a DataFrame."""
    return lambda r: r.trace.to_frame()


@pytest.fixture
def ax():
    """A fresh Axes on the Agg backend, closed after the test."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def labels(ax) -> list[str]:
    """The legend labels an Axes would show."""
    return ax.get_legend_handles_labels()[1]


# -- the command line in a process of its own ----------------------------------------------------------------
def simkit_in(args, cwd, env=None, timeout=120) -> subprocess.CompletedProcess:
    """``python -m simkit ARGS`` in ``cwd``, in a process of its own (so that its imports are its own), this
    checkout first on its path, ``env`` added; ``timeout`` a safety bound (a hang fails the test), not a
    measure."""
    full = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **(env or {})}
    return subprocess.run([sys.executable, "-m", "simkit", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=timeout)


def killed_once_made(args, cwd, tmp: Path, made: str = "store.db", timeout: float = 60) -> tuple[bool, list]:
    """``python -m simkit ARGS`` in ``cwd`` with ``TMPDIR`` at ``tmp``, killed outright (SIGKILL) as soon as a
    file named ``made`` is under ``tmp``: whether it appeared, and what is left in ``tmp`` once it empties
    (or ``timeout`` seconds after the start: a safety bound, not a measure)."""
    full = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "simkit", *args], cwd=cwd, env=full,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not list(tmp.rglob(made)):
        time.sleep(0.1)
    appeared = bool(list(tmp.rglob(made)))
    proc.kill()
    proc.wait()
    while time.monotonic() < deadline and list(tmp.iterdir()):
        time.sleep(0.1)
    return appeared, list(tmp.iterdir())


# -- work several tests compute identically, computed once per run -------------------------------------------
class Shared:
    """Results that several tests compute identically, computed once per suite run and shared by every xdist
    worker: a pickle per call in ``folder``, written under a lock (``flock``) by the first worker to ask, so
    that another one asking meanwhile waits for it rather than computing it too. Each caller gets its own
    copy (unpickled). A run is a pure function of its arguments (scenario, strategy, seed, faults, bounds),
    so a shared result is the one the test would have computed; ``folder`` belongs to this run only."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.memo: dict[str, bytes] = {}

    def get(self, key: str, compute):
        """``compute()``'s result for ``key``, computed once."""
        name = hashlib.sha256(key.encode()).hexdigest()[:32]
        if name not in self.memo:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{name}.pickle"
            try:
                import fcntl
            except ImportError:                                 # no flock (Windows): computed per process
                fcntl = None
            with open(self.folder / f"{name}.lock", "w") as lock:
                if fcntl is not None:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                if not path.exists():
                    data = pickle.dumps(compute())
                    part = path.with_suffix(f".{os.getpid()}")
                    part.write_bytes(data)
                    part.replace(path)
                self.memo[name] = path.read_bytes()
        return pickle.loads(self.memo[name])

    def explore(self, name: str, strategy="safe", **options):
        """``explore(simkit.load(name), strategy, **options)``; the key is every argument, defaults bound."""
        from simkit.tools.explore import explore
        call = inspect.signature(explore).bind(name, strategy, **options)
        call.apply_defaults()
        return self.get(f"explore {sorted(call.arguments.items())!r}",
                        lambda: explore(simkit.load(name), strategy, **options))


@pytest.fixture(scope="session")
def shared(tmp_path_factory) -> Shared:
    """This run's :class:`Shared` (its folder is the xdist workers' common base temp)."""
    base = tmp_path_factory.getbasetemp()
    return Shared((base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared")


# -- the split over pytest-xdist workers (see the module's docstring) ----------------------------------------
#: Tests (node id prefixes) that take many CPU seconds each, handed out before everything else and in this
#: order, the dearest first: an audit or an exploration that no other test shares. Only an order: a name
#: missing here is merely scheduled later, and a dear test scheduled late runs alone at the end while the
#: other worker idles (issue 31: test_explore's transient_storm groups, 69 CPU s, started last and ended the
#: run). CPU seconds measured with the suite on two workers, 2026-12-05, in brackets.
FIRST = (
    "tests/judge/test_mutants.py::test_correct_consumer_is_never_flagged",      # [73-146 each, six]
    "tests/tools/test_golden_explore.py",                                       # [80]
    "tests/tools/test_explore.py::test_an_exploration_begun_and_its_subtrees_run_in_any_groups_is_the_exploration",
    "tests/judge/test_mutants.py::test_safe_passes_every_case",                 # [58]
    "tests/tools/test_explore.py::test_sharing_prefixes_runs_the_same_schedules_as_running_each_from_scratch",
    "tests/tools/test_audit.py::test_explorations_split_into_groups_of_subtrees_give_the_verdicts_of_whole_ones",
    "tests/project/test_lint.py",                                               # [15, mypy]
    "tests/tools/test_bench.py::test_bench_quick_json",                         # [10]
    "tests/tools/test_audit.py::test_cases_judged_in_several_processes_give_the_verdicts_of_one",  # [9]
    "tests/workshop/test_edition.py::test_every_notebook_of_the_edition_runs_in_its_own_folder",  # [3-9 each]
    "tests/project/test_testing.py",                                            # [10]
    "tests/project/test_docs.py::test_page_commands_print_what_the_page_shows",  # [0-6 each]
    "tests/project/test_docs_site.py",
    "tests/judge/test_golden.py",
)


def _group(item) -> str | None:
    """The xdist group an item belongs to, or ``None`` (it may run on any worker, alone)."""
    path = item.path
    if path.suffix == ".ipynb":
        return f"notebook {item.nodeid.split('::')[0]}"
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(info, "names_closure", ()):
        for fixturedef in info.name2fixturedefs.get(name, ()):
            # a fixture of this suite (a plugin's has no baseid) that outlives one test
            if fixturedef.baseid and fixturedef.scope in ("module", "class", "package"):
                return f"module {item.nodeid.split('::')[0]}"
    return None


def _rank(item, group: str | None) -> int:
    """Where an item is handed out: by its place in :data:`FIRST`, then the groups, then the rest."""
    for i, prefix in enumerate(FIRST):
        if item.nodeid.startswith(prefix):
            return i
    return len(FIRST) if group else len(FIRST) + 1


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark each item's group for ``--dist loadgroup`` and put the expensive
    work first (a stable sort: the collection's order otherwise). Deterministic,
    as xdist requires: every worker must collect the same list."""
    groups = {}
    for item in items:
        group = groups[item] = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    first_of_group: dict[str, int] = {}
    for item in items:
        g = groups[item]
        if g is not None:
            first_of_group[g] = min(first_of_group.get(g, len(FIRST)), _rank(item, g))
    items.sort(key=lambda it: first_of_group[groups[it]] if groups[it] else _rank(it, None))


def pytest_configure(config):
    """Hand the work out in the order above: xdist would
    otherwise put the groups with the most tests first."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
