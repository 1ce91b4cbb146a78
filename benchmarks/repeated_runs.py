"""How much of the test suite's simulation repeats a run another test (or the same test) already made
(docs/performance.md, "Issue 31, stop 49").

A pytest plugin: every ``World.run`` in a test process writes one line to ``$REPEATED_RUNS/runs.PID.tsv``:
what determines the run (the world's class, a digest of the scenario's ``repr``, the strategy, seed, extra
faults, settlement and ``keep_trace``), the test, and the run's CPU seconds. A run finished in a forked child
(:mod:`simkit.tools.forked`) is left out: its prefix ran in the parent. Then ``python
benchmarks/repeated_runs.py`` sums, over runs whose key was already logged, the CPU they spent again.

Run: ``REPEATED_RUNS=/tmp/rr PYTHONPATH=benchmarks python -m pytest -n 2 --dist loadgroup -p repeated_runs``,
then ``REPEATED_RUNS=/tmp/rr python benchmarks/repeated_runs.py``.
"""
import collections
import glob
import hashlib
import os
import time

FOLDER = os.environ.get("REPEATED_RUNS", "/tmp/repeated_runs")


def _key(world, scenario, strategy, seed, faults=(), settlement=None, keep_trace=True) -> str:
    digests = [hashlib.md5(repr(x).encode()).hexdigest()[:16] for x in (scenario, faults)]
    return "|".join(map(str, (type(world).__name__, *digests, strategy.__module__, strategy.__qualname__,
                              seed, settlement, keep_trace)))


def pytest_configure(config):
    from simkit.world import simulation

    os.makedirs(FOLDER, exist_ok=True)
    init, run = simulation.World.__init__, simulation.World.run

    def logged_init(self, *args, **kwargs):
        self._repeat_key = _key(self, *args, **kwargs)
        init(self, *args, **kwargs)

    def logged_run(self):
        pid, start = os.getpid(), time.process_time()
        try:
            return run(self)
        finally:
            if os.getpid() == pid:
                test = os.environ.get("PYTEST_CURRENT_TEST", "-").split(" ")[0]
                with open(f"{FOLDER}/runs.{pid}.tsv", "a") as log:
                    log.write(f"{self._repeat_key}\t{test}\t{time.process_time() - start:.6f}\n")

    simulation.World.__init__, simulation.World.run = logged_init, logged_run


def summary(folder: str = FOLDER) -> str:
    seen: dict[str, str] = {}
    runs, total, within, across = 0, 0.0, collections.Counter(), collections.Counter()
    for path in sorted(glob.glob(f"{folder}/runs.*.tsv")):
        for line in open(path):
            key, test, cpu = line.rstrip("\n").split("\t")
            runs, total = runs + 1, total + float(cpu)
            if key not in seen:
                seen[key] = test
            elif seen[key] == test:
                within[test] += float(cpu)
            else:
                across[f"{seen[key].split('::')[0]} -> {test.split('::')[0]}"] += float(cpu)
    lines = [f"{runs} runs, {total:.0f} CPU s in World.run; {len(seen)} distinct",
             f"repeated within one test: {sum(within.values()):.0f} s",
             f"repeated across tests: {sum(across.values()):.0f} s"]
    lines += [f"  {cpu:7.1f} s within {test}" for test, cpu in within.most_common(5)]
    lines += [f"  {cpu:7.1f} s {pair}" for pair, cpu in across.most_common(5)]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
