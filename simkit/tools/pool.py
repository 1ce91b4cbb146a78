"""How many worker processes ``--jobs J`` starts (explore, sweep, audit): never more than :data:`JOBS_PER_CPU`
per CPU, nor more than there are tasks. ``--jobs 1000`` once started 1,002 processes for 9 schedules, and
``--jobs 1000000`` was a fork bomb. :func:`pool_map` runs a function over tasks in that many processes."""
from __future__ import annotations

import os
import warnings

from simkit.errors import Note

__all__ = ["JOBS_PER_CPU", "most", "pool_map", "processes"]

#: Worker processes per CPU at most: the runs are pure Python and CPU-bound, so more only add memory.
JOBS_PER_CPU = 4


def most() -> int:
    """The most worker processes this machine gets."""
    return JOBS_PER_CPU * (os.cpu_count() or 1)


def processes(jobs: int, tasks: int | None = None) -> int:
    """``jobs`` as a number of processes to start for ``tasks`` tasks: at most :func:`most` (with a
    :class:`~simkit.errors.Note` warning when that cuts what was asked for) and at most ``tasks``, and at least 1."""
    if jobs > most():
        warnings.warn(Note(f"jobs {jobs}: using {most()} worker processes ({JOBS_PER_CPU} per CPU at most)",
                           param="jobs"), stacklevel=2)
        jobs = most()
    if tasks is not None:
        jobs = min(jobs, tasks)
    return max(1, jobs)


def pool_map(fn, tasks: list, jobs: int, done=None, chunksize: int | None = None):
    """``fn`` over ``tasks``, yielding the results in order, in up to ``jobs`` processes (:func:`processes`; one:
    in this process, no pool). ``done(result)`` is called as each result comes back (a progress bar's update).
    ``chunksize``: tasks sent to a process at a time (default: about eight chunks per process; sweep's tasks are
    chunks of seeds already, and go one by one). ``fn`` and the tasks must pickle when a pool runs them."""
    jobs = processes(jobs, len(tasks))
    if jobs <= 1:
        for t in tasks:
            result = fn(t)
            if done is not None:
                done(result)
            yield result
        return
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        chunksize = max(1, len(tasks) // (8 * jobs)) if chunksize is None else chunksize
        for result in pool.map(fn, tasks, chunksize=chunksize):
            if done is not None:
                done(result)
            yield result
