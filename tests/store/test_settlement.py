"""Seed 001, "Fenced monotonic settlement for retryable operations", executed.

One test per "Practical steps" 1-7, named after its step; the "Validation note" cases (concurrent completion
orders, stale generations, fingerprint mismatches, authorization changes, crash windows, external-effect
retries); each unsafe settlement policy failing on the scenario that targets it while ``fenced`` passes; and
the checker firing on hand-built histories for each new violation kind.
"""

import pytest

import simkit
from simkit.cli import main
from simkit.judge.checker import check, settlement_violations
from simkit.model import Checkpoint, Event
from simkit.scenario.read import SETTLEMENTS
from simkit.store.memory import MemoryStore
from simkit.store.settlement import (
    COMMITTED,
    PENDING,
    POLICIES,
    PROVISIONAL,
    TIMEOUT,
    Ledger,
    Reply,
    Reservation,
    canonical_request,
    fingerprint,
)
from simkit.world.external import ExternalService
from simkit.world.provider import scripted
from simkit.world.sink import Sink

BASE = {"name": "settle", "sink": "idempotent", "initial": {"resume_cursor": "C1"},
        "pages": [{"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
                  {"cursor": "C2", "positions": [], "next_cursor": "C2"}]}
FP1 = fingerprint(canonical_request(Event("e1", 1)))
FP2 = fingerprint({"operation_id": "e1", "request": "changed"})


def simulate(faults=(), settlement="fenced", sink="idempotent", rotate_at=(), strategy="safe"):
    data = dict(BASE, sink=sink, faults=list(faults))
    if rotate_at:
        data["auth"] = {"rotate_at": list(rotate_at)}
    return simkit.simulate(simkit.parse(data), simkit.resolve(strategy), settlement=settlement)


def requests(run, op="e1"):
    """(fate, reservation) of every request the service saw for one operation."""
    return [(r.fate, r.identity) for r in run.world.service.requests if r.identity.operation_id == op]


def actions(run, op="e1"):
    return [(t.action, t.before, t.after) for t in run.world.store.operations.history if t.operation_id == op]


def reserved(ledger: Ledger, op="e1", fp=FP1, binding="P1") -> Reservation:
    return ledger.reserve(1, op, fp, binding).reservation


# -- Practical steps 1-7 -------------------------------------------------------------------------------------
def test_step_1_reserve_a_tuple_of_operation_fingerprint_binding_and_increasing_generation():
    r = simulate()
    records = r.world.store.operations.records
    assert list(records) == ["e1", "e2"]
    for gen, (eid, record) in enumerate(records.items(), start=1):
        event = r.world.provider.events[eid]
        assert record.reservation == Reservation(eid, fingerprint(canonical_request(event)), "P1", gen)
        assert len(record.reservation.fingerprint) == 64           # SHA-256 of the canonical request
        assert record.state == COMMITTED
    assert records["e1"].reservation.fingerprint != records["e2"].reservation.fingerprint
    ledger = Ledger()
    assert [reserved(ledger, op).generation for op in ("a", "b", "c")] == [1, 2, 3]


def test_step_2_every_retry_reuses_the_exact_tuple():
    """A lost reply, then a crash between call and settlement: three calls, one tuple, one effect."""
    r = simulate([{"kind": "lost_response", "op": "effect", "position": 1},
                  {"kind": "crash", "point": "after_effect", "position": 1, "occurrence": 2}])
    assert r.verdict.ok
    calls = requests(r)
    assert [fate for fate, _ in calls] == ["ran", "deduplicated", "deduplicated"]
    assert len({identity for _, identity in calls}) == 1
    assert r.world.sink.effect_count["e1"] == 1
    assert [a for a, *_ in actions(r)] == ["reserve", "settle", "settle"]       # timeout, then success


def test_step_2_a_changed_request_or_principal_needs_a_new_reservation_and_generation():
    ledger = Ledger()
    first = reserved(ledger)
    assert reserved(ledger) == first                                          # same request, same principal
    new_principal = reserved(ledger, binding="P2")
    assert new_principal.generation == 2 and new_principal.binding == "P2"
    new_request = reserved(ledger, fp="another request", binding="P2")
    assert new_request.generation == 3
    assert [(t.action, t.detail) for t in ledger.history] == [
        ("reserve", ""), ("renew", "binding changed"), ("renew", "fingerprint changed")]
    # in a run: reserved under P1, crashed before calling, credentials rotated while it was down
    r = simulate([{"kind": "crash", "point": "before_effect", "position": 1}], rotate_at=[3.0])
    assert r.verdict.ok
    assert [(t.action, t.reservation.binding, t.reservation.generation)
            for t in r.world.store.operations.history
            if t.operation_id == "e1" and t.action != "settle"] == [("reserve", "P1", 1), ("renew", "P2", 2)]
    assert requests(r) == [("ran", Reservation("e1", FP1, "P2", 2))]         # the old tuple was never called


def test_step_3_validate_and_transition_in_one_compare_and_set():
    """The same interleaving, two ways: a late success and a timeout both validated before either writes."""
    for policy, expected in (("fenced", COMMITTED), ("split_validate_write", PROVISIONAL)):
        ledger, service = Ledger(), ExternalService(Sink("idempotent"))
        mine = reserved(ledger)
        success = service.execute(1, mine)
        if policy == "fenced":           # validation and write are one atomic step each: nothing slips in
            ledger.settle(policy, 1, mine, success)
            ledger.settle(policy, 1, mine, TIMEOUT)
        else:
            a, b = ledger.validate(1, mine, success), ledger.validate(1, mine, TIMEOUT)
            ledger.write(1, a)
            ledger.write(1, b)           # decided while the record was pending: downgrades committed
        assert ledger.records["e1"].state == expected
        kinds = [v["kind"] for v in settlement_violations(ledger, service)]
        assert kinds == ([] if policy == "fenced" else ["committed_downgraded"])
    # in a run: late_response under split_validate_write, and under fenced
    split = simkit.simulate(simkit.load("late_response"), settlement="split_validate_write")
    assert [v["kind"] for v in split.verdict.settlement_violations] == ["committed_downgraded"]
    assert ("write", COMMITTED, PROVISIONAL) in actions(split)
    assert simkit.simulate(simkit.load("late_response")).verdict.ok


def test_step_4_matching_success_promotes_pending_or_provisional_and_committed_is_absorbing():
    for first in (None, TIMEOUT):
        ledger, service = Ledger(), ExternalService(Sink("idempotent"))
        mine = reserved(ledger)
        if first:
            assert ledger.settle("fenced", 1, mine, TIMEOUT) == PROVISIONAL
        assert ledger.settle("fenced", 1, mine, service.execute(1, mine)) == COMMITTED
        for later in (service.execute(1, mine), TIMEOUT):
            assert ledger.settle("fenced", 1, mine, later) == COMMITTED
        assert [t.action for t in ledger.history][-2:] == ["ignore", "ignore"]
        # a committed operation stays committed even when the principal has changed since
        assert ledger.reserve(1, "e1", FP1, "P2").reservation == mine


def test_step_5_timeout_writes_only_provisional_and_only_while_its_reservation_owns_the_record():
    ledger = Ledger()
    old = reserved(ledger)
    assert ledger.settle("fenced", 1, old, TIMEOUT) == PROVISIONAL
    new = reserved(ledger, binding="P2")
    assert ledger.settle("fenced", 1, old, TIMEOUT) == PENDING               # no longer the owner: ignored
    assert "no longer owns" in ledger.history[-1].detail
    assert ledger.settle("fenced", 1, new, Reply(new, 0)) == COMMITTED
    assert ledger.settle("fenced", 1, new, TIMEOUT) == COMMITTED             # never downgrades committed
    assert ledger.settle("last_write_wins", 1, new, TIMEOUT) == PROVISIONAL  # what fencing prevents
    # in a run: the retry's timeout comes after the late success; fenced ignores it
    r = simkit.simulate(simkit.load("late_response"))
    assert actions(r)[-2:] == [("settle", PENDING, COMMITTED), ("ignore", COMMITTED, COMMITTED)]


@pytest.mark.parametrize("differs", ["fingerprint", "binding", "generation"])
def test_step_6_a_reply_whose_id_matches_but_tuple_differs_is_quarantined_never_applied(differs):
    r = simulate([{"kind": "crossed_reply", "position": 1, "differs": differs}])
    assert r.verdict.ok
    ledger = r.world.store.operations
    [rejected] = ledger.quarantine
    assert (
        rejected.operation_id == "e1"
        and rejected.after == PENDING
        and f"differs in {differs}" in rejected.detail
    )
    assert getattr(rejected.reply.identity, differs) != getattr(rejected.reservation, differs)
    record = ledger.records["e1"]
    assert record.state == COMMITTED and record.result.identity == record.reservation   # its own result
    assert requests(r) == [("foreign", rejected.reply.identity), ("ran", record.reservation)]
    assert r.world.sink.effect_count["e1"] == 1


def test_step_7_idempotency_for_the_effect_outside_the_settlement_transaction():
    one = Reservation("e1", FP1, "P1", 1)
    service = ExternalService(Sink("idempotent"))
    service.execute(1, one)
    service.execute(1, one)                                                 # a retry of the same reservation
    assert service.sink.effect_count["e1"] == 1
    service.execute(1, Reservation("e1", FP1, "P2", 2))                     # rotated principal, same request
    assert service.sink.effect_count["e1"] == 1
    service.execute(1, Reservation("e1", FP2, "P2", 3))                     # a changed request runs it
    assert service.sink.effect_count["e1"] == 2
    assert [r.fate for r in service.requests] == ["ran", "deduplicated", "deduplicated", "ran"]
    unsafe = ExternalService(Sink("unsafe"))
    unsafe.execute(1, one)
    unsafe.execute(1, one)
    assert unsafe.sink.effect_count["e1"] == 2                              # seed 001 "Limits": no atomicity
    # records outlive the run's retries: nothing is ever deleted from the ledger
    r = simulate([{"kind": "lost_response", "op": "effect", "position": 1}])
    assert set(r.world.store.operations.records) == {"e1", "e2"}


# -- Validation note -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy, success_then_timeout", [
    ("fenced", COMMITTED), ("unfenced", COMMITTED), ("last_write_wins", PROVISIONAL),
    ("split_validate_write", COMMITTED)])
