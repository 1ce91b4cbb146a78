"""What a user installs: the wheel holds every file of the package, above all the bundled scenarios that
``simkit.load(NAME)``, ``simkit list`` and ``simkit demo`` read at run time (package data, pyproject.toml).

The wheel is built with ``pip wheel --no-deps`` from a copy of the checkout: pip builds in the source tree, and
an in-tree build would leave ``build/`` in the shared checkout, where a stale ``build/lib`` can carry files that
no longer exist into the wheel. `.ci/run` installs the wheel in a clean venv and runs the CLI from it; this test
only reads the zip (no venv, no dependencies installed).
"""
import shutil
import subprocess
import sys
import zipfile
from importlib.resources import files
from pathlib import Path

import simkit
from simkit.scenario.read import SCENARIO_DIR

ROOT = Path(__file__).resolve().parents[2]
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "*.pyc", ".hypothesis",
                                    ".ipynb_checkpoints", ".benchmarks", "artifacts")


def build_wheel(tmp_path: Path) -> Path:
    src, out = tmp_path / "src", tmp_path / "wheel"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("simkit-*.whl")
    return wheel


def package_files() -> dict[str, bytes]:
    """Every file of the installed package (modules and data), by its name in a wheel: ``simkit/...``."""
    root = Path(str(files("simkit")))
    return {f"simkit/{p.relative_to(root).as_posix()}": p.read_bytes() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def test_the_wheel_holds_the_bundled_scenarios_and_every_file_the_package_reads(tmp_path):
    with zipfile.ZipFile(build_wheel(tmp_path)) as wheel:
        names = set(wheel.namelist())
        scenarios = {f"simkit/scenario/bundled/{name}.toml" for name in simkit.bundled()}
        assert "simkit/scenario/bundled/gauntlet.toml" in scenarios and len(scenarios) > 10
        assert scenarios <= names, f"bundled scenarios missing from the wheel: {sorted(scenarios - names)}"
        for name in scenarios:
            assert wheel.read(name) == (SCENARIO_DIR / name.rsplit("/", 1)[1]).read_bytes(), name
        # Any other file in the package folder (a module of an undeclared subpackage, a data file without a
        # package-data entry) would be missing from an installed simkit, though the checkout runs fine.
        missing = sorted(set(package_files()) - names)
        assert not missing, f"in the package folder but not in the wheel: {missing}"
