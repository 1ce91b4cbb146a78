"""Hostile input, seventh round (issue 32's third round): processes a consumer starts in a session of their
own on every ending path, the work's memory, a sweep whose consumer takes SIGALRM, output paths that are
links, keys that mean nothing; then what a fresh tester tried. Each: one line naming the file, key or flag
and the problem, exit status 2, nothing written and no process left; or the answer.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import UNSTORABLE
from test_hostile import bounded, one_line_exit_2
from test_hostile_round4 import planted
from test_hostile_round5 import HOSTILE

import simkit
from simkit.cli import main, reaper
from simkit.procedure import programs

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, subreapers")

HANGS = '''
import os, subprocess, time
from simkit import Consumer


class Hangs(Consumer):
    """starts a process in a session of its own (Python's), and one that a shell forks in a session of its own
    and leaves (no Python fork hook reaches it), then hangs"""
    def run(self):
        pids = os.environ["STRAY_PID"]
        p = subprocess.Popen(["sleep", "300"], start_new_session=True)
        subprocess.Popen(["setsid", "sh", "-c", f"sleep 300 & echo $! >> {pids}"])
        with open(pids, "a") as f:
            f.write(f"{p.pid}\\n")
        time.sleep(3600)
        return (yield from super().run())


class Greedy(Consumer):
    """allocates without bound"""
    def is_replay(self, event, receipts, applied_position):
        hold = []
        while True:
            hold.append(bytearray(b"x" * (32 << 20)))

'''


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    return planted(tmp_path, monkeypatch, HOSTILE + HANGS)      # round 5's DefeatsTheWallClock among them


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _all_gone(pids: list[int], seconds: float = 15.0) -> bool:
    """Every one of ``pids`` ends within ``seconds``; whatever is left is killed (not left by this test)."""
    deadline = time.monotonic() + seconds
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    return not left


def _strays(pids: Path, proc: subprocess.Popen, seconds: float = 90.0) -> list[int]:
    """The two processes the consumer started, once both are recorded."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = [int(x) for x in pids.read_text().split()] if pids.exists() else []
        if len(started) >= 2:
            time.sleep(0.2)
            return started
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the consumer never started its processes")


HANG = {
    "run": ["run", "two.toml", "--strategy", "hostile.py:Hangs", "--timeline", "t.png"],
    "shrink": ["shrink", "two.toml", "--strategy", "hostile.py:Hangs"],
    "explore": ["explore", "two.toml", "--strategy", "hostile.py:Hangs", "--max-crashes", "0"],
    "sweep": ["sweep", "two.toml", "--strategy", "hostile.py:Hangs", "--seeds", "1", "--jobs", "1", "--out",
              "rows.csv"],
    "audit": ["audit", "hostile.py:Hangs", "--jobs", "1", "--budget", "600"],
    "live": ["live", "two.toml", "--strategy", "hostile.py:Hangs", "--kills", "0"],
}


@pytest.fixture
def hang(hostile):
    """``hang(command)``: the command on a consumer that starts its processes and hangs, and those processes,
    once started. Whatever the test finds, neither the command nor those processes outlive it."""
    started: list[tuple[subprocess.Popen, Path]] = []

    def start(command: str) -> tuple[subprocess.Popen, list[int]]:
        pids = hostile / "pids"
        proc = subprocess.Popen([sys.executable, "-m", "simkit", *HANG[command]], cwd=hostile, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                env={**os.environ, "STRAY_PID": str(pids), "TMPDIR": str(hostile)},
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        started.append((proc, pids))
        return proc, _strays(pids, proc)
    yield start
    for proc, pids in started:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        _all_gone([int(x) for x in pids.read_text().split()] if pids.exists() else [], 0)


# -- 1. every ending path ends what a consumer started in a session of its own -------------------------------
@linux
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.parametrize("command", list(HANG))
def test_a_signal_ends_what_the_consumer_started_in_a_session_of_its_own(hostile, hang, command, sig):
    """The orphan sweep ran only when the work ended normally: after SIGTERM, SIGINT or SIGHUP only the work's
    process group was killed, and the consumer's processes in other sessions lived on under init (``live`` had
    no sweep at all). Now the reaper ends them on every path."""
    proc, strays = hang(command)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    name = "interrupted" if sig == signal.SIGINT else f"terminated by {sig.name}"
    assert (proc.returncode, out, err) == (128 + sig, "", f"simkit: {name}\n")
    assert _all_gone(strays) and not _leftovers(hostile)


def _leftovers(folder: Path) -> list[str]:
    """What a command left in ``folder`` (its working folder and TMPDIR): its temporary files and folders."""
    deadline = time.monotonic() + 10
    while True:
        left = [p.name for p in folder.iterdir() if p.name.startswith((".simkit-", "simkit-"))
                or p.name in ("t.png", "rows.csv")]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@linux
@pytest.mark.parametrize("command", ["run", "live", "sweep"])
def test_a_sigkill_of_simkit_itself_ends_what_the_consumer_started(hostile, hang, command):
    """Nothing runs in a process killed by SIGKILL; its reaper, a process of its own that runs no consumer
    code, sees the command's pipe close and ends the work's processes, in any session, and removes the
    command's temporary files and folders (a figure's, a sweep's heartbeat and table, live's databases)."""
    proc, strays = hang(command)
    proc.kill()
    proc.communicate(timeout=60)
    assert _all_gone(strays) and not _leftovers(hostile)


@linux
def test_the_budget_ends_what_the_consumer_started_in_a_session_of_its_own(hostile, capsys, monkeypatch):
    import simkit.cli.commands as commands
    monkeypatch.setattr(commands, "RUN_BUDGET", 3.0)
    monkeypatch.setenv("STRAY_PID", str(hostile / "pids"))
    try:
        one_line_exit_2(capsys, ["run", "two.toml", "--strategy", "hostile.py:Hangs"],
                        "simkit: run two: did not end within 3 s of wall-clock time; stopped, nothing "
                        "reported")
    finally:
        strays = [int(x) for x in (hostile / "pids").read_text().split()]
        assert len(strays) == 2 and _all_gone(strays)


@linux
def test_a_consumer_that_kills_the_reaper_is_one_line(hostile, capsys, monkeypatch):
    """The consumer sleeps for an hour once it has killed the reaper: only the reaper's death ends the run
    before the command's own budget (30 s here), whose line would be another."""
    import simkit.cli.commands as commands
    monkeypatch.setattr(commands, "RUN_BUDGET", 30.0)
    (hostile / "kills.py").write_text(
        "import os, signal\nfrom simkit import Consumer\n\n\nclass KillsItsParent(Consumer):\n"
        "    def is_replay(self, event, receipts, applied_position):\n"
        "        os.kill(os.getppid(), signal.SIGKILL)\n        import time; time.sleep(3600)\n")
    one_line_exit_2(capsys, ["run", "two.toml", "--strategy", "kills.py:KillsItsParent"],
                    "simkit: run two: the process doing the work ended (how, unknown) without a result")


# -- 2. children from /proc/PID/task/*/children, or each process's parent where there is no such file --------
@linux
def test_children_read_from_the_childrens_file_and_from_each_parent_agree(monkeypatch):
    kids = [subprocess.Popen(["sleep", "30"]) for _ in range(3)]
    try:
        from_files = set(reaper.children(os.getpid()))
        monkeypatch.setattr(programs, "_HAS_CHILDREN", [False])       # a kernel without CONFIG_PROC_CHILDREN
        from_parents = set(reaper.children(os.getpid()))
        below = set(reaper.descendants(os.getpid()))
    finally:
        for k in kids:
            k.kill()
            k.wait()
    assert {k.pid for k in kids} <= from_files == from_parents <= below


# -- 3. the work's memory ------------------------------------------------------------------------------------
@linux
@pytest.mark.parametrize("kind", ["python", "exec"])
def test_a_consumer_that_allocates_without_bound_is_stopped_at_max_memory(hostile, capsys, monkeypatch, kind):
    """24 GB in 13 s, until the kernel's OOM killer ended it (or something else). Now the reaper sums the
    work's processes' memory four times a second and stops them past ``--max-memory``: before the command's
    own budget (60 s here) would, whose line is another."""
    import simkit.cli.commands as commands
    monkeypatch.setattr(commands, "RUN_BUDGET", 60.0)
    if kind == "python":
        strategy = "hostile.py:Greedy"
    else:
        script = hostile / "greedy"
        script.write_text(f"#!{sys.executable}\nimport sys\nsys.stdin.readline()\nhold = []\n"
                          "while True:\n    hold.append(b'x' * (32 << 20))\n")
        script.chmod(0o755)
        strategy = f"exec:{script}"
    one_line_exit_2(capsys, ["run", "two.toml", "--strategy", strategy, "--max-memory", "300"],
                    "simkit: run two: the work's processes (the consumer's among them) used more than "
                    "300 MiB of memory together (")


def test_the_default_bound_is_half_of_a_cgroups_limit_below_the_machines(monkeypatch):
    """In a container whose memory cgroup allows less than the machine has, half the machine's memory was
    past the limit: the cgroup's OOM killer would end the work before the bound."""
    monkeypatch.setattr(reaper, "_cgroup_limits", lambda: [1 << 30])
    assert reaper.default_memory() == 1 << 29


def test_max_memory_out_of_range_is_one_line(capsys):
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--max-memory", "0"],
                    "--max-memory 0: must be at least 1")


@linux
def test_a_million_event_run_stays_within_a_gib(tmp_path, capsys):
    """simkit's own big runs are no runaway consumer: a 1,000,000-event run peaks near 230 MB."""
    (tmp_path / "big.toml").write_text('[generate]\nevents = 1000000\npage_size = 100\n')
    assert main(["run", str(tmp_path / "big.toml"), "--max-memory", "1024", "--json"]) == 0
    assert capsys.readouterr().out.startswith('{"scenario": "big"')


# -- 4. a sweep whose consumer takes SIGALRM -----------------------------------------------------------------
@linux
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_sweep_whose_consumer_takes_sigalrm_is_stopped_when_no_run_ends(hostile, capsys, monkeypatch, jobs):
    """A run's own 900 s guard is a SIGALRM timer; a consumer that stops it and sleeps hung ``sweep`` for
    ever (it has no overall clock: it is bounded by its runs). Now a run that ends touches a heartbeat, and
    ``SWEEP_STALL`` seconds without one stop the sweep (1,200 s; 3 s here): its line says that is what ended
    it (a run's own guard would have said another)."""
    import tempfile

    import simkit.cli.commands as commands
    monkeypatch.setattr(commands, "SWEEP_STALL", 3.0)
    monkeypatch.setattr(tempfile, "tempdir", str(hostile))
    one_line_exit_2(capsys, ["sweep", "two.toml", "--strategy", "hostile.py:DefeatsTheWallClock", "--seeds",
                             "4", "--jobs", jobs],
                    "simkit: sweep two: no run ended for 3 s of wall-clock time (a consumer that takes "
                    "SIGALRM, and sleeps or spins?); stopped, nothing reported")
    assert not list(hostile.glob("simkit-beat-*"))                 # the heartbeat's file, removed


# -- 5. an output path that is a link; keys that mean nothing; a name of nothing -----------------------------
LINKED = [
    (".png", ["run", "retry_walkthrough", "--timeline", "{o}"]),
    (".png", ["demo", "--out", "{o}"]),
    (".toml", ["explore", "shortcut_watermark_only_dedup", "--strategy", "watermark_only_dedup",
               "--max-crashes", "0", "--out", "{o}"]),
    (".toml", ["shrink", "shortcut_watermark_only_dedup", "--strategy", "watermark_only_dedup", "--out",
               "{o}"]),
    (".csv", ["sweep", "retry_walkthrough", "--seeds", "1", "--strategy", "safe", "--out", "{o}"]),
    (".toml", ["audit", "watermark_only_dedup", "--budget", "5", "--out", "{o}"]),
]


@pytest.mark.parametrize("target_exists", [True, False], ids=["to a file", "dangling"])
@pytest.mark.parametrize("suffix, argv", LINKED, ids=[a[0] for _s, a in LINKED])
def test_an_output_path_that_is_a_link_is_refused(tmp_path, capsys, suffix, argv, target_exists):
    """A link was replaced by a file of its own (the link a user made, gone), where ``>`` writes through it.
    Every writer now refuses it, before any work: written through, a link planted in a shared folder would
    have any file it names replaced."""
    target = tmp_path / f"target{suffix}"
    if target_exists:
        target.write_text("mine")
    link = tmp_path / f"out{suffix}"
    link.symlink_to(target)
    one_line_exit_2(capsys, [str(link) if a == "{o}" else a for a in argv],
                    f"{link}: is a symbolic link: neither written through nor replaced; name its target, or "
                    "remove the link")
    assert link.is_symlink() and (target.read_text() == "mine" if target_exists else not target.exists())
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({link.name} | ({target.name} if target_exists
                                                                               else set()))


def test_a_workshop_notebook_that_is_a_link_is_refused(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("mine")
    (tmp_path / "00_index.ipynb").symlink_to(tmp_path / "mine.txt")
    one_line_exit_2(capsys, ["workshop", str(tmp_path), "--force"],
                    f"{tmp_path / '00_index.ipynb'}: is a symbolic link: neither written through nor "
                    "replaced")
    assert (tmp_path / "mine.txt").read_text() == "mine" and sorted(os.listdir(tmp_path)) == [
        "00_index.ipynb", "mine.txt"]


@pytest.mark.parametrize("event, key, only", [
    ({"failures": 2}, "failures", "transient' or 'dead_letter"),
    ({"behavior": "poison", "resolve_after": 5.0}, "resolve_after", "review"),
    ({"behavior": "transient", "resolution": "apply"}, "resolution", "review"),
    ({"behavior": "review", "release_after": 5.0}, "release_after", "hold"),
])
def test_an_event_key_its_behaviour_never_reads_is_refused(event, key, only):
    """``failures = 2`` on an ``ok`` event was accepted, and meant nothing."""
    behavior = event.get("behavior", "ok")
    with pytest.raises(simkit.SimkitError, match=rf"^x\.toml: key 'events\[0\]\.{key}': means nothing for "
                                                 rf"behavior '{behavior}'; it is for '{only}' only$"):
        simkit.parse({"generate": {}, "events": [{"position": 10, **event}]}, "x.toml")


@pytest.mark.parametrize("name", ["", "   "])
def test_a_name_of_nothing_is_refused(name):
    """``name = ""`` labelled every table and file name with nothing."""
    with pytest.raises(simkit.SimkitError, match=r"^x\.toml: key 'name': '\s*' is empty"):
        simkit.parse({"name": name, "generate": {}}, "x.toml")


# -- 6. what a fresh tester tried ----------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["a" + ".a" * 50_000 + " = 1\n",
                                  "[" + ".".join(["t"] * 50_000) + "]\nx = 1\n",
                                  "'a'" + ".'a'" * 50_000 + " = 1\n"], ids=["dotted key", "table", "quoted"])
