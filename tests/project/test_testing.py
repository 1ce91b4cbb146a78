"""simkit.testing: a consumer author's pytest suite judges the consumer (assert_passes_audit, assert_ok_on,
the simkit_audit fixture) and fails with the verdict table and a replay line that reproduces the failure.

Kept fast: small audit budgets (the cheapest cases run first) and the first failure only where one is
expected.
"""
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

import simkit
from simkit.testing import assert_ok_on, assert_passes_audit, run_on

AUTHOR_CONFTEST = 'pytest_plugins = ["simkit.testing"]\n'
AUTHOR_TESTS = '''
from simkit import Consumer
from simkit.procedure.strategies import PersistTokenOnFetch
from simkit.testing import assert_ok_on, assert_passes_audit


class Mine(PersistTokenOnFetch):
    """A consumer that publishes the page's token as soon as it arrives."""


def test_mine_passes_the_audit():
    assert_passes_audit(Mine, budget=10, first_only=True)


def test_mine_on_the_walkthrough():
    assert_ok_on(Mine, "retry_walkthrough")


def test_safe_passes_the_audit(simkit_audit):
    simkit_audit(Consumer)
'''


def test_a_consumer_authors_pytest_file_fails_on_a_buggy_consumer_with_a_readable_message(tmp_path):
    (tmp_path / "conftest.py").write_text(AUTHOR_CONFTEST)
    (tmp_path / "test_author.py").write_text(AUTHOR_TESTS)
    # the shrunk failure goes to a temporary folder of its own, left for the author: here, under tmp_path
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--simkit-budget",
                           "4", "test_author.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "2 failed, 1 passed" in out, out
    # the audit's own words: the verdict line, the table, the shrunk file and how to replay it
    assert "audit Mine: FAILS" in out
    assert re.search(r"kind +case +failure", out) and re.search(r"invariants? 1", out)
    assert "simkit/testing.py" not in out  # the test's line and the message, not simkit's source
    replay = re.search(r"replay with (simkit run \S+ --strategy test_author\.py:Mine --seed \d+)", out)
    assert replay, out
    # assert_ok_on: the runs' verdict table and a replay line per failing run
    assert "1 of 1 runs of test_author.py:Mine are not ok" in out
    assert re.search(r"scenario +seed +ok +lost", out)
    assert "replay: simkit run retry_walkthrough --strategy test_author.py:Mine --seed 0" in out
    # the replay line reproduces the failure
    args = shlex.split(replay[1])[1:] + ["--json"]
    again = subprocess.run([sys.executable, "-m", "simkit", *args], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["ok"] is False



@pytest.mark.parametrize("value", ["-1", "0", "nan", "soon"])
def test_a_budget_no_audit_takes_is_pytests_usage_error(tmp_path, value):
    (tmp_path / "conftest.py").write_text(AUTHOR_CONFTEST)
    (tmp_path / "test_author.py").write_text(AUTHOR_TESTS)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--simkit-budget",
                           value, "test_author.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 4 and "Traceback" not in done.stderr + done.stdout, done.stderr
    assert f"argument --simkit-budget: '{value}': seconds from more than 0 to 10^6" in done.stderr

def test_assert_passes_audit_raises_with_the_table_and_passes_safe(tmp_path):
    out = tmp_path / "failure.toml"
    with pytest.raises(AssertionError) as failed:
        assert_passes_audit("persist_token_on_fetch", budget=10, first_only=True, out=out)
    message = str(failed.value)
    assert message.startswith("\naudit persist_token_on_fetch: FAILS")
    assert f"wrote {out}: replay with simkit run {out} --strategy persist_token_on_fetch --seed" in message
    assert out.read_text().startswith("#")
    result = assert_passes_audit("safe", budget=3)
    assert result.ok and result.cases > 0


def test_run_on_and_assert_ok_on():
    runs = run_on(simkit.Consumer, "retry_walkthrough", simkit.load("quarantine_boundary"), seeds=(0, 1))
    assert [(r.scenario, r.seed) for r in runs] == [("retry_walkthrough", 0), ("retry_walkthrough", 1),
                                                    ("quarantine_boundary", 0), ("quarantine_boundary", 1)]
    assert assert_ok_on("safe", "retry_walkthrough")[0].verdict.ok
    with pytest.raises(AssertionError, match=r"replay: simkit run retry_walkthrough --strategy "
                                             r"persist_token_on_fetch --seed 0"):
        assert_ok_on("persist_token_on_fetch", "retry_walkthrough")
