"""The figures: each reads what it claims to read, from
ground truth, with a title, labelled axes and a legend.

Every mark of the timeline carries its kind as the artist's gid (``cursor``, ``held``, ``crash``, ``lost``,
…), and the tests read the marks back by it."""
import copy
import tomllib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection, PathCollection, PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

import simkit  # noqa: E402
from simkit.judge.checker import event_fates  # noqa: E402
from simkit.scenario.read import SCENARIO_DIR  # noqa: E402
from simkit.viz import plot  # noqa: E402


def run(name, strategy="safe", **changes):
    if changes:
        data = copy.deepcopy(tomllib.loads((SCENARIO_DIR / f"{name}.toml").read_text()))
        data.update(changes)
        sc = simkit.parse(data, source=name)
    else:
        sc = simkit.load(name)
    return simkit.simulate(sc, simkit.resolve(strategy))


def points(ax, gid):
    """The (x, y) points of the timeline's scatter of this kind (none: [])."""
    found = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_gid() == gid]
    return [tuple(map(float, p)) for c in found for p in c.get_offsets()]


def bars(ax, gid):
    """The horizontal bars of this kind as (y, from, to): held cursors, pauses, events at risk."""
    found = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_gid() == gid]
    return sorted((float(s[0][1]), float(s[0][0]), float(s[1][0])) for c in found for s in c.get_segments())


def legend_texts(ax_or_fig):
    legend = ax_or_fig.get_legend() if hasattr(ax_or_fig, "get_legend") else ax_or_fig.legends[0]
    return [t.get_text() for t in legend.get_texts()]


def texts(ax):
    return {t.get_text(): t for t in ax.texts}


def assert_readable(ax):
    assert ax.get_title() and ax.get_xlabel()
    assert ax.get_legend() is not None and ax.get_legend().get_texts()


# -- the key picture: seed 000's walkthrough -----------------------------------------------------------------
def test_the_walkthrough_draws_the_next_cursor_held_in_memory_until_the_barrier_publishes_it(ax):
    """Seed 000 step 2: fetching C7 returns C8, held in memory (dashed) from the fetch
    at t=1 until the crash at t=1.5 forgets it, and again from the retry's fetch at
    7.5 until the barrier publishes it at 8.5; the durable resume_cursor stays C7
    (place 105) until then. Both tokens are labelled where they are published."""
    r = run("retry_walkthrough")
    plot.timeline(ax, r)
    assert_readable(ax)
    assert [(h.start, h.end, h.next_cursor, h.ended_by) for h in plot.held_pages(r) if h.ids] == [
        (1.0, 1.5, "C8", "crash"), (7.5, 8.5, "C8", "load")]
    assert bars(ax, "held") == [(107.0, 1.0, 1.5), (107.0, 7.5, 8.5)]
    assert points(ax, "barrier") == [(8.5, 107.0)]
    assert {"C7", "C8", "C8 in memory"} <= set(texts(ax))
    (cursor,) = [line for line in ax.lines if line.get_gid() == "cursor"]
    assert set(cursor.get_ydata()[cursor.get_xdata() < 8.5]) == {105}
    assert legend_texts(ax)[:2] == ["resume_cursor (durable) · page barrier", "next_cursor held in memory"]


def test_a_crash_sits_at_the_event_it_names(ax):
    """The crash before 107's commit is drawn at position 107, not on the applied line (106), and its label
    names e107: the mark's height and its label agree."""
    plot.timeline(ax, run("retry_walkthrough"))
    assert points(ax, "crash") == [(1.5, 107.0)]
    assert "crash before_event_commit at e107" in texts(ax)


def test_a_crash_of_the_page_attempt_sits_at_the_next_cursor_it_held(ax):
    """A crash before the page barrier belongs to no event: it is drawn where the token the worker held (C8,
    place
    107) would have put the cursor, and its label says so. (Replacing the scenario's crash: one attempt, at
         t=2.)"""
    r = run("retry_walkthrough", faults=[{"kind": "crash", "point": "before_page_barrier"}])
    plot.timeline(ax, r)
    assert points(ax, "crash") == [(2.0, 107.0)]
    assert "crash before_page_barrier, holding C8" in texts(ax)


