"""Hostile consumers, thirty-fourth round (a fresh tester): the public plugin API as a promise, and consumers
that attack the checker's independence through it (``tests/mutants/round34.py``). Found:

- the external service's log of every request kept the very tuple the consumer called with, and the ledger's
  history the very reply it settled: a consumer that rewrote its reservation after a stale call
  (``object.__setattr__``) hid its ``stale_binding`` (``HidesItsStaleCall``, ok), and one that rewrote the
  replies it had settled was judged ``unknown_reply`` for requests it never made up. Both now keep their own
  copies (:func:`simkit.model.owned`), and ``Reserve`` hands back a copy of the record's reply too;
- a request could carry a *subclass* of ``Event``, ``Reservation`` or ``Reply``: an event whose ``id`` is a
  property read as ``e1`` by the handler and as the poison ``e2`` when the decision was logged made the
  handler's ``apply`` of ``e1`` the fact for ``e2``, whose effect then ran, ok (``AppliesThePoison``). Each
  must be of its exact class now (a malformed request, one line);
- a ``Lookup``'s events were checked for their class only: an ``int`` id or a ``float`` position was read, and
  an id of a ``str`` subclass whose ``__hash__`` raises, or a ``list`` subclass whose ``__iter__`` does, was a
  traceback (exit 1). A ``Handle``'s behaviour whose ``__eq__`` raises, and a request's field, a yielded
  non-request or a yielding hook's returned value whose ``__repr__`` raises (raised again while its refusal
  was written), were tracebacks too;
- a consumer whose ``__init__`` set ``simkit.Consumer.is_terminal`` (``MoveOnAndPatch``) made ``safe`` fail
  with it: ``simkit audit`` said "passes (0 of 28 cases failed; 22 skipped, where safe itself fails)". A
  worker life now starts only while ``simkit.Consumer`` is as defined;
- ``simkit.testing.assert_ok_on(buggy, scenario, seeds=())`` passed: no run, so no failure; and an audit
  whose budget ran out before its first case said "passes (0 of 0 cases failed)", exit 0
  (``assert_passes_audit`` too). Each is one line naming ``seeds`` or ``budget`` now;
- a hook raising a ``BaseException`` subclass of its own escaped ``simulate`` as itself, a traceback from
  inside SimPy (the command line said "the consumer's code raised", naming no hook).

Held: ``simulate``, ``audit``, ``run_on`` and ``resolve`` given ``None``, numbers, an instance, a class that
is no ``Consumer``, a class whose ``__init__`` raises, takes no contract, never calls ``super().__init__()``
or whose ``__new__`` returns an int; a subclass of a bundled shortcut (judged as the shortcut); seeds of 100
bits, strings and ``-1``; hooks raising ``SystemExit`` of odd codes, ``KeyboardInterrupt``, ``GeneratorExit``,
``StopIteration`` inside a generator, exceptions whose ``__str__`` and ``__repr__`` raise; ``run()`` returning
``None`` or a list; a ``name`` attribute that is a class. The checkpoint, page, events and receipts a hook is
handed are copies (round 15).

Left alone: a Python consumer is code in simkit's own process, and one that rewrites simkit beyond
``simkit.Consumer`` (the judge, the store, ``simkit.ops.WELL_FORMED``; or walks ``gc`` and frames to the
world's logs) can forge any verdict: docs/verdict.md says so, and ``exec:`` runs a consumer in a process of
its own. ``simkit.check`` of no run is a ``TypeError`` (as ``tests/judge/test_checker.py`` asks). A class
whose ``__module__`` is ``None`` is one line blaming ``_ours (lives.py:100)``: no file defines a class so.

Each: the verdict the same run earns, or one line naming the strategy and the problem (a
:class:`simkit.SimkitError`, or exit status 2 and no traceback).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import simkit_in as _cli

import simkit
from simkit import Consumer, Event
from simkit.model import Reply, Reservation
from simkit.ops import Call, Commit, Settle
from simkit.tools.audit_cases import wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import round34  # noqa: E402


# -- 1. ground truth keeps its own copy of what a consumer sent and settled ----------------------------------
def test_a_tuple_rewritten_after_its_call_does_not_hide_a_stale_binding():
    """The retry after the rotation went out bound to ``P1``; the consumer then rewrote the tuple it holds to
    ``P2``, and with it the service's log: ok. The log's tuple is the service's own now."""
    v = simkit.simulate(wide("late_reply_before_retry"), round34.HidesItsStaleCall).verdict
    assert not v.ok and [s["kind"] for s in v.settlement_violations] == ["stale_binding"]


@pytest.mark.parametrize("name", ["misbound_response", "rotation_before_retry"])
def test_replies_rewritten_after_they_were_settled_change_nothing_judged(name):
    """``safe``'s settlement, rewriting each reply after it settled it: the ledger's history held the very
    object, and read ``unknown_reply`` for every call. The history's reply is the ledger's own now."""
    sc = simkit.load(name) if name in simkit.bundled() else wide(name)
    v = simkit.simulate(sc, round34.RewritesItsReplies).verdict
    assert v.ok and v.as_dict() == simkit.simulate(sc, "safe").verdict.as_dict()


