"""The step-through widget: a strategy menu, a slider over its run's trace rows and a "crash here" button."""
from __future__ import annotations

import ipywidgets as W

from simkit.model import Scenario
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import STRATEGIES

from .explorer import set_controls
from .inputs import strategy_name
from .instant import instant_state
from .show import show_crash, show_instant
from .steps import crash_rerun, fate_changes, stepped_run

__all__ = ["Stepper", "stepper"]


class Stepper(W.VBox):
    """Step through one run: a slider over its trace rows shows, at each instant, the worker's memory (page in
    hand, ``next_cursor`` held, the event it is at) beside the durable checkpoint and receipts; "crash here"
    reruns it with a crash at the next crash-point pass and shows which events change fate.

    ``stepped`` is the run (:func:`stepped_run`); ``controls["strategy"]`` the menu (every strategy, the same
    scenario: pick ``persist_token_on_fetch`` and crash anywhere in its page); ``controls["row"]`` the slider;
    ``instant`` the last :class:`~simkit.viz.plot.Instant` drawn; after "crash here", ``fault``, ``rerun`` and
    ``changes`` (:func:`fate_changes`).
    """

    def __init__(self, scenario: Scenario | str = "retry_walkthrough",
                 strategy: str | type[Consumer] = "safe", seed: int | None = None, row: int = 0):
        self.scenario, self.seed = scenario, seed
        self.stepped = stepped_run(scenario, strategy, seed)
        self.instant = None
        self.fault = self.rerun = self.changes = None
        last = len(self.stepped.run.trace) - 1
        name = strategy_name(strategy)
        self._own = {} if name in STRATEGIES else {name: strategy}     # a class of your own stays in the menu
        self.controls = {
            "strategy": W.Dropdown(options=[*STRATEGIES, *self._own], value=name, description="strategy"),
            "row": W.IntSlider(value=0, min=0, max=last, description="step",
                               continuous_update=False, style={"description_width": "initial"},
                               layout=W.Layout(width="520px"))}
        set_controls("stepper", self.controls, {"row": row})    # was moved into 0..last, nan a TraitError
        self.button = W.Button(
            description="crash here",
            icon="bolt",
            button_style="danger",
            tooltip="rerun with a crash at the next crash-point pass and show what changes",
        )
        self.button.on_click(self._crash)
        self.output = W.interactive_output(self._draw, self.controls)
        self.crash_output = W.Output()
        row_box = W.HBox([self.controls["strategy"], self.controls["row"], self.button])
        super().__init__([row_box, self.output, self.crash_output])

    def _draw(self, row, strategy):
        if strategy != self.stepped.run.strategy:       # another strategy: its own run, from its first row
            self.stepped = stepped_run(self.scenario, self._own.get(strategy, strategy), self.seed)
            self.fault = self.rerun = self.changes = None
            self.crash_output.clear_output()
            slider = self.controls["row"]
            slider.max = len(self.stepped.run.trace) - 1
            row = min(row, slider.max)
        self.instant = instant_state(self.stepped.run, row)
        show_instant(self.stepped, row)

    def _crash(self, _button=None):
        self.fault, self.rerun = crash_rerun(self.stepped, self.controls["row"].value)
        self.changes = fate_changes(self.stepped.run, self.rerun) if self.rerun is not None else None
        with self.crash_output:
            self.crash_output.clear_output(wait=True)
            show_crash(self.stepped, self.fault, self.rerun)


def stepper(scenario: Scenario | str = "retry_walkthrough", strategy: str | type[Consumer] = "safe",
            seed: int | None = None, row: int = 0) -> Stepper:
    """Step through ``strategy`` on ``scenario`` (by default seed 000's walkthrough with ``safe``), starting
    at trace row ``row``; "crash here" shows what a crash at any instant would change."""
    return Stepper(scenario, strategy, seed, row)
