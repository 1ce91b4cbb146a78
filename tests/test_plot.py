"""The figures: each reads what it claims to read, from ground truth, with a title, labelled axes and a legend."""
import copy
import tomllib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PathCollection, PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import simkit  # noqa: E402
from simkit import plot  # noqa: E402
from simkit.checker import event_fates  # noqa: E402
from simkit.scenario import SCENARIO_DIR  # noqa: E402
from conftest import labels  # noqa: E402


def run(name, strategy="safe", **changes):
    if changes:
        data = copy.deepcopy(tomllib.loads((SCENARIO_DIR / f"{name}.toml").read_text()))
        data.update(changes)
        sc = simkit.parse(data, source=name)
    else:
        sc = simkit.load(name)
    return simkit.simulate(sc, simkit.resolve(strategy))


def points(ax, label):
    """The (x, y) points of the scatter carrying this legend label."""
    for c in ax.collections:
        if isinstance(c, PathCollection) and c.get_label() == label:
            return [tuple(map(float, p)) for p in c.get_offsets()]
    raise AssertionError(f"no scatter labelled {label!r}; have {labels(ax)}")


def assert_readable(ax):
    assert ax.get_title() and ax.get_xlabel()
    assert ax.get_legend() is not None and ax.get_legend().get_texts()


GAP = "cursor past events with no durable outcome"
LOST = "lost event (when it became unreachable)"


def test_persist_token_on_fetch_timeline_shows_the_cursor_jumping_ahead_and_the_lost_event_in_the_gap(ax):
    """The mission's picture: the cursor leaps to C8 (place 107) on fetch while applied_position is 105; the
    crash leaves 107 undone; e107 is marked lost where the cursor passed it, inside the shaded gap."""
    r = run("shortcut_persist_token_on_fetch", "persist_token_on_fetch")
    plot.timeline(ax, r)
    assert_readable(ax)
    cursor = next(line for line in ax.lines if line.get_label().startswith("resume_cursor"))
    assert max(cursor.get_ydata()) == 107
    assert points(ax, LOST) == [(1.5, 107.0)]
    (gap,) = [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_label() == GAP]
    assert gap.get_paths()[0].contains_point((5.0, 106.5))       # between applied (106) and the cursor (107)
    assert any(t.get_text() == "e107 lost" for t in ax.texts)
    assert plot.durable_prefix(r) == ([0.0, 2.0], [105, 106])


def scatter(ax, label):
    (found,) = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_label() == label]
    return found


def test_a_crash_or_a_lost_event_does_not_hide_the_mark_at_the_same_spot(ax):
    """persist_token_on_fetch: the barrier to C8 passes e107 at (1.5, 107), where e107 is marked lost; the crash
    at (2.0, 106) falls on e106's commit. The crash and lost marks lie beneath the others and are larger, so the
    barrier and the commit show on top of them; labels sit on a background box, so no line runs through them."""
    plot.timeline(ax, run("shortcut_persist_token_on_fetch", "persist_token_on_fetch"))
    barrier, commit = scatter(ax, "page barrier"), scatter(ax, "event commit (receipt + applied_position)")
    crash, lost = scatter(ax, "crash"), scatter(ax, LOST)
    assert points(ax, "page barrier") == points(ax, LOST) == [(1.5, 107.0)]
    assert (2.0, 106.0) in points(ax, "event commit (receipt + applied_position)")
    assert points(ax, "crash") == [(2.0, 106.0)]
    assert lost.get_zorder() < barrier.get_zorder() and lost.get_sizes()[0] > barrier.get_sizes()[0]
    assert crash.get_zorder() < commit.get_zorder() and crash.get_sizes()[0] > commit.get_sizes()[0]
    labelled = {t.get_text(): t for t in ax.texts}
    assert {"e107 lost", "crash before_event_commit (e107)"} <= set(labelled)
    assert all(t.get_bbox_patch() is not None and t.get_zorder() > 3 for t in labelled.values())


