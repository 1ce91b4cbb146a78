"""The command line (docs/cli.md): JSON shapes, tables, and one clear line with exit 2 for bad input."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TWO_PAGES

from simkit.cli import main
from simkit.judge.verdict import FIELDS

GOOD = '\nname = "tiny"\n[initial]\nresume_cursor = "C1"' + TWO_PAGES

BAD = {
    "missing key": ("[[pages]]\ncursor = 'C1'\nnext_cursor = 'C1'\n", "key 'pages[0].positions': missing"),
    "wrong type": (GOOD.replace('name = "tiny"', 'workers = "two"'),
                   "key 'workers': expected int, got str 'two'"),
    "unknown crash point": (GOOD + "[[faults]]\nkind = 'crash'\npoint = 'during_lunch'\n",
                            "key 'faults[0].point': 'during_lunch' is not one of after_fetch"),
    "duplicate cursor": (GOOD + "[[pages]]\ncursor = 'C1'\npositions = []\nnext_cursor = 'C1'\n",
                         "key 'pages[2].cursor': duplicate cursor 'C1'"),
    "not toml": ("name = ", "not valid TOML"),
    "rate out of range": ("[generate]\noverlap = 2.0\n", "key 'generate.overlap': must be between 0 and 1"),
    "unknown key": ("colour = 'blue'\n" + GOOD, "key 'colour': unknown key"),
}


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "simkit", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_scenario_one_line_exit_2(tmp_path, case):
    text, message = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = tmp_path / "timeline.png"
    r = cli("run", str(path), "--timeline", str(out))
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(path) in lines[0] and message in lines[0], lines[0]
    assert not out.exists()                                   # nothing half-written


@pytest.mark.parametrize("args, message", [
    (["run", "retry_walkthrough", "--strategy", "optimistic"], "--strategy optimistic: unknown strategy"),
    (["run", "retry_walkthrough", "--crash", "during_lunch"],
     "--crash during_lunch: expected POINT[@POSITION][#OCCURRENCE] with POINT one of after_fetch,"),
    (["run", "retry_walkthrough", "--out", "x"],
     "run: unrecognized arguments: --out x (see simkit run --help)"),
    (["run", "no_such_scenario"], "no_such_scenario: no such scenario"),
    (["run", "retry_walkthrough", "--seed", "x"], "invalid int value"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_arguments_one_line_exit_2(args, message):
    r = cli(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr


def test_run_json_has_the_contract_fields(capsys):
    assert main(["run", "retry_walkthrough", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    contract = {
        "scenario": "retry_walkthrough", "strategy": "safe", "seed": 0, "ok": True, "lost": [],
        "duplicated": [],
        "regressions": 0, "invariant_violations": [], "halted": None, "halt_justified": None, "pending": [],
        "completed": True,
        "stopped": None, "settlement": "fenced", "settlement_violations": [], "unhalted": [],
        "final_checkpoint": {"resume_cursor": "C8", "applied_position": 107, "checkpoint_version": 2},
        "crashes": 1, "fetches": 3, "effects": 2,
    }
    # extending the object is fine (CONTRACT.md): only by a verdict field declared in simkit/judge/verdict.py
    assert {k: d[k] for k in contract if k in d} == contract and set(d) - set(contract) <= {
        f.json for f in FIELDS
    }


def test_run_crash_flag(capsys):
    assert main(["run", "retry_walkthrough", "--crash", "after_event_commit@106", "--crash",
                 "before_page_barrier", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["crashes"] == 3 and d["ok"]


def test_compare_json_and_table(capsys):
    assert main(["compare", "shortcut_watermark_only_dedup", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["scenario"] == "shortcut_watermark_only_dedup" and d["seed"] == 0
    by = {r["strategy"]: r for r in d["results"]}
    assert by["safe"]["ok"] and by["watermark_only_dedup"]["lost"] == ["e105"]
    assert main(["compare", "shortcut_watermark_only_dedup"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("watermark_only_dedup"))
    assert "invariants broken" in table and row.split()[:4] == ["watermark_only_dedup", "NO", "1", "(e105)"]


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for word in ("scenario    gauntlet", "strategy    safe", "strategy    compare_tokens",
                 "settlement  fenced"):
        assert word in out


def test_demo_prints_table_and_writes_png(tmp_path):
    r = cli("demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "safe                    yes" in r.stdout
    assert (tmp_path / "simkit-demo-timeline.png").stat().st_size > 10_000


def test_user_strategy_on_the_command_line(tmp_path, capsys):
    (tmp_path / "mine.py").write_text("from simkit import Consumer\nclass Mine(Consumer):\n    pass\n")
    assert main(["run", "gauntlet", "--strategy", f"{tmp_path / 'mine.py'}:Mine", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["strategy"] == "Mine" and d["ok"]


# -- output paths: refused before any work, one line, nothing left behind ------------------------------------
@pytest.mark.parametrize("args, message", [
    (["run", "retry_walkthrough", "--timeline", "/nonexistent/t.png"],
     "--timeline /nonexistent/t.png: no such folder '/nonexistent'"),
    (["run", "retry_walkthrough", "--timeline", "t.xyz"],
     "--timeline t.xyz: unsupported extension '.xyz'; use "),
    (["run", "retry_walkthrough", "--timeline", "noext"], "--timeline noext: no file extension; use "),
    (["run", "retry_walkthrough", "--timeline", "folder"], "--timeline folder: is a folder, not a file"),
    (["run", "retry_walkthrough", "--timeline", "ok.png", "--swimlane", "/nonexistent/s.png"],
     "--swimlane /nonexistent/s.png: no such folder"),
    (["run", "retry_walkthrough", "--timeline", "a.png", "--swimlane", "./a.png"],
     "--swimlane ./a.png: the same file as --timeline"),
    (["demo", "--out", "/nonexistent/d.png"], "--out /nonexistent/d.png: no such folder"),
    (["demo", "--out", "d.xyz"], "--out d.xyz: unsupported extension '.xyz'"),
    (["explore", "retry_walkthrough", "--out", "/nonexistent/dir/x.toml"],
     "--out /nonexistent/dir/x.toml: no such"),
    (["explore", "retry_walkthrough", "--out", "folder"], "--out folder: is a folder, not a file"),
    (["explore", "retry_walkthrough", "--out", "x.txt"],
     "--out x.txt: unsupported extension '.txt'; use .toml"),
    (["shrink", "gauntlet", "--strategy", "persist_token_on_fetch", "--seed", "3", "--out",
      "/nonexistent/x.toml"],
     "--out /nonexistent/x.toml: no such folder"),
    (["sweep", "retry_walkthrough", "--seeds", "2", "--out", "/nonexistent/x.csv"],
     "--out /nonexistent/x.csv: no such"),
    (["sweep", "retry_walkthrough", "--seeds", "2", "--out", "folder.csv"], "--out folder.csv: is a folder"),
    (["live", "retry_walkthrough", "--kills", "1", "--dir", "base.toml"],
     "--dir base.toml: it is a file, not a folder"),
    (["live", "retry_walkthrough", "--kills", "1", "--dir", "base.toml/run"],
     "--dir base.toml/run: 'base.toml' is a file"),
    (["live", "retry_walkthrough", "--kills", "1", "--dir", "base.toml/a/b"],
     "--dir base.toml/a/b: 'base.toml' is a file"),
    (["run", "retry_walkthrough", "--timeline", "t.pgf"], "--timeline t.pgf: unsupported extension '.pgf'"),
])
def test_a_bad_output_path_is_one_line_before_any_work(tmp_path, args, message):
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "base.toml").write_text(GOOD)
    before = sorted(p.name for p in tmp_path.iterdir())
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""              # demo: no table printed before the refusal
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"simkit: {message}"), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before     # nothing written, not even ok.png


def _run_figures(tmp_path, monkeypatch, fail):
    """``simkit run --timeline --swimlane`` with the swimlane's write failing part-way with ``fail``."""
    import simkit.cli.output as output  # where cmd_run looks save_figure up
    real = output.save_figure

    def save(run, path, kind):
        if kind == "timeline":
            return real(run, path, kind)
        path.write_bytes(b"\x89PNG half")
        raise fail
    monkeypatch.setattr(output, "save_figure", save)
    monkeypatch.chdir(tmp_path)
    return main(["run", "retry_walkthrough", "--timeline", "t.png", "--swimlane", "s.png"])