def test_the_loss_is_marked_at_the_crash_that_makes_it_final(ax):
    """persist_token_on_fetch: the barrier publishes C8 at t=1.5 while e106 and e107 have no outcome: both are
    at risk. e106 commits at 2.0 (its risk ends); the crash at t=2 before e107 commits ends the only attempt
    that could still apply it: e107's loss is final there, at (2.0, 107), not at the publish (notebook 04:
    "the crash at t = 2 leaves 107 in the gap"). One label names the loss and the crash."""
    r = run("shortcut_persist_token_on_fetch", "persist_token_on_fetch")
    assert plot.at_risk(r) == {"e106": [(1.5, 2.0)], "e107": [(1.5, 8.0)]}
    assert plot.loss_final(r) == {"e107": (2.0, "crash")}
    plot.timeline(ax, r)
    assert_readable(ax)
    assert points(ax, "lost") == [(2.0, 107.0)] and points(ax, "crash") == [(2.0, 107.0)]
    assert bars(ax, "at risk") == [(106.0, 1.5, 2.0)]
    assert bars(ax, "lost window") == [(107.0, 1.5, 2.0)]          # from the premature publish to the crash
    assert "e107 lost (crash before_event_commit)" in texts(ax)
    assert not any(t.startswith("crash ") for t in texts(ax))      # folded into the loss's label
    lost, crash = [c for c in ax.collections if c.get_gid() in ("lost", "crash")]
    assert crash.get_zorder() < lost.get_zorder()                  # the red cross shows on the black one
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]     # no flood


@pytest.mark.parametrize("scenario, strategy, when", [
    ("shortcut_in_memory_quarantine", "in_memory_quarantine", {"e211": (2.5, "page barrier"),
                                                               "e212": (2.5, "page barrier")}),
    ("shortcut_max_position_watermark", "max_position_watermark", {"e107": (2.0, "page barrier")}),
    ("shortcut_watermark_only_dedup", "watermark_only_dedup", {"e105": (5.0, "page barrier")}),
])
def test_a_loss_no_worker_could_still_repair_is_final_at_the_barrier(scenario, strategy, when):
    """No attempt holds the event any more when the barrier passes it (skipped as a replay, quarantined in
    memory): the barrier itself makes the loss final."""
    assert plot.loss_final(run(scenario, strategy)) == when


def test_each_lost_event_has_its_own_window_and_none_floods_the_plot():
    """default, persist_token_on_fetch (notebook 01): every lost event's risk ends where its loss became
    final, every other event's where it got its outcome; the shaded region of old (cursor past events with no
    outcome, open for the rest of the run after the first loss) is gone."""
    r = simkit.simulate(simkit.load("default"), simkit.resolve("persist_token_on_fetch"))
    risk, final = plot.at_risk(r), plot.loss_final(r)
    assert set(final) == set(r.verdict.lost) and len(final) > 10
    end = r.trace.time[-1]
    assert all(when < end for when, _why in final.values())
    fig, ax = plt.subplots()
    plot.timeline(ax, r)
    windows = bars(ax, "lost window")
    assert len(windows) == len([e for e in final if final[e][0] > risk[e][-1][0]])
    assert all(b <= max(w for w, _ in final.values()) for _y, _a, b in windows)
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    plt.close(fig)


@pytest.mark.parametrize("name", ["retry_walkthrough", "quarantine_boundary", "gauntlet", "default"])
def test_safe_puts_no_event_at_risk(ax, name):
    """Invariant 1 as a picture: the safe consumer's cursor
    never passes an event without a durable outcome."""
    r = run(name)
    assert not any(plot.unsafe_rows(r)) and plot.at_risk(r) == {}
    plot.timeline(ax, r)
    assert not points(ax, "lost") and not bars(ax, "at risk") and not bars(ax, "lost window")


