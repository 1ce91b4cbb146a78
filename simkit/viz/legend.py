"""The timeline's legend: the marks drawn, grouped in at most seven entries, each its marks side by side; and
:func:`one_key`, one legend for panels drawn alike."""
from __future__ import annotations

from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D

from .style import APPLIED, AT_RISK, CURSOR, DUP_ORANGE, GAP, LOST_RED, PAUSE, QUARANTINE, TRUTH

__all__ = ["MARKS", "draw_legend", "legend_entries", "one_key"]


def _proxy(**style):
    style.setdefault("ls", "none")
    return Line2D([], [], **style)


#: The timeline's legend, at most seven entries: (drawn keys that call for the entry, [(key, words, proxy)]).
#: An entry shows the marks of the keys drawn, side by side, and names them in order.
_LEGEND: list[tuple[str, list[tuple[str, str | None, dict]]]] = [
    ("resume_cursor (durable)", [
        ("cursor", None, dict(color=CURSOR, lw=2.2, ls="-")),
        ("barrier", "page barrier", dict(marker="^", ms=8, color=CURSOR, mec="white")),
        ("rejected", "rejected barrier", dict(marker="v", ms=7, color="#7f7f7f")),
        ("regression", "regression", dict(marker="v", ms=9, mfc="none", mec=GAP, mew=1.8))]),
    ("next_cursor held in memory", [
        ("held", None, dict(color=CURSOR, lw=1.6, ls=(0, (3, 2)), marker="o", ms=4.5, mfc="white", mec=CURSOR,
                            markevery=[0])),
        ("paused", "worker paused", dict(color=PAUSE, lw=5, alpha=0.55, ls="-"))]),
    ("applied_position", [
        ("applied", None, dict(color=APPLIED, lw=2.2, ls="-")),
        ("commit", "event commit", dict(marker="o", ms=4.5, color=APPLIED)),
        ("quarantine receipt", "quarantine receipt", dict(marker="o", ms=6, color=QUARANTINE))]),
    ("durable prefix (ground truth)", [("truth", None, dict(color=TRUTH, lw=1.2, ls=":"))]),
    ("", [
        ("replay", "replay skipped", dict(marker="o", ms=6, mfc="none", mec="#555555")),
        ("decided", "quarantine decided in memory", dict(marker="s", ms=6, mfc="none", mec=QUARANTINE)),
        ("not final", "outcome not final", dict(marker="s", ms=6, mfc="none", mec=DUP_ORANGE))]),
    ("crash", [("crash", None, dict(marker="X", ms=10, color="black"))]),
    ("", [
        ("at risk", "at risk (cursor past it, no outcome)", dict(color=AT_RISK, lw=5, ls="-")),
        ("lost window", None, dict(color=LOST_RED, lw=5, alpha=0.5, ls="-")),
        ("lost", "lost (final at the cross)", dict(marker="x", ms=9, mew=2.4, color=LOST_RED)),
        ("duplicated", "duplicated effect", dict(marker="D", ms=6, color=DUP_ORANGE))]),
]

#: Every key the legend has an entry for: the widest legend a timeline can have.
MARKS = frozenset(key for _name, parts in _LEGEND for key, _words, _style in parts)


def legend_entries(drawn) -> tuple[list, list[str]]:
    """The grouped legend of the marks ``drawn`` (keys :func:`~simkit.viz.timeline.timeline` reports): at most
    seven entries, each a tuple of handles and its label."""
    handles, texts = [], []
    for name, parts in _LEGEND:
        present = [(words, style) for key, words, style in parts if key in drawn]
        if not present:
            continue
        words = [w for w, _ in present if w]
        text = name + (" · " + ", ".join(words) if name and words else ", ".join(words))
        handles.append(tuple(_proxy(**style) for _, style in present))
        texts.append(text)
    return handles, texts


def draw_legend(where, drawn, **kw):
    handles, texts = legend_entries(drawn)
    return where.legend(handles, texts, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.4)},
                        handlelength=3.2, fontsize="small", **kw)


def one_key(axes, **where) -> None:
    """One key for panels drawn alike (two runs' swimlanes, a service's clients): the first panel gets one
    legend with every entry of the panels' legends, once each, in the order first drawn, outside on its right
    (``where``: another placement, as :meth:`~matplotlib.axes.Axes.legend` takes it); the others lose theirs,
    so that a key is not read twice."""
    axes = list(getattr(axes, "flat", axes))
    entries: dict[str, object] = {}
    for ax in axes:
        if (legend := ax.get_legend()) is not None:
            for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
                entries.setdefault(text.get_text(), handle)
            legend.remove()
    if entries:
        axes[0].legend(list(entries.values()), list(entries), **{
            "loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": "small", **where})
