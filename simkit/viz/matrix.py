"""The crash matrix: crash point × strategy over single-crash schedules (docs/exploring.md)."""
from __future__ import annotations

from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

__all__ = ["MATRIX_CMAP", "UNREACHED", "crash_matrix"]


#: The crash matrix's diverging palette: blue where a crash made the run better than the fault-free one, white
#: where it changed nothing, red where it made it worse; a cell with no schedule is grey.
MATRIX_CMAP, UNREACHED = "RdBu_r", "#d9d9d9"


def crash_matrix(ax, table, schedules=None, title: str | None = None,
                 label: str = "violating single-crash schedules", better=None):
    """A heatmap of crash point (rows) × strategy (columns) over single-crash schedules.

    ``table`` is a pandas DataFrame indexed by crash point with one column per strategy. ``schedules``, a
    frame of the same shape, is how many single-crash schedules were run in each cell; a cell with none run
    (the strategy never passes that point) is grey and reads ``not reached``.

    With ``better`` (a frame of the same shape, needs ``schedules``), ``table`` counts the schedules that came
    out *worse* than the strategy's fault-free run and ``better`` those that came out *better* (e.g. a crash
    whose retry halted on seed 000's gap check before an event was lost:
    :func:`simkit.viz.widgets.crash_effects`). The palette diverges: red by the share worse, blue by the share
    better when none is worse, white when every schedule ended as the fault-free run did; cells read ``2/3
    worse``, ``1/2 better``, ``3/3 same``, and the colour bar says which side is which.

    Without ``better``: ``table`` is a count of ``label`` (violations, say), read ``violating/run`` and shaded
    red by that share (0–100 %, so 2/2 is as dark as 3/3); without ``schedules`` either, the colour is the
    count.
    """
    import matplotlib
    import numpy as np
    from matplotlib.ticker import PercentFormatter

    values = table.to_numpy(dtype=float)
    runs = None if schedules is None else schedules.reindex(index=table.index,
                                                            columns=table.columns).to_numpy(
        dtype=float)
    if better is not None:
        if runs is None:
            raise ValueError("better needs schedules: a share of the schedules run in each cell")
        return _diverging(ax, table, values, runs,
                          better.reindex(index=table.index, columns=table.columns).to_numpy(dtype=float),
                          title)
    if runs is None:
        shade, top = values, max(1.0, float(np.nanmax(values)) if values.size else 1.0)
        shown = np.ma.masked_invalid(shade)
    else:
        shade, top = np.divide(values, runs, out=np.zeros_like(values), where=runs > 0), 1.0
        shown = np.ma.masked_where(runs == 0, shade)
    cmap = matplotlib.colormaps["Reds"].with_extremes(bad="#e0e0e0")
    image = ax.imshow(shown, cmap=cmap, vmin=0, vmax=top, aspect="auto")
    for (r, c), v in np.ndenumerate(values):
        if runs is not None and runs[r, c] == 0:
            text, color = "not\nreached", "#616161"
        else:
            text = f"{v:g}" if runs is None else f"{v:g}/{runs[r, c]:g}"
            color = "white" if shade[r, c] > 0.6 * top else "black"
        ax.text(c, r, text, ha="center", va="center", fontsize=8, color=color)
    _matrix_axes(ax, table, title)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if runs is None:
        bar.set_label(label)
        bar.locator = MaxNLocator(integer=True)
    else:
        bar.set_label(f"{label}\n(share of the schedules run in the cell)")
        bar.formatter = PercentFormatter(1.0)
    bar.update_ticks()
    return ax


def _matrix_axes(ax, table, title):
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=35, ha="right")
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    ax.set_xlabel("strategy")
    ax.set_ylabel("crash point")
    ax.set_title(title or "crash matrix: one crash at every pass of every crash point")


def _diverging(ax, table, worse, runs, better, title):
    """:func:`crash_matrix` with ``better``: worse (red),
    same (white), better (blue) than the fault-free run."""
    import matplotlib
    import numpy as np

    share_worse = np.divide(worse, runs, out=np.zeros_like(worse), where=runs > 0)
    share_better = np.divide(better, runs, out=np.zeros_like(better), where=runs > 0)
    shade = np.where(worse > 0, share_worse, -share_better)     # any schedule worse: the cell is red
    cmap = matplotlib.colormaps[MATRIX_CMAP].with_extremes(bad=UNREACHED)
    image = ax.imshow(np.ma.masked_where(runs == 0, shade), cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    for (r, c), n in np.ndenumerate(runs):
        w, b = int(worse[r, c]), int(better[r, c])
        if n == 0:
            text = "not\nreached"
        elif w and b:
            text = f"{w} worse, {b} better\nof {n:g}"
        elif w or b:
            text = f"{w or b}/{n:g} " + ("worse" if w else "better")
        else:
            text = f"{n:g}/{n:g} same"
        color = "#616161" if n == 0 or not (w or b) else "white" if abs(shade[r, c]) > 0.6 else "black"
        ax.text(c, r, text, ha="center", va="center", fontsize=7.5, color=color)
    _matrix_axes(ax, table, title)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_ticks([-1, -0.5, 0, 0.5, 1], labels=["all better", "half better", "same as\nfault-free",
                                                 "half worse",
                                                   "all worse"])
    bar.set_label("single-crash schedules against the strategy's fault-free run\n"
                  "(share of the schedules run in the cell; red: worse, blue: better)")
    ax.legend(handles=[Patch(facecolor=UNREACHED, label="not reached\n(no schedule)")], loc="upper right",
              bbox_to_anchor=(-0.01, -0.01), fontsize="small", frameon=False)
    return ax
