"""``simkit live``: the procedure in real processes on SQLite, killed with SIGKILL.

============  ==========================================================================================
module        owns
============  ==========================================================================================
run           ``live()``: the run's databases made, its workers supervised, read back and judged
supervisor    forks workers, kills and restarts them, hears their reports until they catch up
worker        one worker process: the consumer's requests executed synchronously against SQLite
============  ==========================================================================================
"""
__all__: list[str] = []     # the modules are the API
