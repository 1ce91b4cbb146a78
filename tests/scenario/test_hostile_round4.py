"""Hostile input, fourth round (issue 32, "a fresh tester"): each case here printed a traceback, said the
wrong thing, destroyed a file, left a process behind or ran for minutes in gigabytes. Now: one line naming the
file, key or flag and the problem, exit status 2, nothing written; or the verdict, as the project promises.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TWO_PAGES
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hostile import one_line_exit_2

import simkit
import simkit.scenario.checks as checks
from simkit.cli import main
from simkit.service.contract import ServiceError, parse_body

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, /dev/full, PDEATHSIG")


def simkit_cli(*argv, env=None, shell: str | None = None, cwd=None) -> subprocess.CompletedProcess:
    command = shell if shell is not None else [sys.executable, "-m", "simkit", *argv]
    return subprocess.run(command, shell=shell is not None, capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, **(env or {})})


# -- standard output -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"},
                                 {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
                                  "PYTHONIOENCODING": ""}], ids=["PYTHONIOENCODING=ascii", "LC_ALL=C"])
def test_a_stdout_that_cannot_encode_a_character_gets_its_escape(env):
    """UnicodeEncodeError: 'ascii' codec can't encode character '\\xb7' (the "·" of every summary, the "…" of
    ``simkit list``)."""
    proc = simkit_cli("run", "retry_walkthrough", env=env)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("retry_walkthrough \\xb7 safe \\xb7 ")
    proc = simkit_cli("list", env=env)
    assert proc.returncode == 0 and proc.stderr == "" and "\\u2026" in proc.stdout


@linux
@pytest.mark.parametrize("argv", [["list"], ["run", "retry_walkthrough", "--json"]],
                         ids=["list", "run --json"])
def test_a_stdout_that_refuses_writes_is_one_line(argv):
    """OSError: [Errno 28] No space left on device, a traceback, for ``simkit list > /dev/full``."""
    proc = simkit_cli(shell=f"{sys.executable} -m simkit {' '.join(argv)} > /dev/full")
    assert proc.returncode == 2
    assert proc.stderr == "simkit: standard output: cannot write to it: No space left on device\n"


def test_a_closed_stderr_keeps_the_exit_status():
    """``simkit run nope.toml 2>&-``: writing the one line
    failed, and its traceback made the exit status 1."""
    proc = simkit_cli(shell=f"{sys.executable} -m simkit run nope.toml 2>&-")
    assert proc.returncode == 2 and proc.stdout == ""


@pytest.mark.parametrize("argv", [["shrink", "gauntlet", "--out", "a\0.toml"], ["workshop", "a\0b"],
                                  ["live", "retry_walkthrough", "--kills", "1", "--dir", "a\0b"],
                                  ["serve", "--config", "a\0b"],
                                  ["run", "retry_walkthrough", "--strategy", "exec:ca\0t"]],
                         ids=["--out", "workshop", "--dir", "--config", "exec"])
def test_an_argument_holding_a_nul_is_one_line(capsys, argv):
    """main(argv) from Python (a shell cannot pass a NUL): ValueError: embedded null byte, a traceback."""
    bad = next(a for a in argv if "\0" in a)
    one_line_exit_2(capsys, argv, f"argument '{bad.replace(chr(0), chr(92) + 'x00')}': holds a NUL character")


HOSTILE = '''
import os, signal, sys
from pathlib import Path
from simkit import Consumer

class ClosesStdout(Consumer):
    def is_replay(self, event, receipts, applied_position):
        sys.stdout.close()
        return super().is_replay(event, receipts, applied_position)

class DropsStdout(Consumer):
    def is_replay(self, event, receipts, applied_position):
        sys.stdout = None
        return super().is_replay(event, receipts, applied_position)

class ForksAStray(Consumer):
    """a child that would sleep for ten minutes, its pid where the test finds it"""
    def is_replay(self, event, receipts, applied_position):
        if not Path("stray.pid").exists():
            pid = os.fork()
            if pid == 0:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
                import time
                time.sleep(600)
                os._exit(0)
            Path("stray.pid").write_text(str(pid))
        return super().is_replay(event, receipts, applied_position)

class ForksOn(Consumer):
    """both processes go on with the run"""
    def is_replay(self, event, receipts, applied_position):
        if event.position == 1:
            os.fork()
        return super().is_replay(event, receipts, applied_position)

class Terminates(Consumer):
    def is_replay(self, event, receipts, applied_position):
        os.kill(os.getpid(), signal.SIGTERM)
        return super().is_replay(event, receipts, applied_position)

class Exits(Consumer):
    def is_replay(self, event, receipts, applied_position):
        os._exit(3)
'''


def planted(tmp_path, monkeypatch, hostile: str):
    """``tmp_path`` holding ``hostile.py`` (the round's consumers) and ``two.toml``, as the working folder."""
    (tmp_path / "hostile.py").write_text(hostile)
    (tmp_path / "two.toml").write_text(TWO_PAGES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    return planted(tmp_path, monkeypatch, HOSTILE)


@pytest.mark.parametrize("cls", ["ClosesStdout", "DropsStdout"])
def test_a_consumer_that_closes_or_drops_stdout_does_not_take_the_verdict_with_it(hostile, capsys, cls):
    """``sys.stdout.close()`` in a hook: ValueError: I/O operation on closed file, a traceback; ``sys.stdout =
    None``: exit status 0 and no output at all."""
    assert main(["run", "two.toml", "--strategy", f"hostile.py:{cls}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert sys.stdout is not None and not sys.stdout.closed


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@linux
def test_a_process_a_consumer_forks_and_forgets_ends_with_the_command(hostile):
    """The stray slept on under PID 1 holding the command's stdout: ``simkit run ... | cat`` hung for its ten
    minutes. subprocess.run returns only once the pipes close, and its timeout (120 s) is a fifth of the
    stray's sleep: that it returned at all says the stray did not hold them, whatever the machine's load."""
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:ForksAStray", cwd=hostile)
    assert proc.returncode == 0 and "ForksAStray · seed 0: ok" in proc.stdout
    stray = int((hostile / "stray.pid").read_text())
    deadline = time.monotonic() + 10
    while alive(stray) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(stray)


@linux
def test_a_copy_of_the_command_a_consumer_forks_says_nothing(hostile):
    """Both processes of the fork went on through the command and printed the verdict: twice."""
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:ForksOn", cwd=hostile)
    assert proc.returncode == 0 and proc.stdout.count("ForksOn · seed 0") == 1 and proc.stderr == ""


def test_sigterm_during_a_run_is_one_line(hostile):
    """Killed by its SIGTERM, the command exited -15 with nothing said (docs/cli.md: 128 + the signal)."""
    proc = simkit_cli("run", "two.toml", "--strategy", "hostile.py:Terminates", cwd=hostile)
    assert (proc.returncode, proc.stderr, proc.stdout) == (128 + signal.SIGTERM,
                                                           "simkit: terminated by SIGTERM\n", "")


def test_a_sweep_worker_the_consumer_ends_is_one_line(hostile, capsys):
    """concurrent.futures.process.BrokenProcessPool, 30 lines of traceback."""
    one_line_exit_2(
        capsys,
        ["sweep", "two.toml", "--strategy", "hostile.py:Exits", "--seeds", "2", "--jobs", "2"],
        "sweep two: a worker process ended without a result: did the consumer end its own process",
    )


# -- scenario files ------------------------------------------------------------------------------------------
def pages_carrying(*sizes: int) -> dict:
    pages = [{"cursor": f"C{i}", "positions": list(range(1, n + 1)), "next_cursor": f"C{i + 1}"}
             for i, n in enumerate(sizes)]
    pages.append({"cursor": f"C{len(sizes)}", "positions": [], "next_cursor": f"C{len(sizes)}"})
    return {"pages": pages}


def test_a_scripted_stream_past_a_million_positions_is_refused():
    """A page of 2,000,000 positions (a 15 MB file) ran for two and a half minutes in 850 MB; the 64 MiB a
    file could hold, ten times more."""
    with pytest.raises(simkit.ScenarioError,
                       match=r"^big: key 'pages\[0\]\.positions': the pages carry more than "
                             r"1000000 positions in all"):
        simkit.parse(pages_carrying(checks.MAX_EVENTS + 1), source="big")
    assert simkit.parse(pages_carrying(5)).pages[0]["positions"] == (1, 2, 3, 4, 5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=8), st.integers(1, 40))
def test_the_positions_bound_counts_every_page(sizes, bound):
    """With the bound lowered to ``bound``: a stream is refused exactly when its pages carry more positions
    than that, at the first page that passes it, and the page bound likewise."""
    saved = checks.MAX_EVENTS, checks.MAX_PAGES
    checks.MAX_EVENTS, checks.MAX_PAGES = bound, len(sizes) + 1
    try:
        totals = [sum(sizes[:i + 1]) for i in range(len(sizes))]
        if totals[-1] <= bound:
            assert len(simkit.parse(pages_carrying(*sizes)).pages) == len(sizes) + 1
        else:
            first = next(i for i, t in enumerate(totals) if t > bound)
            with pytest.raises(simkit.ScenarioError,
                               match=rf"key 'pages\[{first}\]\.positions': the pages carry "
                                     rf"more than {bound} positions"):
                simkit.parse(pages_carrying(*sizes))
        checks.MAX_PAGES = len(sizes)
        with pytest.raises(simkit.ScenarioError,
                           match=rf"key 'pages': {len(sizes) + 1} pages; a scenario has at "
                                 rf"most {len(sizes)}$"):
            simkit.parse(pages_carrying(*sizes))
    finally:
        checks.MAX_EVENTS, checks.MAX_PAGES = saved


def test_a_file_past_16_mib_is_refused_unread(tmp_path, capsys):
    """64 MiB of ``1,1,1,...`` took five minutes of parsing before its positions were refused."""
    path = tmp_path / "big.toml"
    with path.open("wb") as f:
        f.truncate(checks.MAX_FILE_BYTES + 1)
    one_line_exit_2(capsys, ["run", str(path)],
                    f"{path}: {checks.MAX_FILE_BYTES + 1} bytes; a scenario file holds "
                    f"at most {16 * 1024 * 1024}")


@pytest.mark.parametrize("make, problem", [
    (lambda p: (p.symlink_to(p.with_name("other.toml")), p.with_name("other.toml").symlink_to(p)),
     "cannot read it: Too many levels of symbolic links"),
    (lambda p: p.symlink_to(p.with_name("gone.toml")), "cannot read it: No such file or directory"),
], ids=["loop", "dangling"])
def test_a_loop_of_links_or_a_link_to_nothing_is_not_a_missing_scenario(tmp_path, capsys, make, problem):
    """Both said ``no such scenario (bundled: ...)``, for a file that is there."""
    path = tmp_path / "link.toml"
    make(path)
    one_line_exit_2(capsys, ["run", str(path)], f"{path}: {problem}")


@pytest.mark.parametrize("suffix, argv", [
    (".toml", ["shrink", "{s}", "--strategy", "watermark_only_dedup", "--seed", "3", "--out", "{s}"]),
    (".toml", ["explore", "{s}", "--strategy", "watermark_only_dedup", "--max-crashes", "0", "--out", "{s}"]),
    (".png", ["run", "{s}", "--timeline", "{s}"]),
    (".csv", ["sweep", "{s}", "--seeds", "1", "--out", "{s}"]),
], ids=["shrink", "explore", "run --timeline", "sweep"])
def test_an_output_onto_the_scenario_file_itself_is_refused(tmp_path, capsys, suffix, argv):
    """``simkit shrink mine.toml --out mine.toml`` replaced the scenario with its shrunk self, without a word
    (a scenario file may have any name: ``mine.png`` was replaced by its own timeline)."""
    text = (Path(simkit.scenario.read.SCENARIO_DIR) / "gauntlet.toml").read_text()
    scenario = tmp_path / f"mine{suffix}"
    scenario.write_text(text)
    argv = [str(scenario) if a == "{s}" else a for a in argv]
    one_line_exit_2(capsys, argv, f"{argv[-2]} {scenario}: is the scenario file '{scenario}' itself: it "
                                   "would be replaced; write elsewhere")
    assert scenario.read_text() == text


@linux
def test_a_workshop_folder_that_cannot_be_made_is_one_line(capsys):
    """FileNotFoundError from mkdir, a traceback."""
    one_line_exit_2(capsys, ["workshop", "/proc/simkit-no/such"],
                    "/proc/simkit-no/such: cannot write the notebooks there: No such file or directory")


def test_a_5000_digit_seed_is_not_echoed_whole(capsys):
    err = one_line_exit_2(capsys, ["run", "retry_walkthrough", "--seed", "1" * 5000], "invalid int value: "
                          "'11111111111111111111... (5000 characters)'")
    assert len(err) < 200


# -- the service's request bodies ----------------------------------------------------------------------------
JSON_NOT_OBJECTS = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                                | st.floats(allow_nan=False, allow_infinity=False),
                                lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@settings(max_examples=80, deadline=None)
@given(JSON_NOT_OBJECTS)
def test_a_body_that_is_json_but_no_object_is_said_to_be_so(value):
    """``null`` was answered "request body nests arrays or objects more than 32 levels deep"."""
    with pytest.raises(ServiceError, match="^request body must be a JSON object$"):
        parse_body(json.dumps(value).encode())


@pytest.mark.parametrize("raw, problem", [
    (b'{"limit": NaN}', "request body is not JSON: NaN is not a JSON number"),
    (b'{"limit": Infinity}', "request body is not JSON: Infinity is not a JSON number"),
    (b'{"limit": -Infinity}', "request body is not JSON: -Infinity is not a JSON number"),
    (b'{"limit": ' + b"1" * 5000 + b"}", "request body is not JSON: an integer of more than 4300 digits"),
], ids=["NaN", "Infinity", "-Infinity", "5000 digits"])
def test_what_rfc_8259_is_not_is_malformed_json(raw, problem):
    """Python's json reads NaN and Infinity; an integer of 5,000 digits was
    answered with Python's advice to call sys.set_int_max_str_digits()."""
    with pytest.raises(ServiceError, match=f"^{problem}$") as raised:
        parse_body(raw)
    assert raised.value.code == "malformed_json"
