"""How deep a TOML text's keys go, before it is parsed: Python's ``tomllib`` takes time quadratic in the parts
of a dotted key (``a.a.a...``) or a table header (``[t.t.t...]``): 20,000 parts took 11 s, 50,000 (a 100 KB
file) 70 s, and a 16 MiB scenario file could hold millions. No scenario or ``serve`` config needs more than a
few; :func:`too_deep` finds a key of more than :data:`MAX_KEY_PARTS` before ``tomllib`` sees it.
"""
from __future__ import annotations

import re

__all__ = ["MAX_KEY_PARTS", "too_deep"]

#: The most parts a dotted key or table header may have (a scenario's deepest is 2, a ``serve`` config's 3).
MAX_KEY_PARTS = 8

# possessive: a part never gives back what it took (a long line of numbers was read in quadratic time)
_WORD = r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]++"
# a quoted part up to its next quote: an escaped quote in a key (``"a\\"b"``) is looked for apart (skipping
# escapes here would read from each quote to the line's end: quadratic in a line of escaped quotes)
_PART = rf"""(?:{_WORD}|"[^"\n]*+"|'[^'\n]*+')"""
_DOTTED = re.compile(rf"{_PART}(?:[ \t]*+\.[ \t]*+{_PART}){{{MAX_KEY_PARTS},}}")
_BARE = re.compile(rf"{_WORD}(?:[ \t]*+\.[ \t]*+{_WORD}){{{MAX_KEY_PARTS},}}")


def too_deep(text: str) -> str | None:
    """What is wrong with ``text`` if one of its keys has more than :data:`MAX_KEY_PARTS` dotted parts (``line
    N: a key of more than 8 dotted parts, ...``), else None. The text's strings and comments are not keys: a
    match there (a description of 40 dotted words) is looked at again without them."""
    if _DOTTED.search(text) is None and '\\"' not in text:
        return None
    bare = _without_strings(text)
    if (m := _BARE.search(bare)) is None:
        return None
    line = bare.count("\n", 0, m.start()) + 1
    return f"line {line}: a key of more than {MAX_KEY_PARTS} dotted parts, deeper than any key it may hold"


#: A string or a comment, matched where it starts; one that never ends runs to its line's end (to the text's
#: end for a multi-line one), so that the scan goes on from there: ``tomllib`` will say what is wrong
_STRING = re.compile(r"""
      \"\"\"(?:[^"\\]++|\\[\s\S]|"(?!""))*+\"\"\""{0,2}  |  \"\"\"[\s\S]*+
    | '''(?:[^']++|'(?!''))*+''''{0,2}                  |  '''[\s\S]*+
    | "(?:[^"\\\n]++|\\.)*+"  |  "[^\n]*+
    | '[^'\n]*+'  |  '[^\n]*+
    | (?P<comment>\#[^\n]*+)
""", re.VERBOSE)


def _without_strings(text: str) -> str:
    """``text`` with each string replaced by ``s`` (a quoted key is still a key part) and each comment by
    nothing; its lines kept where they were."""
    def blank(m: re.Match) -> str:
        return "" if m["comment"] is not None else "s" + "\n" * m[0].count("\n")
    return _STRING.sub(blank, text)