def test_concurrent_completion_orders(policy, success_then_timeout):
    """Success then timeout, and timeout then success, each settled as one transaction per observation."""
    for order, expected in (("success", success_then_timeout), ("timeout", COMMITTED)):
        ledger, service = Ledger(), ExternalService(Sink("idempotent"))
        mine = reserved(ledger)
        success = service.execute(1, mine)
        for obs in ((success, TIMEOUT) if order == "success" else (TIMEOUT, success)):
            ledger.settle(policy, 1, mine, obs)
        assert ledger.records["e1"].state == expected, (policy, order)


def test_concurrent_completion_orders_in_a_run():
    """Without the crash of late_response: timeout, then the late success, then the retry's timeout."""
    data = simkit.load("late_response")
    data.faults = tuple(f for f in data.faults if f.kind != "crash")
    r = simkit.simulate(data)
    assert r.verdict.ok
    assert actions(r) == [("reserve", None, PENDING), ("settle", PENDING, PROVISIONAL),
                          ("settle", PROVISIONAL, COMMITTED), ("ignore", COMMITTED, COMMITTED)]
    df = r.trace.to_frame()
    assert list(df[df.step == "settle_late"].outcome) == ["settle: provisional -> committed"]


def test_stale_generation_reply_is_quarantined_by_fenced_and_attached_by_unfenced():
    ledger, service = Ledger(), ExternalService(Sink("idempotent"))
    old = reserved(ledger)
    stale = service.execute(1, old)
    new = reserved(ledger, binding="P2")                                    # generation 2 owns the record now
    assert ledger.settle("fenced", 1, old, stale) == PENDING
    assert "generation" in ledger.quarantine[0].detail
    ledger.settle("unfenced", 1, old, stale)
    [v] = settlement_violations(ledger, service)
    assert v["kind"] == "wrong_reservation" and "differs in binding, generation" in v["detail"]
    assert ledger.records["e1"].reservation == new


