"""The most a protocol of one request a page could save (docs/performance.md, "Issue 31, ninth pass").

Issue 31's eighth pass named, as the last design inside the memory target, a second protocol for runs no fault
can strike: the consumer sends a page, the world does every event of it. Its upper bound needs no new API:
``PageWorld`` below runs ``safe``'s happy path itself, no consumer generator, no dispatch and no
well-formedness check, and calls the same request methods (so it writes the same ground truth and earns the
same verdict). What it saves over ``World`` is all the second protocol could save.

Run: ``python benchmarks/page_protocol_bound.py [EVENTS] [ROUNDS]`` (the two runs timed in turn, best of
``ROUNDS``); or count instructions, which a shared machine does not disturb, with
``WHICH=page|world|notrace|none valgrind --tool=callgrind python3.11 benchmarks/page_protocol_bound.py 20000``
(``notrace``: ``World`` keeping no trace; ``none``: build the world and do not run it, the part to subtract).
"""
import os
import sys
import time

from simkit.judge.checker import check
from simkit.model import TERMINAL
from simkit.ops import Barrier, Commit, Fetch, Handle, Load, Lookup
from simkit.procedure.strategies import STRATEGIES
from simkit.scenario.read import parse
from simkit.tools.bench import generated
from simkit.truth.collector import paused
from simkit.world.simulation import World


class PageWorld(World):
    """``safe``'s attempts (steps 1-7) on the happy path, done by the world with no consumer: what a page
    request would leave of a run."""

    def _worker(self, worker):
        while True:
            cp = self.load(worker, Load())
            page = yield from self.fetch(worker, Fetch(cp.resume_cursor))
            receipts, _ids_at = self.lookup(worker, Lookup(page.events))
            if not page.events and page.next_cursor == cp.resume_cursor:
                self._row(worker, "stopped")
                self.finish(worker, "stopped")
                return
            applied = cp.applied_position
            for e in page.events:
                if receipts.get(e.id) in TERMINAL or e.position <= applied:
                    self.skip(worker, e)
                    applied = max(applied, e.position)
                    continue
                assert self.handle(worker, Handle(e)) == "apply"
                applied = max(applied, e.position)
                assert self._commit_at_once(worker, Commit(e, "applied", applied, True)) is True
            assert (yield from self.barrier(worker, Barrier(cp.resume_cursor, cp.checkpoint_version,
                                                            page.next_cursor, cp.checkpoint_version + 1,
                                                            applied))) is True


def run_us(world: type[World], events: int) -> float:
    """µs an event of one run of ``world`` on the benchmark's scenario (checked ok, the check not timed)."""
    with paused():
        w = world(parse(generated(events)), STRATEGIES["safe"], 0)
        start = time.perf_counter()
        w.run()
        dt = time.perf_counter() - start
        assert check(w).ok
    return dt / events * 1e6


if __name__ == "__main__":
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    if "WHICH" in os.environ:                               # one run under callgrind
        with paused():
            which = os.environ["WHICH"]
            w = (PageWorld if which == "page" else World)(parse(generated(events)), STRATEGIES["safe"], 0,
                                                          keep_trace=which != "notrace")
            if os.environ["WHICH"] != "none":
                w.run()
        sys.exit()
    best = {World: float("inf"), PageWorld: float("inf")}
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
        for world in best:
            best[world] = min(best[world], run_us(world, events))
    print(f"run, µs an event: per-event protocol {best[World]:.2f}, a page a request {best[PageWorld]:.2f} "
          f"({best[PageWorld] / best[World] - 1:+.1%})")
