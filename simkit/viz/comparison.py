"""The comparison widget: ``safe`` beside a chosen shortcut on the same input."""
from __future__ import annotations

import ipywidgets as W

from simkit.procedure.strategies import SHORTCUTS, scenario_of
from simkit.runner import Run
from simkit.scenario.read import bundled, load

from .explorer import set_controls
from .inputs import OWN_SCENARIO, comparison_runs
from .show import show_comparison

__all__ = ["Comparison", "comparison"]


class Comparison(W.VBox):
    """``safe`` beside a chosen shortcut on the same input,
    redrawn when the shortcut, scenario or seed changes.

    ``runs`` is the last ``(safe, shortcut)`` pair drawn.
    """

    def __init__(self, shortcut: str = SHORTCUTS[0], scenario: str = OWN_SCENARIO, seed: int | None = None):
        self.runs: tuple[Run, Run] | None = None
        self._last = None
        self.controls = {
            "shortcut": W.Dropdown(options=list(SHORTCUTS), description="shortcut"),
            "scenario": W.Dropdown(options=[OWN_SCENARIO, *bundled()], description="input",
                                   layout=W.Layout(width="380px")),
        }
        set_controls("comparison", self.controls, {"shortcut": shortcut, "scenario": scenario})
        self.controls["seed"] = W.BoundedIntText(value=0, min=0, max=10**6, description="seed",
                                                 layout=W.Layout(width="180px"))
        set_controls("comparison", self.controls,
                     {"seed": self._scenario_seed(shortcut, scenario) if seed is None else seed})
        for name in ("shortcut", "scenario"):
            self.controls[name].observe(self._reset_seed, "value")
        self.output = W.interactive_output(self._draw, self.controls)
        super().__init__([W.HBox(list(self.controls.values())), self.output])

    @staticmethod
    def _scenario_seed(shortcut, scenario):
        return load(scenario_of(shortcut) if scenario == OWN_SCENARIO else scenario).seed

    def _reset_seed(self, change):
        c = self.controls
        c["seed"].value = self._scenario_seed(c["shortcut"].value, c["scenario"].value)

    def _draw(self, shortcut, scenario, seed):
        if self._last == (shortcut, scenario, seed):
            return              # the seed was reset by the same change: already drawn
        self._last = (shortcut, scenario, seed)
        self.runs = comparison_runs(shortcut, scenario, seed)
        show_comparison(self.runs)


def comparison(shortcut: str = SHORTCUTS[0], scenario: str = OWN_SCENARIO,
               seed: int | None = None) -> Comparison:
    """``safe`` beside ``shortcut`` on the same input (by default the shortcut's own scenario)."""
    return Comparison(shortcut, scenario, seed)