def test_a_failed_write_leaves_neither_figure(tmp_path, monkeypatch, capsys):
    assert _run_figures(tmp_path, monkeypatch, OSError(28, "No space left on device")) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "simkit: --swimlane s.png: cannot write it: No space left on device\n"
    assert list(tmp_path.iterdir()) == []                    # no t.png, no temporary file


def test_ctrl_c_is_one_line_exit_130_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    assert _run_figures(tmp_path, monkeypatch, KeyboardInterrupt()) == 130
    out, err = capsys.readouterr()
    assert out == "" and err == "simkit: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_a_sweep(monkeypatch, capsys):
    import simkit.tools.sweep

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(simkit.tools.sweep, "sweep", interrupted)
    assert main(["sweep", "retry_walkthrough", "--seeds", "2"]) == 130
    assert capsys.readouterr() == ("", "simkit: interrupted\n")


def test_parquet_without_an_engine_is_refused_before_the_sweep(tmp_path, monkeypatch, capsys):
    import simkit.tools.sweep
    monkeypatch.setattr(simkit.tools.sweep, "find_spec", lambda name: None)
    monkeypatch.setattr(simkit.tools.sweep, "sweep", lambda *a, **k: pytest.fail("the sweep ran"))
    out = tmp_path / "runs.parquet"
    assert main(["sweep", "retry_walkthrough", "--seeds", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"simkit: --out {out}: writing Parquet needs pyarrow") and err.count("\n") == 1
    assert not out.exists()


def test_outputs_are_written_whole(tmp_path):
    r = cli("run", "retry_walkthrough", "--timeline", "t.png", "--swimlane", "s.svg", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("retry_walkthrough · safe")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.svg", "t.png"]  # no temporary file left
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG") and b"<svg" in (
        tmp_path / "s.svg"
    ).read_bytes()


def test_an_output_name_as_long_as_the_system_allows_is_written(tmp_path, monkeypatch, capsys):
    """The temporary file beside it has a short name of its own, not the output's name made longer."""
    monkeypatch.chdir(tmp_path)
    name = "a" * 251 + ".svg"                                  # 255 bytes: the usual longest file name
    assert main(["run", "retry_walkthrough", "--swimlane", name]) == 0, capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_two_outputs_differing_in_case_get_a_temporary_file_each(tmp_path, monkeypatch, capsys):
    (tmp_path / "x.png").touch()
    if (tmp_path / "X.PNG").exists():
        pytest.skip("a case-insensitive file system: x.Png and x.png are one file")
    (tmp_path / "x.png").unlink()
    monkeypatch.chdir(tmp_path)
    assert main(["run", "retry_walkthrough", "--timeline", "x.Png", "--swimlane", "x.png"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.Png", "x.png"]
    assert (tmp_path / "x.Png").read_bytes() != (tmp_path / "x.png").read_bytes()     # a timeline, a swimlane


def test_a_plotting_backend_failure_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    import matplotlib.figure

    def savefig(self, *args, **kwargs):
        raise RuntimeError("'xelatex' not found; install it")
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "retry_walkthrough", "--timeline", "t.png"]) == 2
    assert capsys.readouterr() == ("", "simkit: --timeline t.png: cannot write it: RuntimeError: 'xelatex' "
                                       "not found; install it\n")
    assert list(tmp_path.iterdir()) == []


def test_live_dir_under_a_folder_that_cannot_be_written(tmp_path, monkeypatch, capsys):
    import os
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    # also as root
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == locked else real(p, mode))
    assert main(["live", "retry_walkthrough", "--kills", "1", "--dir", str(locked / "a" / "b")]) == 2
    assert capsys.readouterr() == ("", f"simkit: --dir {locked}/a/b: cannot write into {str(locked)!r}\n")
    assert list(locked.iterdir()) == []


