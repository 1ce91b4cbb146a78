"""The workshop's before/after figures of issue 18, rendered with whichever simkit is first on sys.path.

    python docs/img/workshop/make_pngs.py docs/img/workshop after
    git worktree add --detach /tmp/simkit-before-18 9585e75     # the commit before issue 18's figure work
    PYTHONPATH=/tmp/simkit-before-18 python docs/img/workshop/make_pngs.py docs/img/workshop before

(a) notebook 02's key picture, seed 000's walkthrough; (b) persist_token_on_fetch on the gauntlet as
`simkit demo` draws it; (c) notebooks 00/04: safe beside persist_token_on_fetch; (d) notebook 05's crash
matrix (before: the notebook's own count of schedules failing otherwise than the fault-free run).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import simkit  # noqa: E402
from simkit.viz import plot, widgets  # noqa: E402

out, tag = sys.argv[1], sys.argv[2]


def save(fig, name, **kw):
    fig.savefig(f"{out}/{name}-{tag}.png", **kw)
    plt.close(fig)


# (a) notebook 02's key picture: seed 000's walkthrough, C7/105, page 104, 106, 107, crash before 107 (cell
# 15)
run = simkit.simulate(simkit.load("retry_walkthrough"), simkit.resolve("safe"))
fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6.5), height_ratios=(3, 1), layout="constrained")
plot.timeline(top, run)
plot.fates(bottom, run)
save(fig, "retry_walkthrough", dpi=100)

# (b) persist_token_on_fetch on the gauntlet, as `simkit demo` writes it
run = simkit.simulate(simkit.load("gauntlet"), simkit.resolve("persist_token_on_fetch"))
fig, ax = plt.subplots(figsize=(12, 5.5), layout="constrained")
plot.timeline(ax, run)
save(fig, "gauntlet_persist_token_on_fetch", dpi=110)

# (c) notebook 00 / 04: safe beside persist_token_on_fetch on its own scenario (the loss at the crash)
runs = widgets.comparison_runs("persist_token_on_fetch")
fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), layout="constrained")
plot.compare(axes, runs)
save(fig, "compare_persist_token_on_fetch", dpi=100)

# (d) notebook 05's crash matrix
scenario = simkit.parse({
    "name": "crash_matrix", "sink": "idempotent", "backfills": False, "initial": {"resume_cursor": "C1"},
    "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
              {"cursor": "C2", "positions": [4, 5], "next_cursor": "C3"},
              {"cursor": "C3", "positions": [], "next_cursor": "C3"}],
    "events": [{"position": 2, "behavior": "poison"}, {"position": 4, "behavior": "poison"}]},
                        source="notebook 05")
shape = dict(index=list(simkit.CRASH_POINTS), columns=list(simkit.STRATEGIES))
title = "crash matrix: one crash at every pass of every crash point (seed 000's validation list)"
fig, ax = plt.subplots(figsize=(11, 5.5), layout="constrained")
if hasattr(widgets, "crash_effects"):
    fx = widgets.crash_effects(scenario)
    plot.crash_matrix(ax, fx.worse.unstack().reindex(**shape), fx.run.unstack().reindex(**shape),
                      better=fx.better.unstack().reindex(**shape), title=title)
else:                                   # the notebook's own computation before issue 18
    import pandas as pd

    from simkit.tools.explore import explore
    no_crash = {name: explore(scenario, name, max_crashes=0) for name in simkit.STRATEGIES}
    harmed, ran = {}, {}
    for name in simkit.STRATEGIES:
        before = set(no_crash[name].kinds)
        for point in simkit.CRASH_POINTS:
            x = explore(scenario, name, max_crashes=1, points=(point,))
            harmed[point, name] = sum(n for kind, n in x.kinds.items() if kind not in before)
            ran[point, name] = x.by_faults[1] if len(x.by_faults) > 1 else 0
    plot.crash_matrix(ax, pd.Series(harmed).unstack().reindex(**shape),
                      pd.Series(ran).unstack().reindex(**shape),
                      label="single-crash schedules failing otherwise than the fault-free run", title=title)
save(fig, "crash_matrix", dpi=100)
