"""The reference consumer, which first forks a daemon in a session of its own (no SIGKILL of the consumer's
group reaches it) that holds the consumer's stderr and writes to it without end, until the pipe is closed."""
import os
import runpy
import sys
from pathlib import Path

if os.fork() == 0:
    os.setsid()
    os.closerange(0, 2)                     # stdin and stdout closed: stderr alone is held
    try:
        while True:
            os.write(2, b"flood\n" * 100)
    except OSError:                         # the pipe closed: no one reads any more
        os._exit(0)
sys.argv[0] = str(Path(__file__).parents[3] / "examples/consumers/python/consumer.py")
runpy.run_path(sys.argv[0], run_name="__main__")
