"""What ``shrink`` writes, ``simkit run`` reads back to the same verdict (issue 32). Cursors and ids holding a
character past U+FFFF were written as JSON's UTF-16 surrogate pairs, which TOML refuses: the counterexample
could not be replayed."""
from __future__ import annotations

import json
import tomllib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simkit
from simkit.cli import main
from simkit.tools.shrink import shrink, toml_text

PRINTABLE = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=6).filter(str.isprintable)


def persist_token(c7: str, c8: str, ids: tuple[str, str, str]) -> dict:
    """shortcut_persist_token_on_fetch with its cursors and ids renamed."""
    return {"name": "renamed", "initial": {"resume_cursor": c7, "applied_position": 105,
                                           "checkpoint_version": 1, "receipts": [104, 105]},
            "pages": [{"cursor": c7, "positions": [104, 106, 107], "ids": list(ids), "next_cursor": c8},
                      {"cursor": c8, "positions": [], "next_cursor": c8}],
            "faults": [{"kind": "crash", "point": "before_event_commit", "position": 107}]}


def test_shrink_out_with_astral_cursors_is_replayed_by_run(tmp_path, capsys):
    source, out = tmp_path / "emoji.toml", tmp_path / "shrunk.toml"
    source.write_text(toml_text(persist_token("C7\U0001f600", "C8\U00010348",
                                              ("e\U0001f4a5", "e106", "e107"))))
    assert main(["shrink", str(source), "--strategy", "persist_token_on_fetch", "--out", str(out),
                 "--json"]) == 0
    shrunk = json.loads(capsys.readouterr().out)["verdict"]
    assert "\\U0001f600" in out.read_text() and out.read_text().isascii()
    assert main(["run", str(out), "--strategy", "persist_token_on_fetch", "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["lost"] == ["e107"] and {**replayed, "scenario": None} == {**shrunk, "scenario": None}


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PRINTABLE, min_size=2, max_size=2, unique=True), st.lists(PRINTABLE, min_size=3, max_size=3,
                                                                          unique=True))
def test_what_shrink_writes_reads_back_to_the_same_verdict(cursors, ids):
    sc = simkit.parse(persist_token(cursors[0], cursors[1], tuple(ids)))
    result = shrink(sc, "persist_token_on_fetch")
    again = simkit.parse(tomllib.loads(result.toml()), source="shrunk.toml")
    replayed = simkit.simulate(again, simkit.resolve("persist_token_on_fetch"), result.run.seed)
    assert {**replayed.as_dict(), "scenario": None} == {**result.run.as_dict(), "scenario": None}