# -- 2. the records a request carries are of their exact classes ---------------------------------------------
POISON = {"sink": "transactional",
          "pages": [{"cursor": "C0", "positions": [1, 2], "next_cursor": "C1"},
                    {"cursor": "C1", "positions": [], "next_cursor": "C1"}],
          "events": [{"position": 1, "behavior": "transient", "failures": 1},
                     {"position": 2, "behavior": "poison"}]}


def test_an_event_whose_id_shifts_cannot_forge_the_handlers_decision():
    """``AppliesThePoison`` ran the poison event's effect on the handler's ``apply`` of another event, and was
    ok (``safe``: one effect)."""
    said = r"AppliesThePoison: yielded a malformed request: Handle\.event is Shifty\(.*\) \(Shifty\), not Eve"
    with pytest.raises(simkit.SimkitError, match=said):
        simkit.simulate(simkit.parse(POISON), round34.AppliesThePoison)


class SubEvent(Event):
    __slots__ = ()


class SubReservation(Reservation):
    __slots__ = ()


class SubReply(Reply):
    __slots__ = ()


def _sub(record, cls):
    return cls(*(getattr(record, f) for f in record.__dataclass_fields__))


class Subclassing(Consumer):
    """``safe``, its requests' records of a subclass (``part``: which one)."""

    part = "event"

    def run(self):
        steps, result = super().run(), None
        while True:
            op = steps.send(result)
            if type(op) is Commit and self.part == "event":
                op = Commit(_sub(op.event, SubEvent), op.outcome, op.applied_position, op.with_effect)
            elif type(op) is Call and self.part == "reservation":
                op = Call(op.event, _sub(op.reservation, SubReservation))
            elif type(op) is Settle and self.part == "reply" and isinstance(op.observation, Reply):
                op = Settle(op.event, op.reservation, _sub(op.observation, SubReply))
            result = yield op


@pytest.mark.parametrize("part, said", [("event", "Commit.event is SubEvent"),
                                        ("reservation", "Call.reservation is SubReservation"),
                                        ("reply", "Settle.observation is SubReply")])
def test_a_record_of_a_subclass_in_a_request_is_the_consumers_one_line(part, said):
    cls = type(f"Subclassing_{part}", (Subclassing,), {"part": part})
    with pytest.raises(simkit.SimkitError, match=f"yielded a malformed request: {said}"):
        simkit.simulate(simkit.load("misbound_response"), cls)


# -- 3. a Lookup's events, a Handle's behaviour, a field's repr: one line ------------------------------------
ODD = '''
from simkit import Consumer, Event
from simkit.ops import Commit, Handle, Lookup


class NoHash(str):
    def __hash__(self):
        raise RuntimeError("no hash")


class NoIter(list):
    def __iter__(self):
        raise RuntimeError("no iter")


class NoEq:
    def __eq__(self, other):
        raise RuntimeError("no eq")
    __hash__ = object.__hash__


class NoRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


CHANGE = {
    "int_id": (Lookup, lambda op: Lookup(tuple(Event(7, e.position) for e in op.events))),
    "float_position": (Lookup, lambda op: Lookup(tuple(Event(e.id, e.position + 0.5) for e in op.events))),
    "hash_raises": (Lookup, lambda op: Lookup(tuple(Event(NoHash(e.id), e.position) for e in op.events))),
    "iter_raises": (Lookup, lambda op: Lookup(NoIter(op.events))),
    "eq_raises": (Handle, lambda op: Handle(Event(op.event.id, op.event.position, NoEq()))),
    "repr_raises": (Commit, lambda op: Commit(op.event, op.outcome, NoRepr(), op.with_effect)),
}


class Odd(Consumer):
    def run(self):
        kind, change = CHANGE[type(self).__name__[4:]]
        steps, result = super().run(), None
        while True:
            op = steps.send(result)
            result = yield (change(op) if type(op) is kind else op)

''' + "".join(f"\n\nclass Odd_{k}(Odd):\n    pass\n" for k in ("int_id", "float_position", "hash_raises",
                                                                "iter_raises", "eq_raises", "repr_raises"))


