"""Hostile use, forty-ninth round (the lead's, stop 47).

Found: a consumer whose own code raises inside an exploration or an audit was told what it raised and where in
its code, but not in which run: one schedule among hundreds, one case among 230, to find by hand. Now the line
names the schedule (``..., in the run with crash at after_event_commit@70``, forked or from scratch) and the
audit's case (``...; audit case bundled: default seed 7``). ``shrink`` stopped after five rounds though its
docs say it repeats until nothing more can be removed. And round 39's leftovers: ``--seed ' 7'`` echoed
unquoted, ``simkit workshop``'s last line with two blanks.
"""
from __future__ import annotations

import pytest

import simkit
from simkit.errors import ConsumerError
from simkit.tools.audit import audit
from simkit.tools.audit_cases import cases
from simkit.tools.explore import explore


class RaisesOnReplay(simkit.Consumer):
    """Raises when it meets e70 again with its receipt: only in a run where it crashed after e70's commit."""

    def is_replay(self, event, receipts, applied_position):
        if event.position == 70 and event.id in receipts:
            raise RuntimeError("replayed e70")
        return super().is_replay(event, receipts, applied_position)


class RaisesAt70(simkit.Consumer):
    """Raises whenever it applies the event at position 70: in the first run of any case that has one."""

    def apply(self, event, applied_position):
        if event.position == 70:
            raise RuntimeError("boom at 70")
        return (yield from super().apply(event, applied_position))


@pytest.mark.parametrize("share_prefixes", [True, False], ids=["forked", "from_scratch"])
def test_an_explored_schedule_that_raises_is_named(share_prefixes):
    with pytest.raises(ConsumerError) as raised:
        explore(simkit.load("default"), RaisesOnReplay, max_crashes=1, share_prefixes=share_prefixes)
    message = str(raised.value)
    assert message.startswith("strategy ") and "raised RuntimeError: replayed e70 in is_replay" in message
    assert message.endswith(", in the run with crash at after_event_commit@70"), message
    assert "\n" not in message


def test_a_fault_free_run_that_raises_says_so():
    with pytest.raises(ConsumerError, match=r"boom at 70 in apply .*, in the run without a fault$"):
        explore(simkit.load("default"), RaisesAt70, max_crashes=1)


def test_an_audit_names_the_case_a_consumer_raised_in():
    with pytest.raises(ConsumerError) as raised:
        audit(RaisesAt70, jobs=1, budget=30, shrink_first=False)
    message = str(raised.value)
    assert "raised RuntimeError: boom at 70 in apply" in message
    assert "\n" not in message
    named = [c for c in cases() if message.endswith(f"; audit case {c.kind}: {c.label}")]
    assert len(named) == 1, message
    with pytest.raises(ConsumerError, match="boom at 70"):     # the case named is the run that raises
        simkit.simulate(named[0].scenario, RaisesAt70, named[0].seed)


def test_shrink_repeats_its_rounds_until_one_removes_nothing(monkeypatch):
    """docs/cli.md and the module say shrink "repeats until no single removal keeps the failure"; it stopped
    after 5 rounds. A round that removes one page at a time shows it: the real rounds, one page each."""
    from simkit.tools import shrink as shrinking

    def one_page(data, still):          # the real first reduction, but at most one page per round
        chain, off = shrinking._chain(data)
        for k in range(len(chain) - 1):
            smaller = shrinking._relink(data, chain[:k] + chain[k + 1:-1], chain[-1], off)
            if still(smaller):
                return smaller
        return data

    monkeypatch.setattr(shrinking, "_passes", one_page)
    shrunk = shrinking.shrink(simkit.load("gauntlet"), "persist_token_on_fetch", 3)
    assert shrunk.original["pages"] - shrunk.shrunk["pages"] > 5, (shrunk.original, shrunk.shrunk)


@pytest.mark.parametrize("text", [" 7", "7 ", "\t7"])
def test_a_number_with_blanks_is_quoted_in_its_message(text, capsys):
    """Round 39's leftover: ``--seed ' 7'`` was echoed as ``--seed  7``, its blank invisible."""
    from simkit.cli import main
    assert main(["run", "default", "--seed", text]) == 2
    shown = text.replace("\t", "\\t")
    assert capsys.readouterr().err == f"simkit: --seed '{shown}': expected a whole number in ASCII digits\n"


def test_workshop_says_how_to_open_it_in_one_plain_sentence(tmp_path, capsys):
    """Round 39's leftover: ``...: open it with  jupyter lab ...``, two blanks."""
    from simkit.cli import main
    assert main(["workshop", str(tmp_path / "w")]) == 0
    folder = tmp_path / "w"
    said = f"wrote 11 files to {folder}; open it with jupyter lab {folder}/00_index.ipynb\n"
    assert capsys.readouterr().out == said
