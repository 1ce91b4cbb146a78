"""The benchmark keeps working (at a tiny size). It asserts no timing: only that every figure is there."""
import gc
import json
import weakref

import pytest

import simkit
from simkit.cli import main
from simkit.tools.explore import _run, fault_free

FIELDS = ("simpy_steps_per_s", "events_per_s", "events_per_s_faults", "ratio", "faults_ratio",
          "ratio_ceiling",
          "explore_schedules_per_s", "explore_overhead", "sweep_scaling", "cpu_scaling", "sweep_efficiency",
          "peak_rss_mb_1m", "ideal_rss_mb_1m", "checker_scaling", "explore_prefix_overhead",
          "explore_scratch_overhead", "widget_redraw_ms", "cost")


def test_bench_quick_json(capsys):
    assert main(["bench", "--quick", "--json", "--repeat", "2"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["repeat"] == 2
    for key in FIELDS:
        assert key in m, key
    assert all(m[k] > 0 for k in FIELDS if k != "cost")
    assert set(m["us_per_event"]) == {"provider", "run", "checker"} and all(
        v > 0 for v in m["us_per_event"].values()
    )
    after = m["rss_mb_1m_after"]
    assert set(after) == {"provider", "run"} and 0 < after["provider"] <= after["run"] <= m["peak_rss_mb_1m"]
    assert {r["strategy"] for r in m["cost"]} >= {"safe", "persist_token_on_fetch"}
    safe = next(r for r in m["cost"] if r["strategy"] == "safe")
    assert safe["replayed_per_crash"] <= 10  # seed 000: at most a page of replay per crash (pages of 10)


def test_peak_rss_is_the_childs_own_not_the_parents():
    """A child started by fork and exec inherits its parent's peak in
    ``ru_maxrss``: the memory figures read the child's own ``VmHWM``, so a tiny
    run measured from a parent inflated by 300 MB reads far less than that."""
    from simkit.tools.bench import own_peak_rss, peak_rss_mb
    inflated = bytearray(b"x") * (300 * 2**20)        # resident: every page written
    parent = own_peak_rss() / 2**20
    rss = peak_rss_mb(1000)
    del inflated
    assert parent > 300
    assert 0 < rss["provider"] <= rss["run"] <= rss["peak"] < parent - 200, (rss, parent)
    assert 0 < rss["ideal"] < parent - 200, (rss, parent)


def test_notebook_seconds_times_each_notebook_of_a_folder(tmp_path):
    """``--notebooks``: each notebook executed by nbclient and timed (here a one-cell notebook of its own)."""
    import nbformat

    from simkit.tools.bench import notebook_seconds
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import simkit\nx = simkit.bundled()")])
    nbformat.write(nb, tmp_path / "one.ipynb")
    seconds = notebook_seconds(str(tmp_path))
    assert list(seconds) == ["one.ipynb"] and seconds["one.ipynb"] > 0


def test_bench_refuses_zero_rounds_in_one_line(capsys):
    assert main(["bench", "--repeat", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "simkit: bench: --repeat must be at least 1, got 0\n"


@pytest.mark.parametrize("name", ["default", "late_retry", "late_response", "gauntlet"])
def test_a_finished_world_is_freed_by_reference_counting(name):
    """No cycle keeps a run's logs alive until the next full collection (which would then be charged to
    whatever runs next: a sweep, an exploration, a slider move)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        run = simkit.simulate(simkit.load(name))
        world = weakref.ref(run.world)
        del run
        assert world() is None
        explored = _run(fault_free(simkit.load(name)), "safe", 0, (), True)
        world = weakref.ref(explored[1])
        del explored
        assert world() is None
    finally:
        if was_on:
            gc.enable()
