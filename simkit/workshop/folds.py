"""Reveals that wait: the cell that shows a prediction's
answer keeps its output folded until the question is answered.

A reveal cell wraps what it shows in ``with check.reveal("crash_after_commit"):``. Everything the block
displays (a figure, a table, printed text) is gathered into one output: an HTML ``<details>`` that stays
closed while the question is open, with the same outputs as plain text beside it (nbval compares that text, so
the reveal is checked in CI exactly as before). Once the question is answered, right or wrong, by
:func:`check_prediction` or the :func:`predict` widget, every reveal of it shown in this kernel opens in place
(``update_display``), and a reveal run after the answer is drawn open. The committed notebooks are executed
with every question unanswered, so an attendee who opens one sees each answer folded under its question
("answer first, or click to look").

Nothing here needs a frontend: outside IPython the block's outputs are not captured and show as usual.
"""
from __future__ import annotations

import base64
import sys
import uuid
from html import escape

__all__ = ["reveal", "answered"]

#: the questions answered in this kernel (right or wrong), by key
_ANSWERED: set[str] = set()
#: display id -> (the keys it waits for, the outputs it shows), for every reveal shown in this kernel
_SHOWN: dict[str, tuple[tuple[str, ...], list[tuple[str, str]]]] = {}

_STYLE = "margin: 4px 0; padding: 2px 8px; border-left: 3px solid #9e9e9e"
_CLOSED = ("<b>the answer</b> (answer the question above first; it opens when you check your answer, or "
           "click here to look now)")
_OPEN = "<b>the answer</b>"


def _ipython():
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython
    return get_ipython()


def _html_of(data: dict) -> str:
    if "text/html" in data:
        return data["text/html"]
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            payload = data[mime]
            if isinstance(payload, bytes):
                payload = base64.b64encode(payload).decode("ascii")
            return f'<img src="data:{mime};base64,{payload.strip()}" style="max-width: 100%"/>'
    return f"<pre>{escape(data.get('text/plain', ''))}</pre>"


def _bundle(keys: tuple[str, ...], parts: list[tuple[str, str]]) -> dict:
    opened = all(key in _ANSWERED for key in keys)
    body = "\n".join(html for html, _ in parts)
    summary = _OPEN if opened else _CLOSED
    html = (f'<details{" open" if opened else ""} class="simkit-reveal" style="{_STYLE}">'
            f'<summary style="cursor: pointer; color: #424242">{summary}</summary>\n{body}\n</details>')
    return {"text/html": html, "text/plain": "\n".join(text for _, text in parts if text)}


class _Reveal:
    def __init__(self, keys: tuple[str, ...]):
        self.keys, self._capture, self._shell = keys, None, _ipython()

    def __enter__(self):
        if self._shell is not None:
            from IPython.utils.capture import capture_output
            self._capture = capture_output(stdout=True, stderr=False, display=True)
            self._captured = self._capture.__enter__()
        return self

    def __exit__(self, kind, error, trace):
        if self._capture is None:
            return False
        pyplot = sys.modules.get("matplotlib.pyplot")
        if error is None and pyplot is not None and pyplot.get_fignums():
            pyplot.show()                   # figures drawn in the block belong inside it, not after it
        self._capture.__exit__(kind, error, trace)
        captured = self._captured
        parts = []
        if captured.stdout:
            parts.append((f"<pre>{escape(captured.stdout)}</pre>", captured.stdout.rstrip("\n")))
        parts += [(_html_of(o.data), o.data.get("text/plain", "")) for o in captured.outputs]
        if error is not None:               # show what was drawn, as usual, and let the error through
            for output in captured.outputs:
                output.display()
            return False
        from IPython.display import display
        display_id = uuid.uuid4().hex
        _SHOWN[display_id] = (self.keys, parts)
        display(_bundle(self.keys, parts), raw=True, display_id=display_id)
        return False


def reveal(*keys: str) -> _Reveal:
    """``with reveal("key", ...):`` folds what the block displays until every question ``key`` is answered."""
    if not keys:
        raise ValueError("name the question(s) this cell reveals, e.g. reveal('crash_after_commit')")
    return _Reveal(tuple(keys))


def answered(key: str) -> None:
    """Question ``key`` was answered: open every reveal shown in this kernel that waits for it (and for
    nothing still unanswered)."""
    _ANSWERED.add(key)
    if _ipython() is None:
        return
    from IPython.display import update_display
    for display_id, (keys, parts) in list(_SHOWN.items()):
        if key in keys and all(k in _ANSWERED for k in keys):
            update_display(_bundle(keys, parts), raw=True, display_id=display_id)
