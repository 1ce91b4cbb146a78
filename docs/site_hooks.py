"""MkDocs hooks for the documentation site (mkdocs.yml, ``hooks:``).

The pages in docs/ are read on the repository as much as on the site, and a few link to files outside docs/
(the README, a module's source): on the repository those links work and tests/project/test_docs.py checks
them. The site holds docs/ only, so there such a link would point nowhere; it is shown as the file's name
instead, which ``mkdocs build --strict`` accepts while every link inside docs/ is still checked.
"""
from __future__ import annotations

import re

__all__ = ["on_page_markdown"]

#: ``[text](../path#anchor)``: a link out of docs/, outside code
_OUTSIDE = re.compile(r"(?<!!)\[([^\]]+)\]\(\.\./([^)#\s]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, **kwargs) -> str:
    return _OUTSIDE.sub(lambda m: f"{m[1]} (`{m[2]}` in the repository)", markdown)
