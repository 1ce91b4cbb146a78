"""Shared helpers: scenarios built from dicts, runs by name."""
import copy
import tomllib

import pytest

import simkit
from simkit.scenario.read import SCENARIO_DIR

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