def test_authorization_change_while_uncertain_renews_the_reservation_and_quarantines_the_old_reply():
    """The credential rotates while e1's outcome is provisional: the retry needs a new reservation (step 2),
    and the old principal's late success is quarantined. The idempotent service knows the same logical request
    (operation id and fingerprint) under the new reservation, so the effect does not run again."""
    r = simulate([{"kind": "late_reply", "position": 1, "delay": 18.0}], rotate_at=[14.0])
    ledger = r.world.store.operations
    assert [(a, b, c) for a, b, c in actions(r)] == [
        ("reserve", None, PENDING), ("settle", PENDING, PROVISIONAL), ("renew", PROVISIONAL, PENDING),
        ("settle", PENDING, COMMITTED), ("quarantine", COMMITTED, COMMITTED)]
    assert (
        ledger.quarantine[0].reply.identity.binding == "P1"
        and ledger.records["e1"].reservation.binding == "P2"
    )
    assert r.verdict.settlement_violations == [] and r.verdict.lost == []
    assert r.verdict.duplicated == [] and r.world.sink.effect_count["e1"] == 1
    lww = simulate([{"kind": "late_reply", "position": 1, "delay": 18.0}], rotate_at=[14.0],
                   settlement="last_write_wins")
    assert [v["kind"] for v in lww.verdict.settlement_violations] == ["wrong_reservation"]