@pytest.mark.parametrize("name", ["gauntlet", "default", "retry_walkthrough"])
def test_the_legend_has_at_most_seven_entries(name):
    """Grouped: one entry per kind of thing (durable cursor, memory, applied, ground truth, events in hand,
    crash, harm), whatever is drawn; on every strategy, so also in the compare figure of two."""
    for strategy in simkit.STRATEGIES:
        r = run(name, strategy)
        fig, ax = plt.subplots()
        plot.timeline(ax, r)
        assert 4 <= len(legend_texts(ax)) <= 7, (strategy, legend_texts(ax))
        plt.close(fig)


def test_generated_tokens_are_labelled_sparingly_and_abbreviated():
    """Generated tokens are 10 random characters: none is labelled when many events are lost (gauntlet, 48);
    with a few lost events (the explorer's stream, in_memory_quarantine: 4), only the publishes that put them
    at risk, cut to four characters and an ellipsis."""
    from simkit.viz import widgets

    fig, (a, b) = plt.subplots(1, 2)
    plot.timeline(a, run("gauntlet", "persist_token_on_fetch"))
    assert not [t for t in a.texts if t.get_gid() == "token"]
    r = widgets.explorer_run(strategy="in_memory_quarantine")
    plot.timeline(b, r)
    tokens = [t.get_text() for t in b.texts if t.get_gid() == "token"]
    assert 0 < len(tokens) <= len(r.verdict.lost) <= plot.ANNOTATE_AT_MOST
    assert all(len(t) == plot.TOKEN_CHARS + 1 and t.endswith("…") for t in tokens)
    plt.close(fig)


def test_layers_build_the_picture_up(ax):
    """Notebook 01 can start with the durable checkpoint alone and add memory, ground truth and harm; the
    legend lists only what is drawn. An unknown layer is an error that names the layers."""
    r = run("shortcut_persist_token_on_fetch", "persist_token_on_fetch")
    plot.timeline(ax, r, layers=["cursor", "applied"])
    assert legend_texts(ax) == ["resume_cursor (durable) · page barrier", "applied_position · event commit"]
    assert not points(ax, "lost") and not bars(ax, "held")
    fig, other = plt.subplots()
    plot.timeline(other, r, layers=["cursor", "applied", "memory"])
    assert "next_cursor held in memory" in legend_texts(other) and bars(other, "held")
    plt.close(fig)
    with pytest.raises(ValueError, match="layers \\['gap'\\]: use some of cursor, applied, memory"):
        plot.timeline(ax, r, layers=["gap"])
    fig, one = plt.subplots()                   # one layer by its name: not its letters (round 14's tester)
    plot.timeline(one, r, layers="cursor")
    assert legend_texts(one) == ["resume_cursor (durable) · page barrier"]
    plt.close(fig)


def test_now_marks_an_instant(ax):
    plot.timeline(ax, run("retry_walkthrough"), now=4.0)
    (line,) = [x for x in ax.lines if x.get_gid() == "now"]
    assert list(line.get_xdata()) == [4.0, 4.0]


def test_the_timeline_reads_the_trace_columns_as_its_frame_types_them():
    """The timeline selects its marks from the trace's columns as numpy arrays
    (issue 31), not a pandas frame: each column holds what :meth:`Trace.to_frame`
    holds, a number column with a missing value as floats with NaN."""
    import numpy as np

    from simkit.viz.rows import Rows

    runs = [run("gauntlet"), run("retry_walkthrough"),
            run("shortcut_persist_token_on_fetch", "persist_token_on_fetch")]
    for r in runs:
        rows, frame = Rows(r.trace), r.trace.to_frame()
        for name in ("time", "worker", "step", "event_id", "position", "cursor_place", "applied_position",
                     "checkpoint_version", "outcome"):
            ours, theirs = getattr(rows, name), frame[name]
            if theirs.dtype.kind in "fi":
                assert ours.dtype == theirs.dtype, name
                assert np.array_equal(ours, theirs.to_numpy(), equal_nan=True), name
            else:
                assert list(ours) == list(theirs), name
        assert list(rows.isin("step", ["pause", "resume"])) == list(frame.step.isin(["pause", "resume"]))


