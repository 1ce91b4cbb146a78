"""The scenario explorer widget: strategy, seed, crash
and stream controls; every change reruns and redraws."""
from __future__ import annotations

import math
import numbers
from collections import OrderedDict

import ipywidgets as W

from simkit.errors import SimkitError, described
from simkit.model import CRASH_POINTS, SINKS
from simkit.procedure.consumer import Consumer
from simkit.procedure.strategies import STRATEGIES
from simkit.runner import Run

from .canvas import Canvas
from .fates import fates
from .inputs import EVENT_POINTS, EXPLORER_DEFAULTS, EXPLORER_EVENTS, NO_CRASH, crash_note, explorer_run
from .legend import MARKS, legend_entries
from .show import RUN_FIGSIZE, display_png, draw_run, run_axes, run_tables, widest_legends
from .timeline import timeline, timeline_legend

__all__ = ["KEEP", "Explorer", "explorer", "redraw_ms", "run_canvas", "set_controls", "slider"]

#: How many recent runs, and figures, an explorer keeps.
KEEP = 16


def slider(cls, value, **kw):
    return cls(value=value, continuous_update=False, style={"description_width": "initial"},
               layout=W.Layout(width="260px"), **kw)


def set_controls(widget: str, controls: dict, values: dict) -> None:
    """Set each control named in ``values`` to its value, or raise :class:`SimkitError` naming the setting:
    ipywidgets said ``TraitError: Invalid selection: value not found`` for a misspelt choice, and a slider
    moved a number past its end to the end without a word (a crash at position 10**12, which never fires,
    drawn as a crash at 400)."""
    for param, value in values.items():
        control = controls.get(param)
        if control is None:
            raise SimkitError(f"{param}: not a setting of the {widget} (its settings: {', '.join(controls)})",
                              param=param)
        if isinstance(control, W.Dropdown):
            if not any(value == o and type(value) is type(o) for o in control.options):
                raise SimkitError(f"{param} {described(value)}: not one of "
                                  f"{', '.join(map(str, control.options))}", param=param)
        else:
            whole = not isinstance(control.value, float)
            # the range first: nan and inf are outside it, and 10**400 is no float (math.isfinite raised)
            if (not isinstance(value, numbers.Real) or isinstance(value, bool)
                    or not control.min <= value <= control.max or (whole and value != math.floor(value))):
                kind = "a whole number" if whole else "a number"
                raise SimkitError(f"{param} {described(value)}: must be {kind} from {control.min} to "
                                  f"{control.max}", param=param)
            value = math.floor(value) if whole else float(value)
        control.value = value


