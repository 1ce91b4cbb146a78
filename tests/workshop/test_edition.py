"""The attendee edition (``simkit workshop DIR``): the notebooks an attendee works in, written anywhere.

It holds the ten notebooks 00 to 09 and nothing of the facilitator's (no solutions, no hints, no link to
either); every notebook in it runs top to bottom in its new folder, outside the checkout, with the data it
needs read through the installed package; it never overwrites an attendee's notebooks unless asked to.
"""
import json
import re
from pathlib import Path

import pytest

from simkit.cli import main
from simkit.tools.notebook_run import executed
from simkit.workshop.edition import edition_notebooks

ROOT = Path(__file__).resolve().parents[2]
#: Words that only the facilitator's material uses.
FACILITATOR = re.compile(r"solutions|facilitator's guide|Facilitator "
                         r"only|facilitator/|\]\(README\.md|\]\(\.\./",
                         re.IGNORECASE)


def text_of(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def test_the_edition_is_the_ten_workshop_notebooks_and_a_readme(tmp_path, capsys):
    assert main(["workshop", str(tmp_path / "ws")]) == 0
    names = sorted(p.name for p in (tmp_path / "ws").iterdir())
    assert names == sorted([nb.name for nb in edition_notebooks()] + ["README.md"])
    assert [n for n in names if n.endswith(".ipynb")] == sorted(
        p.name for p in (ROOT / "notebooks").glob("0*.ipynb")
    )
    assert not any("solution" in n for n in names) and len(names) == 11
    assert "jupyter lab" in capsys.readouterr().out


def test_the_edition_holds_no_solutions_and_no_facilitator_text(tmp_path):
    main(["workshop", str(tmp_path)])
    found = {p.name: FACILITATOR.findall(text_of(p)) for p in tmp_path.glob("*.ipynb")}
    assert {name: words for name, words in found.items() if words} == {}
    assert not FACILITATOR.search((tmp_path / "README.md").read_text(encoding="utf-8"))


def test_the_solutions_and_hints_live_with_the_facilitator():
    facilitator = ROOT / "notebooks" / "facilitator"
    assert (facilitator / "09_workshop_solutions.ipynb").exists() and (facilitator / "README.md").exists()
    assert "Facilitator only" in (facilitator / "README.md").read_text(encoding="utf-8")
    assert "Facilitator only" not in (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")


def test_an_attendees_notebooks_are_not_overwritten_unless_asked(tmp_path, capsys):
    main(["workshop", str(tmp_path)])
    mine = tmp_path / "00_index.ipynb"
    mine.write_text("{}", encoding="utf-8")
    assert main(["workshop", str(tmp_path)]) == 2
    assert "already holds 00_index.ipynb" in capsys.readouterr().err and mine.read_text() == "{}"
    assert main(["workshop", str(tmp_path), "--force"]) == 0 and mine.read_text() != "{}"


@pytest.mark.parametrize("name", [nb.name for nb in edition_notebooks()])
def test_every_notebook_of_the_edition_runs_in_its_own_folder(tmp_path_factory, name):
    """Each notebook executed in the edition's folder (not the checkout's), as an attendee runs it."""
    import nbformat

    folder = tmp_path_factory.getbasetemp() / "edition"
    if not folder.exists():
        main(["workshop", str(folder)])
    nb = nbformat.read(folder / name, as_version=4)
    executed(nb, folder, timeout=600)           # (a widget cell's lost wake-up costs a second, not 600 s)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors


@pytest.mark.parametrize("fail_at", [0, 5, 10])
def test_a_full_disk_leaves_no_partial_edition(tmp_path, capsys, monkeypatch, fail_at):
    """Issue 32: every file is written in full beside its place before any is renamed into place, so a disk
    that fills on the Nth file leaves no notebook, no temporary file, and not the folder it would have made;
    the command says one line, exit 2."""
    import builtins
    import io
    real_open, opened = builtins.open, []

    def filling(file, mode="r", *args, **kwargs):
        if ("w" in mode or "x" in mode) and str(file).startswith(str(tmp_path)):
            opened.append(file)
            if len(opened) > fail_at:
                raise OSError(28, "No space left on device")
        return real_open(file, mode, *args, **kwargs)

    def fill(on: bool) -> None:
        for module in (builtins, io):                   # open() and pathlib's io.open
            monkeypatch.setattr(module, "open", filling if on else real_open)

    fill(True)
    target = tmp_path / "new" / "ws"
    assert main(["workshop", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and str(target) in err
    assert not (tmp_path / "new").exists()
    fill(False)
    assert main(["workshop", str(tmp_path)]) == 0                 # an existing folder: only the edition
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    opened.clear()
    fill(True)
    assert main(["workshop", str(tmp_path), "--force"]) == 2
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "notes.txt"} == before
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_an_edition_file_whose_place_is_a_folder_is_refused_before_anything_is_written(tmp_path, capsys):
    """A folder named README.md where the edition writes its README: one line, exit 2, and no notebook
    written (the renames would otherwise have stopped half way, after the notebooks)."""
    (tmp_path / "README.md").mkdir()
    assert main(["workshop", str(tmp_path)]) == 2
    assert "README.md is a folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
