"""The notebook widgets, driven programmatically: set a control's ``.value``, read the run it drew."""
import matplotlib

matplotlib.use("Agg")
import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from simkit import SHORTCUTS  # noqa: E402
from simkit.procedure.shortcuts import scenario_of  # noqa: E402
from simkit.viz import widgets  # noqa: E402


@pytest.fixture(scope="module")
def explorer():
    return widgets.explorer()


def test_explorer_starts_on_safe_with_one_crash_and_draws_it(explorer):
    assert isinstance(explorer, ipywidgets.VBox) and isinstance(explorer.output, ipywidgets.Output)
    r = explorer.run
    assert (r.strategy, r.seed, r.world.crashes) == ("safe", 7, 1)
    assert r.verdict.ok
    assert "crash: before_event_commit at e70" in widgets.crash_note(r)
    assert plt.get_fignums() == []          # drawn, displayed, closed


def test_explorer_redraws_when_the_strategy_changes(explorer):
    explorer.controls["strategy"].value = "persist_token_on_fetch"
    try:
        assert explorer.run.strategy == "persist_token_on_fetch"
        assert not explorer.run.verdict.ok and explorer.run.verdict.lost
    finally:
        explorer.controls["strategy"].value = "safe"
    assert explorer.run.strategy == "safe" and explorer.run.verdict.ok


def test_explorer_stream_controls_reach_the_scenario(explorer):
    c = explorer.controls
    c["page_size"].value = 8
    c["backfill"].value = 0.0
    c["overlap"].value = 0.0
    sc = explorer.run.world.scenario
    assert sc.generate["page_size"] == 8 and sc.generate["overlap"] == 0.0
    assert sc.backfills is False          # the provider contract follows the backfill rate
    c["seed"].value = 11
    assert explorer.run.seed == 11
    for key in ("page_size", "backfill", "overlap", "seed"):
        c[key].value = widgets.EXPLORER_DEFAULTS[key]


def test_explorer_crash_position_applies_only_to_event_points(explorer):
    c = explorer.controls
    c["crash_point"].value = "before_page_barrier"
    assert c["crash_position"].disabled
    assert explorer.run.world.crashes == 1
    assert "crash: before_page_barrier" in widgets.crash_note(explorer.run)
    c["crash_point"].value = widgets.NO_CRASH
    assert c["occurrence"].disabled and explorer.run.world.crashes == 0
    c["crash_point"].value = "before_event_commit"
    assert not c["crash_position"].disabled


def test_explorer_unsafe_sink_shows_the_seeds_limit(explorer):
    """With an unsafe sink a crash between effect and receipt repeats the effect even for safe."""
    c = explorer.controls
    c["sink"].value = "unsafe"
    c["crash_point"].value = "after_effect"
    try:
        assert explorer.run.verdict.duplicated == ["e70"]
    finally:
        c["crash_point"].value = "before_event_commit"
        c["sink"].value = "idempotent"


def test_crash_note_says_when_the_point_is_never_reached():
    r = widgets.explorer_run(sink="transactional", crash_point="before_effect")
    assert r.world.crashes == 0
    assert "never reached" in widgets.crash_note(r)


def test_crash_fault_and_its_command_line_spelling():
    assert widgets.crash_fault(widgets.NO_CRASH, 70) == ()
    (f,) = widgets.crash_fault("after_fetch", 70, 2)
    assert (f.point, f.position, f.occurrence) == ("after_fetch", None, 2)
    assert widgets.crash_arg("before_event_commit", 70) == "before_event_commit@70"
    assert widgets.crash_arg("after_page_barrier", 70, 3) == "after_page_barrier#3"


def test_comparison_starts_on_the_first_shortcut_and_its_own_scenario():
    w = widgets.comparison()
    safe, other = w.runs
    assert (safe.strategy, other.strategy) == ("safe", SHORTCUTS[0])
    assert safe.scenario == other.scenario == scenario_of(SHORTCUTS[0])
    assert safe.verdict.ok and other.verdict.lost == ["e107"]


