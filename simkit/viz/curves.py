"""Sweep curves: the share of runs that lost (or duplicated) against crash rate, one line per strategy, with
its Wilson interval (docs/exploring.md)."""
from __future__ import annotations

from typing import Any

from simkit.errors import ArgumentError, described, one_or_many

__all__ = ["STRATEGY_COLORS", "SWEEP_METRICS", "CURVE_KINDS", "curve_kinds", "sweep_curves",
           "sweep_panels", "sweep_shares"]


#: Sweep curve colours: ``safe`` black (drawn on top of the others), each shortcut a hue of its own. A user's
#: own strategy takes the next of ``_EXTRA_COLORS``.
STRATEGY_COLORS = {
    "safe": "black", "persist_token_on_fetch": "#1f77b4", "max_position_watermark": "#ff7f0e",
    "compare_tokens": "#2ca02c", "no_version_check": "#d62728", "watermark_only_dedup": "#9467bd",
    "success_before_effect": "#8c564b", "in_memory_quarantine": "#17becf",
}
_EXTRA_COLORS = ("#e377c2", "#bcbd22", "#7f7f7f")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h", "<", ">", "p")
#: The strategies a figure does not highlight: thin grey lines, under one legend entry.
_GREY = "#c4c4c4"
#: What :func:`sweep_curves` can plot: a column of the sweep's tidy table, and what a run with it above 0 did.
SWEEP_METRICS = {"lost": "runs that lost at least one event", "duplicated": "runs that duplicated an effect"}


def sweep_shares(table, metric: str = "lost", confidence: float = 0.95):
    """Per (strategy, crash rate) of a sweep's tidy table (:data:`simkit.tools.sweep.COLUMNS`): how many runs,
    how many with ``metric`` above 0 (``hits``), their ``share`` and its Wilson interval (``low``, ``high``).

    Strategies keep their first-seen order, crash rates ascend. Raises ``ValueError`` for an unknown metric.
    """
    import pandas as pd

    from simkit.tools.sweep import wilson

    if metric not in SWEEP_METRICS:
        raise ArgumentError(f"metric {metric!r}: use one of {', '.join(SWEEP_METRICS)}", param="metric")
    order = {s: i for i, s in enumerate(dict.fromkeys(table["strategy"]))}
    rows = []
    for (strategy, rate), group in table.groupby(["strategy", "crash_rate"], sort=False):
        n, k = len(group), int((group[metric] > 0).sum())
        low, high = wilson(k, n, confidence)
        rows.append({"strategy": strategy, "crash_rate": float(rate), "runs": n, "hits": k, "share": k / n,
                     "low": low, "high": high})
    rows.sort(key=lambda r: (order[r["strategy"]], r["crash_rate"]))
    return pd.DataFrame(rows, columns=["strategy", "crash_rate", "runs", "hits", "share", "low", "high"])


def sweep_curves(ax, table, metric: str = "lost", confidence: float = 0.95, title: str | None = None,
                 xscale: str = "symlog", legend: bool = True, highlight=None):
    """The share of runs that lost at least one event (``metric="lost"``) or duplicated an effect
    (``"duplicated"``) against crash rate, one line per strategy, its Wilson interval shaded.

    ``table`` is a sweep's tidy table (:meth:`simkit.tools.sweep.Sweep.frame`, or the CSV ``simkit sweep
    --out`` writes). The x axis is symmetric-log (linear up to the smallest positive rate, so rate 0 has a
    place) with a tick at every rate swept; ``xscale="linear"`` for a plain one. ``safe`` is black and drawn
    on top; the other strategies differ in colour and in hollow marker, so curves that coincide (at 0 or at
    100 %) stay visible. Each line is labelled with its strategy, and a curve that coincides with one drawn
    before says so in its label (``"compare_tokens (same curve as max_position_watermark)"``: the same share
    on this metric, nothing more; a strategy on the ``safe`` curve can still fail otherwise); each band's gid
    is ``"wilson <strategy>"``.

    ``highlight`` (strategies) makes the figure one point: only ``safe`` and those are drawn in colour, every
    other strategy is a thin grey line under one legend entry, and a curve that coincides with a coloured one
    is no line of its own: the coloured one's label names it (``"safe = no_version_check"``).
    """
    from matplotlib.lines import Line2D

    shares = sweep_shares(table, metric, confidence)
    handles = _lines(ax, shares, _highlighted(highlight, shares))
    _rate_axis(ax, sorted(set(shares["crash_rate"])), xscale)
    ax.set_ylabel(SWEEP_METRICS[metric])
    ax.set_title(title or _title(table, shares, metric, confidence))
    if legend:
        band = Line2D([], [], color="#9e9e9e", lw=8, alpha=0.4, label=f"{confidence:.0%} Wilson interval")
        ax.legend(handles=handles + [band], loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small",
                  title="strategy")
    return ax


def _highlighted(highlight, shares) -> list[str] | None:
    """``highlight`` as a list of the table's strategies: one name alone is a list of one (a string was a
    strategy per letter), and a name the table lacks is refused, where it drew every curve grey."""
    if highlight is None:
        return None
    names = list(one_or_many("highlight", highlight, (str,)))
    known = list(dict.fromkeys(shares["strategy"]))
    if unknown := [name for name in names if name not in known]:
        raise ArgumentError(f"highlight {described(unknown[0])}: not a strategy of this table (its "
                            f"strategies: {', '.join(known)})", param="highlight")
    return names