def test_the_timeline_leaves_the_axes_autoscaling_as_it_found_them(ax):
    """Marks are added with autoscaling held off and the view scaled once afterwards (issue 31): the limits
    are the ones autoscaling gives, autoscaling is on again after, and limits the caller fixed stay fixed."""
    r = run("retry_walkthrough")
    plot.timeline(ax, r)
    drawn = ax.get_xlim(), ax.get_ylim()
    assert ax.get_autoscalex_on() and ax.get_autoscaley_on()
    ax.relim()
    ax.autoscale_view()
    assert (ax.get_xlim(), ax.get_ylim()) == drawn
    fig, fixed = plt.subplots()
    fixed.set_xlim(-5, 50)
    plot.timeline(fixed, r)
    assert fixed.get_xlim() == (-5, 50) and not fixed.get_autoscalex_on() and fixed.get_autoscaley_on()
    plt.close(fig)


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
    assert points(ax, "regression") == [(33.0, 3.0)]
    assert bars(ax, "paused")
    assert "next_cursor held in memory · worker paused" in legend_texts(ax)
    fig, other = plt.subplots()
    plot.timeline(other, run("shortcut_no_version_check"))
    assert points(other, "rejected") and not points(other, "regression")
    assert legend_texts(other)[0] == "resume_cursor (durable) · page barrier, rejected barrier"
    plt.close(fig)


def test_timeline_marks_duplicated_effects_of_an_unsafe_sink(ax):
    """Seed 000, "Limits and validation": without idempotency
    or transactions even safe can repeat an effect."""
    # a crash between the call and its settlement: after settlement the operation record (seed 001) knows
    r = run("retry_walkthrough", sink="unsafe",
            faults=[{"kind": "crash", "point": "after_effect", "position": 107}])
    assert r.verdict.duplicated == ["e107"]
    plot.timeline(ax, r)
    assert [y for _x, y in points(ax, "duplicated")] == [107.0]
    assert "e107 twice" in texts(ax)


def test_timeline_marks_quarantine_decisions_and_receipts(ax):
    plot.timeline(ax, run("quarantine_boundary"))
    assert [y for _x, y in points(ax, "decided")] == [211.0, 211.0]
    assert points(ax, "quarantine receipt") == [(8.0, 211.0)]
    assert [y for _x, y in points(ax, "replay")] == [210.0, 212.0]


# -- fates ---------------------------------------------------------------------------------------------------
def test_fates_say_what_happened_to_each_event_of_the_walkthrough():
    """Notebook 02: e104 was done before the run and its redelivery was recognised
    and skipped (replayed harmlessly); e105 was never delivered in this run (done
    before the run, not "applied once"); e106 was applied and replayed on the retry;
    e107 was delivered twice but applied once: its first delivery was no replay."""
    r = run("retry_walkthrough")
    assert event_fates(r.world, r.verdict) == {"e104": "replayed harmlessly", "e105": "done before the run",
                                               "e106": "replayed harmlessly", "e107": "applied once"}


def test_a_replay_before_the_outcome_is_durable_is_no_harmless_replay():
    """watermark_only_dedup skips e105 as a replay behind its watermark while e105 has no outcome: that skip
    is the loss, not a harmless replay."""
    r = run("shortcut_watermark_only_dedup", "watermark_only_dedup")
    replays = r.trace.to_frame().query("step == 'replay'")
    assert "e105" in set(replays.event_id)
    assert event_fates(r.world, r.verdict)["e105"] == "lost"


def test_every_fate_has_a_colour_and_a_place_in_the_legend_order():
    assert set(plot.FATE_COLORS) == set(simkit.judge.checker.FATES)


def test_fates_colour_one_cell_per_event(ax):
    r = run("shortcut_in_memory_quarantine", "in_memory_quarantine")
    plot.fates(ax, r)
    assert_readable(ax)
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(cells) == 5
    red = matplotlib.colors.to_rgba(plot.FATE_COLORS["lost"])
    assert sum(c.get_facecolor() == red for c in cells) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "done before the run",
        "applied once",
        "lost",
    ]