def test_a_key_of_50000_dotted_parts_is_one_line_at_once(tmp_path, capsys, monkeypatch, text):
    """tomllib's time is quadratic in a key's parts: this 100 KB file took 70 s to be refused for its unknown
    key (a 16 MiB one, hours). Now a key of more than 8 parts is refused before it is parsed: tomllib never
    sees the text, and the refusal takes this process under 10 s of CPU time (not of the wall's clock)."""
    import tomllib

    def parsed(*args, **kwargs):
        raise AssertionError("tomllib parsed the text")
    monkeypatch.setattr(tomllib, "loads", parsed)
    (tmp_path / "deep.toml").write_text(text)
    line = "deep.toml: line 1: a key of more than 8 dotted parts, deeper than any key it may hold"
    bounded(lambda: one_line_exit_2(capsys, ["run", str(tmp_path / "deep.toml")], line), seconds=10)


def test_dotted_words_in_a_string_or_a_comment_are_no_key(tmp_path):
    words = ".".join(["w"] * 40)
    path = tmp_path / "words.toml"
    path.write_text(f'# {words}\ndescription = """\n{words} = 1\n"""\nname = "x\\"{words}"\n'
                    f"[generate]\nevents = 3\n")
    assert simkit.load(str(path)).description.strip() == f"{words} = 1"


