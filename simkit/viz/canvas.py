"""Figures as PNG bytes, built without pyplot: :func:`png` for a figure drawn once, :class:`Canvas` for a
widget that redraws the same figure after every change (issue 19: ``widget_redraw_ms``, docs/performance.md).

A :class:`Canvas` keeps one :class:`~matplotlib.figure.Figure`, its Agg canvas and its Axes between redraws,
and does once what need not be done on each:

- the layout: the Axes sit where the constrained layout put them for a specimen drawing, with room for what
  ``widest`` draws (the explorer's: the longest legends; a longer title or wider tick labels than the
  specimen's are not made room for), laying the figure out on each redraw was a third of its time; and the
  titles: one the specimen's drawing left at the top of its Axes stays there, not placed anew on each redraw
  out of the way of top tick labels or an offset text, which measures every tick label (a twentieth of a
  redraw; the specimen had none);
- the Axes and their ticks: each redraw empties the Axes instead of making new ones (making their ticks again
  was nearly a tenth);
- the legends: one with the same texts, in the same place, as one rendered before is pasted from that one's
  pixels (blitting); a drawing that asks :meth:`Canvas.legend` for it does not even make it;
- the renderer, and matplotlib's cache of text extents, which is kept per renderer;
- the texts' glyphs (issue 31: drawing about 70 texts was a quarter of a redraw, most of them the same from
  one run to the next): the renderer (:class:`GlyphCachingRenderer`) keeps each text's layout and each glyph's
  bitmap as FreeType rendered it, keyed by all that decides it (the font, size, resolution, hinting, angle and
  where the glyph falls within a pixel), and pastes it at its whole-pixel place: the very pixels drawing it
  anew gives.

The figure is rendered once, not twice as ``savefig(bbox_inches="tight")`` does (once to measure, once to
draw). The picture is then cut to what was drawn, ``pad`` inches around it, from the pixels already rendered
(the box of every pixel that is not background, not the artists' extents, which cost a second pass over every
text), and encoded as an opaque RGB PNG, unfiltered, at a low compression level (:func:`rgb_png`).
"""
from __future__ import annotations

import io
import math
import struct
import zlib
from collections.abc import Callable, Sequence

import numpy as np
from matplotlib.backends import backend_agg
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import fontManager, get_font
from matplotlib.ft2font import FT2Font
from matplotlib.transforms import Affine2D, Bbox

__all__ = ["GLYPHS_KEPT", "LEGENDS_KEPT", "Canvas", "GlyphCachingCanvas", "GlyphCachingRenderer", "png",
           "rgb_png"]

#: How many legends' pixels a :class:`Canvas` keeps to blit.
LEGENDS_KEPT = 64
#: How many glyph bitmaps, and texts' layouts, a :class:`GlyphCachingRenderer` keeps (then it starts afresh).
GLYPHS_KEPT = 20_000

#: Does this matplotlib render text glyph by glyph through the calls the cache stands in for (3.11's Agg)? If
#: not, texts are drawn as matplotlib draws them.
_GLYPH_API = all(hasattr(owner, name) for owner, names in [
    (RendererAgg, ("_draw_text_glyphs_and_boxes", "_prepare_font")),
    (backend_agg, ("get_hinting_flag", "RenderMode")),
    (FT2Font, ("_layout", "_set_transform", "_render_glyph"))] for name in names)


