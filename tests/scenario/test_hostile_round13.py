"""Hostile input, thirteenth round (a fresh tester): a ``service --explore`` horizon past what ``len()`` can
count. Each: one line naming the file, key or flag and the problem (exit status 2, no traceback), a reply that
changes no state, or the verdict the same run gives.
"""
from __future__ import annotations

import pytest
from conftest import simkit_in as _cli


# -- 1. service --explore --horizon past sys.maxsize ----------------------------------------------------------
@pytest.mark.parametrize("horizon", [2**62, 10**23])
def test_a_service_horizon_past_what_len_counts_is_its_budget_line(tmp_path, horizon):
    """``simkit service checkpoint_service --explore --horizon 99999999999999999999999`` was an
    ``OverflowError: cannot fit 'int' into an index-sized integer`` traceback and exit status 1: the lazy
    schedules' pool (simkit/service/sim.py) was measured with ``len()``, which stops at ``sys.maxsize``,
    where its docstring says "a huge ``horizon`` costs time, not memory". Now it runs until ``--budget``
    (docs/cli.md, "Bounds"): one line, exit status 2."""
    got = _cli(["service", "checkpoint_service", "--client", "correct", "--explore", "--horizon", str(horizon),
                "--budget", "1"], tmp_path)
    assert got.returncode == 2, got.stderr
    assert got.stderr.startswith("simkit: service checkpoint_service --explore: the budget of 1 s (--budget)")
    assert got.stderr.count("\n") == 1 and "Traceback" not in got.stderr and got.stdout == ""
