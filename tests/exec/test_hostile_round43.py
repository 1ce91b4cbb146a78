"""Hostile consumers, forty-third round: "``simkit audit exec:...`` passes means my program keeps the rules",
measured by mutation of the reference consumer in another process, ``examples/consumers/python/consumer.py``
(seed 000 + 001 written without simkit, over ``exec:``). A script (round 38's operators, on a whole program)
made every one-token change of its ``Procedure``'s methods but ``ask``: a comparison flipped, an off-by-one, a
statement dropped, two adjacent statements (requests too) swapped, a condition made ``True``/``False``,
``and``/``or`` swapped, ``not`` dropped, a status, outcome, decision, settlement or field string swapped,
``applied``/``target``, ``cursor``/``version`` and ``LOST``/``BLOCKED``/``COMMITTED`` swapped, ``max``/``min``
and either argument: 455 mutants, each a program of its own, run as ``exec:python3 mNNN.py``. The audit's
bundled, corner and wide cases (one seed each, in order, to the first failure; the five widest only for the
first 50 and 10 others) killed 269 (85 with the program's own error: a ``wait`` reason the protocol refuses,
an exit); of the 186 left, two were audited in full (``--jobs 2``): one fails (below); a blocked page retried
without a wait passes the 133 cases a 400 s budget judged. Then the five widest cases, on ten survivors that
compute differently: big_page kills a settlement whose answer is never taken as ``committed`` (it and three
mutants computing the same). The score is 274 of 278 non-equivalent mutants killed.

Found: nothing new. The 4 missed mutants are round 38's left-alone kind, in this program's words: step 7's
second test, ``page["next_cursor"] == cursor`` after step 4, dropped, made ``False`` or comparing with the
version: on a page that serves events and answers its own token, the worker passes the barrier to the same
cursor and attempts again at once, for ever (tests/judge/test_hostile_round38.py says why no case can judge
that).

Held: an effect committed with its receipt on an external sink (``apply``'s ``if not self.external_sink`` made
``True``: the world calls, then commits, unsettled) passed every one-run case; the full audit's explorations
find it duplicated (invariant 4). Equivalent, 177, each keeping the rules by construction: 57 in the
``--publish-token-on-fetch`` branches, which ``run`` never takes (the flag is ``run-buggy``'s); 46 statuses
swapped (``run`` tells only "wait" from "attempt again": a blocked page retried at once is a liberty step 4
allows, each request takes simulated time; a page advanced and then a wait, or one event per attempt, is slow,
not wrong); checks reordered or dropped where they exclude each other or never fire (a refused cursor, a
``lost`` then ``none`` fetch, step 7's test before step 4 whose twin after it backs off); the in-memory prefix
not raised, lowered or taken from a commit's ``target`` (the store keeps the greater, a commit's is through
its event); receipts never trusted for a replay, or the watermark never trusted, or at ``<`` (the unique
receipt refuses the second commit; a receipt always covers ``applied_position``); every commit taken as lost
or blocked, a settlement as lost (the next attempt replays it, or reserves again and finds it committed); the
handler asked before the replay test (its decision is not acted on); a barrier to version + 2; halt and error
messages.

Left alone: with ``is_caught_up`` true for a page that serves events and answers its own token (``not``
dropped or made ``True``), a worker backs off without processing it: round 38's other kind, equivalent where
``safe`` passes. And a settlement never taken as ``committed`` (step 6 of docs/protocol.md: the worker backs
off after each effect, the next attempt finds the record committed) keeps the rules but backs off once per
external event: on big_page's 1,500 it has not finished at the time limit, incomplete (no invariant, nothing
lost). Judged as the scenario bounds a run, not a wrong verdict.

Each test: the mutant is the reference consumer with one line changed (written to ``tmp_path``), judged on the
one case of the audit that alone kills it among the bundled, corner and wide cases; the reference is ok there.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.tools.audit_cases import cases

REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "consumers" / "python" / "consumer.py"


def _mutant(tmp_path: Path, old: str, new: str) -> str:
    """``exec:`` of the reference consumer with its one line ``old`` (stripped) replaced by ``new``."""
    lines = REFERENCE.read_text().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.strip() == old]
    assert len(at) == 1, (old, at)
    indent = lines[at[0]][: len(lines[at[0]]) - len(lines[at[0]].lstrip())]
    lines[at[0]] = indent + new + "\n"
    path = tmp_path / "mutant.py"
    path.write_text("".join(lines))
    return f"exec:{sys.executable} {path}"


def _case(name: str):
    return next(c for c in cases(1, 0) if c.name == name and c.kind in ("bundled", "corner", "wide"))


#: (the case, the line, its mutation, what the mutant breaks)
ONLY_KILLERS = [
    ("page_out_of_order", "if previous is not None and position <= previous:", "if False:",
     "step 3: no order check within a page"),
    ("two_ids_one_position", "if previous is not None and position <= previous:",
     "if previous is not None and position < previous:", "step 3: two ids at one position let through"),
    ("versions_outrun_positions", 'applied = checkpoint["applied_position"]',
     'applied = checkpoint["checkpoint_version"]', "two kinds of progress: the version taken for the prefix"),
    ("long_outage", 'return LOST if kind == "lost" else done', "return done",
     "invariant 2: a lost commit taken as made, the prefix moves over it"),
    ("late_reply_before_retry", 'if operation["state"] == COMMITTED:', "if False:",
     "seed 001: a committed operation called again"),
]


@pytest.mark.parametrize("name, old, new, breaks", ONLY_KILLERS, ids=[k[0] for k in ONLY_KILLERS])
def test_a_mutant_of_the_exec_reference_only_one_case_catches_is_caught(tmp_path, name, old, new, breaks):
    """The audit's cases that alone kill a mutant of the ``exec:`` reference (among the bundled, corner and
    wide cases, in the audit's order) keep killing it: ``breaks`` says which rule."""
    case = _case(name)
    assert simkit.simulate(case.scenario, f"exec:{sys.executable} {REFERENCE}", case.seed).verdict.ok
    assert not simkit.simulate(case.scenario, _mutant(tmp_path, old, new), case.seed).verdict.ok, breaks