BOOM = '''
from simkit import Consumer


class Boom(Exception):
    pass


class Named(type(Consumer)):
    @property
    def name(cls):
        raise Boom("no name")


class NoName(Consumer, metaclass=Named):
    pass
'''


def test_an_exception_whose_class_the_command_cannot_import_is_one_line(tmp_path, capsys, monkeypatch):
    """A consumer's own exception class, from a file, raised outside any hook (a metaclass's ``name``):
    pickled by reference in the work's process, the command could not unpickle it, ModuleNotFoundError and a
    traceback."""
    (tmp_path / "boom.py").write_text(BOOM)
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", "boom.py:NoName"],
                    "simkit: run retry_walkthrough: the consumer's code raised Boom: no name")


def test_an_exception_raised_from_a_consumers_own_is_one_line_with_tblib_installed(tmp_path, capsys,
                                                                                   monkeypatch):
    """``distributed`` installs tblib's pickling, which pickles the exceptions an exception was raised from:
    a plugin whose import raised its own exception then failed in the command with ModuleNotFoundError."""
    pickling = pytest.importorskip("tblib.pickling_support")
    (tmp_path / "bad.py").write_text("class Mine(Exception):\n    pass\n\n\nraise Mine('at import')\n")
    monkeypatch.chdir(tmp_path)
    pickling.install()
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", "bad.py:X"],
                    "simkit: --strategy bad.py:X: bad.py failed to import: Mine: at import")


