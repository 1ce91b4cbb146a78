"""simkit's performance benchmark; the same as ``simkit bench``. Run: python benchmarks/bench.py [--json] [--quick] [--repeat N]"""
import sys

from simkit.tools.bench import main

if __name__ == "__main__":
    sys.exit(main())