def test_comparison_follows_the_shortcut_scenario_and_seed(monkeypatch):
    w = widgets.comparison()
    calls = []
    real = widgets.comparison_runs
    # in the widget's own module, where its class finds the name
    monkeypatch.setattr("simkit.viz.comparison.comparison_runs", lambda *a: calls.append(a) or real(*a))
    w.controls["shortcut"].value = "in_memory_quarantine"
    assert w.runs[1].verdict.lost == ["e211", "e212"] and w.runs[0].verdict.ok
    w.controls["scenario"].value = "gauntlet"
    assert w.controls["seed"].value == 3 and w.runs[1].scenario == "gauntlet"
    w.controls["seed"].value = 4
    assert w.runs[0].seed == w.runs[1].seed == 4
    assert calls == [("in_memory_quarantine", widgets.OWN_SCENARIO, 0),
                     ("in_memory_quarantine", "gauntlet", 3),
                     ("in_memory_quarantine", "gauntlet", 4)]       # one run per change, none twice


def test_verdict_frame_has_one_row_per_strategy():
    df = widgets.verdict_frame(widgets.comparison_runs("persist_token_on_fetch"))
    assert list(df.index) == ["safe", "persist_token_on_fetch"]
    assert df.loc["persist_token_on_fetch", "lost"] == "e107"
    assert df.loc["safe", "final checkpoint"] == "C8 / 107 / v2"


def test_explorer_takes_your_own_consumer():
    from simkit import Consumer

    class TrustTheWatermark(Consumer):
        def is_replay(self, event, receipts, applied_position):
            return event.position <= applied_position

    e = widgets.explorer(strategies={"mine": TrustTheWatermark}, strategy="mine", backfill=0.3)
    assert e.run.strategy == "TrustTheWatermark" and e.run.verdict.lost      # backfills behind the watermark
    e.controls["strategy"].value = "safe"
    assert e.run.strategy == "safe" and e.run.verdict.ok


def test_single_crashes_are_the_schedules_explore_runs():
    """One crash at each crash-point pass of the fault-free
    run: as many, per point, as explore(max_crashes=1)."""
    import simkit
    from simkit.tools.explore import explore

    sc = simkit.load("quarantine_boundary")
    faults = widgets.single_crashes(sc, "safe")
    for point in simkit.CRASH_POINTS:
        x = explore(sc, "safe", max_crashes=1, points=(point,))
        ran = x.by_faults[1] if len(x.by_faults) > 1 else 0
        assert ran == sum(f.point == point for f in faults), point


def test_crash_effect_puts_safety_before_liveness():
    """A crash that adds a lost event is worse; one whose retry halts before the loss the fault-free run had
    is better although the unjustified halt leaves the run incomplete; the same harms are the same."""
    from simkit.judge.checker import Verdict

    lost = Verdict(lost=["e2"], invariant_violations=[{"invariant": 1}, {"invariant": 2}])
    halted = Verdict(invariant_violations=[{"invariant": 2}], halted="gap: e2", halt_justified=False,
                     completed=False)
    assert widgets.crash_effect(lost, halted) == "better"
    assert widgets.crash_effect(halted, lost) == "worse"
    assert widgets.crash_effect(lost, Verdict(lost=["e2"], invariant_violations=[{"invariant": 1},
                                                                                {"invariant": 2}])) == "same"
    assert widgets.crash_effect(Verdict(), Verdict(completed=False)) == "worse"
    assert widgets.crash_effect(Verdict(regressions=1), Verdict(regressions=2)) == "worse"


def test_explorer_crash_mark_sits_at_the_event_its_label_names(explorer):
    """The explorer's crash before e70's commit: the mark at position 70 (not on applied_position, 60),
    labelled with e70, and crash_note names the same event and position."""
    from matplotlib.collections import PathCollection

    from simkit.viz import plot

    fig, ax = plt.subplots()
    plot.timeline(ax, explorer.run)
    (crash,) = [c for c in ax.collections if isinstance(c, PathCollection) and c.get_gid() == "crash"]
    ((_x, y),) = crash.get_offsets()
    assert y == 70.0 and explorer.run.trace.applied_position[explorer.run.trace.step.index("crash")] == 60
    assert "crash before_event_commit at e70" in [t.get_text() for t in ax.texts]
    assert "at e70 (position 70)" in widgets.crash_note(explorer.run)
    plt.close(fig)


# -- the step-through ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stepper():
    return widgets.stepper()


def test_stepped_run_is_the_plain_run_row_for_row():
    import simkit

    for strategy in ("safe", "persist_token_on_fetch"):
        stepped = widgets.stepped_run("retry_walkthrough", strategy)
        plain = simkit.simulate(simkit.load("retry_walkthrough"), simkit.resolve(strategy))
        assert stepped.run.trace.digest() == plain.trace.digest() and stepped.run.verdict == plain.verdict
    gauntlet = widgets.stepped_run("gauntlet", "safe")          # two workers, random faults
    assert gauntlet.run.trace.digest() == simkit.simulate(simkit.load("gauntlet")).trace.digest()