def test_fates_label_every_cell_in_a_font_fitted_to_the_cells_as_drawn():
    """gauntlet's 86 events in 20 columns (notebook 04): every cell still reads its position, e.g. the lost
    e112; when the cells are too small for any label, the x label gives the positions' range instead."""
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


# -- side by side --------------------------------------------------------------------------------------------
def test_compare_shares_both_axes_and_one_grouped_legend():
    """The two panels of notebook 02's cell 22 (safe stuck on 107, the shortcut that loses it) on one time
    scale and one position scale, with one legend under the figure listing each kind of mark once."""
    sc = simkit.load("shortcut_persist_token_on_fetch")
    runs = [simkit.simulate(sc, simkit.resolve(s)) for s in ("safe", "persist_token_on_fetch")]
    fig, axes = plt.subplots(1, 2, layout="constrained")
    plot.compare(axes, runs)
    assert axes[0].get_ylim() == axes[1].get_ylim() and axes[0].get_xlim() == axes[1].get_xlim()
    assert axes[0].get_shared_x_axes().joined(axes[0], axes[1])
    assert all(a.get_legend() is None and a.get_title() for a in axes)
    texts = legend_texts(fig)
    assert len(texts) == len(set(texts)) <= 7
    assert any("lost" in t for t in texts) and "crash" in texts
    plt.close(fig)


def test_compare_gives_a_much_shorter_run_its_own_time_scale():
    """Notebook 02's cell 39: ``safe`` stuck on 107 until the time limit (t = 199.5) beside
    the shortcut that loses it by t = 8. On one time scale the shortcut's panel would be a
    sliver with its loss's label pushed out of it; each panel keeps its own time scale and
    says so, the position scale stays shared, and the label stays inside."""
    sc = simkit.parse({
        "name": "retry_walkthrough_107_never_durable",
        "initial": {"resume_cursor": "C7", "applied_position": 105, "checkpoint_version": 1,
                    "receipts": [104, 105]},
        "pages": [{"cursor": "C7", "positions": [104, 106, 107], "next_cursor": "C8"},
                  {"cursor": "C8", "positions": [], "next_cursor": "C8"}],
        "events": [{"position": 107, "behavior": "transient", "failures": 1000}],
        "timing": {"time_limit": 200.0},
    })
    runs = [simkit.simulate(sc, simkit.resolve(s)) for s in ("safe", "persist_token_on_fetch")]
    assert runs[0].trace.time[-1] > plot.SHARE_TIME_AT_MOST * runs[1].trace.time[-1]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.6), layout="constrained")
    plot.compare(axes, runs)
    assert not axes[0].get_shared_x_axes().joined(axes[0], axes[1])
    assert axes[1].get_xlim()[1] < 10 < 199 < axes[0].get_xlim()[1]
    assert axes[0].get_ylim() == axes[1].get_ylim()
    assert all("own scale" in a.get_xlabel() for a in axes)
    fig.canvas.draw()
    box, label = axes[1].bbox, texts(axes[1])["e107 lost (worker moved on)"]
    extent = label.get_window_extent()
    assert box.x0 <= extent.x0 and extent.x1 <= box.x1
    plt.close(fig)


def test_the_figures_read_the_facts_the_judge_defines():
    """One definition of each fact: the figures' names are the judge's and
    ground truth's own functions, and an event that joins the stream late (a
    new id at a position already served, ``<=``) joins when it is served."""
    from simkit.judge import facts
    from simkit.truth import derived

    assert (plot.at_risk, plot.durable_prefix, plot.unsafe_rows, plot.terminal_times) == (
        facts.at_risk, facts.durable_prefix, facts.unsafe_rows, facts.outcome_times)
    assert (plot.held_pages, plot.cursor_history, plot.known_from, plot.Hold) == (
        derived.held_pages, derived.cursor_history, derived.joined_at, derived.Hold)
    r = run("overlap_new_identity")
    assert plot.known_from(r)["x3"] == 4.0 and plot.known_from(r)["e3"] == 0.0
    assert plot.loss_final(r) == facts.loss_final(r, r.verdict.lost)