class GlyphCachingRenderer(RendererAgg):
    """Matplotlib's Agg renderer, drawing a plain (not mathtext) text from its kept layout and glyph bitmaps.

    Agg draws a text as FreeType lays it out and renders each glyph, at the glyph's place to 1/64 pixel, then
    blends the glyph's coverage bitmap in the text's colour. A glyph's bitmap depends on its font, size,
    resolution, load flags, render mode, rotation and where it falls within a pixel, nothing else: moved by
    whole pixels it is the same bitmap, moved. So a bitmap rendered once is kept under those and pasted by
    :meth:`draw_text` where the glyph falls next time (blending it exactly as matplotlib does, through the
    same call): the pixels are the ones drawing it anew gives (``tests/viz``' pixel comparisons hold it to
    that). A text's layout is kept by its string and font."""

    def __init__(self, width, height, dpi):
        super().__init__(width, height, dpi)
        self._layouts: dict = {}
        self._glyphs: dict = {}
        self._turns: dict = {}
        self._metrics: dict = {}

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath or not _GLYPH_API:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        flags = backend_agg.get_hinting_flag()
        size = prop.get_size_in_points()
        try:
            key = (s, prop, size, features, language, flags)
            items = self._layouts.get(key)
        except TypeError:                               # unhashable features or language
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        if items is None:
            font = self._prepare_font(prop)
            laid = font._layout(s, flags=flags, features=features, language=language)
            # not the caller's, which may change
            items = self._keep(self._layouts, (s, prop.copy(), *key[2:]),
                               [(item.ft_object, item.glyph_index, item.x, item.y) for item in laid])
        turn = self._turns.get(angle)
        if turn is None:  # as _draw_text_glyphs_and_boxes computes it, once per angle
            cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
            turn = self._turns[angle] = (cos, sin,
                                         (0x10000 * np.array([[cos, -sin], [sin, cos]]) @ [[1, 0], [0, 1]])
                                         .round().astype(int))
        cos, sin, matrix = turn
        antialiased = gc.get_antialiased()
        mode = backend_agg.RenderMode.NORMAL if antialiased else backend_agg.RenderMode.MONO
        height = self.height
        for font, glyph, dx, dy in items:               # dy is upwards
            gx = round(0x40 * (x + dx * cos - dy * sin))
            gy = round(0x40 * (height - y + dx * sin + dy * cos))           # FreeType's y is upwards
            key = (font, size, self.dpi, glyph, flags, antialiased, angle, gx & 0x3F, gy & 0x3F)
            kept = self._glyphs.get(key)
            if kept is None:                            # rendered within its first pixel, kept, moved
                font.set_size(size, self.dpi)
                font._set_transform(matrix, [gx & 0x3F, gy & 0x3F])
                bitmap = font._render_glyph(glyph, flags, mode)
                buffer = bitmap.buffer
                if not antialiased:
                    buffer *= 0xff
                kept = self._keep(self._glyphs, key, (buffer, bitmap.left, bitmap.top))
            buffer, left, top = kept
            # draw_text_image's y is downwards & the bitmap bottom side
            self._renderer.draw_text_image(buffer, left + (gx >> 6), int(height) - (top + (gy >> 6))
                                           + buffer.shape[0],
                                           0, gc)

    def _get_font_height_metrics(self, prop):
        """A font's ascent, descent and line gap at its size, in pixels, as :class:`~matplotlib.text.Text`
        reads them from the font's tables when laying a text out (it asks its renderer first, through this
        hook): kept by font, where matplotlib looks the font and its tables up for every text laid out, twice
        a text drawn."""
        key = (prop, self.dpi)
        metrics = self._metrics.get(key)
        if metrics is None:
            metrics = (None, None, None)
            font = get_font(fontManager._find_fonts_by_props(prop))
            for table_name, gap, ascent, descent in [("OS/2", "sTypoLineGap", "sTypoAscender",
                                                      "sTypoDescender"),
                                                     ("hhea", "lineGap", "ascent", "descent")]:
                table = font.get_sfnt_table(table_name)
                if table is None:
                    continue
                scale = (
                    1 / font.get_sfnt_table("head")["unitsPerEm"] * prop.get_size_in_points() * self.dpi / 72
                )
                metrics = (table[ascent] * scale, -table[descent] * scale, table[gap] * scale)
                break
            self._keep(self._metrics, (prop.copy(), self.dpi), metrics)
        return metrics

    @staticmethod
    def _keep(cache: dict, key, value):
        if len(cache) >= GLYPHS_KEPT:
            cache.clear()
        cache[key] = value
        return value


class GlyphCachingCanvas(FigureCanvasAgg):
    """An Agg canvas whose renderer is a :class:`GlyphCachingRenderer` (kept while the figure's size is)."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = GlyphCachingRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


def png(fig: Figure, dpi: int = 100) -> bytes:
    """A figure drawn once, as ``savefig(..., bbox_inches="tight")`` writes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


