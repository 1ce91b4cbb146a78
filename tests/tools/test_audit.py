"""``simkit audit`` / :func:`simkit.audit`: anyone's consumer judged on every
case simkit has, the first failure shrunk to a file that ``simkit run``
replays; exit 1 for a failing consumer, 0 for a passing one, 2 on bad input."""
import dataclasses
import json
import shlex
import subprocess
import sys
import textwrap

import pytest

import simkit
from simkit.cli import main
from simkit.model import CROSSED_FIELDS
from simkit.ops import Wait
from simkit.tools import audit as auditor
from simkit.tools.audit import Case, cases
from simkit.tools.audit_cases import WIDE, wide

MINE = textwrap.dedent('''
    from simkit import Consumer

    class TrustTheWatermark(Consumer):
        """Treats everything at or below the applied watermark as done, receipts or not."""

        def is_replay(self, event, receipts, applied_position):
            return event.position <= applied_position

    class Careful(Consumer):
        """safe, with its own name."""
''')


@pytest.fixture
def mine(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(MINE)
    return path


def test_every_kind_of_case_is_there():
    kinds = {c.kind for c in cases(1, 1)}
    assert kinds == {"bundled", "corner", "wide", "sweep", "explore"}
    assert {c.name for c in cases(1, 0) if c.kind == "bundled"} == set(simkit.bundled())


def test_on_the_unsafe_sink_exploration_excuses_exactly_seed_000s_limit(monkeypatch):
    """Seed 000: no exactly-once "for an external sink that lacks transactions or idempotency". A crash at
    after_effect or a lost effect reply duplicates even safe's effect there; every other schedule counts (safe
    passes every case: tests/judge/test_mutants.py)."""
    unsafe = [c for c in cases(1, 0) if c.scenario.sink == "unsafe" and c.kind == "explore"]
    assert unsafe, "a bundled scenario with an unsafe sink is explored"
    monkeypatch.setattr(auditor, "cases", lambda *a: unsafe)
    a = simkit.audit("safe", shrink_first=False)
    assert a.ok and a.skipped == [] and a.cases == len(unsafe)


def test_a_case_safe_fails_is_skipped_not_blamed(monkeypatch):
    sc = simkit.load("shortcut_success_before_effect")
    faulty = dataclasses.replace(sc, faults=(simkit.parse_crash_arg("after_effect@106"),))
    assert not simkit.simulate(faulty).verdict.ok              # the documented limit, for safe itself
    monkeypatch.setattr(auditor, "cases", lambda *a: [Case("bundled", faulty, "limit", 0)])
    a = simkit.audit(simkit.resolve("success_before_effect"))
    assert a.ok and a.cases == 0 and [c.name for c in a.skipped] == ["limit"]


def test_a_failing_consumer_exits_1_and_writes_a_replayable_shrunk_failure(
    mine, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", f"{mine}:TrustTheWatermark", "--seeds", "1", "--sweep-seeds", "1", "--budget",
                 "5"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("audit TrustTheWatermark: FAILS")
    replay = out.splitlines()[-1].split("replay with ", 1)[1]
    assert (tmp_path / "simkit-audit-TrustTheWatermark.toml").exists()
    argv = shlex.split(replay)
    assert argv[:2] == ["simkit", "run"]
    assert main([*argv[1:], "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert not verdict["ok"] and verdict["lost"]


def test_a_passing_consumer_exits_0_writes_nothing_and_speaks_json(mine, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", f"{mine}:Careful", "--seeds", "1", "--sweep-seeds", "1", "--budget", "10",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] and d["failures"] == [] and d["out"] is None
    # every case is judged or named as left out by the 10 s budget (how many fit depends on the machine's
    # load)
    assert d["cases"] > 0 and d["cases"] + len(d["left_out"]) > 50
    assert not list(tmp_path.glob("*.toml"))


@pytest.mark.parametrize("argv, says", [
    (["audit", "nosuch.py:X"], "no such file nosuch.py"),
    (["audit", "MINE:Nope"], "has no class of that name"),
    (["audit", "safe", "--out", "x.png"], "unsupported extension '.png'"),
    (["audit", "safe", "--seeds", "0"], "--seeds 0"),
])
def test_bad_input_is_one_line_and_exit_2(argv, says, mine, capsys):
    argv = [a.replace("MINE", str(mine)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert "--strategy" not in err  # the consumer is audit's own argument, not a flag it was given


def test_the_console_script_exits_1_for_a_failing_consumer(mine, tmp_path):
    r = subprocess.run([sys.executable, "-m", "simkit", "audit", f"{mine}:TrustTheWatermark", "--seeds", "1",
                        "--sweep-seeds", "0", "--budget", "5", "--out", str(tmp_path / "f.toml")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and (tmp_path / "f.toml").exists(), r.stderr


# -- issue 26, item 6: cases as wide as real streams, within a budget ----------------------------------------
def test_the_wide_cases_are_as_wide_as_real_streams():
    """Pages of 50 events, 2,000 events behind at least 300 barriers, blocks
    of at least 20 attempts, a rotation between a lost reply and its retry,
    crossed replies differing in each field: each as safe meets it."""
    def run(name):
        sc = wide(name)
        r = simkit.simulate(sc, simkit.Consumer, sc.seed)
        assert r.verdict.ok, (name, r.verdict)
        return r

    log = run("wide_pages").world.provider.log
    assert max(len(row[5]) for row in log) == 50
    long = run("long_stream")
    assert len(long.world.provider.events) >= 2000
    assert long.as_dict()["final_checkpoint"]["checkpoint_version"] >= 300
    blocks = run("long_blocks").world.sink.decisions
    assert (
        sum(1 for row in blocks if row[3] == "e2") >= 20 and sum(1 for row in blocks if row[3] == "e4") >= 20
    )
    rotation = wide("rotation_before_retry")
    assert rotation.rotate_at[0] < rotation.timing.timeout      # the retry comes after the rotation
    assert sorted(f.differs for f in wide("crossed_each_field").faults) == sorted(CROSSED_FIELDS)
    assert {c.kind for c in cases(1, 0) if c.name in WIDE} >= {"wide", "explore"}


def test_explorations_lose_up_to_three_requests_of_one_operation_and_run_cheapest_first():
    explored = [c for c in cases(1, 0) if c.kind == "explore"]
    assert {c.ops for c in explored if c.bounds == (0, 0, 3)} == {(op,) for op in simkit.model.LOST_OPS}
    assert any(c.keep_faults for c in explored if c.name == "late_response")
    assert [c.cost for c in explored] == sorted(c.cost for c in explored)
    assert "≤3 lost requests of checkpoint_write" in next(c.label for c in explored
                                                          if c.ops == ("checkpoint_write",))


class Stalls(simkit.Consumer):
    """Backs off for ever without fetching: every run reaches the time limit."""

    def run(self):
        while True:
            yield Wait("blocked")


def test_an_exploration_whose_fault_free_run_stalls_is_not_explored(monkeypatch):
    case = next(c for c in cases(1, 0) if c.kind == "explore" and c.name == "retry_walkthrough")
    monkeypatch.setattr(auditor, "cases", lambda *a: [case])
    a = simkit.audit(Stalls, shrink_first=False)
    assert not a.ok and a.stalled == [case] and a.failures[0].faults == ()
    says = "schedules skipped: the fault-free run stalled in 1 explorations (retry_walkthrough)"
    assert says in auditor.audit_text(a)


def test_a_budget_leaves_the_dearest_cases_out_and_says_so():
    a = simkit.audit("safe", sweep_seeds=1, jobs=2, budget=1.0, shrink_first=False)
    assert a.ok and a.left_out and a.cases + len(a.left_out) == len(cases(3, 1))
    assert a.left_out[-1].kind == "explore"
    text = auditor.audit_text(a)
    assert f"not judged: {len(a.left_out)} cases" in text and "budget of 1 s" in text
    assert a.as_dict()["left_out"] and a.as_dict()["budget"] == 1.0


def test_cases_judged_in_several_processes_give_the_verdicts_of_one(monkeypatch):
    some = [c for c in cases(1, 1) if c.name in ("transient_storm", "default", "long_blocks")]
    monkeypatch.setattr(auditor, "cases", lambda *a: some)
    one = simkit.audit(MoveOn, shrink_first=False)
    two = simkit.audit(MoveOn, shrink_first=False, jobs=2)
    assert one.rows() == two.rows() and one.failures and not two.left_out


class MoveOn(simkit.Consumer):
    """A retry_later counts as done."""

    def is_terminal(self, decision):
        return decision == "retry_later"


def test_a_consumer_error_in_a_worker_process_is_one_line(tmp_path, capsys):
    path = tmp_path / "boom.py"
    path.write_text("from simkit import Consumer\n\n\nclass Boom(Consumer):\n"
                    "    def is_replay(self, event, receipts, applied_position):\n"
                    "        raise RuntimeError('boom')\n")
    assert main(["audit", f"{path}:Boom", "--jobs", "2", "--budget", "30"]) == 2
    err = capsys.readouterr().err
    assert "boom" in err and err.count("\n") == 1


class Passing(simkit.Consumer):
    """safe, under its own name (nothing skipped as the reference itself)."""


@pytest.mark.parametrize("consumer", [Passing, MoveOn])
def test_explorations_split_into_groups_of_subtrees_give_the_verdicts_of_whole_ones(monkeypatch, consumer):
    """Issue 31: an exploration's subtrees go to every worker in groups; the verdicts and the --json are those
    of each exploration run whole (in one process, or in two)."""
    some = [c for c in cases(1, 0) if c.kind == "explore" and c.name == "transient_storm"]
    monkeypatch.setattr(auditor, "cases", lambda *a: some)
    whole = simkit.audit(consumer, shrink_first=False).as_dict()
    monkeypatch.setattr(auditor, "_SPLIT_FROM", 2)
    monkeypatch.setattr(auditor, "_ROOTS_PER_GROUP", 1)
    groups = []
    below = auditor.below
    monkeypatch.setattr(auditor, "below", lambda split, roots: groups.append(roots) or below(split, roots))
    assert simkit.audit(consumer, shrink_first=False).as_dict() == whole
    # split, in this process, where the consumer passes the one-fault schedules (MoveOn fails before them)
    assert (len(groups) > len(some)) == (consumer is Passing)
    assert simkit.audit(consumer, shrink_first=False, jobs=2).as_dict() == whole
