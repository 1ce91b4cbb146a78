"""simkit sweep: N seeds per configuration, the same rows in one process, in several, or on Dask."""
import json

import pandas as pd
import pytest

import simkit
from simkit.cli import main
from simkit.tools.sweep import COLUMNS, check_out, sweep, wilson

DEFAULT = simkit.load("default")


def test_wilson_interval_matches_known_values():
    # 0 of 2000 at 95%: the upper bound is z^2 / (n + z^2), the "rule of three" region, not a point at 0
    lo, hi = wilson(0, 2000)
    assert lo == 0.0 and hi == pytest.approx(1.959964 ** 2 / (2000 + 1.959964 ** 2), rel=1e-6)
    # Brown, Cai & DasGupta (2001) style check against the closed form for 7 of 20
    lo, hi = wilson(7, 20)
    assert (round(lo, 4), round(hi, 4)) == (0.1812, 0.5671)
    assert wilson(20, 20)[1] == 1.0 and wilson(0, 0) == (0.0, 1.0)


def test_wilson_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    for k, n in ((0, 10), (3, 10), (10, 10), (17, 2000), (999, 2000)):
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_safe_loses_and_duplicates_nothing_and_rows_do_not_depend_on_jobs():
    strategies = ("safe", "persist_token_on_fetch")
    one = sweep(DEFAULT, strategies, seeds=6, jobs=1)
    two = sweep(DEFAULT, strategies, seeds=6, jobs=2)
    assert one.rows == two.rows
    assert len(one.rows) == 12 and list(one.frame().columns) == list(COLUMNS)
    assert [r["seed"] for r in one.rows] == list(range(6)) * 2
    summary = {s["strategy"]: s for s in one.summary()}
    assert (
        summary["safe"]["loss_runs"] == 0 and summary["safe"]["dup_runs"] == 0 and summary["safe"]["ok"] == 6
    )
    assert summary["persist_token_on_fetch"]["loss_runs"] > 0
    lo, hi = summary["safe"]["loss_ci"]
    assert lo == 0.0 and 0.3 < hi < 0.5


def test_crash_rate_overrides_the_scenario():
    s = sweep(DEFAULT, ("safe",), seeds=3, crash_rates=(0.0, 0.2), jobs=1)
    assert [r["crash_rate"] for r in s.rows] == [0.0] * 3 + [0.2] * 3
    assert sum(r["crashes"] for r in s.rows[:3]) == 0 < sum(r["crashes"] for r in s.rows[3:])
    assert all(r["ok"] for r in s.rows)


def test_dask_local_cluster_gives_the_same_rows():
    distributed = pytest.importorskip("distributed")
    local = sweep(DEFAULT, ("safe", "watermark_only_dedup"), seeds=4, jobs=1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        remote = sweep(DEFAULT, ("safe", "watermark_only_dedup"), seeds=4,
                       dask_address=cluster.scheduler_address)
    assert remote.rows == local.rows


def test_an_unreachable_dask_scheduler_is_one_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(simkit.SimkitError, match="cannot connect"):
        sweep(DEFAULT, ("safe",), seeds=1, dask_address="tcp://127.0.0.1:9", dask_timeout=1)


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_cli_writes_one_row_per_run(tmp_path, capsys, ext):
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"runs{ext}"
    assert main(["sweep", "default", "--strategy", "safe", "--strategy", "in_memory_quarantine", "--seeds",
                 "3", "--jobs", "1", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""                       # no progress bar under --json
    d = json.loads(captured.out)
    assert d["runs"] == 6 and [s["strategy"] for s in d["summary"]] == ["safe", "in_memory_quarantine"]
    frame = pd.read_csv(out) if ext == ".csv" else pd.read_parquet(out)
    assert len(frame) == 6 and list(frame.columns) == list(COLUMNS)
    assert frame.loc[frame.strategy == "safe", "lost"].sum() == 0


def test_cli_text_summary(capsys):
    assert main(["sweep", "retry_walkthrough", "--seeds", "2", "--strategy", "safe", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "runs losing events (95% CI)" in out and "safe" in out


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--seeds", "2", "--crash-rate", "1.5"],
                                  ["--seeds", "2", "--out", "runs.txt"],
                                  ["--seeds", "2", "--strategy", "nope"], ["--seeds", "2", "--jobs", "0"]])
def test_bad_input_is_one_line_and_status_2(argv, capsys):
    assert main(["sweep", "retry_walkthrough", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simkit: ") and err.count("\n") == 1


def test_check_out_is_the_one_rule_for_the_table_file(monkeypatch):
    check_out("runs.csv")
    check_out("RUNS.CSV")                           # the CLI accepts any case; so does write()
    with pytest.raises(simkit.SimkitError,
                       match=r"^path runs.txt: unknown format '.txt'; use .csv, .parquet$"):
        check_out("runs.txt")
    monkeypatch.setattr(simkit.tools.sweep, "find_spec", lambda name: None)
    with pytest.raises(simkit.SimkitError, match=r"^path r.parquet: writing Parquet needs pyarrow"):
        check_out("r.parquet")


def test_cli_writes_an_upper_case_extension(tmp_path, capsys):
    out = tmp_path / "RUNS.CSV"
    assert main(["sweep", "retry_walkthrough", "--strategy", "safe", "--seeds", "2", "--jobs", "1",
                 "--out", str(out)]) == 0
    assert len(pd.read_csv(out)) == 2 and [p.name for p in tmp_path.iterdir()] == ["RUNS.CSV"]


@pytest.mark.parametrize("kwargs, message", [({"seeds": 0}, "seeds 0: must be at least 1"),
                                             ({"jobs": 0}, "jobs 0: must be at least 1"),
                                             ({"crash_rates": (1.5,)},
                                              "crash_rates 1.5: must be between 0 and 1")])
def test_the_library_checks_bounds_naming_its_parameters(kwargs, message):
    """The command line says the flag instead (--seeds, --jobs, --crash-rate: simkit.cli.output.FLAGS)."""
    with pytest.raises(simkit.SimkitError, match=f"^{message}$") as e:
        sweep(DEFAULT, ("safe",), **{"seeds": 1, **kwargs})
    assert e.value.param == message.split()[0]
