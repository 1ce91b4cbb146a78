"""One garbage-collector pause per run, at its outermost place (simkit/truth/collector.py): the world's
``run()`` and the checker no longer pause it inside ``simulate``'s pause, and a nested pause is refused."""
import gc

import pytest

import simkit
from simkit import runner
from simkit.judge import checker
from simkit.tools.schedules import run_schedule
from simkit.truth.collector import is_paused, paused
from simkit.world.simulation import World


@pytest.fixture
def collector_on():
    was_on = gc.isenabled()
    gc.enable()
    yield
    if not was_on:
        gc.disable()


def watching(seen: list):
    """``safe``, noting at each life's start whether the collector is paused (and whether it is on)."""
    class Watching(simkit.Consumer):
        def run(self):
            seen.append(("world", is_paused(), gc.isenabled()))
            return (yield from super().run())
    return Watching


def test_a_pause_inside_a_pause_is_refused(collector_on):
    with paused():
        assert is_paused() and not gc.isenabled()
        with pytest.raises(RuntimeError, match="one pause per run"), paused():
            pass
        assert is_paused() and not gc.isenabled()       # the refusal leaves the outer pause as it was
    assert not is_paused() and gc.isenabled()


def test_a_pause_leaves_a_collector_that_was_off_off(collector_on):
    gc.disable()
    with paused():
        pass
    assert not gc.isenabled() and not is_paused()


def test_simulate_pauses_once_around_the_world_and_the_judge(collector_on, monkeypatch):
    seen = []

    def judge(truth):
        seen.append(("judge", is_paused(), gc.isenabled()))
        return checker.check(truth)

    monkeypatch.setattr(runner, "check", judge)
    run = simkit.simulate(simkit.load("retry_walkthrough"), watching(seen))
    assert run.verdict.ok
    assert {who for who, *_ in seen} == {"world", "judge"}
    assert all(held and not on for _who, held, on in seen), seen
    assert gc.isenabled() and not is_paused()


def test_an_explored_schedule_pauses_once(collector_on):
    seen = []
    fault = simkit.parse_crash_arg("before_event_commit@107")
    verdict, _world, _plan = run_schedule(simkit.load("retry_walkthrough"), watching(seen), 0, (fault,),
                                          False)
    assert verdict.ok and len(seen) >= 2                # a crash: more than one life
    assert all(held and not on for _who, held, on in seen), seen


def test_the_world_and_the_checker_do_not_pause_it_themselves(collector_on, monkeypatch):
    """The inner places of the old nesting: outside a run's
    pause, they leave the collector as they find it."""
    seen = []
    world = World(simkit.load("retry_walkthrough"), watching(seen), 0).run()
    judged = checker._check
    monkeypatch.setattr(checker, "_check", lambda truth: seen.append(("judge", is_paused(), gc.isenabled()))
                        or judged(truth))
    assert checker.check(world).ok
    assert set(seen) == {("world", False, True), ("judge", False, True)} and seen[-1][0] == "judge"


def test_runs_in_threads_each_hold_their_pause_and_the_collector_comes_back_after_the_last():
    """A dask local cluster or a thread pool runs simulate in several threads at once: each is a run of its
    own, not a pause nested in another (this raised 'already paused' for the second thread)."""
    import gc
    import threading

    from simkit.truth.collector import is_paused, paused

    inside, release, errors = threading.Barrier(3), threading.Event(), []

    def run():
        try:
            with paused():
                inside.wait(timeout=10)
                release.wait(timeout=10)
        except Exception as exc:        # noqa: BLE001 - the test reports what a thread raised
            errors.append(exc)

    was_on = gc.isenabled()
    gc.enable()
    try:
        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        inside.wait(timeout=10)
        assert is_paused() and not gc.isenabled()
        release.set()
        for t in threads:
            t.join(timeout=10)
        assert errors == [] and not is_paused() and gc.isenabled()
    finally:
        if not was_on:
            gc.disable()
