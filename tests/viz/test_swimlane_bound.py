"""Issue 32: a swimlane of a 20,000-event stream drew an artist per trace row, its memory and time growing
with the run. Above :data:`simkit.viz.swimlane.TRACE_ROWS_AT_MOST` (2,000) trace rows it is refused: by
``swimlane()`` with a ``ValueError``, by ``simkit run --swimlane`` with one line naming the flag and the
limit, exit 2, nothing written (not even ``--timeline``'s figure)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import simkit  # noqa: E402
from simkit.cli import main  # noqa: E402
from simkit.viz import swimlane as lanes  # noqa: E402

LIMIT = 2000                                                     # docs/cli.md, --swimlane


@pytest.fixture(scope="module")
def long_stream(tmp_path_factory):
    path = tmp_path_factory.mktemp("long") / "long.toml"
    path.write_text("[generate]\nevents = 20000\n")
    return path


def test_simkit_run_refuses_a_swimlane_longer_than_the_limit_in_one_line(long_stream, tmp_path, capsys):
    lane, line = tmp_path / "lane.png", tmp_path / "line.png"
    assert main(["run", str(long_stream), "--swimlane", str(lane), "--timeline", str(line)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("simkit: --swimlane ") and f"at most {LIMIT}" in captured.err
    assert not lane.exists() and not line.exists() and list(tmp_path.iterdir()) == []


def test_swimlane_refuses_a_run_longer_than_the_limit(long_stream):
    run = simkit.simulate(simkit.load(str(long_stream)))
    assert lanes.TRACE_ROWS_AT_MOST == LIMIT < len(run.trace)
    fig, ax = plt.subplots()
    try:
        with pytest.raises(ValueError, match=f"at most {LIMIT}"):
            lanes.swimlane(ax, run)
        assert len(ax.lines) == 0
    finally:
        plt.close(fig)


def test_a_bundled_swimlane_is_within_the_limit(tmp_path, capsys):
    lane = tmp_path / "lane.png"
    assert main(["run", "transient_storm", "--swimlane", str(lane)]) == 0
    assert lane.stat().st_size > 0