@pytest.mark.parametrize("point", ["before_effect", "after_effect", "before_event_commit",
                                   "after_event_commit"])
def test_crash_windows(point):
    """Between reserve and call, between call and settle, between settle and receipt, after the receipt: one
    tuple, one effect with an idempotent service; an unsafe one repeats it only when the crash hides the
    call's outcome (between call and settlement)."""
    crash = [{"kind": "crash", "point": point, "position": 1}]
    r = simulate(crash)
    assert r.verdict.ok and r.world.sink.effect_count["e1"] == 1
    assert len({identity for _, identity in requests(r)}) == 1
    unsafe = simulate(crash, sink="unsafe")
    assert unsafe.verdict.duplicated == (["e1"] if point == "after_effect" else [])


def test_external_effect_retries_after_lost_replies_run_the_effect_once():
    r = simulate([{"kind": "lost_response", "op": "effect", "position": 2, "occurrence": n}
                  for n in (1, 2, 3)])
    assert r.verdict.ok
    assert [fate for fate, _ in requests(r, "e2")] == ["ran", "deduplicated", "deduplicated", "deduplicated"]
    assert r.world.sink.effect_count["e2"] == 1
    df = r.trace.to_frame()
    assert (df.step == "blocked").sum() == 3                                # provisional blocks the barrier


