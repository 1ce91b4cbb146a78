"""Tools built on runs: each runs the world many times and reports.

============  ==========================================================================================
module        owns
============  ==========================================================================================
explore       every schedule of up to K faults, run and judged (a bounded model check)
shrink        a failing run reduced to a minimal scripted scenario that fails the same way
sweep         seeded runs per configuration, as a table with confidence intervals
audit         anyone's consumer on every bundled scenario, a sweep and an exploration
bench         the performance benchmark
pool          how many processes ``jobs`` may start
============  ==========================================================================================
"""
