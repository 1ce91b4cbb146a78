"""The fates grid: one cell per event in source order, coloured by its fate in ground truth."""
from __future__ import annotations

from numbers import Integral

from matplotlib.artist import Artist
from matplotlib.patches import Patch, Rectangle

from simkit.errors import ArgumentError, described
from simkit.judge.checker import FATES, event_fates

from .style import CELL, DARK_FATES, FATE_COLORS, run_title

__all__ = ["SMALLEST_LABEL", "fates", "fates_legend"]

#: The smallest position label drawn in a fates cell, in points.
SMALLEST_LABEL = 4.5


class _FitLabels(Artist):
    """Sizes the fates grid's position labels to its cells when the figure is drawn (after any layout engine
    has placed the Axes): as large as fits, at most ``largest`` points; below :data:`SMALLEST_LABEL` the
    labels are hidden and the x label says what the grid shows instead."""

    def __init__(self, texts, chars: int, largest: float, labelled: str, unlabelled: str):
        super().__init__()
        self.texts, self.chars, self.largest = texts, chars, largest
        self.labelled, self.unlabelled = labelled, unlabelled
        self.set_in_layout(False)
        self.set_zorder(0)                    # drawn before the labels it sizes

    def draw(self, renderer):
        ax = self.axes
        (x0, y0), (x1, y1) = ax.transData.transform([(0, 0), (CELL, CELL)])
        cell = min(abs(x1 - x0), abs(y1 - y0)) / renderer.points_to_pixels(1.0)       # in points
        size = min(self.largest, 0.85 * cell / (0.62 * self.chars), 0.6 * cell)
        for t in self.texts:
            t.set_fontsize(size)
            t.set_visible(size >= SMALLEST_LABEL)
        ax.xaxis.label.set_text(self.labelled if size >= SMALLEST_LABEL else self.unlabelled)


def _fate_style(fate: str) -> dict:
    """A fate's cell: its colour; the pale cell of an event done before the run gets a green edge."""
    if fate == "done before the run":
        return dict(facecolor=FATE_COLORS[fate], edgecolor=FATE_COLORS["replayed harmlessly"], linewidth=1.2)
    return dict(color=FATE_COLORS[fate])


def fates(ax, run, columns: int = 20, title: str | None = None, highlight=()):
    """One cell per event in source order, coloured by its fate in ground truth
    (:func:`simkit.judge.checker.event_fates`), labelled with its position in a font sized to the cells as
    drawn (when they are too small for any, the x label gives the positions' range). The grid sits at the top
    of its Axes: room the layout leaves over goes below it.
    ``highlight``: ids whose cells get a thick black frame (the events a crash changed, say)."""
    # 0 was drawn 1 per row without a word; 2.5 or True is no count of columns
    if isinstance(columns, bool) or not isinstance(columns, Integral) or columns < 1:
        raise ArgumentError(f"columns {described(columns)}: must be an integer of at least 1",
                            param="columns")
    world = run.world
    fate = event_fates(world, run.verdict)
    ids = sorted(fate, key=lambda e: world.provider.events[e].position)
    columns = max(1, min(columns, len(ids)))
    texts = []
    for i, eid in enumerate(ids):
        r, c = divmod(i, columns)
        style = _fate_style(fate[eid])
        if eid in highlight:
            style = dict(facecolor=FATE_COLORS[fate[eid]], edgecolor="black", linewidth=2.5)
        ax.add_artist(Rectangle((c, -r - 1), CELL, CELL, **style))  # in ax.patches; the limits are set below
        texts.append(ax.text(c + CELL / 2, -r - 1 + CELL / 2, str(world.provider.events[eid].position),
                             ha="center", va="center", color="white" if fate[eid] in DARK_FATES else "black"))
    rows = -(-len(ids) // columns)
    ax.set_xlim(0, columns)
    ax.set_ylim(-rows - 0.1, 0.1)
    ax.set_aspect("equal")
    ax.set_anchor("N")
    ax.set_xticks([])
    ax.set_yticks([])
    positions = [world.provider.events[e].position for e in ids]
    labelled = "events in source order (label: position)"
    unlabelled = f"events in source order (positions {positions[0]}–{positions[-1]})" if ids else labelled
    ax.set_xlabel(labelled)
    if texts:
        ax.add_artist(_FitLabels(texts, max(len(t.get_text()) for t in texts), 9 if len(ids) <= 20 else 8,
                                 labelled, unlabelled))
    ax.set_ylabel(f"{columns} per row" if rows > 1 else "")
    ax.set_title(title or f"{run_title(run)}: event fates")
    fates_legend(ax, set(fate.values()))
    return ax


def fates_legend(ax, present):
    """The fates grid's legend, right of its Axes: the fates ``present``, in :data:`FATES` order."""
    return ax.legend(handles=[Patch(**_fate_style(f), label=f) for f in FATES if f in present],
                     loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
