"""The benchmark's memory figures (``peak_rss_mb_1m``, ``ideal_rss_mb_1m``), each read in a fresh child
process so that the benchmark's own heap does not count (:mod:`simkit.tools.bench` reports them)."""
from __future__ import annotations

import subprocess
import sys
from array import array
from collections.abc import MutableSequence
from typing import Any

from simkit.model import default_id

__all__ = ["ideal_columns", "own_peak_rss", "peak_rss_mb"]

#: a log kept column by column: typed arrays, bytearrays and lists
Columns = tuple[MutableSequence[Any], ...]


def own_peak_rss() -> int:
    """This process's own peak resident memory, in bytes: ``VmHWM`` of /proc/self/status.
    Not ``ru_maxrss``: a child started by fork and exec inherits the parent's peak in it,
    so a child's figure would be floored at the benchmark's own (in ``--quick``,
    ``peak_rss_mb_1m`` and ``ideal_rss_mb_1m`` both read the parent's peak)."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):        # no procfs: ru_maxrss, an upper bound
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


_RSS = """
import resource, simkit.tools.bench as b, simkit.tools.bench_memory as m
def rss():      # resident now, in bytes
    return int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize()
marks = b.in_steps({events}, rss)
print(marks["provider"], marks["run"], max(m.own_peak_rss(), *marks.values()))   # at least what it measured
"""
_RSS_IDEAL = (
    "import simkit.tools.bench_memory as m\nkept = m.ideal_columns({events})\nprint(m.own_peak_rss())\n"
)


def ideal_columns(events: int) -> tuple:
    """The least a run keeps per ``safe`` event, columnar: the event table (id, position, behaviour), the
    store's receipts and their position index (a dictionary entry each), and a receipt, effect,
    checkpoint-write and trace row, in typed arrays wherever the value is a number or a code. Its peak
    resident memory in a child process is ``ideal_rss_mb_1m``, the memory counterpart of
    :func:`ideal_events_per_s`."""
    ids = [default_id(p) for p in range(10, 10 * events + 1, 10)]
    positions, behaviors = array("q", range(10, 10 * events + 1, 10)), bytearray(events)
    receipts, id_at = {}, {}
    # seq, time, worker, id, outcome
    receipt_log: Columns = (array("q"), array("d"), bytearray(), [], bytearray())
    effects: Columns = (array("q"), array("d"), bytearray(), [])                     # seq, time, worker, id
    writes: Columns = (array("q"), array("d"), bytearray(), bytearray(), [], array("q"), array("q"))
    trace: Columns = (array("d"), bytearray(), bytearray(), [], array("q"), [], array("q"), array("q"),
                      array("q"), bytearray())
    for seq, (eid, pos) in enumerate(zip(ids, positions), 1):
        now = float(seq)
        receipts[eid], id_at[pos] = "applied", eid
        for log, row in ((receipt_log, (seq, now, 1, eid, 0)), (effects, (seq, now, 1, eid)),
                         (writes, (seq, now, 1, 0, "c", pos, 0)),
                         (trace, (now, 1, 0, eid, pos, "c", 0, pos, 0, 0))):
            for column, value in zip(log, row):
                column.append(value)
    return ids, positions, behaviors, receipts, id_at, receipt_log, effects, writes, trace


def _child_rss(code: str) -> list[float]:
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return [int(x) / 2**20 for x in out.stdout.split()]


def peak_rss_mb(events: int) -> dict[str, float]:
    """Resident memory (MB) of a run of ``events`` events, trace included, in a fresh child process: after the
    world is built, after the run, and the peak (during the check)."""
    provider, run, peak = _child_rss(_RSS.format(events=events))
    return {"provider": provider, "run": run, "peak": peak,
            "ideal": _child_rss(_RSS_IDEAL.format(events=events))[0]}
