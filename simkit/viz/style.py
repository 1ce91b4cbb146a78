"""The look shared by the figures: colours of fates and of the timeline's marks, the label box, how many marks
are labelled, and how a long token is abbreviated."""
from __future__ import annotations

from simkit.procedure.shortcuts import exposing

__all__ = ["ANNOTATE_AT_MOST", "APPLIED", "AT_RISK", "BENEATH", "CELL", "CURSOR", "DARK_FATES", "DUP_ORANGE",
           "FATE_COLORS", "GAP", "LABEL_BOX", "LOST_RED", "PAUSE", "QUARANTINE", "SHORT_TOKEN",
           "TOKENS_AT_MOST", "TOKEN_CHARS", "TRUTH", "run_title", "short_token"]

FATE_COLORS = {
    "done before the run": "#e6efe8", "applied once": "#4c9f70", "replayed harmlessly": "#a7d5b8",
    "ignored": "#9ecae1", "quarantined": "#8c6bb1", "duplicated": "#f28e2b", "lost": "#d62728",
    "pending": "#bdbdbd",
}
#: Fates whose cell is dark enough for a white label.
DARK_FATES = ("lost", "quarantined", "applied once")
CURSOR, APPLIED, TRUTH, GAP, LOST_RED, DUP_ORANGE, QUARANTINE, PAUSE = (
    "#1f77b4", "#2ca02c", "black", "#d62728", "#d62728", "#f28e2b", "#8c6bb1", "#9467bd")
#: An event at risk that got its outcome in the end (light), and one that was lost (the red of the loss).
AT_RISK = "#f4a3a3"

#: The z-order of crash marks: above the lines, beneath every other mark (drawn at 3), which shows on top of
#: them, e.g. the commit at a crash.
BENEATH = 2.5
#: A label's background: lines and marks behind it do not run through the text.
LABEL_BOX = dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.85)

#: Crashes and lost events are labelled in the figure when there are at most this many of them.
ANNOTATE_AT_MOST = 4
#: Tokens are labelled where they are published when they are this short (a scripted scenario's ``C7``) and
#: there are at most :data:`TOKENS_AT_MOST` publishes; otherwise only the publishes that put a lost event at
#: risk are, abbreviated to :data:`TOKEN_CHARS` characters.
SHORT_TOKEN, TOKENS_AT_MOST, TOKEN_CHARS = 4, 12, 4

#: A cell's side in the fates grid and the instant's (the grid's pitch is 1).
CELL = 0.92


def short_token(token: str) -> str:
    """A token as labelled in a figure: whole when short,
    else its first :data:`TOKEN_CHARS` characters and "…"."""
    return token if len(token) <= SHORT_TOKEN else token[:TOKEN_CHARS] + "…"


def run_title(run) -> str:
    """A figure's default title: the strategy, then what its input is (``safe · the input built to expose
    persist_token_on_fetch``), never ``safe on shortcut_...``, which reads as if safe took the shortcut."""
    name = str(run.scenario)
    shortcut = exposing(name)
    what = f"the input built to expose {shortcut}" if shortcut else name
    return f"{run.strategy} · {what}"
