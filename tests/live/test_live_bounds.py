"""Issue 32: ``simkit live --events N`` overrides a ``[generate]`` stream's length after the file was checked,
so the page bound (``generate.empty_pages`` with ``events`` makes about ``events / (1 - empty_pages)`` pages,
at most
:data:`simkit.scenario.checks.MAX_PAGES`) was never applied to ``N``: the stream was built whole, its memory
growing past the bound. Now the override is held to the same bound: one line naming ``--events``, exit 2."""
from __future__ import annotations

from simkit.cli import main
from simkit.scenario.checks import MAX_PAGES


def test_an_events_override_past_the_page_bound_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "sparse.toml"
    path.write_text("[generate]\nevents = 40\nempty_pages = 0.9\n")          # 400 pages: within the bound
    folder = tmp_path / "live"
    assert main(["live", str(path), "--kills", "1", "--events", "1000000", "--dir", str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("simkit: --events 1000000: generate.empty_pages 0.9 with events = 1000000")
    assert f"at most {MAX_PAGES}" in captured.err
    assert not folder.exists()
