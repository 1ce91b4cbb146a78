"""The benchmark keeps working (at a tiny size). It asserts no timing: only that every figure is there."""
import json

from simkit.cli import main

FIELDS = ("simpy_steps_per_s", "events_per_s", "events_per_s_faults", "ratio", "explore_schedules_per_s",
          "explore_overhead", "sweep_scaling", "peak_rss_mb_1m", "checker_scaling", "cost")


def test_bench_quick_json(capsys):
    assert main(["bench", "--quick", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    for key in FIELDS:
        assert key in m, key
    assert all(m[k] > 0 for k in FIELDS if k != "cost")
    assert {r["strategy"] for r in m["cost"]} >= {"safe", "persist_token_on_fetch"}
    safe = next(r for r in m["cost"] if r["strategy"] == "safe")
    assert safe["replayed_per_crash"] <= 10        # seed 000: at most a page of replay per crash (pages of 10)
