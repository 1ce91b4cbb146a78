"""ruff and mypy, as configured in pyproject.toml, run as part of the test suite (CI runs the README's pytest)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    r = run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_mypy_is_clean_on_the_public_modules():
    r = run(sys.executable, "-m", "mypy", "--no-incremental")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
