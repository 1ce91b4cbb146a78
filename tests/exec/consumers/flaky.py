"""A consumer that is not deterministic: some processes publish the token on fetch, others run the full
procedure, counted in the file $ONCE. ``first``: only the first process ever started takes the shortcut;
``odd``: the first, the third, the fifth... Same lines in, other lines out."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[3] / "examples/consumers/python"))
import consumer  # noqa: E402  (the reference consumer, standard library only)

counter = Path(os.environ["ONCE"])
n = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(n))
if n == 1 or (sys.argv[1] == "odd" and n % 2):
    sys.argv.append("--publish-token-on-fetch")
consumer.main()