@pytest.mark.parametrize("name", ["retry_walkthrough", "quarantine_boundary", "gauntlet", "default"])
def test_safe_never_opens_the_gap(ax, name):
    """Invariant 1 as a picture: the safe consumer's cursor never passes an event without a durable outcome."""
    r = run(name)
    assert not any(plot.unsafe_rows(r))
    plot.timeline(ax, r)
    assert GAP not in labels(ax) and LOST not in labels(ax)


def test_durable_prefix_follows_the_seed_walkthroughs():
    assert plot.durable_prefix(run("retry_walkthrough")) == ([0.0, 1.5, 8.0], [105, 106, 107])
    # 210 durable at 1.5; 211's quarantine receipt at 8.0 extends the prefix through the already durable 212.
    assert plot.durable_prefix(run("quarantine_boundary")) == ([0.0, 1.5, 8.0], [209, 210, 212])


def test_durable_prefix_exposes_an_applied_position_that_claims_too_much(ax):
    """max_position_watermark writes applied_position 107 while ground truth's prefix is 106."""
    r = run("shortcut_max_position_watermark", "max_position_watermark")
    assert r.trace.applied_position[-1] == 107
    assert plot.durable_prefix(r)[1][-1] == 106


def test_a_backfill_lowers_the_durable_prefix_until_it_is_done():
    """e105 is served late behind 107: safe applies it; watermark_only_dedup never does."""
    assert plot.durable_prefix(run("shortcut_watermark_only_dedup"))[1][-4:] == [107, 104, 107, 108]
    assert plot.durable_prefix(run("shortcut_watermark_only_dedup", "watermark_only_dedup"))[1][-1] == 104


def test_timeline_marks_regressions_pauses_and_rejected_barriers(ax):
    r = run("shortcut_no_version_check", "no_version_check")
    plot.timeline(ax, r)
    assert points(ax, "checkpoint regression") == [(33.0, 3.0)]
    assert "worker paused (stale memory)" in labels(ax)
    fig, other = plt.subplots()
    plot.timeline(other, run("shortcut_no_version_check"))
    assert "rejected barrier (stale attempt)" in labels(other)
    assert "checkpoint regression" not in labels(other)
    plt.close(fig)


def test_timeline_marks_duplicated_effects_of_an_unsafe_sink(ax):
    """Seed 000, "Limits and validation": without idempotency or transactions even safe can repeat an effect."""
    # a crash between the call and its settlement: after settlement the operation record (seed 001) knows
    r = run("retry_walkthrough", sink="unsafe", faults=[{"kind": "crash", "point": "after_effect", "position": 107}])
    assert r.verdict.duplicated == ["e107"]
    plot.timeline(ax, r)
    assert [y for _x, y in points(ax, "duplicated effect (second run)")] == [107.0]


def test_timeline_marks_quarantine_decisions_and_receipts(ax):
    plot.timeline(ax, run("quarantine_boundary"))
    assert [y for _x, y in points(ax, "quarantine decided (in memory)")] == [211.0, 211.0]
    assert points(ax, "durable quarantine receipt") == [(8.0, 211.0)]
    assert [y for _x, y in points(ax, "replay (already done: skipped)")] == [210.0, 212.0]


def test_fates_say_what_happened_to_each_event_of_the_walkthrough():
    """Notebook 02: e104 was done before the run and its redelivery was recognised and skipped (replayed
    harmlessly); e105 was never delivered in this run (done before the run, not "applied once"); e106 was applied
    and replayed on the retry; e107 was delivered twice but applied once: its first delivery was no replay."""
    r = run("retry_walkthrough")
    assert event_fates(r.world, r.verdict) == {"e104": "replayed harmlessly", "e105": "done before the run",
                                               "e106": "replayed harmlessly", "e107": "applied once"}


def test_a_replay_before_the_outcome_is_durable_is_no_harmless_replay():
    """watermark_only_dedup skips e105 as a replay behind its watermark while e105 has no outcome: that skip is the
    loss, not a harmless replay."""
    r = run("shortcut_watermark_only_dedup", "watermark_only_dedup")
    replays = r.trace.to_frame().query("step == 'replay'")
    assert "e105" in set(replays.event_id)
    assert event_fates(r.world, r.verdict)["e105"] == "lost"


