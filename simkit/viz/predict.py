"""The prediction widget: a question's answers as buttons, a "check" button, and the check's reply under them.

The widget knows nothing of the questions: it is given the answers to offer and the function that judges one
(``check(key, answer)``, e.g. :func:`simkit.workshop.check_prediction`, whose ``repr`` is the reply shown).
``simkit.workshop.predict(key)`` wires the workshop's questions to it.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

import ipywidgets as W
from IPython.display import HTML, display

__all__ = ["NO_ANSWER", "Prediction", "prediction"]

#: What the widget says when "check" is pressed before an answer is picked.
NO_ANSWER = "✎ pick an answer above first, then press check."
#: The reply's colour by its first mark: right, wrong, not judged
_COLOURS = {"✓": "#1b5e20", "✗": "#b71c1c"}


class Prediction(W.VBox):
    """One prediction: ``choice`` (toggle buttons over the answers, none picked at first), ``button``
    ("check") and ``output``, where each press shows the reply of ``check(key, choice.value)``; ``reply`` is
    the last reply (``None`` before the first press, or after a press with nothing picked)."""

    def __init__(self, key: str, choices: Sequence, check: Callable, description: str = "your answer"):
        self.key, self.check, self.reply = key, check, None
        self.choice = W.ToggleButtons(options=[(str(c), c) for c in choices], value=None,
                                      style={"button_width": "auto"}, layout=W.Layout(width="auto"))
        self.button = W.Button(description="check", icon="check", button_style="primary",
                               tooltip="compare your answer with what simkit does",
                               layout=W.Layout(width="auto"))
        self.button.on_click(self._check)
        self.output = W.Output(layout=W.Layout(max_width="900px"))
        row = W.HBox([W.Label(description), self.choice, self.button], layout=W.Layout(align_items="center"))
        super().__init__([row, self.output])

    def _check(self, _button=None) -> None:
        self.reply = None if self.choice.value is None else self.check(self.key, self.choice.value)
        text = NO_ANSWER if self.reply is None else repr(self.reply)
        colour = _COLOURS.get(text[:1], "#424242")
        with self.output:
            self.output.clear_output(wait=True)
            display(HTML(f'<p style="color: {colour}; margin: 4px 0; line-height: 1.4">{escape(text)}</p>'))


def prediction(key: str, choices: Sequence, check: Callable, description: str = "your answer") -> Prediction:
    """Ask question ``key`` with the answers ``choices`` as buttons; "check" shows ``check(key, answer)``."""
    return Prediction(key, choices, check, description)
