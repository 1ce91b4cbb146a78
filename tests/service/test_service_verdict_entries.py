"""The service checker's entry names have one owner: ``lost``, ``duplicated`` and ``unreconciled``
hold the names ``journal:sequence`` that :class:`~simkit.service.verdict.Entry` formats, and
``ServiceVerdict.entries`` gives the same lists structured, so that no reader splits a name back."""

from __future__ import annotations

import pytest

from simkit.service.sim import run_service_scenario
from simkit.service.verdict import Entry, ServiceVerdict


def test_an_entry_is_named_by_the_last_four_digits_of_its_journal_and_its_sequence():
    e = Entry.of("00000000-0000-4000-8000-000000000001", 10)
    assert e == ("0001", 10) and (e.journal, e.sequence) == ("0001", 10)
    assert str(e) == "0001:10"


def test_the_verdict_lists_are_the_names_of_its_entries():
    v = run_service_scenario("restore_from_backup", "reset_on_409").verdict
    assert v.lost == ["0001:10", "0001:11", "0001:12", "0001:13"]  # the lists the JSON output shows
    assert v.entries("lost") == [Entry("0001", s) for s in range(10, 14)]
    for name in ("lost", "duplicated", "unreconciled"):
        assert [str(e) for e in v.entries(name)] == getattr(v, name)


def test_entries_of_an_unknown_list_names_the_parameter():
    with pytest.raises(ValueError, match="name 'missed'"):
        ServiceVerdict().entries("missed")
    assert ServiceVerdict().entries("lost") == []
