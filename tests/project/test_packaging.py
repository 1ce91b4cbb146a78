"""What a user installs: the wheel holds every file of the package, above all the bundled scenarios that
``simkit.load(NAME)``, ``simkit list`` and ``simkit demo`` read at run time (package data, pyproject.toml).

The wheel is built with ``pip wheel --no-deps`` from a copy of the checkout: pip builds in the source tree,
and an in-tree build would leave ``build/`` in the shared checkout, where a stale ``build/lib`` can carry
files that no longer exist into the wheel. `.ci/run` installs the wheel in a clean venv and runs the CLI from
it; this test only reads the zip (no venv, no dependencies installed).
"""
import email
import shutil
import subprocess
import sys
import zipfile
from importlib.resources import files
from pathlib import Path

import pytest

import simkit
from simkit.scenario.read import SCENARIO_DIR

ROOT = Path(__file__).resolve().parents[2]
#: Not source, and written while the suite runs: test_lint's mypy writes .mypy_cache on another xdist worker
#: while this copies the tree (a file gone between listing and copying fails the copy).
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "*.pyc", ".hypothesis",
                                    ".ipynb_checkpoints", ".benchmarks", "artifacts", ".mypy_cache",
                                    ".ruff_cache", ".pytest_cache")


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


@pytest.fixture(scope="module")
def wheel_path(tmp_path_factory) -> Path:
    """The wheel, built once for this module's tests."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_holds_the_bundled_scenarios_and_every_file_the_package_reads(wheel_path):
    with zipfile.ZipFile(wheel_path) as wheel:
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


def test_the_wheel_says_its_licence_authors_and_version(wheel_path):
    """Metadata someone adopting simkit at work checks first: the licence (and its text), who maintains it,
    what it is for, and the version ``simkit.__version__`` reports."""
    with zipfile.ZipFile(wheel_path) as wheel:
        (meta_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        meta = email.message_from_bytes(wheel.read(meta_name))
        licences = [n for n in wheel.namelist() if n.endswith("/LICENSE")]
        assert licences, "no LICENSE in the wheel"
        assert b"MIT License" in wheel.read(licences[0])
    assert meta["License-Expression"] == "MIT"
    assert meta["Author"] == "simkit maintainers"
    assert meta["Version"] == simkit.__version__
    assert meta["Keywords"] and len(meta.get_all("Classifier")) >= 10
    assert "License :: " not in " ".join(meta.get_all("Classifier"))    # PEP 639: the expression alone


def test_version_comes_from_the_installed_metadata():
    from importlib.metadata import version
    assert simkit.__version__ == version("simkit")
    done = subprocess.run([sys.executable, "-m", "simkit", "--version"], capture_output=True, text=True)
    assert done.stdout.strip() == f"simkit {simkit.__version__}"


def test_changelog_names_this_release():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{simkit.__version__}]" in changelog