# -- the crash matrix ----------------------------------------------------------------------------------------
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


def test_crash_matrix_diverges_worse_same_better(ax):
    """With ``better``: red by the share worse, blue (negative) by the share
    better, white when every schedule ended as the fault-free run did; any
    schedule worse makes the cell red. The colour bar names both sides."""
    import pandas as pd

    idx = ["p", "q"]
    worse = pd.DataFrame({"a": [2, 0], "b": [1, 0]}, index=idx)
    better = pd.DataFrame({"a": [0, 2], "b": [1, 0]}, index=idx)
    schedules = pd.DataFrame({"a": [2, 2], "b": [3, 0]}, index=idx)
    plot.crash_matrix(ax, worse, schedules, better=better)
    (image,) = ax.images
    assert image.get_array().filled(9).tolist() == [[1.0, pytest.approx(1 / 3)], [-1.0, 9]]
    assert image.get_clim() == (-1, 1) and image.get_cmap().name.startswith(plot.MATRIX_CMAP)
    assert sorted(t.get_text() for t in ax.texts) == ["1 worse, 1 better\nof 3", "2/2 better", "2/2 worse",
                                                      "not\nreached"]
    (bar,) = [a for a in ax.figure.axes if a is not ax]
    assert [t.get_text() for t in bar.get_yticklabels()] == [
        "all better",
        "half better",
        "same as\nfault-free",
        "half worse",
        "all worse",
    ]
    assert "red: worse, blue: better" in bar.get_ylabel()
    assert legend_texts(ax) == ["not reached\n(no schedule)"]
    with pytest.raises(ValueError, match="better needs schedules"):
        plot.crash_matrix(ax, worse, better=better)


def test_crash_matrix_of_notebook_05_shows_a_halt_that_prevented_a_loss_as_better():
    """max_position_watermark loses e2, e3 and e5 without a crash; a crash before its first barrier makes the
    retry halt on step 3's gap check with nothing lost: better, not harm. persist_token_on_fetch's crash after
    its early barrier loses the page: worse. safe: the same as its fault-free run everywhere."""
    from simkit.viz import widgets

    sc = simkit.parse({
        "name": "crash_matrix", "sink": "idempotent", "backfills": False, "initial": {"resume_cursor": "C1"},
        "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
                  {"cursor": "C2", "positions": [4, 5], "next_cursor": "C3"},
                  {"cursor": "C3", "positions": [], "next_cursor": "C3"}],
        "events": [{"position": 2, "behavior": "poison"}, {"position": 4, "behavior": "poison"}]},
                      source="test")
    fx = widgets.crash_effects(sc, ["safe", "persist_token_on_fetch", "max_position_watermark"])
    assert (fx.worse + fx.same + fx.better == fx.run).all()
    assert fx.xs("safe", level="strategy").eval("run == same").all()
    assert fx.loc[("before_page_barrier", "max_position_watermark")].to_dict() == dict(run=2, worse=0, same=0,
                                                                                       better=2)
    assert fx.loc[("after_page_barrier", "persist_token_on_fetch")].to_dict() == dict(run=2, worse=2, same=0,
                                                                                      better=0)


def sweep_table(runs):
    """A tidy sweep table (simkit.tools.sweep.COLUMNS) from
    (strategy, crash_rate, lost, duplicated) per run."""
    import pandas as pd

    from simkit.tools.sweep import COLUMNS

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
    """Bands are Wilson intervals, inside [0, 1], holding
    the estimate; 0 of 4 still has an upper bound > 0."""
    from simkit.tools.sweep import wilson

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
    # all eight coincide at 0
    labels = ["safe"] + [f"{s} (same curve as safe)" for s in list(simkit.STRATEGIES)[1:]]
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
    from simkit.tools.sweep import sweep

    result = sweep(simkit.load("default"), ("safe", "persist_token_on_fetch"), seeds=5,
                   crash_rates=(0.0, 0.05), jobs=1)
    plot.sweep_curves(ax, result.frame())
    for row in result.summary():
        x = line(ax, row["strategy"])
        assert dict(zip(x.get_xdata(), x.get_ydata()))[row["crash_rate"]] == row["loss_rate"]
        assert band(ax, row["strategy"])[row["crash_rate"]] == pytest.approx(tuple(row["loss_ci"]))