# -- Each unsafe policy fails where fenced passes ------------------------------------------------------------
TARGETS = {
    # scenario: {policy: (lost, duplicated, settlement violation kinds)}
    "late_response": {"last_write_wins": ([], [], ["committed_downgraded"]),
                      "split_validate_write": ([], [], ["committed_downgraded"]),
                      "unfenced": ([], [], [])},
    "misbound_response": {"unfenced": (["e2", "e3"], [], ["wrong_reservation", "wrong_reservation"]),
                          "last_write_wins": (["e2", "e3"], [], ["wrong_reservation", "wrong_reservation"]),
                          "split_validate_write": ([], [], [])},
}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_unsafe_policy_fails_on_the_scenario_that_targets_it_while_fenced_passes(name):
    scenario = simkit.load(name)
    assert scenario.settlement == "fenced" and scenario.description
    assert simkit.simulate(scenario).verdict.ok
    for policy, (lost, duplicated, kinds) in TARGETS[name].items():
        v = simkit.simulate(scenario, settlement=policy).verdict
        assert (v.lost, v.duplicated, [x["kind"] for x in v.settlement_violations]) == (
            lost,
            duplicated,
            kinds,
        )
        assert v.ok == (not lost and not duplicated and not kinds)


def test_every_unsafe_policy_fails_somewhere():
    failing = {p for targets in TARGETS.values() for p, (a, b, c) in targets.items() if a or b or c}
    assert failing == set(POLICIES) - {"fenced"}
    assert SETTLEMENTS == POLICIES  # the scenario key and the ledger agree


# -- The checker fires on hand-built histories ---------------------------------------------------------------
class History:
    """Ground truth assembled by hand: provider, store with its ledger, sink and service on one clock."""

    def __init__(self, sink: str = "idempotent"):
        sc = simkit.parse(dict(BASE, pages=[{"cursor": "C1", "positions": [1], "next_cursor": "C2"},
                                            {"cursor": "C2", "positions": [], "next_cursor": "C2"}]))
        self.provider = scripted(sc)
        self.store = MemoryStore(Checkpoint("C1", 0, 0))
        self.sink = Sink(sink, {}, self.store.clock)
        self.service = ExternalService(self.sink)
        self.provider.clock = self.store.clock
        self.halts, self.completed = [], True
        self.ledger = self.store.operations

    def finish(self):
        self.store.load(1)
        self.provider.fetch("C1", 1)
        assert self.store.commit_event(1, "e1", 1, "applied", 1)
        assert self.store.compare_and_swap(1, "C1", 0, "C2", 1, 1)
        return check(self)


def test_checker_a_correct_settlement_history_is_ok():
    h = History()
    mine = reserved(h.ledger)
    h.ledger.settle("fenced", 1, mine, TIMEOUT)
    h.ledger.settle("fenced", 1, mine, h.service.execute(1, mine))
    h.ledger.settle("fenced", 1, mine, Reply(Reservation("e1", "x", "P0", 9), 0))  # quarantined: no violation
    v = h.finish()
    assert v.ok, v


def test_checker_reports_committed_success_downgraded():
    h = History()
    mine = reserved(h.ledger)
    h.ledger.settle("fenced", 1, mine, h.service.execute(1, mine))
    h.ledger.settle("last_write_wins", 2, mine, TIMEOUT)
    v = h.finish()
    [x] = v.settlement_violations
    assert (
        x["kind"] == "committed_downgraded"
        and x["worker"] == 2
        and "overwritten with provisional" in x["detail"]
    )
    assert not v.ok and v.as_dict()["settlement_violations"] == [x]


def test_checker_reports_a_result_attached_to_the_wrong_reservation_from_the_service_log():
    """The reply claims our tuple; the service's log says it answered another client's request."""
    h = History()
    mine = reserved(h.ledger)
    foreign = h.service.crossed(mine, "binding")
    liar = Reply(mine, foreign.request)
    assert h.ledger.settle("fenced", 1, mine, liar) == COMMITTED            # the reply itself looks right
    v = h.finish()
    [x] = v.settlement_violations
    assert x["kind"] == "wrong_reservation" and "differs in binding" in x["detail"]
    assert v.lost == ["e1"]                                                  # its effect never ran


