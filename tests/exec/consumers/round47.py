"""Round 47's consumers over ``exec:`` (tests/judge/test_hostile_round47.py): eight in Node, two in Python
without simkit, each a reference consumer of ``examples/consumers/`` with one bug. Each is kept as its patches
(``round47.toml``: a header naming the bug, then the lines it changes), and :func:`written` makes the program;
ten copies of a reference would be ten copies to keep in step with it."""
from __future__ import annotations

import tomllib
from pathlib import Path

__all__ = ["PATCHES", "REFERENCE", "written"]

_EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "consumers"
#: The reference consumer each program is made from, by its suffix.
REFERENCE = {".js": _EXAMPLES / "javascript" / "consumer.js", ".py": _EXAMPLES / "python" / "consumer.py"}
#: program -> its patches, in order: (text found once in the reference, what replaces it)
PATCHES = {p["name"]: [(x["old"], x["new"]) for x in p["patch"]]
           for p in tomllib.loads((Path(__file__).parent / "round47.toml").read_text())["program"]}


def written(name: str, folder: Path) -> Path:
    """The program ``name`` (a key of :data:`PATCHES`), written into ``folder``."""
    text = REFERENCE[Path(name).suffix].read_text()
    for old, new in PATCHES[name]:
        assert text.count(old) == 1, f"{name}: the reference changed where a patch applies: {old[:60]!r}"
        text = text.replace(old, new, 1)
    path = folder / name
    path.write_text(text)
    return path