def test_stepper_shows_memory_beside_durable_state_at_each_instant(stepper):
    """Seed 000's walkthrough, step by step: after the commit of 106 the worker holds page C7 with C8 in
    memory and is at e106, while the durable checkpoint says C7 / 106; after the crash its memory is empty and
    the durable state unchanged; after the barrier the checkpoint holds C8."""
    slider = stepper.controls["row"]
    assert (slider.min, slider.max, slider.value) == (0, 14, 0)
    slider.value = 3
    s = stepper.instant
    assert (s.row, s.time, s.resume_cursor, s.applied_position) == (3, 1.5, "C7", 106)
    (w,) = s.workers
    assert (w.page.cursor, w.page.next_cursor, w.page.ids, w.at) == (
        "C7",
        "C8",
        ("e104", "e106", "e107"),
        "e106",
    )
    assert w.done == {"e104": "replay", "e106": "commit"} and w.attempt == ("C7", 1)
    assert s.receipts == {"e104": "applied", "e105": "applied", "e106": "applied"}
    slider.value = 4
    (w,) = stepper.instant.workers
    assert w.page is None and w.status == "crashed: its memory is gone"
    assert (stepper.instant.resume_cursor, stepper.instant.applied_position) == ("C7", 106)
    slider.value = 11
    assert stepper.instant.resume_cursor == "C8" and stepper.instant.checkpoint_version == 2
    assert plt.get_fignums() == []


def test_the_stepper_steps_through_any_strategy():
    """Its menu picks the strategy: the run is that strategy's on the same
    scenario, the slider spans its rows, and a crash shown for the last
    strategy is cleared; a class of your own stays in the menu by its name."""
    import simkit

    w = widgets.stepper()
    assert w.controls["strategy"].value == "safe" and set(simkit.STRATEGIES) <= set(
        w.controls["strategy"].options
    )
    w.controls["row"].value = 11
    w.button.click()
    w.controls["strategy"].value = "persist_token_on_fetch"
    assert w.stepped.run.strategy == "persist_token_on_fetch" and w.changes is None
    assert w.controls["row"].max == len(w.stepped.run.trace) - 1 and w.instant.row == w.controls["row"].value
    w.controls["row"].value = 2
    w.button.click()
    assert w.rerun.verdict.lost == ["e106", "e107"]
    own = widgets.stepper(strategy=simkit.resolve("safe"))
    assert own.controls["strategy"].value in own.controls["strategy"].options
    assert plt.get_fignums() == []


def test_crash_here_reruns_with_a_crash_at_the_next_pass_and_names_the_events_that_change_fate():
    """persist_token_on_fetch: after its early barrier (row 2) the next pass is after_page_barrier; a crash
    there loses e106 as well as e107. For safe, a crash anywhere leaves the run ok: at most an event applied
    once becomes one replayed harmlessly (a crash after 107's commit: the retry recognises it)."""
    w = widgets.stepper(strategy="persist_token_on_fetch")
    w.controls["row"].value = 2
    w.button.click()
    assert (w.fault.point, w.fault.position, w.fault.occurrence) == ("after_page_barrier", None, 1)
    assert w.rerun.verdict.lost == ["e106", "e107"]
    assert list(w.changes.event_id) == ["e104", "e106"]
    assert dict(zip(w.changes.event_id, w.changes.after)) == {"e104": "done before the run", "e106": "lost"}
    safe = widgets.stepped_run()
    harmless = {"applied once", "replayed harmlessly", "done before the run"}
    changed = set()
    for row in range(len(safe.run.trace)):
        fault, rerun = widgets.crash_rerun(safe, row)
        if fault is not None:
            changes = widgets.fate_changes(safe.run, rerun)
            assert rerun.verdict.ok and set(changes.after) <= harmless, row
            changed |= {(e, a) for e, a in zip(changes.event_id, changes.after)}
    assert changed == {("e107", "replayed harmlessly")}


def test_crash_here_names_the_crash_the_command_line_would_take():
    stepped = widgets.stepped_run()
    assert [widgets.fault_arg(f) for _rows, f in stepped.passes][:5] == [
        "after_fetch", "before_event_commit@106", "after_event_commit@106", "before_event_commit@107",
        "after_fetch#2"]
    assert widgets.crash_after(stepped, 3).point == "after_event_commit"
    assert widgets.crash_after(stepped, len(stepped.run.trace) - 1) is None
    assert "no crash point is passed" in widgets.instant_note(stepped, len(stepped.run.trace) - 1)


