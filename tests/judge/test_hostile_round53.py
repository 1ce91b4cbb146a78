"""Round 53: mutation testing of the judge's remaining modules (settlement.py, verdict.py, facts.py,
outcomes.py). Each test kills at least one mutant the existing tests let live, named ``module-N`` in its
docstring.

How the mutants were made (the script stays outside the repository, /tmp/r53/mutate.py): stdlib ``ast`` walks
each module and makes one mutant per site, numbered in walk order: each comparison flipped (< <=, > >=, == !=,
in / not in, is / is not), ``and``/``or`` swapped, every integer constant +1 and -1, ``if``/``while`` and
conditional-expression tests set to True and to False, ``not`` dropped, comprehension filters dropped,
``continue``/``break``, call statements, augmented assignments and ``return`` inside an ``if`` replaced by
``pass``, ``max``/``min`` and ``any``/``all`` swapped, and settlement-kind, ledger-action, outcome, fate,
property and hold-ending strings swapped within their group. ``ast.unparse`` writes the mutated module into a
copy of the worktree, and each mutant runs in a process of its own (``nice``, one at a time). 666 mutants
(settlement 93, verdict 115, facts 342, outcomes 116); run: all of settlement and verdict, 74 of facts and 30
of outcomes drawn at random (seed 53).

Kill criterion: ``pytest -x`` (addopts and nbval off) on the module's fast tests: settlement
(tests/store/test_settlement.py, tests/judge/test_round3_rules.py, test_hostile_round29.py,
test_verdict_fields.py), verdict (tests/judge/test_verdict_fields.py, test_checker.py, test_golden.py), facts
(tests/judge/test_facts_reference.py, tests/truth/test_ground_truth.py, tests/judge/test_checker.py), outcomes
(tests/judge/test_checker.py, test_hostile_round46.py, test_facts_reference.py); 200 s a mutant.
Narrower than the brief's (all of tests/judge and tests/seed, which takes minutes a mutant on the shared
machine): a mutant it let live may die in the wider one (outcomes-10, tried there, lived).

Score, of the 312 run: 233 killed by the filter (two by the timeout); 62 killed by the tests below;
10 equivalent (the same verdict and facts on every run; the reasons are in the round's report: a shortcut
that only saves work, ``any`` of one field, a fallback no simulated run takes); 7 left (differences found
in no run of the 8 strategies x 10 bundled scenarios x 6 crash points compared, or not built in the time).
None showed the real checker wrong.
"""
from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from conftest import variant

import simkit
from simkit.judge.settlement import SETTLEMENT_KINDS, settlement_violations
from simkit.model import Event, Reply, Reservation
from simkit.store.settlement import TIMEOUT, Ledger, Transition, canonical_request, fingerprint
from simkit.truth.clock import Clock
from simkit.world.external import ExternalService, Request
from simkit.world.sink import Sink

DOCS = Path(__file__).resolve().parents[2] / "docs"
FP1 = fingerprint(canonical_request(Event("e1", 1)))
FP2 = fingerprint({"operation_id": "e1", "request": "changed"})
ROTATING = simkit.parse({"name": "rotating", "sink": "idempotent", "auth": {"rotate_at": [3.0]},
                         "pages": [{"cursor": "C1", "positions": [1], "next_cursor": "C2"},
                                   {"cursor": "C2", "positions": [], "next_cursor": "C2"}]})


def test_the_settlement_kinds_are_the_ones_docs_verdict_names():
    """settlement-0 .. settlement-11 (a name of ``SETTLEMENT_KINDS`` swapped for another): the kinds the
    module declares (and checker.py exports) are the four docs/verdict.md's ``settlement_violations`` row
    names, in its order, each once."""
    row = next(line for line in (DOCS / "verdict.md").read_text().splitlines()
               if line.startswith("| `settlement_violations`"))
    named = tuple(k for k in re.findall(r"`([a-z_]+)` \(", row))
    assert SETTLEMENT_KINDS == named == ("committed_downgraded", "wrong_reservation", "unknown_reply",
                                         "stale_binding")


def test_a_downgrade_names_the_observation_that_caused_it():
    """settlement-31 (``t.detail if t.detail else ''`` always ``''``): the violation says which weak
    observation overwrote committed success (``(settle: timeout)``), not only the transaction."""
    clock = Clock()
    ledger = Ledger(clock)
    service = ExternalService(Sink("idempotent", {}, clock))
    mine = ledger.reserve(1, "e1", FP1, "P1").reservation
    ledger.settle("fenced", 1, mine, service.execute(1, mine))
    ledger.settle("last_write_wins", 2, mine, TIMEOUT)
    [x] = settlement_violations(ledger, service, None)
    assert x["kind"] == "committed_downgraded" and x["detail"].endswith("overwritten with provisional "
                                                                        "(settle: timeout)"), x


