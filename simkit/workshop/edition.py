"""The attendee edition: ``simkit workshop DIR`` writes the notebooks an attendee works in.

The workshop notebooks ship inside the package (``simkit/workshop/notebooks/``, package data), so an installed
simkit, from a wheel as much as from a checkout, can write them anywhere; the data they read (notebook 08's
sweeps) ships with them and is read through the package, never by a path relative to a checkout. The edition
holds the ten notebooks 00 to 09 as committed (with their outputs, every reveal folded until its question is
answered) and a short README; the solutions and the facilitator's guide stay in the repository's
``notebooks/`` folder (``notebooks/facilitator/``), where only the facilitator looks.
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from simkit.errors import SimkitError

__all__ = ["EDITION_README", "edition_notebooks", "write_edition"]

#: What an attendee reads first in the folder ``simkit workshop DIR`` writes.
EDITION_README = """\
# simkit workshop

These notebooks teach seed 000's crash-safe cursor handoff by predicting before seeing. Open the first one:

    jupyter lab 00_index.ipynb

then *Run -> Run All Cells* once, and read from the top. Before each answer the notebook asks a question; the
answer under it stays folded until you have answered (pick an answer and press **check**, or set the variable
and run the check below it). The notebooks are yours: edit, rerun, break things. To start over, run
`simkit workshop` again into a new folder.

Needs: `pip install 'simkit[workshop]'` (simkit with JupyterLab, ipykernel and ipywidgets).
"""


def edition_notebooks() -> list:
    """The notebooks of the attendee edition, in order (resources of the installed package)."""
    folder = files("simkit.workshop").joinpath("notebooks")
    found = sorted((f for f in folder.iterdir() if f.name.endswith(".ipynb")), key=lambda f: f.name)
    if not found:
        raise SimkitError("this simkit has no workshop notebooks (simkit/workshop/notebooks is missing "
                          "from the install): reinstall simkit")
    return found


def write_edition(folder, force: bool = False) -> list[Path]:
    """Write the attendee edition into ``folder`` (created if needed); return the files written.

    Raises:
        SimkitError: ``folder`` already holds one of the edition's notebooks (an attendee's work would be
            overwritten) and ``force`` is false, or it is a file.
    """
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise SimkitError(f"{out} is a file: name a folder for the workshop notebooks")
    notebooks = edition_notebooks()
    clash = [nb.name for nb in notebooks if (out / nb.name).exists()]
    if clash and not force:
        raise SimkitError(f"{out} already holds {clash[0]}: choose a new folder, or pass --force to "
                           "overwrite the notebooks there")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for nb in notebooks:
        (out / nb.name).write_bytes(nb.read_bytes())
        written.append(out / nb.name)
    (out / "README.md").write_text(EDITION_README, encoding="utf-8")
    return [*written, out / "README.md"]
