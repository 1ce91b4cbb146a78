"""What an installed simkit reads at run time ships with it, and what needs an optional extra says so first.

The sweeps behind notebook 08 and the workshop's answers are package data (``simkit/workshop/data/sweeps``;
the checkout's ``data/sweeps`` links to them). A command that needs an optional dependency it does not have
(``bench --notebooks``: nbclient; ``sweep --dask``: dask.distributed; ``sweep --out x.parquet``: pyarrow) says
so in one line, exit 2, before any run.
"""
import tomllib
from importlib.util import find_spec
from pathlib import Path

import pytest

import simkit
from simkit.cli import commands, main
from simkit.workshop import SWEEPS, check_prediction

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_sweeps_are_package_data_and_the_old_path_still_reads_them():
    package = Path(simkit.__file__).resolve().parent
    assert SWEEPS.is_relative_to(package), SWEEPS
    names = {p.name for p in SWEEPS.iterdir()}
    assert {"crash_only_crash_rates.csv", "gauntlet_crash_rates.csv", "crash_only.toml"} <= names
    assert (ROOT / "data" / "sweeps").resolve() == SWEEPS.resolve()     # notebooks/08 reads ../data/sweeps
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["simkit.workshop"]
    assert "data/sweeps/*.csv" in patterns and "data/sweeps/*.toml" in patterns


def test_a_workshop_answer_reads_the_packaged_sweeps():
    assert check_prediction("zero_of_200", 1.9)
    assert not check_prediction("zero_of_200", 5)


def _missing(*modules):
    return lambda name: None if name in modules else find_spec(name)


class _NoWork:
    """Stands in for a tool module: any call is work done before the check."""

    def __init__(self, file: str = commands.bench.__file__):
        self.__file__ = file

    def __getattr__(self, name):
        raise AssertionError(f"work started ({name}) before the missing extra was named")


def _one_line_exit_2(capsys, argv) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    return err


def test_bench_notebooks_without_nbclient_says_so_before_any_work(monkeypatch, capsys):
    monkeypatch.setattr(commands, "find_spec", _missing("nbclient"))
    monkeypatch.setattr(commands, "bench", _NoWork())
    err = _one_line_exit_2(capsys, ["bench", "--quick", "--notebooks"])
    assert err.startswith("simkit: --notebooks needs nbclient: pip install nbclient"), err


def test_bench_notebooks_from_a_wheel_says_the_notebooks_are_a_checkouts(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(commands, "bench",
                        _NoWork(str(tmp_path / "site-packages" / "simkit" / "tools" / "b.py")))
    err = _one_line_exit_2(capsys, ["bench", "--quick", "--notebooks"])
    assert "--notebooks times the notebooks of a simkit checkout" in err


def test_sweep_dask_without_distributed_says_so_before_any_run(monkeypatch, capsys):
    monkeypatch.setattr(commands, "find_spec", _missing("distributed"))
    monkeypatch.setattr(commands.sweeps, "sweep", _NoWork())
    err = _one_line_exit_2(capsys, ["sweep", "retry_walkthrough", "--seeds", "2", "--dask",
                                    "tcp://127.0.0.1:1"])
    assert "--dask needs distributed: pip install 'simkit[dask]'" in err


def test_sweep_parquet_without_an_engine_says_so_before_any_run(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(commands.sweeps, "find_spec", _missing("pyarrow", "fastparquet"))
    monkeypatch.setattr(commands.sweeps, "sweep", _NoWork())
    err = _one_line_exit_2(capsys, ["sweep", "retry_walkthrough", "--seeds", "2", "--out",
                                    str(tmp_path / "x.parquet")])
    assert "needs pyarrow (pip install 'simkit[parquet]')" in err


@pytest.mark.parametrize("extra", ["workshop", "test"])
def test_extras(extra):
    """``[workshop]``: what an attendee runs the notebooks with, nothing of the test tooling; ``[test]`` has
    scipy, so the test that compares Wilson intervals with scipy's runs rather than skips."""
    names = {r.split(">")[0].split("[")[0].split("=")[0].strip()
             for r in PYPROJECT["project"]["optional-dependencies"][extra]}
    if extra == "workshop":
        assert names == {"jupyterlab", "ipykernel", "ipywidgets"}
    else:
        assert "scipy" in names
