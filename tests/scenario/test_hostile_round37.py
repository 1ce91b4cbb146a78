"""Hostile input, thirty-seventh round (a fresh tester): false positives from valid scenario files. A seeded
generator wrote about 1,400 scripted and generated files over every key of docs/scenarios.md (overlaps,
backfills, empty and stuck pages, ``ids``, ``[initial]`` in every combination, ``[timing]``,
``[random_faults]``, every scripted fault kind, ``[auth] rotate_at``, workers 1 to 3, both safe sinks, fenced
settlement) and ran ``safe`` on each, at two seeds.

Found: a receipt in ``[initial] receipts`` at a position the pages carry under two ids (``e2`` on ``C1``,
``e3`` on ``C2``) went to one of them (the last read), and a ``resume_cursor`` past both pages was let through
by the position's receipt: the other event was lost before time 0, and ``safe`` was ``NOT ok`` (lost ``e2``).
The file is refused now, one line naming ``initial.receipts``. ``[generate] lost_fetch = 1.0`` (docs: "every
rate is between 0 and 1") lost every fetch response: no consumer ever reads a page, and ``safe`` was
``completed: no`` with every event pending; it is refused now as ``empty_pages = 1.0`` was.

Held: every other accepted file was ``ok`` for ``safe`` (or a justified halt); every refused one was refused
with one line; no load tracebacked or hung. A sweep of ``rotate_at`` every 0.05 time units over pauses,
late, lost and crossed replies and crashes (the new ``Request.sent`` rule) found no ``stale_binding``.

Left alone: a page that answers its own token with events never ends the stream, so ``safe`` is
``completed: no`` there (``test_hostile.py``'s self loop keeps it as the progress guard's case); settlement
policies other than ``fenced`` and the ``unsafe`` sink fail ``safe`` by design (docs/vocabulary.md).
``fetch_latency = 0`` with ``backoff = 0`` and anything that waits on time (a review, a hold, another
worker's pause) spun ``safe`` at one instant until the progress guard ended the run: such a file is now
refused (``test_hostile.py``, ``test_a_world_where_waiting_takes_no_time_is_refused``). A review,
hold or pause outlasting ``time_limit`` is ``completed: no``, as docs/scenarios.md says.
"""
from __future__ import annotations

import pytest

import simkit
from simkit.errors import ScenarioError

__all__: list[str] = []

TWO_IDS = """\
[[pages]]
cursor = "C1"
positions = [1, 2]
next_cursor = "C2"

[[pages]]
cursor = "C2"
positions = [2, 3]
next_cursor = "C3"
ids = ["e3", "x3"]

[[pages]]
cursor = "C3"
positions = []
next_cursor = "C3"

[initial]
resume_cursor = "C3"
applied_position = 3
receipts = [1, 2, 3]
"""


def test_a_receipt_at_a_position_of_two_ids_is_refused(tmp_path):
    """docs/scenarios.md, "Initial state": a state some consumer can have reached. The receipt at 2 held
    one of ``e2`` and ``e3``; ``safe`` was judged to lose the other."""
    path = tmp_path / "two_ids.toml"
    path.write_text(TWO_IDS)
    with pytest.raises(ScenarioError) as err:
        simkit.load(path)
    text = str(err.value)
    assert "\n" not in text and "key 'initial.receipts'" in text and "position 2" in text
    assert "'e2' (pages[0])" in text and "'e3' (pages[1])" in text


def test_a_receipt_at_a_position_of_one_id_still_loads(tmp_path):
    """The same stream with the receipt left at positions of one id, resuming on the first page: ok."""
    path = tmp_path / "one_id.toml"
    path.write_text(TWO_IDS.replace('resume_cursor = "C3"\napplied_position = 3\nreceipts = [1, 2, 3]',
                                    "applied_position = 1\nreceipts = [1]"))
    run = simkit.simulate(simkit.load(path), simkit.Consumer)
    assert run.verdict.halted is not None and run.verdict.halt_justified and run.verdict.ok


def test_a_lost_fetch_rate_of_one_is_refused(tmp_path):
    """Every fetch response lost: no run serves a page, whatever the consumer; 0.9 still loads and ``safe`` is
    ok there."""
    path = tmp_path / "lost.toml"
    path.write_text("[generate]\nevents = 3\nlost_fetch = 1.0\n")
    with pytest.raises(ScenarioError) as err:
        simkit.load(path)
    assert "\n" not in str(err.value) and "key 'generate.lost_fetch': must be below 1" in str(err.value)
    path.write_text("[generate]\nevents = 3\nlost_fetch = 0.9\n")
    assert simkit.simulate(simkit.load(path), simkit.Consumer).verdict.ok