@linux
def test_a_consumer_that_runs_simkit_at_import_is_refused_not_forked_for_ever(tmp_path):
    """A consumer module calling ``simkit.cli.main`` at import started a command inside the work, which
    imported the module again, and so on: a chain of nested commands, two processes each, until the stack ran
    out (over 120 s once, and 44 lines of stderr). A command inside another's work is refused; the outer one
    goes on."""
    (tmp_path / "again.py").write_text(
        "import os\nfrom simkit.cli import main\nfrom simkit import Consumer\n\n"
        "with open('ran', 'a') as f:\n    f.write(f'{os.getpid()}\\n')\n"
        "main(['run', 'retry_walkthrough', '--strategy', 'again.py:Mine'])\n\n\nclass Mine(Consumer):\n"
        "    pass\n")
    root = str(Path(simkit.__file__).parents[1])           # this tree's simkit, whatever pip installed
    done = subprocess.run([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--strategy",
                           "again.py:Mine", "--json"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": root}, timeout=600)     # (a guard against a hang)
    assert done.returncode == 0 and done.stdout.startswith('{"scenario": "retry_walkthrough"')
    refused = done.stderr.splitlines()
    assert set(refused) == {"simkit: run: a simkit command cannot run inside another's work (the consumer's "
                            "code called simkit.cli.main?)"}
    # no chain: the module ran (on import, and again for each worker life) in the work's one process, never in
    # a nested command's, and each of its calls was refused at once
    ran = (tmp_path / "ran").read_text().split()
    assert len(set(ran)) == 1 and len(ran) == len(refused)




@pytest.mark.parametrize("cls, problem", [
    ("Surrogate", "Barrier.next_cursor '\\ud800' holds a lone surrogate (U+D800), which no store can hold"),
    ("Past63Bits", "Commit.event.position is an integer of 71 bits, not within -2**63..2**63 - 1")])
def test_a_value_the_sqlite_store_cannot_hold_is_one_line(tmp_path, capsys, monkeypatch, cls, problem):
    """A cursor holding a lone surrogate, an event position past 2**63: SQLite raised from its own code, a
    traceback (then its exception's own words, which named no field). Both stores now refuse them first, with
    the consumer's line (tests/store/test_store_agreement.py: the memory store the same)."""
    (tmp_path / "unstorable.py").write_text(UNSTORABLE)
    monkeypatch.chdir(tmp_path)
    one_line_exit_2(capsys, ["run", "retry_walkthrough", "--strategy", f"unstorable.py:{cls}", "--store",
                             "sqlite"],
                    f"simkit: strategy unstorable.py:{cls}: yielded a malformed request: {problem}")


@linux
def test_a_folder_another_live_run_holds_is_refused(tmp_path, capsys):
    """Two runs started at once on one ``--dir`` both found it empty; the one whose databases then failed to
    be made removed the other's. A run now holds its folder (``flock``) until its processes end."""
    import fcntl
    folder = tmp_path / "shared"
    folder.mkdir()
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)          # as a run that has not made its databases yet
        one_line_exit_2(capsys, ["live", "retry_walkthrough", "--kills", "0", "--dir", str(folder)],
                        f"simkit: --dir {folder}: another live run is using it")
    finally:
        os.close(fd)
    assert os.listdir(folder) == []


@linux
def test_two_live_runs_on_one_folder_at_once_leave_one_run(tmp_path):
    """Both found the folder empty; the one whose databases then failed to be made removed the other's. Now
    the folder is held by one run (flock): the other says so."""
    runs = [subprocess.Popen([sys.executable, "-m", "simkit", "live", "gauntlet", "--kills", "2", "--dir",
                              str(tmp_path / "shared"), "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(4)]
    done = [p.communicate(timeout=300) for p in runs]
    ok = [out for out, err in done if out.startswith('{"scenario": "gauntlet"')]
    refused = [err for out, err in done if not out]
    assert len(ok) == 1 and len(refused) == 3, done
    assert all(err.endswith(("another live run is using it\n", "already holds a live run's databases\n"))
               and err.count("\n") == 1 for err in refused)


def test_twenty_thousand_arguments_are_refused_before_argparse_reads_them(capsys, monkeypatch):
    """argparse reads repeated options in time that grows with their square: 20,000 ``--crash`` flags took it
    12 s before the run began (100,000, the most a command line holds, minutes). Now argparse never reads
    them, and the refusal takes this process under 5 s of CPU time."""
    import argparse

    def read(*args, **kwargs):
        raise AssertionError("argparse read the arguments")
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", read)
    argv = ["run", "retry_walkthrough", *["--crash", "after_fetch"] * 10_000]
    bounded(lambda: one_line_exit_2(capsys, argv, "simkit: 20002 arguments: at most 4096"), seconds=5)


def test_an_audit_budget_past_its_bound_names_the_flag(capsys):
    """It said ``budget: seconds from more than 0 to 10^6``, the library's parameter, not the flag."""
    one_line_exit_2(capsys, ["audit", "safe", "--budget", "1e308"],
                    "simkit: --budget 1e308: must be at most 1e+06")


@pytest.mark.parametrize("address, problem", [
    ("ucx://127.0.0.1:1", "cannot connect to the scheduler: Can't instantiate abstract class UCXConnector"),
    ("tls://127.0.0.1:1", "cannot connect to the scheduler: TLS expects a `ssl_context` argument"),
    ("", "expected a scheduler's address (tcp://host:8786)"),
])
def test_a_dask_address_distributed_cannot_use_is_one_line(capsys, address, problem):
    """``tls://`` without a TLS context and ``ucx://`` without UCX raised distributed's TypeError, a
    traceback; ``--dask ''`` ran the sweep here, as if no address were given."""
    pytest.importorskip("distributed")
    one_line_exit_2(capsys, ["sweep", "retry_walkthrough", "--seeds", "1", "--strategy", "safe", "--dask",
                             address], f"simkit: --dask {address or repr('')}: {problem}")
