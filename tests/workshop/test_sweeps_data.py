"""The precomputed sweeps of notebook 08 (``simkit/workshop/data/sweeps/``) against the strategies simkit
declares.

Notebook 08 goes on without a strategy its files predate (it says which); this test does not: a shortcut added
to ``simkit.procedure.shortcuts.DECLARED`` fails here until each file is regenerated with the command its
README gives.
"""
import csv
import re

import pytest

import simkit
from simkit.procedure.shortcuts import DECLARED
from simkit.tools.sweep import COLUMNS
from simkit.workshop import SWEEPS

FILES = sorted(p.name for p in SWEEPS.glob("*_crash_rates.csv"))


def commands() -> dict[str, str]:
    """Each file the README's table lists -> the command that regenerates it, run from the repository root."""
    rows = re.findall(r"^\| `([^`]+\.csv)` \|.*\| `(simkit sweep [^`]+)` \|$",
                      (SWEEPS / "README.md").read_text(encoding="utf-8"), re.MULTILINE)
    return dict(rows)


def read(name: str) -> tuple[list[str], set[str]]:
    """A file's columns and the strategies it has runs of."""
    with open(SWEEPS / name, newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f)
        return list(rows.fieldnames or ()), {row["strategy"] for row in rows}


def out_of_date(name: str, why: str) -> str:
    return (f"simkit/workshop/data/sweeps/{name} is out of date: {why}. Regenerate it from the repository "
            f"root with\n\n    {commands()[name]}\n\nthen update the counts in "
             "simkit/workshop/data/sweeps/README.md and check notebook 08's claims (pytest "
             "notebooks/08_sweeps.ipynb).")


def test_the_readme_gives_the_command_that_writes_each_file():
    assert FILES and sorted(commands()) == FILES
    assert all(cmd.endswith(f"--out simkit/workshop/data/sweeps/{name}") for name, cmd in commands().items())


@pytest.mark.parametrize("name", FILES)
def test_each_file_has_the_runs_of_every_declared_strategy_and_no_other(name):
    swept, declared = read(name)[1], ["safe", *DECLARED]
    assert declared == list(simkit.STRATEGIES)
    missing, unknown = [s for s in declared if s not in swept], sorted(swept - set(declared))
    assert not missing and not unknown, out_of_date(name, "; ".join(
        f"{what} {', '.join(names)}" for what, names in (("no runs of", missing),
                                                         ("runs of unknown", unknown))
        if names))


@pytest.mark.parametrize("name", FILES)
def test_each_file_has_the_columns_simkit_sweep_writes(name):
    """In any order: notebook 08 compares its live re-run with the file column by name."""
    columns = read(name)[0]
    assert sorted(columns) == sorted(COLUMNS), out_of_date(name, f"its columns are {columns}, simkit sweep "
                                                                 f"writes {list(COLUMNS)}")
