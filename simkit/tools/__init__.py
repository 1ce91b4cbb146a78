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
audit          anyone's consumer judged on every case, within a budget, in a process per core
audit_cases    what the audit tries: bundled, corner, wide, sweep and explore cases, cheapest first
audit_corners  the audit's corners: what no bundled scenario has, where a partial check shows
bench          the performance benchmark
bench_memory   its memory figures, each read in a fresh child process
notebook_run   a notebook executed as the benchmark and the edition's test run it (nbclient, polled)
pool           how many processes ``jobs`` may start; workers that die with the command
=============  =========================================================================================
"""

__all__ = ["audit", "audit_cases", "audit_corners", "bench", "bench_memory", "exploration", "explore",
           "fingerprint", "forked", "notebook_run", "pool", "scenario_toml", "schedules", "shrink", "sweep"]