def test_every_fate_has_a_colour_and_a_place_in_the_legend_order():
    assert set(plot.FATE_COLORS) == set(simkit.checker.FATES)


def test_fates_colour_one_cell_per_event(ax):
    r = run("shortcut_in_memory_quarantine", "in_memory_quarantine")
    plot.fates(ax, r)
    assert_readable(ax)
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(cells) == 5
    red = matplotlib.colors.to_rgba(plot.FATE_COLORS["lost"])
    assert sum(c.get_facecolor() == red for c in cells) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["done before the run", "applied once", "lost"]


def test_fates_label_every_cell_in_a_font_fitted_to_the_cells_as_drawn():
    """gauntlet's 86 events in 20 columns (notebook 04): every cell still reads its position, e.g. the lost e112;
    when the cells are too small for any label, the x label gives the positions' range instead."""
    r = run("gauntlet", "watermark_only_dedup")
    fig, ax = plt.subplots(figsize=(6.5, 2.4), layout="constrained")
    plot.fates(ax, r, title="event fates")
    fig.canvas.draw()
    texts = {t.get_text(): t for t in ax.texts}
    assert len(texts) == len(r.world.provider.events) > 80 and "112" in texts
    assert all(t.get_visible() and 4.5 <= t.get_fontsize() <= 8 for t in texts.values())
    assert ax.get_xlabel() == "events in source order (label: position)"
    fig.set_size_inches(2.5, 1.2)
    fig.canvas.draw()
    assert not any(t.get_visible() for t in ax.texts)
    assert ax.get_xlabel() == "events in source order (positions 10–800)"
    plt.close(fig)


def test_fates_highlight_the_events_named():
    r = run("retry_walkthrough")
    fig, ax = plt.subplots()
    plot.fates(ax, r, highlight=["e107"])
    thick = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_linewidth() >= 2]
    assert len(thick) == 1 and thick[0].get_x() == 3
    plt.close(fig)


def test_compare_shares_the_position_scale_and_one_legend():
    sc = simkit.load("shortcut_persist_token_on_fetch")
    runs = [simkit.simulate(sc, simkit.resolve(s)) for s in ("safe", "persist_token_on_fetch")]
    fig, axes = plt.subplots(1, 2, layout="constrained")
    plot.compare(axes, runs)
    assert axes[0].get_ylim() == axes[1].get_ylim()
    assert all(a.get_legend() is None and a.get_title() for a in axes)
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert LOST in texts and len(texts) == len(set(texts))
    plt.close(fig)


def test_crash_matrix_annotates_every_cell_and_greys_unreached_ones(ax):
    """One annotated cell per (crash point, strategy), ``violating/run``; a cell with no schedule reads
    ``not reached``; the colour bar carries the label; title and axes are labelled."""
    import pandas as pd

    points = ["before_event_commit", "after_quarantine_receipt"]
    table = pd.DataFrame({"safe": [0, 0], "in_memory_quarantine": [2, 0]}, index=points)
    schedules = pd.DataFrame({"safe": [3, 2], "in_memory_quarantine": [3, 0]}, index=points)
    plot.crash_matrix(ax, table, schedules)
    assert ax.get_title() and ax.get_xlabel() == "strategy" and ax.get_ylabel() == "crash point"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["safe", "in_memory_quarantine"]
    assert [t.get_text() for t in ax.get_yticklabels()] == points
    assert sorted(t.get_text() for t in ax.texts) == ["0/2", "0/3", "2/3", "not\nreached"]
    (image,) = ax.images
    assert image.get_array().mask.tolist() == [[False, False], [False, True]]
    colorbar_ax = [a for a in ax.figure.axes if a is not ax]
    assert colorbar_ax and colorbar_ax[0].get_ylabel().startswith("violating single-crash schedules\n(share")


