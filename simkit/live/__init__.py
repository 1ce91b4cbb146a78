"""``simkit live``: the procedure in real processes on SQLite, killed with SIGKILL.

============  ==========================================================================================
module        owns
============  ==========================================================================================
supervisor    forks workers, kills and restarts them, reads the databases back and judges them
worker        one worker process: the consumer's requests executed synchronously against SQLite
============  ==========================================================================================
"""
from simkit._moved import forward

__getattr__ = forward(__name__, "simkit.live.supervisor")
