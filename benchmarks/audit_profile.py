"""Where an audit's CPU time goes, by layer of the package (docs/performance.md, "Issue 31, stop 49").

Profiles (cProfile, own time of each function) the audit of ``safe`` on every ``STEP``-th case of
:func:`simkit.tools.audit_cases.cases` (3 seeds, 5 sweep seeds, as the gallery's test asks), each case's
exploration run whole in this process, and sums the time by the layer the function lives in: the consumer's
own code (``safe``'s hooks, the only part a user writes), and everything simkit runs around it.

Run: ``python benchmarks/audit_profile.py [STEP]`` (default 8: 31 of 241 cases, about a minute unprofiled).
"""
import collections
import cProfile
import dataclasses
import pstats
import sys

from simkit import Consumer
from simkit.tools import audit
from simkit.tools.audit_cases import cases
from simkit.tools.explore import below

LAYERS = (("consumer (the plugin's own code)", ("simkit/procedure/consumer.py",)),
          ("driver and requests", ("simkit/procedure/", "simkit/requests.py", "simkit/ops.py")),
          ("judge", ("simkit/judge/",)), ("world and stores", ("simkit/world/", "simkit/store/")),
          ("logs (truth)", ("simkit/truth/", "<simkit generated")), ("exploration", ("simkit/tools/",)),
          ("scenario and model", ("simkit/scenario/", "simkit/model.py")), ("SimPy", ("simpy/",)),
          ("built-ins", ("~",)))


def layer(filename: str) -> str:
    found = (name for name, parts in LAYERS if any(p in filename for p in parts))
    return next(found, "the rest (the standard library)")


def profile(step: int = 8) -> list[tuple[str, float]]:
    todo = cases(3, 5)[::step]
    profiler = cProfile.Profile()
    profiler.enable()
    for case in todo:
        out = audit._try(case, Consumer)
        if out[0] == "split":
            below(dataclasses.replace(out[1], ref=Consumer), out[1].roots)
    profiler.disable()
    by = collections.Counter()
    for (filename, _, _), (_, _, own, _, _) in pstats.Stats(profiler).stats.items():
        by[layer(filename)] += own
    return by.most_common()


if __name__ == "__main__":
    rows = profile(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
    total = sum(t for _, t in rows)
    for name, t in rows:
        print(f"{t:7.2f} s {100 * t / total:5.1f} %  {name}")