def test_the_package_docstring_cites_the_docs_and_help_does_not():
    import simkit.cli
    assert "docs/cli.md" in simkit.cli.__doc__
    assert "CONTRACT" not in simkit.cli.build_parser().format_help()


# -- arguments held to the scenario file's rules -------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["run", "retry_walkthrough", "--crash", "before_effect#0"],
     "--crash before_effect#0: key 'occurrence': must be at least 1"),
    (["run", "retry_walkthrough", "--crash", "before_effect@999"],
     "--crash before_effect@999: key 'position': no page carries position 999"),
    (["explore", "retry_walkthrough", "--pause-duration", "nan"],
     "--pause-duration nan: must be a finite number"),
    (["explore", "retry_walkthrough", "--pause-duration", "inf"],
     "--pause-duration inf: must be a finite number"),
    (["explore", "retry_walkthrough", "--pause-duration", "-5"], "--pause-duration -5: must be at least 0"),
    (["explore", "retry_walkthrough", "--jobs", "0"], "--jobs 0: must be at least 1"),
    (["explore", "retry_walkthrough", "--jobs", "-3"], "--jobs -3: must be at least 1"),
    (["sweep", "retry_walkthrough", "--seeds", "2", "--jobs", "0"], "--jobs 0: must be at least 1"),
    (["live", "retry_walkthrough", "--kills", "1", "--timeout", "0"], "--timeout 0: must be positive"),
    (["live", "retry_walkthrough", "--kills", "1", "--timeout", "nan"],
     "--timeout nan: must be a finite number"),
    (["run", "retry_walkthrough", "--seed", "abc"],
     "run: argument --seed: invalid int value: 'abc' (see simkit run --help)"),
])
def test_bad_option_values_are_one_line_exit_2(args, message, capsys):
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"simkit: {message}\n"