def test_a_renewal_bound_to_a_principal_out_of_force_is_reported():
    """settlement-39, settlement-41 (``renew`` swapped for ``reserve`` or ``write`` in the actions checked for
    their binding): a record renewed for a changed request, still bound to the first principal after the
    rotation, is a ``stale_binding`` (step 2: a new reservation carries the binding in force), as a first
    reservation is (test_round3_rules checks only that one)."""
    clock = Clock()
    ledger = Ledger(clock)
    ledger.reserve(1, "e1", FP1, "P1")
    clock.time = 5.0                        # past the rotation at 3.0: P2 is in force
    assert ledger.reserve(1, "e1", FP2, "P1").reservation.generation == 2     # a renewal
    found = settlement_violations(ledger, None, ROTATING)
    assert [(x["kind"], x["time"]) for x in found] == [("stale_binding", 5.0)], found


def test_violations_are_listed_in_the_order_they_happened():
    """settlement-12 (``out.sort`` dropped): a request bound to a stale principal at t = 4 and a downgrade at
    t = 5 are listed by time, though the ledger's transitions are walked before the service's requests."""
    r1 = SimpleNamespace(operation_id="e1", binding="P1", generation=1, fingerprint=FP1)
    downgrade = Transition(9, 5.0, 1, "e1", "settle", "committed", "provisional", r1, None, "timeout")
    stale = Request(1, 4.0, 2, r1, "ran", 4.0)
    found = settlement_violations(SimpleNamespace(history=[downgrade]), SimpleNamespace(requests=[stale]),
                                  ROTATING)
    assert [(x["kind"], x["time"]) for x in found] == [("stale_binding", 4.0), ("committed_downgraded", 5.0)]


def _ledger():
    clock = Clock()
    return Ledger(clock), ExternalService(Sink("idempotent", {}, clock))


def test_a_split_write_of_another_requests_result_is_a_wrong_reservation():
    """settlement-58, settlement-59, settlement-60 (``write`` swapped out of the actions whose commits are
    checked): ``split_validate_write`` commits in its second transaction, ``write``; a reply that claims our
    tuple but answers another client's request (the service's log says so) is a ``wrong_reservation`` there
    as in a ``settle``."""
    ledger, service = _ledger()
    mine = ledger.reserve(1, "e1", FP1, "P1").reservation
    liar = Reply(mine, service.crossed(mine, "binding").request)
    assert ledger.settle("split_validate_write", 1, mine, liar) == "committed"
    assert [t.action for t in ledger.history] == ["reserve", "write"]
    [x] = settlement_violations(ledger, service, None)
    assert x["kind"] == "wrong_reservation" and "differs in binding" in x["detail"], x


def test_without_the_services_log_a_reply_is_judged_by_the_identity_it_carries():
    """settlement-64 (``identity.get`` used even when there is no service log): a hand-made ledger without a
    service (docs: ``settlement_violations(ledger)``) judges a committed reply by its own identity; the
    mutant raised AttributeError on ``None``."""
    ledger, _service = _ledger()
    mine = ledger.reserve(1, "e1", FP1, "P1").reservation
    other = Reply(Reservation("e1", FP1, "P0", 1), 7)
    assert ledger.settle("unfenced", 1, mine, other) == "committed"   # matched by operation id only
    [x] = settlement_violations(ledger)
    assert x["kind"] == "wrong_reservation" and "differs in binding" in x["detail"], x


def test_a_halts_reason_reads_as_given_none_as_no_reason_and_a_long_one_cut_at_a_thousand():
    """verdict-35, verdict-36 (``halted.strip()`` taken as always true, or always false), verdict-37,
    verdict-38 (the cut at 1,000 characters moved by one): a blank reason reads ``(no reason given)``, a
    reason as it was given, one of 1,000 characters whole and one of 1,001 as its first 1,000 and its
    length, in the verdict's one line as in the table (docs/verdict.md, ``halted``)."""
    from simkit.judge.report import verdict_line
    from simkit.judge.verdict import NO_REASON, Verdict

    def line(reason):
        text = verdict_line(Verdict(halted=reason, halt_justified=True))
        return text.split("halted ")[1].rsplit(", ", 1)[0]

    assert line("  ") == NO_REASON == "(no reason given)"
    assert line("token refused") == "token refused"
    assert line("x" * 1000) == "x" * 1000
    assert line("x" * 1001) == "x" * 1000 + "… (1001 characters)"