def test_instant_draws_a_window_of_a_long_stream(ax=None):
    """gauntlet's 86 events: the instant shows at most WINDOW of
    them, around the page in hand, one memory row per worker."""
    from simkit.viz import plot

    r = widgets.stepped_run("gauntlet", "persist_token_on_fetch").run
    fig, ax = plt.subplots()
    plot.instant(ax, r, 60)
    state = plot.instant_state(r, 60)
    assert len(state.workers) == 2 and all(w.page is not None for w in state.workers)
    assert f"{plot.WINDOW} of 86" in ax.get_xlabel()
    labels = [t.get_text() for t in ax.texts]
    assert any(t.startswith("worker 1 memory") for t in labels) and any(
        t.startswith("worker 2 memory") for t in labels
    )
    with pytest.raises(IndexError, match="the trace has rows 0 to"):
        plot.instant_state(r, len(r.trace))
    plt.close(fig)


def test_a_redrawn_canvas_gives_the_pixels_of_a_new_figure():
    """The explorer redraws one figure in place (issue 19): its Axes laid out once and emptied for each run, a
    legend drawn before blitted. After other runs, the picture of a run is exactly the one a new figure with
    its Axes at the same places gives."""
    import numpy as np

    from simkit.viz.explorer import run_canvas
    from simkit.viz.show import draw_run

    a, b = widgets.explorer_run(seed=8), widgets.explorer_run(strategy="persist_token_on_fetch", seed=9)
    reused = run_canvas()
    for run in (a, b, a):                           # a's legends the last time: blitted
        reused.render(lambda axes, run=run: draw_run(axes, run))
    assert np.array_equal(new_figure_pixels(reused, a), np.asarray(reused.canvas.buffer_rgba()))


def new_figure_pixels(canvas, run):
    """The pixels of ``run`` drawn by ``draw_run`` on a new figure of ``canvas``'s size, its Axes where the
    canvas's are."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from simkit.viz.show import draw_run, run_axes

    fig = Figure(figsize=canvas.figure.get_size_inches())
    axes = run_axes(fig)
    for ax, placed in zip(axes, canvas.axes):
        ax.set_position(placed.get_position(original=True))
    draw_run(axes, run)
    new = FigureCanvasAgg(fig)
    new.draw()
    return np.asarray(new.buffer_rgba())


def test_the_explorer_draws_the_pixels_of_a_new_figure_without_making_a_legend_it_pastes():
    """Issue 31: on the explorer's canvas a timeline legend rendered before is
    pasted, not made again; the pixels are still those of a new figure, and so
    is the PNG the widget displays (cut to what was drawn, white around)."""
    import io

    import numpy as np
    from PIL import Image

    from simkit.viz.explorer import _draw_run, run_canvas

    a, b = widgets.explorer_run(seed=12), widgets.explorer_run(seed=13)
    canvas = run_canvas()
    canvas.render(lambda axes: _draw_run(canvas, axes, a))
    assert canvas.axes[0].get_legend() is not None                  # its first time: made
    canvas.render(lambda axes: _draw_run(canvas, axes, b))
    picture = canvas.render(lambda axes: _draw_run(canvas, axes, a))
    assert canvas.axes[0].get_legend() is None and canvas._pasted   # the same texts: pasted
    expected = new_figure_pixels(canvas, a)
    assert np.array_equal(expected, np.asarray(canvas.canvas.buffer_rgba()))
    shown = np.asarray(Image.open(io.BytesIO(picture)).convert("RGB"))
    ink = np.argwhere((expected[..., :3] != 255).any(axis=-1))
    (y0, x0), (y1, x1), pad = ink.min(axis=0) - 10, ink.max(axis=0) + 11, 10       # 0.1 inch at 100 dpi
    framed = np.full((y1 - y0, x1 - x0, 3), 255, np.uint8)
    top, left = max(y0, 0), max(x0, 0)
    framed[top - y0:, left - x0:][:min(y1, expected.shape[0]) - top, :min(x1, expected.shape[1]) - left] = \
        expected[top:y1, left:x1, :3]
    assert pad and np.array_equal(shown, framed)


def test_kept_glyphs_draw_the_pixels_matplotlib_draws():
    """The explorer's renderer pastes kept glyph bitmaps and text layouts (issue 31): texts of every size,
    weight, angle, alignment and subpixel place, mathtext and unantialiased text, drawn twice and moved by
    fractions of a pixel in between, give exactly the pixels of Agg drawing them anew."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from simkit.viz.canvas import GlyphCachingCanvas

    fig = Figure(figsize=(6, 4), dpi=100)
    ax = fig.subplots()
    texts = [ax.text(0.1 + 0.037 * i, 0.1 + 0.081 * i, f"e{10 * i} lost · ég", fontsize=6 + i, rotation=angle,
                     weight="bold" if i % 2 else "normal", ha=("left", "center", "right")[i % 3])
             for i, angle in enumerate([0, 90, 30, 0, 270, 0, 45, 0])]
    texts.append(ax.text(0.5, 0.5, r"$\alpha_{i}^2$ and text", fontsize=11))
    texts.append(ax.text(0.3, 0.9, "not antialiased", antialiased=False))
    ax.set_title("a title\non two lines")
    cached = GlyphCachingCanvas(fig)
    for shift in (0.0, 0.0, 0.0013, 0.0029, 0.0):
        for t in texts:
            x, y = t.get_position()
            t.set_position((x + shift, y + shift / 2))
        cached.draw()
        kept = np.asarray(cached.buffer_rgba()).copy()
        fresh = FigureCanvasAgg(fig)
        fresh.draw()
        assert np.array_equal(kept, np.asarray(fresh.buffer_rgba())), shift
        fig.set_canvas(cached)
    assert cached.get_renderer()._glyphs                             # the cache was used