def test_only_an_error_that_names_a_parameter_is_given_the_flag(capsys):
    """``SimkitError.param`` says which parameter the message
    opens with; a scenario called ``seeds`` is not one."""
    from simkit.cli.output import spoken
    from simkit.errors import SimkitError
    assert spoken(SimkitError("max_crashes 60: at most 50",
                              param="max_crashes")) == "--max-crashes 60: at most 50"
    assert spoken(SimkitError("bench: repeat must be 1+", param="repeat")) == "bench: --repeat must be 1+"
    assert spoken(SimkitError("seeds: no such scenario")) == "seeds: no such scenario"
    assert main(["run", "seeds"]) == 2 and capsys.readouterr().err.startswith(
        "simkit: seeds: no such scenario"
    )


# -- help, version, list -------------------------------------------------------------------------------------
def _help(*args):
    r = cli(*args, "--help")
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())


def test_help_is_plain_text_for_users():
    top = _help()
    assert "``" not in top and "CONTRACT" not in top and "§" not in top
    assert "exit status 2" in top and "without writing anything" in top
    run = _help("run")
    assert "inject a crash (repeatable)" in run and "(default: safe)" in run
    assert "(default: 2)" in _help("explore")
    assert "[--first-seed SEED]" in _help("sweep")
    live = _help("live")
    assert "[--store sqlite]" in live and "{memory" not in live and "memory," not in live
    assert _help("demo").startswith("usage: simkit demo [-h] [--out PNG] Every strategy on the gauntlet")


def test_version():
    from importlib.metadata import version
    r = cli("--version")
    assert r.returncode == 0 and r.stdout == f"simkit {version('simkit')}\n"


def test_list_is_readable(capsys):
    assert main(["list"]) == 0
    for line in capsys.readouterr().out.splitlines():
        text = line[47:]
        assert "``" not in text and not text.startswith(('"', "'")) and not text.endswith(('"', "."))
        assert len(text) <= 80
        if text.endswith("…"):
            assert text[-2] != " " and text.count("(") == text.count(")")


def test_compare_keeps_one_run_at_a_time(monkeypatch, capsys):
    """`simkit compare` turns each strategy's run into its row before the next runs: it held all eight, 2.6 GB
    at 10**6 events (round 63). Checked where the runs are made (the command's own process): a strategy's run
    starts while at most the one before it is still referenced."""
    import gc
    import weakref

    from simkit.cli import commands
    made, real = [], commands.simulate

    def one_at_a_time(*a, **k):
        gc.collect()
        kept = sum(r() is not None for r in made)
        if kept > 1:
            raise RuntimeError(f"{kept} runs still held")
        run = real(*a, **k)
        made.append(weakref.ref(run))
        return run

    monkeypatch.setattr(commands, "simulate", one_at_a_time)
    assert main(["compare", "retry_walkthrough"]) == 0, capsys.readouterr()
    assert "runs still held" not in capsys.readouterr().err
