"""ruff and mypy, as configured in pyproject.toml, run as
part of the test suite (CI runs the README's pytest)."""
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*command: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)


def _mypy_section() -> str:
    """pyproject.toml's ``[tool.mypy]`` table, as written."""
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.mypy]")
    end = text.find("\n[", start + 1)
    return text[start:] if end < 0 else text[start:end + 1]


def test_ruff_is_clean():
    r = run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_mypy_checks_the_whole_package_and_hides_nothing():
    """The configuration names the package, not a list of modules, and
    silences no error: no ``ignore_errors``, no code disabled, and a ``#
    type: ignore`` that no longer ignores anything is itself an error."""
    config = tomllib.loads(_mypy_section())["tool"]["mypy"]
    assert config["files"] == ["simkit"]
    assert config["warn_unused_ignores"] is True
    assert not {"ignore_errors", "disable_error_code", "exclude"} & set(config)
    assert not any({"ignore_errors", "disable_error_code"} & set(o) for o in config.get("overrides", []))


def test_mypy_is_clean_on_the_whole_package():
    r = run(sys.executable, "-m", "mypy", "--no-incremental")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    modules = len([*(ROOT / "simkit").rglob("*.py"), *(ROOT / "simkit").rglob("*.pyi")])
    assert f"no issues found in {modules} source files" in r.stdout, r.stdout[-2000:]   # every module checked


def test_the_mypy_configuration_fails_on_an_error_in_any_module(tmp_path):
    """The suite's mypy run (no arguments: the configuration's ``files``)
    reports an error in a module deep in the package, and a ``# type: ignore``
    that ignores nothing, and exits non-zero: the suite fails on both."""
    (tmp_path / "pyproject.toml").write_text(_mypy_section())
    deep = tmp_path / "simkit" / "deep"
    deep.mkdir(parents=True)
    (tmp_path / "simkit" / "__init__.py").write_text("")
    (deep / "__init__.py").write_text("")
    (deep / "wrong.py").write_text('def answer() -> int:\n    return "forty-two"\n')
    (deep / "stale.py").write_text("ANSWER: int = 42  # type: ignore[assignment]\n")
    r = run(sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
            cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "simkit/deep/wrong.py:2: error: Incompatible return value type" in r.stdout, r.stdout
    assert 'simkit/deep/stale.py:1: error: Unused "type: ignore" comment' in r.stdout, r.stdout
