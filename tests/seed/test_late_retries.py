"""Seed 000 step 5 with several workers: stale and late retries are fenced by the checkpoint version, and a
lost barrier reply is recognised from durable state."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from conftest import run  # noqa: E402

from simkit.cli import main  # noqa: E402
from simkit.viz.swimlane import swimlane  # noqa: E402


def test_late_retry_safe_rejects_the_stale_barrier_and_rereads():
    r = run("late_retry", "safe")
    assert r.verdict.ok
    df = r.trace.to_frame()
    rejected = df[df.step == "barrier_rejected"]
    assert list(rejected.worker) == [1] and rejected.iloc[0].resume_cursor == "C4"
    worker1 = df[(df.worker == 1) & (df.index > rejected.index[0])]
    assert worker1.step.iloc[0] == "load"                    # rereads state ...
    assert not any(time > 40 and worker == 1 and cursor == "C1"       # ... and does not redo the stale page
                   for _seq, time, worker, cursor, _next, _ids in r.world.provider.log)
    assert [w[4].resume_cursor for w in r.world.store.writes if w[3] == "barrier"] == ["C1", "C2", "C3"]


def test_late_retry_without_version_check_regresses_and_refetches():
    r = run("late_retry", "no_version_check")
    assert r.verdict.regressions == 1 and r.verdict.invariants_broken == [3]
    regress = next(w for w in r.world.store.writes if w[5].checkpoint_version < w[4].checkpoint_version)
    assert (regress[4].resume_cursor, regress[5].resume_cursor) == ("C4", "C2")
    refetched = [rec[3] for rec in r.world.provider.log if rec[1] > 40 and rec[2] == 1]
    assert refetched[:2] == ["C2", "C3"]  # pages done twice; receipts keep replays harmless
    assert r.verdict.duplicated == [] and r.verdict.lost == []


def test_lost_barrier_reply_neither_replays_nor_advances_twice():
    r = run("lost_barrier_reply", "safe")
    assert r.verdict.ok
    fetched = [rec[3] for rec in r.world.provider.log]
    assert fetched.count("C1") == 1                          # the page is not fetched again
    barriers = [(w[4].resume_cursor, w[5].resume_cursor) for w in r.world.store.writes if w[3] == "barrier"]
    assert barriers == [("C1", "C2"), ("C2", "C3")]          # one advance per page
    df = r.trace.to_frame()
    assert "replay" not in set(df.step)
    lost = df[df.outcome == "reply lost"]
    assert list(lost.step) == ["barrier"]
    assert df.loc[lost.index[0] + 1, "step"] == "load" and df.loc[lost.index[0] + 1, "resume_cursor"] == "C2"


def test_swimlane_has_a_lane_per_worker_and_marks_the_rejection():
    fig, ax = plt.subplots()
    swimlane(ax, run("late_retry", "safe"))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["worker 1", "worker 2", "provider", "store"]
    texts = [t.get_text() for t in ax.texts]
    assert "CAS rejected: store holds C4 v3" in texts
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "paused, memory kept (stale)" in labels and "rejected CAS" in labels
    plt.close(fig)


def test_swimlane_marks_the_regression():
    fig, ax = plt.subplots()
    swimlane(ax, run("late_retry", "no_version_check"))
    assert "C2 ← regression" in [t.get_text() for t in ax.texts]
    plt.close(fig)


def _settlement_texts(scenario, policy):
    import simkit
    fig, ax = plt.subplots()
    swimlane(ax, simkit.simulate(simkit.load(scenario), settlement=policy))
    texts = [(t.get_text(), t.get_color()) for t in ax.texts]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(fig)
    return texts, legend


def test_swimlane_shows_seed_001_settlement_and_its_failures_in_red():
    red = "#d62728"
    texts, legend = _settlement_texts("late_response", "fenced")
    assert [t for t, _c in texts if "→" in t or "kept" in t] == ["pending → committed", "committed kept"]
    assert red not in {c for _t, c in texts}
    assert {"reserve operation record (seed 001)", "settle reply or timeout (seed 001)",
            "timeout: no reply in time", "late reply arrives (after the timeout)"} <= set(legend)
    texts, _ = _settlement_texts("late_response", "last_write_wins")
    assert ("committed → provisional: downgraded", red) in texts            # step 5 broken
    texts, legend = _settlement_texts("misbound_response", "fenced")
    assert [t for t, _c in texts].count("foreign reply quarantined") == 2
    assert "reply carries another request's identity" in legend and red not in {c for _t, c in texts}
    texts, _ = _settlement_texts("misbound_response", "unfenced")
    assert texts.count(("pending → committed on a foreign reply", red)) == 2      # step 6 broken, e2 and e3


def test_cli_writes_the_swimlane(tmp_path, capsys):
    out = tmp_path / "lanes.png"
    assert main(["run", "late_retry", "--swimlane", str(out)]) == 0
    assert out.stat().st_size > 10_000
