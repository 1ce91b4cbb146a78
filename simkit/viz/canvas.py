"""Figures as PNG bytes, built without pyplot: :func:`png` for a figure drawn once, :class:`Canvas` for a widget
that redraws the same figure after every change (issue 19: ``widget_redraw_ms``, docs/performance.md).

A :class:`Canvas` keeps one :class:`~matplotlib.figure.Figure` and its Agg canvas between redraws: each
redraw clears the figure and draws into it again, so the renderer (and matplotlib's cache of text extents, which is
kept per renderer) lives on, and the figure is rendered once, not twice as ``savefig(bbox_inches="tight")`` does
(once to measure, once to draw). The picture is then cut to the same tight box, ``pad`` inches around what was
drawn, from the pixels already rendered, and encoded as an opaque RGB PNG at a low compression level.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["Canvas", "png"]


def png(fig: Figure, dpi: int = 100) -> bytes:
    """A figure drawn once, as ``savefig(..., bbox_inches="tight")`` writes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


class Canvas:
    """One figure redrawn in place. :meth:`render` clears it, makes its Axes with ``layout(figure)`` (a
    sequence), lets ``draw(axes)`` draw into them, renders and returns the PNG: the very pixels a new figure of
    the same size gives (new Axes, not cleared ones, whose limits and layout would start from the last run's)."""

    def __init__(self, figsize: tuple[float, float], layout: Callable[[Figure], Sequence], dpi: int = 100,
                 pad: float = 0.1, compress_level: int = 1):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        self.canvas = FigureCanvasAgg(self.figure)
        self.layout = layout
        self.pad, self.compress_level = pad, compress_level

    def render(self, draw: Callable[[list], object]) -> bytes:
        self.figure.clear()
        draw(list(self.layout(self.figure)))
        self.canvas.draw()
        return self._encode()

    def _encode(self) -> bytes:
        """The rendered pixels inside the tight box, ``pad`` inches around what was drawn; where the box reaches
        past the figure's edge (as a tight ``savefig`` lets it), white."""
        import numpy as np
        from PIL import Image

        fig = self.figure
        box = fig.get_tightbbox(self.canvas.get_renderer()).padded(self.pad)
        dpi, (width, height) = fig.dpi, self.canvas.get_width_height()
        left, right = int(round(box.x0 * dpi)), int(round(box.x1 * dpi))
        top, bottom = int(round(height - box.y1 * dpi)), int(round(height - box.y0 * dpi))
        pixels = np.asarray(self.canvas.buffer_rgba())[max(0, top):bottom, max(0, left):right, :3]   # opaque
        margins = ((max(0, -top), max(0, bottom - height)), (max(0, -left), max(0, right - width)), (0, 0))
        pixels = np.pad(pixels, margins, constant_values=255) if any(map(any, margins)) else pixels
        buf = io.BytesIO()
        Image.fromarray(np.ascontiguousarray(pixels)).save(buf, format="png", compress_level=self.compress_level)
        return buf.getvalue()