@pytest.mark.parametrize("kind, said", [
    ("int_id", "Lookup.events[0] is Event(id=7, position=104, behavior='ok') (Event), not an Event of a str"),
    ("float_position", "Lookup.events[0] is Event(id='e104', position=104.5, "),
    ("hash_raises", "Lookup.events[0] is Event(id='e104', position=104, behavior='ok') (Event), not an Ev"),
    ("iter_raises", "Lookup.events is [Event(id='e104', "),
    ("eq_raises", "Handle.event.behavior is <simkit_user_odd_"),
    ("repr_raises", "Commit.applied_position is <NoRepr> (NoRepr), not int"),
])
def test_a_request_of_objects_that_raise_or_the_stores_cannot_hold_is_one_line(tmp_path, kind, said):
    (tmp_path / "odd.py").write_text(ODD)
    done = _cli(["run", "transient_storm" if kind == "eq_raises" else "retry_walkthrough",
                 "--strategy", f"odd.py:Odd_{kind}"], tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr[-2000:]
    assert done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert done.stderr.startswith(f"simkit: strategy odd.py:Odd_{kind}: yielded a malformed request: {said}")


# -- 4. a BaseException of the consumer's own ----------------------------------------------------------------
class Odd(BaseException):
    pass


class RaisesItsOwnBaseException(Consumer):
    def is_replay(self, event, receipts, applied_position):
        raise Odd("odd")


def test_a_baseexception_of_a_hooks_own_is_its_one_line():
    with pytest.raises(simkit.SimkitError, match=r"RaisesItsOwnBaseException raised Odd: odd in is_replay "
                                                 r"\(test_hostile_round34\.py:\d+\)$"):
        simkit.simulate(simkit.load("retry_walkthrough"), RaisesItsOwnBaseException)


def test_a_lookup_and_handle_as_safe_writes_them_still_run():
    """The exact classes refuse nothing ``safe`` yields (its requests are built of the world's records)."""
    assert simkit.simulate(simkit.parse(POISON), "safe").verdict.ok


# -- 5. simkit's own Consumer changed by a consumer ----------------------------------------------------------
@pytest.fixture
def restored(monkeypatch):
    """simkit.Consumer as it was after the test, whatever a consumer did to it."""
    for name, value in vars(Consumer).items():
        if not name.startswith("__"):
            monkeypatch.setattr(Consumer, name, value)


def test_an_audit_of_a_consumer_that_changes_simkits_consumer_is_refused_not_passed(restored):
    """``simkit audit`` of ``MoveOnAndPatch`` said "passes (0 of 28 cases failed; 22 skipped, where safe
    itself fails)"."""
    with pytest.raises(simkit.SimkitError, match=r"MoveOnAndPatch: simkit\.Consumer\.is_terminal has been "
                                                 r"changed in this process .*\(docs/hooks\.md\); audit case "
                                                 r"\w+: [\w ]+ seed \d+$"):    # (where found, round 49)
        simkit.audit(round34.MoveOnAndPatch, budget=20)


def test_a_change_made_in_a_hook_is_found_as_the_next_life_starts(restored):
    """Its next life (after ``retry_walkthrough``'s crash), and every run after it in the process."""
    sc = simkit.load("retry_walkthrough")
    for strategy, named in ((round34.PatchesInAHook, r"mutants\.round34:PatchesInAHook"), ("safe", "safe")):
        with pytest.raises(simkit.SimkitError, match=rf"strategy {named}: simkit\.Consumer\.is_caught_up "):
            simkit.simulate(sc, strategy)


# -- 6. simkit.testing asked to judge nothing ---------------------------------------------------------------
@pytest.mark.parametrize("seeds", [(), [], range(0)])
def test_assert_ok_on_no_seed_is_one_line_not_a_pass(seeds):
    """``assert_ok_on(in_memory_quarantine, "quarantine_boundary", seeds=())`` passed: no run, no failure."""
    from simkit.testing import assert_ok_on
    with pytest.raises(simkit.SimkitError, match=r"^seeds .*: names no seed, so nothing would be run"):
        assert_ok_on(simkit.resolve("in_memory_quarantine"), "quarantine_boundary", seeds=seeds)


def test_an_audit_whose_budget_judges_no_case_is_one_line_not_a_pass():
    """``simkit audit in_memory_quarantine --budget 0.000001`` said "passes (0 of 0 cases failed ...)", exit
    0, and so did ``assert_passes_audit``: nothing was judged."""
    from simkit.testing import assert_passes_audit
    with pytest.raises(simkit.SimkitError, match=r"^budget: 1e-09 s ran out before a case was judged") as e:
        assert_passes_audit("in_memory_quarantine", budget=1e-9)
    assert e.value.param == "budget"


# -- 7. what a consumer yields or returns, whose repr raises ------------------------------------------------
class NoRepr:
    def __repr__(self):
        raise RuntimeError("no repr")


class YieldsNoRepr(Consumer):
    def run(self):
        yield NoRepr()


class ReturnsNoRepr(Consumer):
    def apply(self, event, applied_position):
        return NoRepr()


@pytest.mark.parametrize("cls, said", [
    (YieldsNoRepr, "yielded <NoRepr> (NoRepr), which is not a request of simkit.ops"),
    (ReturnsNoRepr, "hook apply() returned <NoRepr> (NoRepr) but must be a generator"),
])
def test_a_non_request_whose_repr_raises_is_its_one_line(cls, said):
    """A traceback from the line that was to say so (the second, blamed on simkit's own ``_returned``)."""
    with pytest.raises(simkit.SimkitError) as e:
        simkit.simulate(simkit.load("retry_walkthrough"), cls)
    assert said in str(e.value) and "RuntimeError" not in str(e.value)