def test_the_tables_halted_cell_says_the_reason_and_whether_it_was_unjustified():
    """verdict-39 (``v.halted is None`` taken as always true: every cell ``-``), verdict-43 .. verdict-45
    (`` (unjustified)`` shown always, never, or for a justified halt): the command line's ``halted`` column
    is ``-`` with no halt, else the reason, followed by ``(unjustified)`` only when ground truth did not
    justify it (``halt_justified`` false)."""
    from simkit.judge.report import HEADERS, verdict_row
    from simkit.judge.verdict import Verdict

    def cell(**fields):
        row = verdict_row(SimpleNamespace(strategy="s", verdict=Verdict(**fields)))
        return dict(zip(HEADERS, row))["halted"]

    assert cell() == "-"
    assert cell(halted="token refused", halt_justified=True) == "token refused"
    assert cell(halted="token refused", halt_justified=False) == "token refused (unjustified)"


def test_a_verdict_is_read_back_from_a_json_object_that_lacks_the_later_fields():
    """verdict-96 (``if f.json in d`` dropped in ``Verdict.from_dict``): a ``--json`` object written before
    the later fields were declared (no ``settlement_violations``, no ``unhalted``) reads back, the missing
    fields at their defaults; the mutant raised KeyError."""
    from simkit.judge.verdict import Verdict

    old = {"ok": False, "lost": ["e2"], "duplicated": [], "regressions": 0, "invariant_violations": [],
           "halted": None, "halt_justified": None, "pending": [], "completed": True}
    v = Verdict.from_dict(old)
    assert v.lost == ["e2"] and v.settlement_violations == [] and v.unhalted == [] and not v.ok


def test_the_plots_fates_name_replays_quarantines_and_ignores():
    """facts-75 (``eid in done_at`` flipped: no event ever ``replayed harmlessly``), facts-78 (the receipt's
    last field read for its outcome: no event ever ``quarantined`` or ``ignored``): ``safe`` on three bundled
    scenarios, each fate as :func:`~simkit.judge.facts.event_fates` documents it."""
    from simkit.judge.facts import FATES, event_fates

    def fates(name, **kw):
        r = simkit.simulate(simkit.load(name), simkit.resolve("safe"), **kw)
        assert r.verdict.ok
        found = event_fates(r, r.verdict)
        assert set(found.values()) <= set(FATES)
        return sorted(found.values())

    crash = simkit.model.Fault("crash", "before_page_barrier")
    assert fates("retry_walkthrough", faults=[crash]) == ["done before the run"] + ["replayed harmlessly"] * 3
    assert fates("quarantine_boundary") == ["quarantined", "replayed harmlessly", "replayed harmlessly"]
    assert fates("ignored_event") == ["applied once"] * 3 + ["ignored", "replayed harmlessly"]


def test_a_crash_at_the_barriers_instant_is_what_made_the_loss_final():
    """facts-292, facts-293 (the tie ``h.end == when`` flipped, or its ``ended_by in ('crash', 'halt')``):
    persisting the token on fetch with a crash before the first event's commit, the barrier and the crash
    fall at t = 1.5; the attempt that held e106 and e107 ended by the crash at the barrier's instant, and
    the crash is what made both losses final (``loss_final``: "a crash then, the crash"), not the barrier."""
    from simkit.judge.facts import loss_final

    crash = simkit.model.Fault("crash", "before_event_commit")
    run = simkit.simulate(simkit.load("retry_walkthrough"), simkit.resolve("persist_token_on_fetch"),
                          faults=[crash])
    assert run.verdict.lost == ["e106", "e107"]
    assert loss_final(run, run.verdict.lost) == {"e106": (1.5, "crash"), "e107": (1.5, "crash")}


