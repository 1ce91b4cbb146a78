"""A run is a pure function of (scenario, strategy, seed, faults): identical traces across processes."""
import subprocess
import sys

import simkit

SCRIPT = ("import simkit; "
          "print(simkit.simulate(simkit.load('gauntlet'), simkit.resolve('{s}'), {seed}).trace.digest())")


def digest_in_subprocess(strategy: str, seed: int, hashseed: str) -> str:
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(s=strategy, seed=seed)], check=True,
                         capture_output=True, text=True, env={"PYTHONHASHSEED": hashseed, "PATH": ""})
    return out.stdout.strip()


def test_trace_identical_across_processes():
    for strategy, seed in [("safe", 3), ("persist_token_on_fetch", 11)]:
        here = simkit.simulate(simkit.load("gauntlet"), simkit.resolve(strategy), seed).trace.digest()
        assert digest_in_subprocess(strategy, seed, "1") == here
        assert digest_in_subprocess(strategy, seed, "987") == here


def test_different_seeds_differ():
    sc = simkit.load("gauntlet")
    assert simkit.simulate(sc, seed=1).trace.digest() != simkit.simulate(sc, seed=2).trace.digest()