def test_crash_matrix_colours_each_cell_by_the_share_of_its_schedules_that_violate(ax):
    """2/2 is every schedule, as dark as 3/3, darker than 2/3; the colour bar runs from 0 to 100 %."""
    import pandas as pd

    table = pd.DataFrame({"a": [2, 3], "b": [2, 0]}, index=["p", "q"])
    schedules = pd.DataFrame({"a": [2, 3], "b": [3, 3]}, index=["p", "q"])
    plot.crash_matrix(ax, table, schedules)
    (image,) = ax.images
    assert image.get_array().tolist() == [[1.0, pytest.approx(2 / 3)], [1.0, 0.0]]
    assert image.get_clim() == (0, 1.0)
    ax.figure.canvas.draw()
    (bar,) = [a for a in ax.figure.axes if a is not ax]
    ticks = [t.get_text() for t in bar.get_yticklabels()]
    assert ticks[0] == "0%" and ticks[-1] == "100%"


def sweep_table(runs):
    """A tidy sweep table (simkit.sweep.COLUMNS) from (strategy, crash_rate, lost, duplicated) per run."""
    import pandas as pd
    from simkit.sweep import COLUMNS

    rows = [{**dict.fromkeys(COLUMNS, 0), "scenario": "toy", "strategy": s, "crash_rate": rate, "seed": i,
             "lost": lost, "duplicated": dup} for i, (s, rate, lost, dup) in enumerate(runs)]
    return pd.DataFrame(rows, columns=list(COLUMNS))


# safe: 0 of 4 at both rates; persist_token_on_fetch: 0 of 4 at rate 0, 3 of 4 (2, 1, 5 and 0 events) at 0.01
TOY = sweep_table([("safe", 0.0, 0, 0)] * 4 + [("safe", 0.01, 0, 1)] * 4
                  + [("persist_token_on_fetch", 0.0, 0, 0)] * 4
                  + [("persist_token_on_fetch", 0.01, n, 0) for n in (2, 1, 5, 0)])


def line(ax, label):
    (found,) = [x for x in ax.lines if x.get_label() == label]
    return found


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def band(ax, strategy):
    """The shaded Wilson band of one strategy as {crash rate: (low, high)}, read back from its polygon."""
    (poly,) = [c for c in ax.collections if c.get_gid() == f"wilson {strategy}"]
    out: dict[float, list[float]] = {}
    for x, y in poly.get_paths()[0].vertices:
        out.setdefault(float(x), []).append(float(y))
    return {x: (min(ys), max(ys)) for x, ys in out.items()}


def test_sweep_curves_plot_the_share_of_runs_that_lost_an_event(ax):
    """A run counts once however many events it lost: 2, 1, 5 and 0 lost events are 3 runs of 4."""
    plot.sweep_curves(ax, TOY)
    assert_readable(ax)
    assert ax.get_ylabel() == "runs that lost at least one event" and "crash rate" in ax.get_xlabel()
    assert list(line(ax, "persist_token_on_fetch").get_xdata()) == [0.0, 0.01]
    assert list(line(ax, "persist_token_on_fetch").get_ydata()) == [0.0, 0.75]
    assert list(line(ax, "safe").get_ydata()) == [0.0, 0.0]
    assert legend_texts(ax) == ["safe", "persist_token_on_fetch", "95% Wilson interval"]
    assert "4 runs per point" in ax.get_title()


def test_sweep_curves_shade_the_wilson_interval_around_each_share(ax):
    """Bands are Wilson intervals, inside [0, 1], holding the estimate; 0 of 4 still has an upper bound > 0."""
    from simkit.sweep import wilson

    plot.sweep_curves(ax, TOY)
    for strategy in ("safe", "persist_token_on_fetch"):
        shares = dict(zip(line(ax, strategy).get_xdata(), line(ax, strategy).get_ydata()))
        for rate, (low, high) in band(ax, strategy).items():
            assert 0.0 <= low <= shares[rate] <= high <= 1.0
    assert band(ax, "persist_token_on_fetch")[0.01] == pytest.approx(wilson(3, 4))
    assert band(ax, "safe") == {0.0: pytest.approx(wilson(0, 4)), 0.01: pytest.approx(wilson(0, 4))}
    assert band(ax, "safe")[0.0][1] > 0.4                          # 0 of 4 proves little