def test_the_plots_fates_name_the_verdicts_duplicated_lost_and_pending_events():
    """facts-84, facts-88 (``duplicated`` drawn as another fate), facts-93 (``lost`` as ``applied once``),
    facts-106, facts-108 (``pending`` as another): those three fates are the verdict's, whatever the event's
    receipts say (:func:`~simkit.judge.facts.event_fates`). facts-41, facts-59 (a name of ``FATES``, the
    legend's list, swapped for another): each of them is one of ``FATES``, which names each fate once."""
    from simkit.judge.facts import FATES, event_fates

    assert len(set(FATES)) == len(FATES) == 8

    def fates(run):
        found = event_fates(run, run.verdict)
        assert set(found.values()) <= set(FATES)    # the plot's legend lists every fate drawn
        return {fate: sorted(e for e, f in found.items() if f == fate) for fate in set(found.values())}

    twice = simkit.parse({"name": "limit", "sink": "unsafe", "initial": {"resume_cursor": "C1"},
                          "pages": [{"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
                                    {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
                          "faults": [{"kind": "crash", "point": "after_effect", "position": 2}]})
    run = simkit.simulate(twice)
    assert run.verdict.duplicated == ["e2"] and fates(run)["duplicated"] == ["e2"]
    run = simkit.simulate(simkit.load("retry_walkthrough"), simkit.resolve("persist_token_on_fetch"))
    assert run.verdict.lost == ["e107"] and fates(run)["lost"] == ["e107"]
    stuck = variant("retry_walkthrough", faults=[], timing={"time_limit": 500.0},
                    events=[{"position": 107, "behavior": "transient", "failures": 10**9}])
    run = simkit.simulate(stuck)
    assert run.verdict.pending == ["e107"] and fates(run)["pending"] == ["e107"]


def test_an_attempt_that_went_on_to_load_again_is_a_worker_that_moved_on():
    """facts-304, facts-305 (``load`` dropped from the attempts read as ``worker moved on``): persisting the
    token on fetch on the default scenario, the last attempt that held e40 ended when its worker loaded the
    checkpoint again at t = 12.5; ``loss_final`` says ``worker moved on``, not the raw ``load``."""
    from simkit.judge.facts import loss_final

    run = simkit.simulate(simkit.load("default"), simkit.resolve("persist_token_on_fetch"))
    final = loss_final(run, run.verdict.lost)
    assert final["e40"] == (12.5, "worker moved on")
    assert {why for _when, why in final.values()} == {"worker moved on", "crash"}


def test_a_replay_at_the_instant_the_outcome_became_durable_is_harmless():
    """facts-76 (``t >= done_at[eid]`` made strict): reporting success before the effect on the gauntlet, e140
    and e440 are replayed at the very instant their effect made their outcome durable; a replay "at or after
    the outcome's moment" (:func:`~simkit.judge.facts.event_fates`) is ``replayed harmlessly``."""
    from simkit.judge.facts import event_fates

    run = simkit.simulate(simkit.load("gauntlet"), simkit.resolve("success_before_effect"))
    fates = event_fates(run, run.verdict)
    assert fates["e140"] == fates["e440"] == "replayed harmlessly"


def test_terminal_since_hands_back_every_second_terminal_receipt():
    """outcomes-110 (``again.extend`` dropped in ``terminal_since``), outcomes-10 (``_place`` adding a new
    slot for an id it already placed), outcomes-12 (its id never listed): an event quarantined and then
    ignored holds its outcome from the first receipt, and the second is handed back in ``again``."""
    from simkit.judge.checker import terminal_since
    from simkit.model import Checkpoint
    from simkit.store.memory import MemoryStore

    store = MemoryStore(Checkpoint("C1", 0, 0))
    first = store.clock.tick()
    store.receipt_log.add(first, 1.0, 1, "e1", "quarantined")
    store.receipt_log.add(store.clock.tick(), 2.0, 2, "e1", "ignored")
    again: list[str] = []
    assert terminal_since(store, Sink("idempotent", {}, store.clock), again) == {"e1": first}
    assert again == ["e1"]


def test_an_applied_receipt_is_no_outcome_in_a_run_whose_sink_saw_no_effect_at_all():
    """outcomes-56 (``waiting += 1`` dropped: applied receipts still waiting for their effect were cleared
    only if some other effect was found): reporting success before the effect, a crash before the one effect
    of the run leaves e1's ``applied`` receipt with no effect anywhere; e1 is lost ("``applied`` means the
    effect is in the sink's log"), where the mutant took the receipt for its outcome."""
    one = simkit.parse({"name": "one", "sink": "idempotent", "initial": {"resume_cursor": "C1"},
                        "pages": [{"cursor": "C1", "positions": [1], "next_cursor": "C2"},
                                  {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
                        "faults": [{"kind": "crash", "point": "before_effect", "position": 1}]})
    run = simkit.simulate(one, simkit.resolve("success_before_effect"))
    assert len(run.world.sink.effects) == 0
    assert run.verdict.lost == ["e1"] and not run.verdict.ok


def test_terminal_since_finds_the_effect_of_an_applied_receipt():
    """outcomes-71, outcomes-76 (an effect of an id looked up in the stream only, never among the ids past
    it): ``terminal_since`` has no stream, so every id is one of those; e1's ``applied`` receipt at seq 1 and
    its effect at seq 2 give it an outcome from 2 (the later of the two), where the mutants found none."""
    from simkit.judge.checker import terminal_since
    from simkit.model import Checkpoint
    from simkit.store.memory import MemoryStore

    store = MemoryStore(Checkpoint("C1", 0, 0))
    sink = Sink("idempotent", {}, store.clock)
    store.receipt_log.add(store.clock.tick(), 1.0, 1, "e1", "applied")
    sink.record(1, "e1")
    assert terminal_since(store, sink) == {"e1": 2}