def lane_figure(scenario, **kw):
    from simkit.viz.swimlane import swimlane

    fig, ax = plt.subplots(figsize=(13, 3.6))
    swimlane(ax, simkit.simulate(simkit.load(scenario), **kw))
    fig.canvas.draw()
    return fig, ax


def gid_points(ax, gid):
    """The (x, y) points of the swimlane's scatter with this gid."""
    return sorted(tuple(map(float, p)) for c in ax.collections if c.get_gid() == gid for p in c.get_offsets())


def test_swimlane_tells_a_delayed_reply_from_a_lost_one():
    """late_response: the first call's reply (t=2) is only
    slow, it arrives at 28.8; the retry's (t=19) is lost."""
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
    """lost_barrier_reply: the CAS to C2 lands at t=3, its reply is lost; the worker waits until its timeout
    (13), then loads the checkpoint and finds C2."""
    fig, ax = lane_figure("lost_barrier_reply")
    texts = [t.get_text() for t in ax.texts]
    assert "C2 (durable), reply lost" in texts and "load: store holds C2 v1" in texts
    (wait,) = [line for line in ax.lines if line.get_gid() == "wait"]
    assert list(wait.get_xdata()) == [3.0, 13.0]
    assert [x for x, _y in gid_points(ax, "timeout")] == [13.0]
    plt.close(fig)


def test_swimlane_draws_the_wait_after_any_lost_reply_not_only_a_seed_001_call():
    """A lost effect reply of an unsafe sink writes no ``timeout`` row (World._no_reply): its wait is still
    drawn, with the timeout mark at its end and the load that follows."""
    from conftest import variant

    from simkit.viz.swimlane import swimlane

    sc = variant("shortcut_success_before_effect",
                 faults=[{"kind": "lost_response", "op": "effect", "position": 107}])
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


@pytest.mark.parametrize("scenario, policy",
                         [("misbound_response", "unfenced"), ("misbound_response", "fenced"),
                          ("late_response", "last_write_wins")])
def test_swimlane_labels_never_overlap_and_sit_on_a_box(scenario, policy):
    """Notebook 06: the settlement labels under the store lane are stacked, each on a white box, none
    overlapping, also once the caller widens the x axis."""
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
    Those drawn lie inside the Axes, none overlapping another or the note, in at most ROWS_AT_MOST rows; the
    note counts the rest."""
    from simkit.viz.swimlane import ROWS_AT_MOST, swimlane

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
    boxes = [t.get_bbox_patch().get_window_extent(renderer)
             for t in shown] + [note.get_window_extent(renderer)]
    for box in boxes:
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    rows = {round(t.xyann[1], 3) for t in shown if not t.get_text().startswith("load:")}
    assert len(rows) <= ROWS_AT_MOST
    plt.close(fig)


def test_one_key_draws_each_entry_once_for_panels_drawn_alike():
    """Notebooks 06 and 07: two runs' swimlanes had the same 13-entry key twice; ``plot.one_key`` leaves one,
    on the first panel, with every entry of both (the second run's own marks too), in the order drawn."""
    from simkit.viz import plot
    from simkit.viz.swimlane import swimlane
    sc = simkit.load("late_response")
    runs = [simkit.simulate(sc, settlement=p) for p in ("fenced", "last_write_wins")]
    fig, axes = plt.subplots(2, 1)
    try:
        for ax, run in zip(axes, runs):
            swimlane(ax, run)
        texts = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in axes]
        plot.one_key(axes)
        assert axes[1].get_legend() is None
        union = list(dict.fromkeys(texts[0] + texts[1]))
        assert [t.get_text() for t in axes[0].get_legend().get_texts()] == union
        assert len(union) < len(texts[0]) + len(texts[1])
    finally:
        plt.close(fig)
