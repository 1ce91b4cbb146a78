"""simkit's performance benchmark; the same as ``simkit bench``.

Run: python benchmarks/bench.py [--json] [--quick] [--repeat N] [--notebooks]"""
import sys

from simkit.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
