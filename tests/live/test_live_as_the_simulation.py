"""``simkit live`` answers a consumer as the simulation does (review of round 8): the same one line for a
value no store holds or a field of the wrong type, the same verdict for a ``run()`` that returns; and the
library refuses a blank folder by name."""
import json
from pathlib import Path

import pytest
from conftest import UNSTORABLE, WRONG_TYPES

import simkit
from simkit.cli import main
from simkit.errors import SimkitError
from simkit.live.run import live

FORGED = Path(__file__).resolve().parents[1] / "mutants" / "forged.py"

CONSUMERS = UNSTORABLE + WRONG_TYPES + '''
from simkit.ops import Fetch, Wait


class ReturnsAtOnce(Consumer):
    """reads its checkpoint and stops (step 7's "stop"): every event left undone"""
    def run(self):
        yield Load()

'''


@pytest.fixture
def consumers(tmp_path, monkeypatch):
    (tmp_path / "consumers.py").write_text(CONSUMERS)
    monkeypatch.chdir(tmp_path)


def test_a_value_no_store_holds_is_the_consumers_line_as_in_run(consumers, capsys):
    """It was ``simkit: live worker 1: Unstorable: next_cursor ...``: the store's words, not the
    consumer's."""
    line = ("strategy consumers.py:Surrogate: yielded a malformed request: Barrier.next_cursor '\\ud800' "
            "holds a lone surrogate (U+D800), which no store can hold: text is kept as UTF-8\n")
    assert main(["run", "retry_walkthrough", "--strategy", "consumers.py:Surrogate"]) == 2
    assert capsys.readouterr().err == f"simkit: {line}"
    assert main(["live", "retry_walkthrough", "--strategy", "consumers.py:Surrogate", "--kills", "0"]) == 2
    assert capsys.readouterr().err == f"simkit: live worker 1: {line}"


@pytest.mark.parametrize("cls, problem", [
    ("BoolPosition", "Commit.applied_position is True (bool), not int"),
    ("EffectAsText", "Commit.with_effect is 'no' (str), not bool"),
    ("FetchesANumber", "Fetch.cursor is 7 (int), not str"),
])
def test_a_field_of_the_wrong_type_is_refused_before_it_runs_as_in_run(consumers, capsys, cls, problem):
    """(round 9) live's worker asked ``malformed()`` only when a request raised: a bool ``applied_position``
    was written as 1 and the run judged, ``Fetch(7)`` was fetched again and again until the timeout."""
    line = f"strategy consumers.py:{cls}: yielded a malformed request: {problem}\n"
    assert main(["run", "retry_walkthrough", "--strategy", f"consumers.py:{cls}"]) == 2
    assert capsys.readouterr().err == f"simkit: {line}"
    assert main(["live", "retry_walkthrough", "--strategy", f"consumers.py:{cls}", "--kills", "0",
                 "--timeout", "60"]) == 2                # (FetchesANumber ran until the timeout)
    assert capsys.readouterr().err == f"simkit: live worker 1: {line}"


def test_a_run_that_returns_is_judged_as_in_run(consumers, capsys):
    """It was ``strategy consumers.py:ReturnsAtOnce raised StopIteration in run``, where ``simkit run`` judges
    the run (two events pending, not completed)."""
    assert main(["run", "retry_walkthrough", "--strategy", "consumers.py:ReturnsAtOnce", "--json"]) == 0
    simulated = capsys.readouterr().out
    assert main(["live", "retry_walkthrough", "--strategy", "consumers.py:ReturnsAtOnce", "--kills", "0",
                 "--json"]) == 0
    lived = capsys.readouterr().out
    a, b = json.loads(simulated), json.loads(lived)
    assert a["pending"] == b["pending"] == ["e106", "e107"] and a["completed"] is b["completed"] is False


@pytest.mark.parametrize("folder", ["", "  "])
def test_the_library_refuses_a_folder_of_nothing_by_name(tmp_path, monkeypatch, folder):
    """``live(folder="")`` ran in the current folder (``Path("")`` is ``.``) and left its databases there."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SimkitError, match="^folder .*: names no folder$") as refused:
        live(simkit.load("retry_walkthrough"), simkit.resolve("safe"), folder=folder)
    assert refused.value.param == "folder" and list(tmp_path.iterdir()) == []


def test_a_forged_position_decides_nothing_as_in_run(consumers, capsys):
    """(round 17's in the simulation) live kept the receipt of ``Commit(Event("e3", 1003), ...)`` at 1003: the
    next ``Lookup`` showed no holder at 3, the consumer's own step 3 saw a gap and halted, NOT ok. Now live's
    driver takes the event where the stream holds it, as the world does: the run is ``safe``'s."""
    verdicts = []
    for strategy in (f"{FORGED}:ForgesEveryPosition", "safe"):
        assert main(["live", "ignored_event", "--strategy", strategy, "--kills", "0", "--json"]) == 0
        verdicts.append({k: v for k, v in json.loads(capsys.readouterr().out).items() if k != "strategy"})
    assert verdicts[0] == verdicts[1] and verdicts[0]["ok"] is True