class Explorer(W.VBox):
    """Strategy, seed, crash point and position, page size, overlap/backfill/empty-page rates and sink kind;
    every change reruns the scenario and redraws the verdict, the timeline and the event fates.

    ``controls`` maps each :func:`explorer_run` argument to its control; ``run`` is the last run drawn.
    ``strategies`` adds your own consumers to the strategy menu, by the name you give them.

    A redraw is fast (issues 19 and 31, :func:`redraw_ms`): the figure is kept and redrawn in place
    (:func:`run_canvas`: its Axes laid out once, for the default run with room for the widest legends, and
    emptied for each run; a legend drawn before is blitted, not even made; the texts' glyphs are kept), and
    the last
    :data:`KEEP` runs and figures are kept, so going back to a setting reruns nothing and a change that leaves
    the run as it was (a crash point never reached) draws nothing. The verdict, the note and the figure are
    displayed together, once the figure is drawn.
    """

    def __init__(self, strategies: dict[str, type[Consumer]] | None = None, **values):
        v = EXPLORER_DEFAULTS
        self.run: Run | None = None
        self._runs: OrderedDict = OrderedDict()         # the settings drawn lately -> their run
        self._figures: OrderedDict = OrderedDict()      # (input, trace digest) -> the PNG drawn
        self._canvas: Canvas | None = None              # one figure, redrawn in place
        self.strategies = dict(strategies or {})
        self.controls = {
            "strategy": W.Dropdown(options=[*STRATEGIES, *self.strategies], value=v["strategy"],
                                   description="strategy"),
            "seed": W.BoundedIntText(value=v["seed"], min=0, max=10**6, description="seed",
                                     layout=W.Layout(width="180px")),
            "sink": W.Dropdown(options=list(SINKS), value=v["sink"], description="sink"),
            "crash_point": W.Dropdown(options=[NO_CRASH, *CRASH_POINTS], value=v["crash_point"],
                                      description="crash at"),
            "crash_position": slider(W.IntSlider, v["crash_position"], min=10, max=10 * EXPLORER_EVENTS,
                                     step=10,
                                      description="at position"),
            "occurrence": slider(W.IntSlider, v["occurrence"], min=1, max=10,
                                 description="n-th time reached"),
            "page_size": slider(W.IntSlider, v["page_size"], min=1, max=12, description="page size"),
            "overlap": slider(W.FloatSlider, v["overlap"], min=0, max=1, step=0.05,
                              description="overlap rate"),
            "backfill": slider(W.FloatSlider, v["backfill"], min=0, max=0.5, step=0.05,
                                description="backfill rate"),
            "empty_pages": slider(W.FloatSlider, v["empty_pages"], min=0, max=0.5, step=0.05,
                                   description="empty-page rate"),
        }
        set_controls("explorer", self.controls, values)
        c = self.controls
        c["crash_point"].observe(self._position_applies, "value")
        self._position_applies()
        self.output = W.interactive_output(self._draw, c)
        rows = [
            W.HBox([c["strategy"], c["seed"], c["sink"]]),
            W.HBox([c["crash_point"], c["crash_position"], c["occurrence"]]),
            W.HBox([c["page_size"], c["overlap"], c["backfill"], c["empty_pages"]]),
        ]
        super().__init__([*rows, self.output])

    def _position_applies(self, change=None):
        self.controls["crash_position"].disabled = self.controls["crash_point"].value not in EVENT_POINTS
        self.controls["occurrence"].disabled = self.controls["crash_point"].value == NO_CRASH

    def _draw(self, **values):
        values["strategy"] = self.strategies.get(values["strategy"], values["strategy"])
        key = tuple(values.items())
        if key not in self._runs:                   # a setting seen before is neither rerun nor judged again
            self._runs[key] = explorer_run(**values)
        self.run = _recent(self._runs, key)
        # the same input and the same trace is the same run: its figure is not drawn again (a crash never
        # reached)
        stream = tuple(v for k, v in values.items()
                       if k not in ("crash_point", "crash_position", "occurrence"))
        drawn = (stream, self.run.trace.digest())
        if drawn not in self._figures:
            if self._canvas is None:
                self._canvas = run_canvas()
            self._figures[drawn] = self._canvas.render(lambda axes: _draw_run(self._canvas, axes, self.run))
        # all of it displayed once drawn: the output (cleared when the first of it arrives) is not left
        # without its figure while the figure is drawn, and the frontend does not lay the page out in the
        # meantime
        run_tables(self.run, crash_note(self.run, values["crash_point"] != NO_CRASH))
        display_png(_recent(self._figures, drawn), repr(self._canvas.figure))


def run_canvas() -> Canvas:
    """The canvas the explorer draws its runs on, laid out once for the default run, with room for the widest
    legends."""
    return Canvas(RUN_FIGSIZE, run_axes, lambda axes: draw_run(axes, explorer_run()), widest_legends)


def _draw_run(canvas: Canvas, axes, run: Run) -> None:
    """:func:`~simkit.viz.show.draw_run` on the explorer's canvas: the timeline's legend is made only when the
    canvas has not rendered the same one before (:meth:`Canvas.legend`)."""
    top, bottom = axes
    timeline(top, run, legend=False)
    drawn = {artist.get_gid() for artist in top.get_children()} & MARKS
    if drawn:
        canvas.legend(top, legend_entries(drawn)[1], lambda: timeline_legend(top, drawn))
    fates(bottom, run)


def _recent(cache: OrderedDict, key):
    """``cache[key]``, kept as the most recent; the oldest entries beyond :data:`KEEP` are dropped."""
    cache.move_to_end(key)
    while len(cache) > KEEP:
        cache.popitem(last=False)
    return cache[key]


def explorer(strategies: dict[str, type[Consumer]] | None = None, **values) -> Explorer:
    """The scenario explorer, starting from :data:`EXPLORER_DEFAULTS` updated by ``values``; ``strategies``
    adds your own consumers (name → class) to its strategy menu."""
    return Explorer(strategies, **values)


def redraw_ms(changes: int = 5) -> float:
    """``widget_redraw_ms`` (docs/performance.md): the median time, in milliseconds, the
    explorer (default scenario) takes to rerun and redraw after a control change,
    in-process with the Agg backend. Builds an explorer, sets its seed to ``changes`` new
    values one after another (each a run not drawn before) and times each change until its
    output is displayed. Building the explorer, and laying its canvas out, is not timed."""
    import io
    import statistics
    import time
    from contextlib import redirect_stdout

    if changes < 1:
        raise ValueError(f"changes {changes}: time at least one change")
    with redirect_stdout(io.StringIO()):                # no frontend: what is displayed is printed
        widget = explorer()
        seed = widget.controls["seed"]
        times = []
        for _ in range(changes):
            start = time.perf_counter()
            seed.value += 1
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000