def _title(table, shares, metric: str, confidence: float) -> str:
    runs = sorted(set(shares["runs"]))
    per = f"{runs[0]} runs per point" if len(runs) == 1 else f"{runs[0]}-{runs[-1]} runs per point"
    scenarios = ", ".join(dict.fromkeys(map(str, table["scenario"])))
    return (f"{scenarios}: {SWEEP_METRICS[metric]}, by crash rate\n"
            f"({per}; shaded: {confidence:.0%} Wilson interval)")


#: How a strategy's curve stands beside ``safe``'s: the panels of :func:`sweep_panels`, in their order.
CURVE_KINDS = ("apart from safe already at crash rate 0", "level with safe at rate 0, apart with crashes",
               "the same curve as safe")


def curve_kinds(shares) -> dict[str, list[str]]:
    """The strategies of ``shares`` (:func:`sweep_shares`) other than ``safe``, by how their curve stands
    beside safe's (:data:`CURVE_KINDS`, in that order, a kind no strategy has left out); a table without
    ``safe`` is one kind, ``""``."""
    curves = {strategy: tuple(s["share"]) for strategy, s in shares.groupby("strategy", sort=False)}
    if "safe" not in curves:
        return {"": list(curves)}
    reference = curves.pop("safe")
    kinds: dict[str, list[str]] = {kind: [] for kind in CURVE_KINDS}
    for strategy, curve in curves.items():
        kind = 2 if curve == reference else 0 if curve[0] != reference[0] else 1
        kinds[CURVE_KINDS[kind]].append(strategy)
    return {kind: strategies for kind, strategies in kinds.items() if strategies}


def sweep_panels(fig, table, metric: str = "lost", confidence: float = 0.95, xscale: str = "symlog") -> list:
    """:func:`sweep_curves` as small multiples in ``fig``, one panel per kind of curve (:func:`curve_kinds`),
    each with ``safe`` for reference and a legend of a few entries (curves that coincide are one line, its
    label naming each strategy on it). Returns the panels' Axes, left to right."""
    shares = sweep_shares(table, metric, confidence)
    kinds = curve_kinds(shares)
    axes = list(fig.subplots(1, len(kinds), sharey=True, squeeze=False)[0])
    rates = sorted(set(shares["crash_rate"]))
    for ax, (kind, strategies) in zip(axes, kinds.items()):
        handles = _lines(ax, shares[shares["strategy"].isin(["safe", *strategies])], strategies)
        _rate_axis(ax, rates, xscale)
        ax.set_xlabel("crash rate")
        ax.set_title(kind, fontsize="medium")
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize="small")
    axes[0].set_ylabel(SWEEP_METRICS[metric])
    fig.suptitle(_title(table, shares, metric, confidence))
    return axes


def _lines(ax, shares, highlight=None) -> list:
    """One line per strategy with its Wilson band; a curve that coincides with one drawn before says so (with
    ``highlight``, as :func:`sweep_curves` says)."""
    colors = dict(STRATEGY_COLORS)
    extra = iter(_EXTRA_COLORS * (1 + len(shares) // len(_EXTRA_COLORS)))
    coloured = None if highlight is None else {"safe", *highlight}
    handles: list = []
    grey: list = []
    drawn: dict[tuple, Any] = {}        # a curve already drawn in colour -> its line
    for i, strategy in enumerate(dict.fromkeys(shares["strategy"])):
        s = shares[shares["strategy"] == strategy]
        curve = tuple(zip(s["crash_rate"], s["share"]))
        if coloured is not None and curve in drawn:     # one line, its label naming each strategy on it
            drawn[curve].set_label(f"{drawn[curve].get_label()}\n= {strategy}")
            continue
        if coloured is not None and strategy not in coloured:
            (line,) = ax.plot(s["crash_rate"], s["share"], color=_GREY, lw=1.2, zorder=2,
                              gid=f"grey {strategy}", label="_nolegend_" if grey else "other strategies")
            grey.append(line)
            continue
        label = strategy if curve not in drawn else f"{strategy} (same curve as {drawn[curve].get_label()})"
        color = colors.get(strategy) or colors.setdefault(strategy, next(extra))
        safe = strategy == "safe"
        z = 10 if safe else 3 + i / 100
        ax.fill_between(s["crash_rate"], s["low"], s["high"], color="#9e9e9e" if safe else color,
                        alpha=0.3 if safe else 0.12, lw=0, zorder=z - 1, gid=f"wilson {strategy}")
        style = dict(color=color, lw=2.4 if safe else 1.6, marker="o" if safe
                     else _MARKERS[i % len(_MARKERS)],
                     markersize=5 if safe else 8, zorder=z)
        if not safe:
            style.update(markerfacecolor="none", markeredgewidth=1.4)
        (line,) = ax.plot(s["crash_rate"], s["share"], label=label, **style)
        drawn.setdefault(curve, line)
        handles.append(line)
    return handles + grey[:1]


def _rate_axis(ax, rates, xscale: str) -> None:
    """Crash rate on x (symmetric-log by default, a tick at every rate swept), the share in percent on y."""
    from matplotlib.ticker import FixedLocator, PercentFormatter

    positive = [r for r in rates if r > 0]
    if xscale == "symlog" and positive:
        ax.set_xscale("symlog", linthresh=min(positive), linscale=0.5)
    else:
        ax.set_xscale(xscale if xscale != "symlog" else "linear")
    ax.xaxis.set_major_locator(FixedLocator(rates))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xticks(rates, [f"{r:g}" for r in rates])
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(-0.03, 1.03)
    ax.grid(True, color="#e0e0e0", lw=0.8, zorder=0)
    ax.set_xlabel("crash rate (chance of a crash at each crash-point pass)")
