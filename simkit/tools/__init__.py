"""Tools built on runs: each runs the world many times and reports.

=============  =========================================================================================
module         owns
=============  =========================================================================================
explore        every schedule of up to K faults, run and judged (a bounded model check): the search
schedules      what may follow a schedule, its budget, one schedule run from scratch
forked         schedules sharing their prefixes: a fork at each fault point
fingerprint    the durable state a crash leaves, hashed (deduplication)
exploration    what an exploration found, and the text ``simkit explore`` prints
shrink         a failing run reduced to a minimal scripted scenario that fails the same way
scenario_toml  a run or scenario as scenario TOML, and the command that replays it
sweep          seeded runs per configuration, as a table with confidence intervals
audit          anyone's consumer on every bundled scenario, a sweep and an exploration
bench          the performance benchmark
pool           how many processes ``jobs`` may start
=============  =========================================================================================
"""

__all__ = ["audit", "bench", "exploration", "explore", "fingerprint", "forked", "pool", "scenario_toml", "schedules",
           "shrink", "sweep"]