def test_checker_counts_the_duplicated_effect_a_downgrade_causes():
    h = History("unsafe")
    mine = reserved(h.ledger)
    h.ledger.settle("last_write_wins", 1, mine, h.service.execute(1, mine))
    h.ledger.settle("last_write_wins", 1, mine, TIMEOUT)                   # downgraded: uncertain again
    again = reserved(h.ledger, binding="P2")                                # credentials rotated meanwhile
    h.ledger.settle("last_write_wins", 1, again, h.service.execute(1, again))
    v = h.finish()
    assert v.duplicated == ["e1"] and 4 in v.invariants_broken
    assert [x["kind"] for x in v.settlement_violations] == ["committed_downgraded"]


def test_checker_without_a_ledger_or_service_reports_nothing():
    assert settlement_violations(None) == []
    v = simkit.Verdict(settlement_violations=[{"kind": "wrong_reservation"}])
    assert not v.ok


# -- Scenario keys, command line, determinism ----------------------------------------------------------------
@pytest.mark.parametrize("change, message", [
    ({"auth": {"rotate_at": [5.0, 2.0]}}, "key 'auth.rotate_at': times must increase"),
    ({"auth": {"rotate_at": ["soon"]}}, "key 'auth.rotate_at': expected non-negative times"),
    ({"auth": {"every": 3}}, "key 'auth.every': unknown key"),
    ({"faults": [{"kind": "late_reply", "position": 1}]}, "key 'faults[0].delay': missing"),
    ({"faults": [{"kind": "crash", "point": "after_fetch", "delay": 3.0}]}, "only a late_reply has a delay"),
    ({"faults": [{"kind": "crossed_reply", "differs": "colour"}]}, "'colour' is not one of fingerprint"),
    ({"faults": [{"kind": "late_reply", "delay": 3.0, "op": "fetch"}]}, "only a lost_response names an op"),
    ({"settlement": "optimistic"}, "key 'settlement': 'optimistic' is not one of fenced"),
])
def test_bad_settlement_input_is_one_clear_line(change, message):
    with pytest.raises(simkit.ScenarioError, match=message.replace("[", r"\[").replace("]", r"\]")) as exc:
        simkit.parse(dict(BASE, **change), source="bad.toml")
    assert str(exc.value).startswith("bad.toml: ") and "\n" not in str(exc.value)


def test_reply_faults_round_trip_through_as_dict():
    sc = simkit.load("late_response")
    late = next(f for f in sc.faults if f.kind == "late_reply")
    assert late.as_dict() == {"kind": "late_reply", "position": 1, "delay": 26.8}
    crossed = next(f for f in simkit.load("misbound_response").faults if f.kind == "crossed_reply")
    assert crossed.as_dict() == {"kind": "crossed_reply", "position": 2, "differs": "binding"}


def test_cli_settlement_flag(capsys):
    import json
    assert main(["run", "misbound_response", "--settlement", "unfenced", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["settlement"] == "unfenced" and not d["ok"] and d["lost"] == ["e2", "e3"]
    assert [x["kind"] for x in d["settlement_violations"]] == ["wrong_reservation"] * 2
    assert main(["compare", "late_response", "--settlement", "last_write_wins"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("safe "))
    assert "committed_downgraded" in row and " NO " in row
    with pytest.raises(simkit.ScenarioError, match="settlement 'nope'"):
        simkit.simulate(simkit.load("late_response"), settlement="nope")


def test_settled_runs_are_deterministic():
    for name in ("late_response", "misbound_response"):
        for policy in POLICIES:
            a = simkit.simulate(simkit.load(name), settlement=policy).trace.digest()
            assert simkit.simulate(simkit.load(name), settlement=policy).trace.digest() == a


def test_the_run_summary_names_settlement_violations_beside_the_invariants(capsys):
    """A run that breaks no invariant but a settlement is NOT ok; the summary says why on the same line."""
    assert main(["run", "late_response", "--settlement", "last_write_wins"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("NOT ok")
    assert "invariants broken: none   settlement violations: 1 (committed_downgraded)" in out[2]
    assert main(["run", "late_response"]) == 0
    assert "settlement violations" not in capsys.readouterr().out
