"""The attendee edition: ``simkit workshop DIR`` writes the notebooks an attendee works in.

The workshop notebooks ship inside the package (``simkit/workshop/notebooks/``, package data), so an installed
simkit, from a wheel as much as from a checkout, can write them anywhere; the data they read (notebook 08's
sweeps) ships with them and is read through the package, never by a path relative to a checkout. The edition
holds the ten notebooks 00 to 09 as committed (with their outputs, every reveal folded until its question is
answered) and a short README; the solutions and the facilitator's guide stay in the repository's
``notebooks/`` folder (``notebooks/facilitator/``), where only the facilitator looks.
"""
from __future__ import annotations

import contextlib
import os
import stat
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


def _own_readme(out: Path) -> list[str]:
    """``["README.md"]`` when ``out`` holds a README that is not the edition's own (``simkit workshop .`` in a
    project replaced the project's README without a word), else ``[]``: an earlier edition's is no clash."""
    readme, ours = out / "README.md", EDITION_README.encode("utf-8")
    if not readme.exists() or readme.is_dir():     # a folder there is refused as such, force or not
        return []
    try:
        same = readme.is_file() and readme.stat().st_size == len(ours) and readme.read_bytes() == ours
    except OSError:
        same = False
    return [] if same else ["README.md"]


def _not_a_folder(out: Path) -> str | None:
    """What ``out``, or the nearest of the folders above it that is there, is when it is not a folder (a file,
    a FIFO, a dangling symbolic link), as the start of the line that refuses it; ``None`` when it is one, or
    nothing is there. A FIFO was called a file, and a dangling link made ``mkdir`` say "File exists"."""
    for place in (out, *out.parents):
        if place.is_symlink() and not place.exists():
            what = f"a dangling symbolic link (to {os.readlink(place)!r}, which is not there)"
        elif not place.exists():
            continue
        elif place.is_dir():
            return None
        else:
            mode = place.stat().st_mode
            what = ("a file" if stat.S_ISREG(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a socket" if stat.S_ISSOCK(mode) else "a device")
        return f"{out} is {what}" if place == out else f"{out}: {place} is {what}, not a folder"
    return None


def write_edition(folder, force: bool = False) -> list[Path]:
    """Write the attendee edition into ``folder`` (created if needed); return the files written.

    Every file is first written in full to a temporary file beside its place, and only then are they renamed
    into place: a full disk or an interruption while writing leaves no half-written notebook, no partial
    edition and no folder this call created. A place that is a folder is refused before anything is written.

    Raises:
        SimkitError: ``folder`` already holds one of the edition's notebooks (an attendee's work would be
            overwritten), or a README.md that is not the edition's, and ``force`` is false, or it (or a
            folder above it) is a file, a FIFO, socket or device or a dangling symbolic link, or a file of the
            edition would replace a folder, a symbolic link, or a FIFO, socket or device.
        OSError: a file cannot be written (``simkit workshop`` makes it one line).
    """
    out = Path(folder)
    if (problem := _not_a_folder(out)) is not None:
        raise SimkitError(f"{problem}: name a folder for the workshop notebooks")
    notebooks = edition_notebooks()
    # as every writer of simkit's (docs/cli.md): a link is neither written through nor replaced
    if links := [name for name in (*(nb.name for nb in notebooks), "README.md") if (out / name).is_symlink()]:
        raise SimkitError(f"{out / links[0]}: is a symbolic link: neither written through nor replaced; name "
                          "its target, or remove the link")
    # renamed over by --force, a FIFO's reader would wait for ever (docs/cli.md: every writer refuses one)
    if odd := [name for name in (*(nb.name for nb in notebooks), "README.md")
               if (out / name).exists() and not ((out / name).is_file() or (out / name).is_dir())]:
        raise SimkitError(f"{out / odd[0]}: is not a regular file (a FIFO, a socket or a device): not "
                          "replaced, --force or not; remove it, or choose a new folder")
    clash = [nb.name for nb in notebooks if (out / nb.name).exists()] + _own_readme(out)
    if clash and not force:
        raise SimkitError(f"{out} already holds {clash[0]}: choose a new folder, or pass --force to "
                          "overwrite the notebooks there")
    contents = [(nb.name, nb.read_bytes()) for nb in notebooks]
    contents.append(("README.md", EDITION_README.encode("utf-8")))
    if folders := [name for name, _data in contents if (out / name).is_dir()]:
        raise SimkitError(f"{out / folders[0]} is a folder: the edition writes a file there")
    made = [p for p in (out, *out.parents) if not p.exists()]
    staged: list[tuple[Path, Path]] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, data in contents:
            tmp = out / f".simkit-{os.getpid()}-{name}.part"        # open()'s mode, as write_bytes gave
            with open(tmp, "xb") as f:
                staged.append((tmp, out / name))
                f.write(data)
        for tmp, final in staged:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _final in staged:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        for folder_made in made:                        # deepest first: only those this call created
            with contextlib.suppress(OSError):
                folder_made.rmdir()
        raise
    return [final for _tmp, final in staged]
