"""The protocol's cost: an exec: consumer against in-process
``safe`` on the same runs (docs/protocol.md, "Cost").

    python examples/consumers/cost.py exec:examples/consumers/python/run retry_walkthrough gauntlet

For each scenario: the requests and lives of the run (counted at the process boundary), the best wall time of
``safe`` and of the consumer, and the consumer's extra time per request, all in and without the process
starts. A process start is timed apart: a fresh process, the handshake, its first request.
"""
import sys
import time

import simkit
from simkit.procedure import external
from simkit.procedure.consumer import Contract
from simkit.procedure.strategies import resolve

counts = {"requests": 0, "lives": 0}
_request, _spawn = external._Life.request, external._Life._spawn


def _counted_request(self):
    counts["requests"] += 1
    return _request(self)


def _counted_spawn(self):
    counts["lives"] += 1
    return _spawn(self)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def start_cost(cls) -> float:
    def one():
        life = external._Life(cls, 1, Contract())
        life.request()
        life.end()
    return best(one, 5)


def main(ref: str, names: list[str]) -> None:
    cls, safe = resolve(ref), resolve("safe")
    start = start_cost(cls)
    print(f"{ref}: a process start (spawn, handshake, first request) {start * 1e3:.1f} ms")
    external._Life.request, external._Life._spawn = _counted_request, _counted_spawn
    for name in names:
        sc = simkit.load(name)
        t_safe = best(lambda: simkit.simulate(sc, safe), 5)
        counts.update(requests=0, lives=0)
        simkit.simulate(sc, cls)
        n, lives = counts["requests"], counts["lives"]
        t_exec = best(lambda: simkit.simulate(sc, cls), 3)
        extra = t_exec - t_safe
        print(f"  {name}: {n} requests, {lives} lives; safe {t_safe * 1e3:.1f} ms, exec {t_exec * 1e3:.0f} "
              f"ms ({t_exec / t_safe:.0f}x); per request {extra / n * 1e6:.0f} us all in, "
              f"{(extra - lives * start) / n * 1e6:.0f} us without the process starts")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or ["retry_walkthrough", "gauntlet"])
