"""The reference Python consumer, first noting in the file $PIDS its process id and how many of the processes
of earlier lives still exist (a zombie too), one line a life."""
import os
import runpy
import sys
from pathlib import Path


def exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


path = Path(os.environ["PIDS"])
earlier = [int(line.split()[0]) for line in path.read_text().splitlines()] if path.exists() else []
with path.open("a") as f:
    f.write(f"{os.getpid()} {sum(map(exists, earlier))}\n")
sys.argv[0] = str(Path(__file__).parents[3] / "examples/consumers/python/consumer.py")
runpy.run_path(sys.argv[0], run_name="__main__")