class Canvas:
    """One figure redrawn in place. :meth:`render` empties its Axes (made once by ``layout(figure)``, a
    sequence, at fixed positions), lets ``draw(axes)`` draw into them, renders and returns the PNG: the very
    pixels a new figure with the same Axes gives. An emptied Axes has no artists and no legend, its limits
    autoscale from what is drawn next and its property cycle starts again; the rest (title, labels, locators,
    aspect, margins) ``draw`` sets.

    The positions are computed once, here: the constrained layout of ``specimen(axes)`` (a typical drawing).
    Then ``widest(axes)`` draws over the specimen what a drawing may need room for at most (the longest
    legends, say): the figure grows to hold it, its Axes staying where they are, and each picture is cut to
    what was drawn."""

    def __init__(self, figsize: tuple[float, float], layout: Callable[[Figure], Sequence],
                 specimen: Callable[[list], object], widest: Callable[[list], object] = lambda axes: None,
                 dpi: int = 100, pad: float = 0.1, compress_level: int = 1):
        self.figure = Figure(figsize=figsize, dpi=dpi, layout="constrained")
        self.canvas = GlyphCachingCanvas(self.figure)
        self.pad, self.compress_level = pad, compress_level
        self._legend_pixels: dict = {}                 # a legend's key -> its pixels, as rendered last
        self._pasted: list = []                         # the keys of the legends :meth:`legend` did not make
        self.axes = list(layout(self.figure))
        specimen(self.axes)
        self.figure.draw_without_rendering()
        self.figure.set_layout_engine("none")
        for ax in self.axes:  # a title the specimen left at the top of its Axes is fixed there (see above)
            if ax.title.get_position()[1] == 1.0:
                ax.set_title(ax.get_title(), y=1.0)
        widest(self.axes)
        for ax, box in zip(self.axes, self._grow([ax.get_position(original=True) for ax in self.axes]),
                           strict=True):
            ax.set_position(box)

    def _grow(self, positions: list[Bbox]) -> list[Bbox]:
        """Grow the figure to hold all that is drawn in it; the positions, in the grown figure, of the same
        boxes where they were."""
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
        self._pasted = []
        draw(self.axes)
        legends = self._legends()
        for key, legend in legends:
            legend.set_visible(key not in self._legend_pixels)
        self.canvas.draw()
        for key in self._pasted:
            self.canvas.restore_region(self._legend_pixels[key])
        for key, legend in legends:
            if key in self._legend_pixels:
                self.canvas.restore_region(self._legend_pixels[key])
            elif len(self._legend_pixels) < LEGENDS_KEPT:  # 3 px more: the frame's edge, cut to whole pixels
                self._legend_pixels[key] = self.canvas.copy_from_bbox(legend.get_window_extent().padded(3))
        return self._encode()

    def legend(self, ax, texts: Sequence[str], make: Callable[[], object]) -> None:
        """For a ``draw`` given to :meth:`render`: ``ax``'s legend, whose texts are ``texts``, made by
        ``make()`` unless a legend with the same key (:meth:`_legends`) was rendered before: then its pixels
        are pasted and no legend is made (making one, its handles and texts, costs more than drawing it)."""
        key = self._legend_key(self.axes.index(ax), ax, texts)
        if key in self._legend_pixels:
            self._pasted.append(key)
        else:
            make()

    def _legends(self) -> list:
        """The Axes' legends, each keyed by its Axes, the box it is drawn in (an Axes
        of fixed aspect shrinks to its data) and its texts: a legend with the same key
        is the same picture (its texts name its marks), blitted instead of drawn again.
        (A legend is anchored outside its Axes, where nothing else is drawn.)"""
        return [(self._legend_key(i, ax, [t.get_text() for t in ax.legend_.texts]), ax.legend_)
                for i, ax in enumerate(self.axes) if ax.legend_ is not None]

    @staticmethod
    def _legend_key(i: int, ax, texts: Sequence[str]) -> tuple:
        """The key of the legend of ``ax`` (the ``i``-th Axes) whose texts are ``texts``: one for the legends
        rendered (:meth:`_legends`) and the ones :meth:`legend` is asked for, so that the two always agree."""
        return i, ax.get_position().bounds, tuple(texts)

    def _encode(self) -> bytes:
        """The rendered pixels inside the box of all that was drawn (every
        pixel that is not the white background), ``pad`` inches around it,
        as a tight ``savefig`` cuts them, as a PNG (:func:`rgb_png`)."""
        rgba = np.asarray(self.canvas.buffer_rgba())
        ink = rgba.view(np.uint32)[..., 0] != np.frombuffer(b"\xff" * 4, np.uint32)[0]    # not opaque white
        rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        if not len(rows):
            rows = cols = np.zeros(1, int)
        pad = int(round(self.pad * self.figure.dpi))
        (h, w), y0, y1, x0, x1 = (
            rgba.shape[:2],
            rows[0] - pad,
            rows[-1] + 1 + pad,
            cols[0] - pad,
            cols[-1] + 1 + pad,
        )
        picture = np.full((y1 - y0, x1 - x0, 3), 255, np.uint8)              # white beyond the figure
        top, left = max(y0, 0), max(x0, 0)
        picture[top - y0 : min(y1, h) - y0, left - x0 : min(x1, w) - x0] = rgba[
            top : min(y1, h), left : min(x1, w), :3
        ]
        return rgb_png(picture, self.compress_level)


def rgb_png(pixels: np.ndarray, level: int = 1) -> bytes:
    """An opaque RGB picture (rows of pixels, 8 bits a channel) as a PNG: no filter on any row, deflated at
    ``level``. Pillow tries every PNG filter on each row and keeps the best, which costs three times the
    deflating and, on a figure's flat areas, saves nothing (the unfiltered rows come out smaller)."""
    h, w, _ = pixels.shape
    rows = np.empty((h, 1 + 3 * w), np.uint8)
    rows[:, 0] = 0                                          # filter type 0: the row as it is
    rows[:, 1:] = pixels.reshape(h, 3 * w)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    # 8 bits, RGB, deflate, no filter method, no interlace
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.data, level))
            + chunk(b"IEND", b""))


def _empty(ax) -> None:
    """Empty ``ax`` for the next drawing, as a new Axes is to one that sets it up: no artists, no legend,
    limits to autoscale from what is drawn next, the property cycle from its start. Its ticks stay: making
    them again is most of what a new Axes costs."""
    for artist in [*ax.collections, *ax.lines, *ax.patches, *ax.texts, *ax.images, *ax.artists, *ax.tables]:
        artist.remove()
    if ax.legend_ is not None:
        ax.legend_.remove()
    ax.relim()
    ax.set_autoscale_on(True)
    ax.set_prop_cycle(None)
