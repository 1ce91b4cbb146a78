"""``python -m simkit.cli``, as ``python -m simkit`` and the ``simkit`` script."""
import sys

from . import main

__all__: list[str] = []

sys.exit(main())
