"""Figures as PNG bytes, built without pyplot: :func:`png` for a figure drawn once, :class:`Canvas` for a widget
that redraws the same figure after every change (issue 19: ``widget_redraw_ms``, docs/performance.md).

A :class:`Canvas` keeps one :class:`~matplotlib.figure.Figure` and its Agg canvas between redraws: each
redraw clears the figure and draws into it again, so the renderer (and matplotlib's cache of text extents, which is
kept per renderer) lives on, and the figure is rendered once, not twice as ``savefig(bbox_inches="tight")`` does
(once to measure, once to draw). The picture is then cut to what was drawn, ``pad`` inches around it, from the
pixels already rendered (the box of every pixel that is not background, not the artists' extents, which cost a
second pass over every text), and encoded as an opaque RGB PNG at a low compression level.
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
        """The rendered pixels inside the box of all that was drawn (every pixel that is not the white
        background), ``pad`` inches around it, as a tight ``savefig`` cuts them."""
        import numpy as np
        from PIL import Image

        rgba = np.asarray(self.canvas.buffer_rgba())
        ink = rgba.view(np.uint32)[..., 0] != np.frombuffer(b"\xff" * 4, np.uint32)[0]    # not opaque white
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        pixels = rgba[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1, :3] if len(rows) else rgba[:1, :1, :3]
        pad = int(round(self.pad * self.figure.dpi))
        pixels = np.pad(pixels, ((pad, pad), (pad, pad), (0, 0)), constant_values=255)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="png", compress_level=self.compress_level)
        return buf.getvalue()
