"""The Perl consumer, written from docs/ alone, passes the first three rungs of docs/challenge.md."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRATEGY = "exec:examples/from-the-docs/perl/run"

pytestmark = pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")


@pytest.mark.parametrize("scenario", ["retry_walkthrough", "quarantine_boundary", "late_retry"])
def test_perl_consumer_is_ok(scenario):
    done = subprocess.run(
        ["simkit", "run", scenario, "--strategy", STRATEGY, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["ok"] is True, done.stdout
