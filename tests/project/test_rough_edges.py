"""Issue 30's rough edges, each held: shrink --json on a run that does not fail, the help of every command and
option, service's --contract-version, the live signal test started in the background, and scipy in [test]."""
import argparse
import json
import subprocess
import sys
from pathlib import Path

from simkit.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_shrink_json_on_a_run_that_does_not_fail_says_so_in_its_object(capsys):
    assert main(["shrink", "retry_walkthrough", "--strategy", "safe", "--json"]) == 0
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert err == "" and d["nothing_to_shrink"] is True
    assert (d["scenario"], d["strategy"], d["seed"], d["failure"], d["shrunk"], d["out"]) == \
        ("retry_walkthrough", "safe", 0, None, None, None)
    assert d["verdict"]["ok"] is True


def test_shrink_json_on_a_failing_run_shrinks_it(capsys):
    assert main(["shrink", "retry_walkthrough", "--strategy", "persist_token_on_fetch", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["failure"] and d["toml"] and "nothing_to_shrink" not in d


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_every_command_has_a_description_and_every_option_a_help():
    """``simkit serve --help`` opened with its usage and went
    straight to the options; ``--log-level`` had no help."""
    missing = []
    for name, parser in _subcommands().items():
        if not parser.description:
            missing.append(f"simkit {name}: no description")
        for action in parser._actions:
            if action.help is None and action.option_strings:
                missing.append(f"simkit {name} {'/'.join(action.option_strings)}: no help")
    assert not missing, missing


def test_service_names_the_contract_version_apart_from_simkits_own_version():
    service = _subcommands()["service"]
    listed = [o for a in service._actions if a.help != argparse.SUPPRESS for o in a.option_strings]
    assert "--contract-version" in listed and "--version" not in listed
    done = subprocess.run([sys.executable, "-m", "simkit", "--version"], capture_output=True, text=True)
    assert done.stdout.startswith("simkit ")


def test_the_live_signal_tests_pass_when_the_suite_runs_in_the_background():
    """``pytest &`` starts with SIGINT ignored; the SIGINT
    variant's child used to inherit that and never stop."""
    code = ("import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            "sys.exit(subprocess.call([sys.executable, '-m', 'pytest', '-q', '-o', 'addopts=', '-p', "
            "'no:cacheprovider', 'tests/live/test_live.py', '-k', 'sigterm_and_sighup and SIGINT']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-2000:]


def test_scipy_is_installed_with_the_test_extra():
    """tests/tools/test_sweep.py compares the Wilson interval
    with scipy's; it skipped wherever [test] was used."""
    import scipy.stats  # noqa: F401