def test_sweep_curves_plot_the_duplicated_share_on_request(ax):
    plot.sweep_curves(ax, TOY, metric="duplicated")
    assert ax.get_ylabel() == "runs that duplicated an effect"
    assert list(line(ax, "safe").get_ydata()) == [0.0, 1.0]
    assert list(line(ax, "persist_token_on_fetch").get_ydata()) == [0.0, 0.0]
    with pytest.raises(ValueError, match="metric 'pending'"):
        plot.sweep_curves(ax, TOY, metric="pending")


def test_sweep_curves_tell_eight_strategies_apart_and_draw_safe_on_top(ax):
    table = sweep_table([(s, rate, 0, 0) for s in simkit.STRATEGIES for rate in (0.0, 0.002, 0.05)])
    plot.sweep_curves(ax, table)
    labels = ["safe"] + [f"{s} (same curve as safe)" for s in list(simkit.STRATEGIES)[1:]]  # all eight coincide at 0
    assert legend_texts(ax) == [*labels, "95% Wilson interval"]
    lines = [line(ax, label) for label in labels]
    colors = {matplotlib.colors.to_hex(x.get_color()) for x in lines}
    assert len(colors) == 8 and matplotlib.colors.to_hex(line(ax, "safe").get_color()) == "#000000"
    assert line(ax, "safe").get_zorder() > max(x.get_zorder() for x in lines[1:])
    # rate 0 has a place on the (symmetric-log) x axis, and every rate swept has a tick
    assert ax.get_xscale() == "symlog"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "0.002", "0.05"]


def test_sweep_curves_agree_with_the_sweep_summary(ax):
    """On a real sweep: each point is Sweep.summary()'s loss rate, each band its Wilson interval."""
    from simkit.sweep import sweep

    result = sweep(simkit.load("default"), ("safe", "persist_token_on_fetch"), seeds=5, crash_rates=(0.0, 0.05),
                   jobs=1)
    plot.sweep_curves(ax, result.frame())
    for row in result.summary():
        x = line(ax, row["strategy"])
        assert dict(zip(x.get_xdata(), x.get_ydata()))[row["crash_rate"]] == row["loss_rate"]
        assert band(ax, row["strategy"])[row["crash_rate"]] == pytest.approx(tuple(row["loss_ci"]))


def lane_figure(scenario, **kw):
    from simkit.swimlane import swimlane

    fig, ax = plt.subplots(figsize=(13, 3.6))
    swimlane(ax, simkit.simulate(simkit.load(scenario), **kw))
    fig.canvas.draw()
    return fig, ax


def gid_points(ax, gid):
    """The (x, y) points of the swimlane's scatter with this gid."""
    return sorted(tuple(map(float, p)) for c in ax.collections if c.get_gid() == gid for p in c.get_offsets())


def test_swimlane_tells_a_delayed_reply_from_a_lost_one():
    """late_response: the first call's reply (t=2) is only slow, it arrives at 28.8; the retry's (t=19) is lost."""
    fig, ax = lane_figure("late_response", settlement="fenced")
    assert gid_points(ax, "reply delayed") == [(2.0, 0.0)]
    assert gid_points(ax, "reply lost") == [(19.0, 0.0)]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"reply delayed (arrives after the timeout)", "reply lost (red arrow)",
            "waiting for a reply (until the timeout)"} <= set(legend)
    red = matplotlib.colors.to_rgba("#d62728")
    requests = {round(a.xyann[0], 2): a.arrow_patch.get_edgecolor() for a in ax.texts
                if a.get_text() == "" and a.arrow_patch is not None and a.xyann[1] == 0.0}
    assert requests[1.5] != red and requests[18.5] == red                  # the calls left at 1.5 and 18.5
    plt.close(fig)


