"""The seed 004 figures: each reads what it claims to read, from the service's ground truth, and carries a
title, labelled axes and a legend."""
from conftest import labels

from simkit.service import plot as splot
from simkit.service.sim import explore_service, run_service_scenario


def test_checkpoint_steps_follow_committed_commands():
    run = run_service_scenario("checkpoint_service", "correct")
    times, seqs = splot.checkpoint_steps(run)
    assert (times[0], seqs[0]) == (0.0, None)                          # 404 until the first command commits
    assert seqs[1:] == [w.after["cursor"]["sequence"] for w in run.world.svc.writes]
    assert seqs[-1] == run.as_dict()["final_checkpoint"]["cursor"]["sequence"]


def test_checkpoint_steps_drop_to_the_backup_at_a_restore():
    run = run_service_scenario("restore_from_backup", "correct")
    times, seqs = splot.checkpoint_steps(run)
    at = times.index(30.0)                                             # the restore, t = 30
    assert seqs[at - 1] == 11 and seqs[at] == 9  # back to what the backup at t = 14 held
    assert seqs[1:at] == sorted(seqs[1:at]) and seqs[at:] == sorted(seqs[at:])   # monotonic on either side


def test_acknowledged_twice_is_the_checkers_duplicate_acks():
    for client in ("correct", "new_key_retry", "reset_on_409"):
        run = run_service_scenario("checkpoint_service", client)
        assert len(splot.acknowledged_twice(run)) == run.verdict.duplicate_acks, client
    twice = splot.acknowledged_twice(run_service_scenario("checkpoint_service", "new_key_retry"))
    assert twice == [(13.0, 6), (21.5, 9)]


def test_effect_fates_separate_backed_reconciled_and_orphaned_effects():
    runs = {v: run_service_scenario("restore_reused_numbers", "correct", v) for v in (1, 2)}
    fates = {v: {(s, f) for _t, _w, s, f in splot.effect_fates(run) if f != "backed"}
             for v, run in runs.items()}
    assert fates == {1: {(10, "unreconciled"), (11, "unreconciled")},
                     2: {(10, "reconciled"), (11, "reconciled")}}


def test_failure_reasons_name_each_way_a_verdict_fails():
    assert splot.failure_reasons(run_service_scenario("checkpoint_service", "correct").verdict) == ("ok",)
    def reasons(name, client):
        return splot.failure_reasons(run_service_scenario(name, client).verdict)
    assert reasons("checkpoint_service", "new_key_retry") == ("duplicate_acks",)
    assert reasons("restore_from_backup", "reset_on_409") == ("lost", "unreconciled")


def test_progress_draws_every_mark_with_title_axes_and_legend(ax):
    run = run_service_scenario("restore_reused_numbers", "correct", 1)
    splot.progress(ax, run)
    assert ax.get_title() == "restore_reused_numbers · correct · contract v1: NOT ok"
    assert ax.get_xlabel() == "simulated time (s)" and ax.get_ylabel() == "journal sequence"
    got = labels(ax)
    for label in ("server checkpoint cursor", "lost: at or below the checkpoint, never applied",
                  "effect ran; a restore dropped its entry; NOT reconciled",
                  "restore of the backup taken at t=14",
                  "worker 1 silent (back-off, then paused), cursor in memory", "409 reply"):
        assert label in got, label
    assert ax.get_legend() is not None


def test_progress_marks_lost_replies_and_double_acknowledgements(ax):
    splot.progress(ax, run_service_scenario("checkpoint_service", "new_key_retry"), until=70)
    got = labels(ax)
    assert "page acknowledged twice" in got and "checkpoint write reply lost" in got
    assert "effect ran; its entry is in the final journal (worker 2)" in got
    assert ax.get_xlim() == (-1, 70)


def test_outcomes_counts_explored_schedules_per_client(ax):
    runs = {c: list(explore_service("restore_from_backup", c, max_crashes=0, lost_replies=1, horizon=2))
            for c in ("correct", "reset_on_409")}
    assert splot.outcome_counts(runs["correct"])["ok"] == 3
    assert splot.outcome_counts(runs["reset_on_409"])["lost"] == 3
    splot.outcomes(ax, runs, title="t")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ok", "lost", "unreconciled"]
    assert ax.get_ylabel() == "explored schedules" and ax.get_xlabel() and ax.get_title() == "t"
    assert labels(ax) == ["correct (3 schedules)", "reset_on_409 (3 schedules)"]


def test_scan_draws_each_clients_pages_and_the_missed_records(ax):
    runs = [run_service_scenario("initial_reconciliation", c) for c in ("correct", "stop_on_empty_page")]
    candidates = splot.scan_candidates(runs[0])
    assert candidates[:4] == ["mem-00", "mem-01", "mem-02", "mem-03"] and len(candidates) == 28
    assert [len(p["records"]) for _a, p in splot.first_scan(runs[1])] == [0]  # stopped at the empty page
    assert [len(p["records"]) for _a, p in splot.first_scan(runs[0])][:4] == [0, 3, 1, 0]
    splot.scan(ax, runs)
    assert labels(ax) == ["deleted or private to another subject", "available: applied from a scan page",
                          "available: never received (missed)"]
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("p1: empty") == 2 and "p4: empty" in texts
    assert [t.get_text() for t in ax.get_yticklabels()] == ["correct\nok", "stop_on_empty_page\nNOT ok"]
    assert ax.get_title() and ax.get_xlabel()


def test_failure_reasons_name_missed_records_and_broken_receipts():
    run = run_service_scenario("initial_reconciliation", "stop_on_empty_page")
    assert splot.failure_reasons(run.verdict) == ("missed",)
    split = run_service_scenario("crash_mid_checkpoint_write", "correct", store="split")
    assert splot.failure_reasons(split.verdict) == ("broken_receipts",)
