"""simkit's performance benchmark; the same as ``simkit bench``.

Run: python benchmarks/bench.py [--json] [--quick] [--repeat N] [--notebooks]"""
import sys

from simkit.tools.bench import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
