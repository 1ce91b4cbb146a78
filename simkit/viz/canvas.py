"""Figures as PNG bytes, built without pyplot: :func:`png` for a figure drawn once, :class:`Canvas` for a widget
that redraws the same figure after every change (issue 19: ``widget_redraw_ms``, docs/performance.md).

A :class:`Canvas` keeps one :class:`~matplotlib.figure.Figure`, its Agg canvas and its Axes between redraws, and
does once what need not be done on each:

- the layout: the Axes sit where the constrained layout put them for a specimen drawing, with room for what
  ``widest`` draws (the explorer's: the longest legends; a longer title or wider tick labels than the specimen's
  are not made room for), laying the figure out on each redraw was a third of its time;
- the Axes and their ticks: each redraw empties the Axes instead of making new ones (making their ticks again was
  nearly a tenth);
- the legends: one with the same texts, in the same place, as one rendered before is pasted from that one's
  pixels (blitting);
- the renderer, and matplotlib's cache of text extents, which is kept per renderer.

The figure is rendered once, not twice as ``savefig(bbox_inches="tight")`` does (once to measure, once to draw).
The picture is then cut to what was drawn, ``pad`` inches around it, from the pixels already rendered (the box of
every pixel that is not background, not the artists' extents, which cost a second pass over every text), and
encoded as an opaque RGB PNG at a low compression level.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Affine2D, Bbox
from PIL import Image

__all__ = ["LEGENDS_KEPT", "Canvas", "png"]

#: How many legends' pixels a :class:`Canvas` keeps to blit.
LEGENDS_KEPT = 64


def png(fig: Figure, dpi: int = 100) -> bytes:
    """A figure drawn once, as ``savefig(..., bbox_inches="tight")`` writes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


class Canvas:
    """One figure redrawn in place. :meth:`render` empties its Axes (made once by ``layout(figure)``, a sequence, at
    fixed positions), lets ``draw(axes)`` draw into them, renders and returns the PNG: the very pixels a new figure
    with the same Axes gives. An emptied Axes has no artists and no legend, its limits autoscale from what is drawn
    next and its property cycle starts again; the rest (title, labels, locators, aspect, margins) ``draw`` sets.

    The positions are computed once, here: the constrained layout of ``specimen(axes)`` (a typical drawing). Then
    ``widest(axes)`` draws over the specimen what a drawing may need room for at most (the longest legends, say):
    the figure grows to hold it, its Axes staying where they are, and each picture is cut to what was drawn."""

    def __init__(self, figsize: tuple[float, float], layout: Callable[[Figure], Sequence],
                 specimen: Callable[[list], object], widest: Callable[[list], object] = lambda axes: None,
                 dpi: int = 100, pad: float = 0.1, compress_level: int = 1):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        self.canvas = FigureCanvasAgg(self.figure)
        self.pad, self.compress_level = pad, compress_level
        self._legend_pixels: dict = {}                 # a legend's key -> its pixels, as rendered last
        self.axes = list(layout(self.figure))
        specimen(self.axes)
        self.figure.draw_without_rendering()
        self.figure.set_layout_engine("none")
        widest(self.axes)
        for ax, box in zip(self.axes, self._grow([ax.get_position(original=True) for ax in self.axes]), strict=True):
            ax.set_position(box)

    def _grow(self, positions: list[Bbox]) -> list[Bbox]:
        """Grow the figure to hold all that is drawn in it; the positions, in the grown figure, of the same boxes
        where they were."""
        fig = self.figure
        (w, h), ink = fig.get_size_inches(), fig.get_tightbbox()           # inches
        left, bottom = max(0.0, -ink.x0), max(0.0, -ink.y0)
        size = (left + max(w, ink.x1), bottom + max(h, ink.y1))
        fig.set_size_inches(size)
        to_grown = Affine2D().scale(w, h).translate(left, bottom).scale(1 / size[0], 1 / size[1])
        return [box.transformed(to_grown) for box in positions]

    def render(self, draw: Callable[[list], object]) -> bytes:
        for ax in self.axes:
            _empty(ax)
        draw(self.axes)
        legends = self._legends()
        for key, legend in legends:
            legend.set_visible(key not in self._legend_pixels)
        self.canvas.draw()
        for key, legend in legends:
            if key in self._legend_pixels:
                self.canvas.restore_region(self._legend_pixels[key])
            elif len(self._legend_pixels) < LEGENDS_KEPT:     # 3 px more: the frame's edge, cut to whole pixels
                self._legend_pixels[key] = self.canvas.copy_from_bbox(legend.get_window_extent().padded(3))
        return self._encode()

    def _legends(self) -> list:
        """The Axes' legends, each keyed by its Axes, the box it is drawn in (an Axes of fixed aspect shrinks to
        its data) and its texts: a legend with the same key is the same picture (its texts name its marks), blitted
        instead of drawn again. (A legend is anchored outside its Axes, where nothing else is drawn.)"""
        return [((i, ax.get_position().bounds, tuple(t.get_text() for t in ax.legend_.texts)), ax.legend_)
                for i, ax in enumerate(self.axes) if ax.legend_ is not None]

    def _encode(self) -> bytes:
        """The rendered pixels inside the box of all that was drawn (every pixel that is not the white
        background), ``pad`` inches around it, as a tight ``savefig`` cuts them."""
        rgba = np.asarray(self.canvas.buffer_rgba())
        ink = rgba.view(np.uint32)[..., 0] != np.frombuffer(b"\xff" * 4, np.uint32)[0]    # not opaque white
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        if not len(rows):
            rows = cols = np.zeros(1, int)
        pad = int(round(self.pad * self.figure.dpi))
        (h, w), y0, y1, x0, x1 = rgba.shape[:2], rows[0] - pad, rows[-1] + 1 + pad, cols[0] - pad, cols[-1] + 1 + pad
        pixels = rgba[max(y0, 0):min(y1, h), max(x0, 0):min(x1, w), :3]      # the background around the ink
        missing = ((max(-y0, 0), max(y1 - h, 0)), (max(-x0, 0), max(x1 - w, 0)), (0, 0))
        if any(map(any, missing)):                                          # and white beyond the picture
            pixels = np.pad(pixels, missing, constant_values=255)
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(pixels)).save(buf, format="png", compress_level=self.compress_level)
        return buf.getvalue()


def _empty(ax) -> None:
    """Empty ``ax`` for the next drawing, as a new Axes is to one that sets it up: no artists, no legend, limits to
    autoscale from what is drawn next, the property cycle from its start. Its ticks stay: making them again is most
    of what a new Axes costs."""
    for artist in [*ax.collections, *ax.lines, *ax.patches, *ax.texts, *ax.images, *ax.artists, *ax.tables]:
        artist.remove()
    if ax.legend_ is not None:
        ax.legend_.remove()
    ax.relim()
    ax.set_autoscale_on(True)
    ax.set_prop_cycle(None)
