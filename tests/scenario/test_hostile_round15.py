"""Hostile input, fifteenth round (a fresh tester): plugin consumers as an adversary writes them (``simulate``
called from inside a hook, hooks run from threads, requests of subclasses of ``simkit.ops`` records, the same
request yielded twice, ``str``/``int`` subclasses of odd ``__eq__`` returned from hooks, the ``Event``,
``Page`` and ``Checkpoint`` a hook is handed changed in place) and ``simkit workshop DIR`` into odd folders.
Each: one line naming the strategy, file or folder and the problem (exit status 2, no traceback), or the
verdict the same run earns (a consumer that loses an event is not ok).
"""
from __future__ import annotations

import os

import pytest
from conftest import simkit_in as _cli

import simkit
from simkit.ops import Commit, Fetch


# -- 1. workshop --force over a FIFO at a notebook's place -------------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["00_index.ipynb", "README.md"])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_workshop_refuses_a_fifo_at_a_notebooks_place(tmp_path, name, force):
    """``simkit workshop DIR --force`` with a FIFO named ``00_index.ipynb`` (or ``README.md``) in DIR renamed
    the notebook over it and said "wrote 11 files", where docs/cli.md says every writer, the workshop's
    notebooks among them, refuses a FIFO, socket or device at the output path (renamed over, a FIFO's reader
    would wait for ever); without ``--force`` it said to pass ``--force``. Now one line naming the FIFO, force
    or not, and nothing written."""
    folder = tmp_path / "ws"
    folder.mkdir()
    os.mkfifo(folder / name)
    got = _cli(["workshop", "ws", *force], tmp_path)
    assert got.returncode == 2, got.stderr
    assert got.stderr == (f"simkit: ws/{name}: is not a regular file (a FIFO, a socket or a device): not "
                          "replaced, --force or not; remove it, or choose a new folder\n")
    assert sorted(p.name for p in folder.iterdir()) == [name] and (folder / name).is_fifo()


# -- 2. a consumer that publishes a cursor of megabytes ------------------------------------------------------
class PublishesAHugeCursor(simkit.Consumer):
    """Publishes a cursor of 10**6 characters instead of the page's own."""

    def barrier_target(self, checkpoint, page):
        return "C" * 10**6


def test_a_cursor_of_megabytes_is_cut_in_the_summary_as_a_halts_reason():
    """``simkit run retry_walkthrough --strategy file.py:Class`` of a consumer whose ``barrier_target`` is 10
    million characters printed 20 MB: the halt's reason was cut at 1,000 characters (round 13), but the final
    checkpoint and invariant 3's detail quoted the cursor whole. Now each is its start and its length."""
    from simkit.judge.report import run_summary
    text = run_summary(simkit.simulate(simkit.load("retry_walkthrough"), PublishesAHugeCursor))
    assert len(text) < 5000 and text.count("characters)") == 3
    assert "final checkpoint: {'resume_cursor': 'CCC" in text and "invariant 3 at t=8.5" in text


def test_a_swimlane_of_a_cursor_of_megabytes_labels_its_start():
    """The same consumer's ``--swimlane`` laid the published cursor out whole as the barrier's label: 22 s
    and 800 MB for a cursor of 10**6 characters (10**7 was past any memory). Now its start and "…"."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simkit.viz.swimlane import swimlane
    fig, ax = plt.subplots()
    try:
        swimlane(ax, simkit.simulate(simkit.load("retry_walkthrough"), PublishesAHugeCursor))
        texts = [t.get_text() for t in ax.texts]
    finally:
        plt.close(fig)
    assert max(map(len, texts)) < 200 and any(t.startswith("C" * 40 + "…") for t in texts)


# -- what held: requests of subclasses, the same request twice, objects changed in place ---------------------
class SubCommit(Commit):
    pass


class SubFetch(Fetch):
    pass


class YieldsSubCommit(simkit.Consumer):
    """Commits with a subclass of ``Commit``."""

    def apply(self, event, applied_position):
        return (yield SubCommit(event, "applied", applied_position, True))


class CommitsTwice(simkit.Consumer):
    """Yields the very same commit twice: the second is refused (a receipt exists), the first stands."""

    def apply(self, event, applied_position):
        commit = Commit(event, "applied", applied_position, not self.contract.external_sink)
        result = yield commit
        yield commit
        return result


class DropsTheMiddleEvent(simkit.Consumer):
    """Takes the middle event out of every page it is handed (``object.__setattr__`` past ``frozen``)."""

    def after_fetch(self, checkpoint, page):
        if len(page.events) >= 3:
            object.__setattr__(page, "events", page.events[:1] + page.events[2:])
        return (yield from super().after_fetch(checkpoint, page))


class PublishesByMutation(simkit.Consumer):
    """Never swaps the barrier: writes the next cursor into the checkpoint it loaded instead."""

    def page_barrier(self, checkpoint, page, applied_position):
        object.__setattr__(checkpoint, "resume_cursor", page.next_cursor)
        object.__setattr__(checkpoint, "checkpoint_version", checkpoint.checkpoint_version + 1)
        return "advanced"
        yield


class SimulatesInAHook(simkit.Consumer):
    """Calls ``simkit.simulate`` from inside its own run."""

    def attempt(self):
        simkit.simulate(simkit.load("quarantine_boundary"), "safe")
        return (yield from super().attempt())


def test_a_request_of_a_subclass_of_an_ops_record_is_one_line():
    with pytest.raises(simkit.SimkitError, match=r"yielded SubCommit\(.*\(SubCommit\), which is not a"):
        simkit.simulate(simkit.load("retry_walkthrough"), YieldsSubCommit)


def test_a_request_yielded_twice_is_judged_as_the_first():
    run = simkit.simulate(simkit.load("retry_walkthrough"), CommitsTwice)
    assert run.verdict.ok and run.as_dict()["effects"] == 2


@pytest.mark.parametrize("consumer, lost", [(DropsTheMiddleEvent, ["e106"]), (PublishesByMutation, [])])
def test_objects_changed_in_place_change_nothing_durable(consumer, lost):
    run = simkit.simulate(simkit.load("retry_walkthrough"), consumer)
    assert not run.verdict.ok and run.verdict.lost == lost
    if consumer is PublishesByMutation:         # the store's checkpoint is its own, not the one handed out
        assert run.as_dict()["final_checkpoint"]["resume_cursor"] == "C7"


def test_simulate_from_inside_a_hook_is_one_line():
    with pytest.raises(simkit.SimkitError, match=r"SimulatesInAHook raised RuntimeError: .* in attempt"):
        simkit.simulate(simkit.load("retry_walkthrough"), SimulatesInAHook)
