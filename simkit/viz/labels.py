"""Labels laid out in rows when the figure is drawn, so that
they never overlap nor leave the Axes (the swimlane's)."""
from __future__ import annotations

from matplotlib.artist import Artist

__all__ = ["ROWS_AT_MOST", "LabelStack"]

#: A lane's labels take at most this many text rows (as style.ANNOTATE_AT_MOST caps annotations); a label that
#: finds no free place within them, inside the Axes, is left out, and a note says how many were.
ROWS_AT_MOST = 4


class LabelStack(Artist):
    """Lays out the swimlane's labels when the figure is drawn (once the caller's limits and layout are
    final). Each label takes the first of :data:`ROWS_AT_MOST` text rows away from its lane (down under the
    store lane, up over a worker's) where its box lies inside the Axes, moved sideways if it sticks out, and
    overlaps no label already placed nor the note; a label with no such row is hidden, and the note in the
    Axes' lower right corner says how many were, so labels never pile up or leave the Axes, however the x axis
    is scaled. A label whose anchor is off the x axis is hidden, as its arrow is clipped, and not counted."""

    def __init__(self, labels, note):
        super().__init__()
        self.labels, self.note = labels, note           # (annotation, dx, first row's dy, +1 up / -1 down)
        self.set_in_layout(False)
        self.set_zorder(0)                              # drawn before the labels it places

    def _place(self, renderer, ax, taken) -> tuple[int, int]:
        px = renderer.points_to_pixels(1.0)
        for t, *_ in self.labels:                       # an invisible text has no extent
            t.set_visible(True)

        # its white box, and a margin: 1.5 points aside, 0.5 above
        def box(t):
            pad = t.get_bbox_patch().get_boxstyle().pad * t.get_fontsize()
            return t.get_window_extent(renderer).padded((pad + 1.5) * px, (pad + 0.5) * px)

        step = max(box(t).height / px for t, *_ in self.labels) + 0.5         # rows do not touch
        left = shown = 0
        for t, dx, dy, sign in self.labels:
            # off the x axis, like its arrow
            if not ax.x0 <= t.axes.transData.transform(t.xy)[0] <= ax.x1:
                t.set_visible(False)
                continue
            shown += 1
            for r in range(ROWS_AT_MOST):
                t.xyann = (dx, dy + sign * r * step)
                b = box(t)
                shift = max(ax.x0 - b.x0, 0) - max(b.x1 - ax.x1, 0)
                b = b.translated(shift, 0)
                if (ax.y0 <= b.y0 and b.y1 <= ax.y1 and ax.x0 - 0.5 <= b.x0 and b.x1 <= ax.x1 + 0.5
                        and not any(b.overlaps(other) for other in taken)):
                    t.xyann = (dx + shift / px, t.xyann[1])
                    taken.append(b)
                    break
            else:
                t.set_visible(False)
                left += 1
        return left, shown

    def draw(self, renderer):
        if not self.labels:
            return
        ax = self.axes.bbox
        self.note.set_visible(False)
        left, shown = self._place(renderer, ax, [])
        if left:                                        # again, clear of the note (as wide as it can get)
            self.note.set_text(f"{shown} of {shown} labels left out (no room)")
            self.note.set_visible(True)
            reserved = self.note.get_window_extent(renderer).padded(renderer.points_to_pixels(2.0))
            left, shown = self._place(renderer, ax, [reserved])
            self.note.set_text(f"{left} of {shown} labels left out (no room)")