def test_swimlane_shows_what_a_lost_barrier_reply_left_durable_and_how_the_worker_learns_it():
    """lost_barrier_reply: the CAS to C2 lands at t=3, its reply is lost; the worker waits until its timeout (13),
    then loads the checkpoint and finds C2."""
    fig, ax = lane_figure("lost_barrier_reply")
    texts = [t.get_text() for t in ax.texts]
    assert "C2 (durable), reply lost" in texts and "load: store holds C2 v1" in texts
    (wait,) = [line for line in ax.lines if line.get_gid() == "wait"]
    assert list(wait.get_xdata()) == [3.0, 13.0]
    assert [x for x, _y in gid_points(ax, "timeout")] == [13.0]
    plt.close(fig)


def test_swimlane_draws_the_wait_after_any_lost_reply_not_only_a_seed_001_call():
    """A lost effect reply of an unsafe sink writes no ``timeout`` row (World._no_reply): its wait is still drawn,
    with the timeout mark at its end and the load that follows."""
    from conftest import variant
    from simkit.swimlane import swimlane

    sc = variant("shortcut_success_before_effect", faults=[{"kind": "lost_response", "op": "effect", "position": 107}])
    run = simkit.simulate(sc, simkit.resolve("success_before_effect"))
    reply = run.trace.to_frame().query("step == 'effect' and outcome == 'reply lost'").time.tolist()
    assert len(reply) == 1
    fig, ax = plt.subplots(figsize=(13, 3.6))
    swimlane(ax, run)
    fig.canvas.draw()
    (wait,) = [line for line in ax.lines if line.get_gid() == "wait"]
    end = reply[0] + run.world.timing.timeout
    assert list(wait.get_xdata()) == [reply[0], end]
    assert end in [x for x, _y in gid_points(ax, "timeout")]
    assert any(t.get_text().startswith("load: store holds") for t in ax.texts)
    plt.close(fig)


@pytest.mark.parametrize("scenario, policy", [("misbound_response", "unfenced"), ("misbound_response", "fenced"),
                                              ("late_response", "last_write_wins")])
def test_swimlane_labels_never_overlap_and_sit_on_a_box(scenario, policy):
    """Notebook 06: the settlement labels under the store lane are stacked, each on a white box, none overlapping,
    also once the caller widens the x axis."""
    fig, ax = lane_figure(scenario, settlement=policy)
    for xlim in (None, (-0.5, 40)):
        if xlim:
            ax.set_xlim(*xlim)
            fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        boxes = [t.get_bbox_patch().get_window_extent(renderer) for t in ax.texts if t.get_text()]
        assert len(boxes) >= 3
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    plt.close(fig)


def test_swimlane_keeps_a_busy_runs_labels_inside_the_axes_and_says_how_many_it_left_out():
    """gauntlet (as `simkit run gauntlet --swimlane` draws it): its ~140 store and load labels cannot all fit.
    Those drawn lie inside the Axes, none overlapping another or the note, in at most ROWS_AT_MOST rows; the note
    counts the rest."""
    from simkit.swimlane import ROWS_AT_MOST, swimlane

    run = simkit.simulate(simkit.load("gauntlet"))
    fig, ax = plt.subplots(figsize=(12, 1.6 + 0.75 * (run.world.scenario.workers + 3)), layout="constrained")
    swimlane(ax, run)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text() and t.get_gid() != "labels left out"]
    shown = [t for t in labels if t.get_visible()]
    (note,) = [t for t in ax.texts if t.get_gid() == "labels left out"]
    left = len(labels) - len(shown)
    assert note.get_visible() and note.get_text() == f"{left} of {len(labels)} labels left out (no room)"
    assert any(t.get_text().startswith("load: store holds") for t in shown) and len(shown) >= 20
    inside = ax.get_window_extent(renderer)
    boxes = [t.get_bbox_patch().get_window_extent(renderer) for t in shown] + [note.get_window_extent(renderer)]
    for box in boxes:
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    rows = {round(t.xyann[1], 3) for t in shown if not t.get_text().startswith("load:")}
    assert len(rows) <= ROWS_AT_MOST
    plt.close(fig)