def test_rgb_png_is_the_pixels_losslessly():
    import io

    import numpy as np
    from PIL import Image

    from simkit.viz.canvas import rgb_png

    rng = np.random.default_rng(31)
    for shape in [(1, 1, 3), (7, 13, 3), (120, 90, 3)]:
        pixels = rng.integers(0, 256, shape, dtype=np.uint8)
        image = Image.open(io.BytesIO(rgb_png(pixels)))
        assert image.mode == "RGB" and np.array_equal(np.asarray(image), pixels)


def test_the_explorer_displays_the_verdict_note_and_figure_together_once_drawn(monkeypatch):
    """Issue 31: a change's verdict, note and figure are displayed after the figure is drawn, not the verdict
    first and the figure a redraw later (the output would sit without its figure meanwhile)."""
    from simkit.viz import explorer as module
    from simkit.viz.canvas import Canvas

    e = widgets.explorer()
    order: list[str] = []
    render = Canvas.render
    monkeypatch.setattr(Canvas, "render", lambda self, draw: (order.append("drawn"), render(self, draw))[1])
    monkeypatch.setattr(module, "run_tables", lambda *a, **k: order.append("verdict and note"))
    monkeypatch.setattr(module, "display_png", lambda *a, **k: order.append("figure"))
    e.controls["seed"].value = 8
    assert order == ["drawn", "verdict and note", "figure"]


def test_the_explorer_canvas_has_room_for_the_widest_legends():
    """Laid out once, the explorer's figure holds the legends of every mark and every fate, uncut."""
    from simkit.viz.explorer import run_canvas
    from simkit.viz.show import draw_run, widest_legends

    canvas, run = run_canvas(), widgets.explorer_run()
    canvas.render(lambda axes: (draw_run(axes, run), widest_legends(axes)))
    whole = canvas.figure.bbox
    for ax in canvas.axes:
        box = ax.get_legend().get_window_extent()
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0 and box.y1 <= whole.y1


def test_the_explorer_reruns_and_redraws_only_what_changed():
    """Back to a setting drawn before: no new run, no new figure; another position for a crash never reached:
    the same run, so the same figure."""
    w = widgets.explorer(crash_point="before_quarantine_receipt", crash_position=10)   # not a poison event
    first = w.run
    w.controls["seed"].value = 8
    w.controls["seed"].value = 7
    assert w.run is first and len(w._figures) == 2
    w.controls["crash_position"].value = 20                                         # nor is this one
    assert w.run is not first and w.run.trace.digest() == first.trace.digest()
    assert len(w._figures) == 2


def test_redraw_ms_times_the_explorer():
    assert widgets.redraw_ms(1) > 0
    with pytest.raises(ValueError, match="at least one"):
        widgets.redraw_ms(0)
