"""Draw docs/img/architecture.png: simkit's layers, bottom to top, with the flow of one run across them.

The rows are the ranks that tests/project/test_layers.py enforces (a layer imports only from the rows below
it), and each box lists the modules its package holds now, read from the package itself, so the picture is
redrawn, not edited::

    python docs/img/make_architecture.py
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

import simkit  # noqa: E402

ROOT = Path(simkit.__file__).parent
OUT = Path(__file__).with_name("architecture.png")

#: rows bottom to top: (row label, units); the ranks of tests/project/test_layers.py, neighbours merged where
#: they share one
ROWS = [
    ("vocabulary", ["model", "ops", "errors"]),
    ("ground truth, input", ["truth", "scenario"]),
    ("procedure and durable state", ["procedure", "store"]),
    ("the world", ["world"]),
    ("the judge", ["judge"]),
    ("one run", ["runner"]),
    ("tools built on runs", ["tools", "live", "service"]),
    ("views", ["viz"]),
    ("the workshop", ["workshop"]),
    ("the command line", ["cli"]),
]
#: what each unit is, in a few words
ROLE = {
    "model": "events, pages, checkpoints", "ops": "requests a consumer yields", "errors": "one-line errors",
    "truth": "logs, trace, clock", "scenario": "TOML in, Scenario out",
    "procedure": "seed 000's consumer, shortcuts",
    "store": "checkpoint, receipts, ledger", "world": "SimPy: provider, sink, faults", "judge": "the verdict",
    "runner": "simulate(): world, then judge", "tools": "explore, shrink, sweep, audit",
    "live": "real processes",
    "service": "checkpoint service, feed", "viz": "timelines, fates, widgets", "workshop": "notebook checks",
    "cli": "simkit ...",
}
#: the flow of one run, top to bottom in the right-hand panel: (unit, what happens there)
FLOW = [("scenario", "a TOML file becomes a Scenario"), ("world", "builds provider, store, sink, faults"),
        ("procedure", "the consumer yields requests;\nthe world executes them"),
        ("truth", "every read, write, decision and\neffect is logged"),
        ("judge", "the verdict, from the logs only"), ("viz", "timelines, fates, tables")]


def modules(unit: str) -> str:
    path = ROOT / unit
    if not path.is_dir():
        return ""
    names = sorted(p.stem for p in path.glob("*.py") if p.stem != "__init__")
    names += sorted(p.name + "/" for p in path.iterdir() if p.is_dir() and not p.name.startswith("_")
                    and (p / "__init__.py").exists())
    return ", ".join(names)


def _listed(names: str, chars: int, lines: int = 2) -> str:
    """``names`` wrapped to ``chars`` a line, at most ``lines``
    lines (the package's __init__ lists the rest)."""
    wrapped = textwrap.wrap(names, chars)
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: chars - 2].rstrip(", ") + ", …"
    return "\n".join(wrapped)


def _box(ax, x, y, w, h, colour="#eef3fa", edge="#4a6fa5"):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", facecolor=colour, edgecolor=edge,
                                linewidth=1))


def _layers(ax):
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.1, len(ROWS))
    ax.axis("off")
    for y, (label, units) in enumerate(ROWS):
        ax.text(0.0, y + 0.45, label, ha="left", va="center", fontsize=8.5, color="0.35", style="italic")
        weights = [max(70, len(modules(u))) for u in units]     # a box as wide as the modules it lists
        x = 2.1
        for unit, weight in zip(units, weights):
            width = 7.9 * weight / sum(weights)
            _box(ax, x + 0.05, y + 0.08, width - 0.1, 0.8)
            ax.text(x + 0.15, y + 0.7, f"{unit}/" if (ROOT / unit).is_dir() else f"{unit}.py", fontsize=10,
                    fontweight="bold", va="center")
            ax.text(x + 0.15, y + 0.46, ROLE[unit], fontsize=8, va="center", color="0.15")
            ax.text(x + 0.15, y + 0.33, _listed(modules(unit), int(width * 15)), fontsize=6.8, va="top",
                    color="0.4", family="monospace", linespacing=1.0)
            x += width
    ax.set_title("layers: each imports only from the rows below it", fontsize=10.5, loc="left")


def _flow(ax):
    ax.set_xlim(0, 4)
    ax.set_ylim(-0.1, len(ROWS))
    ax.axis("off")
    step = (len(ROWS) - 0.4) / len(FLOW)
    for i, (unit, what) in enumerate(FLOW):
        y = len(ROWS) - 0.2 - (i + 1) * step + 0.15
        _box(ax, 0.1, y, 3.8, step - 0.45, colour="#fdf0ee", edge="#c0392b")
        ax.text(0.25, y + step - 0.75, f"{unit}/", fontsize=10, fontweight="bold", va="center")
        ax.text(0.25, y + (step - 0.45) / 2 - 0.1, what, fontsize=8, va="center", color="0.15")
        if i:
            ax.add_patch(FancyArrowPatch((2.0, y + step + 0.12), (2.0, y + step - 0.45 + 0.02),
                                         arrowstyle="-|>", mutation_scale=13, color="#c0392b", linewidth=1.4))
    ax.set_title("one run, top to bottom", fontsize=10.5, loc="left")


def draw() -> plt.Figure:
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 8), gridspec_kw={"width_ratios": [10, 3.2]})
    _layers(left)
    _flow(right)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    draw().savefig(OUT, dpi=110)
    print(OUT, file=sys.stderr)
