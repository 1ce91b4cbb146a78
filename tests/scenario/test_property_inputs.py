"""Scenario files generated as TOML text across the keys docs/scenarios.md names, with numbers at and past
each bound (issue 32): each is answered by one line (a :class:`~simkit.errors.SimkitError`, no other
exception) or a verdict, in bounded time. Text, not dicts: what tomllib itself refuses (an integer of 4,400
digits) is covered too.

``[generate] events`` is drawn up to 100, not at its bound of 10**6 (a run of that size takes 20 s: the
benchmark measures it); every other key reaches its bound and passes it.
"""
from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simkit
import simkit.world.guard as guard

MAX = 2**53
HUGE = "1" + "0" * 4400                          # past Python's 4,300-digit limit: tomllib's own ValueError
HEX = "0x" + "f" * 5000  # read whatever its length: the messages must not print it whole


def rarely(usual: list[str], hostile: list[str]) -> st.SearchStrategy[str]:
    """Mostly a value at or next to an edge; one time in ten
    one past every bound (most files then still run)."""
    return st.integers(0, 9).flatmap(lambda k: st.sampled_from(hostile if k == 0 else usual))


def ints(*edges) -> st.SearchStrategy[str]:
    """An integer literal: a value around each edge, or one past every bound."""
    return rarely([str(e + d) for e in edges for d in (-1, 0, 1)],
                  [str(MAX), str(MAX + 1), str(-MAX - 1), str(2**63), HUGE, "-" + HUGE, HEX])


def floats(*edges) -> st.SearchStrategy[str]:
    return rarely([repr(float(e + d)) for e in edges for d in (-1, 0, 0.5)],
                  ["1e-300", "1e308", "nan", "inf", "-inf", str(MAX + 1), HUGE, HEX, '"1"', "true"])


RATES = floats(0, 1)
KEYS = {
    "top": {"workers": ints(1, 3, 64), "seed": ints(0, MAX), "backfills": rarely(["true", "false"], ["1"]),
            "sink": rarely(['"transactional"', '"idempotent"', '"unsafe"'], ['"x"', "1"]),
            "settlement": rarely(['"fenced"', '"unfenced"', '"last_write_wins"'], ['"nope"']),
            "store": rarely(['"memory"', '"sqlite"'], ['"disk"'])},
    "initial": {"applied_position": ints(0, 3, MAX), "checkpoint_version": ints(0, MAX),
                "resume_cursor": st.sampled_from(['"C1"', '"C2"', '"C9"', '""', "1"]),
                "receipts": st.sampled_from(["[]", "[1]", "[2, 3]", f"[{HUGE}]", "[-1]", f"[{MAX + 1}]"])},
    "timing": {k: floats(0, 1, 10) for k in ("fetch_latency", "commit_latency", "effect_latency",
                                             "restart_delay",
                                             "timeout", "backoff")} | {"time_limit": floats(0, 100, 10_000)},
    "generate": {"events": ints(1, 5, 100, 1_000_001), "page_size": ints(1, 5, 1_000_000),
                 **{k: RATES for k in ("overlap", "backfill", "empty_pages", "stuck", "lost_fetch", "poison",
                                       "transient", "review", "hold")}},
    "random_faults": {"crash": RATES, "pause": RATES, "lost_response": RATES, "lost_request": RATES,
                      "pause_duration": floats(0, 20), "max_faults": ints(0, 25)},
}
PAGES = '\n[[pages]]\ncursor = "C1"\npositions = [1, 2]\nnext_cursor = "C2"\n' \
        '\n[[pages]]\ncursor = "C2"\npositions = [3]\nnext_cursor = "C9"\n' \
        '\n[[pages]]\ncursor = "C9"\npositions = []\nnext_cursor = "C9"\n'
EVENT = {
    "position": ints(0, 1, 3, 10),
    "failures": ints(0, 2, MAX),
    "resolve_after": floats(0, 30),
    "release_after": floats(0, 30),
    "behavior": st.sampled_from(
        ['"ok"', '"transient"', '"review"', '"hold"', '"poison"', '"ignore"', '"lunch"']
    ),
}
FAULT = {
    "position": ints(0, 1, 3, 10),
    "occurrence": ints(1, 2, MAX),
    "worker": ints(1, 2, 64),
    "duration": floats(0, 50),
    "point": st.sampled_from(['"before_event_commit"', '"after_fetch"', '"nowhere"']),
}


@st.composite
def toml_files(draw) -> str:
    lines = []
    for key, value in KEYS["top"].items():
        if draw(st.booleans()):
            lines.append(f"{key} = {draw(value)}")
    generated = draw(st.booleans())
    for table in ("initial", "timing", "generate" if generated else None, "random_faults"):
        if table is None or not draw(st.booleans()) and table != "generate":
            continue
        keys = draw(st.lists(st.sampled_from(sorted(KEYS[table])), max_size=4, unique=True))
        lines += ["", f"[{table}]"] + [f"{k} = {draw(KEYS[table][k])}" for k in keys]
    if not generated:
        lines.append(PAGES)
    for kind, spec in (("events", EVENT), ("faults", FAULT)):
        for _ in range(draw(st.integers(0, 2))):
            keys = draw(st.lists(st.sampled_from(sorted(spec)), max_size=3, unique=True))
            lines += ["", f"[[{kind}]]"] + (['kind = "crash"', 'point = "before_event_commit"']
                                             if kind == "faults" else [])
            lines += [f"{k} = {draw(spec[k])}" for k in keys if not (kind == "faults" and k == "point")]
            if kind == "events" and "position" not in keys:
                lines.append("position = 1")
    return "\n".join(lines) + "\n"


@pytest.fixture
def small_guard(monkeypatch):
    """Runs end after thousands of steps, not a million: each example stays within a second or two."""
    monkeypatch.setattr(guard, "STALL_STEPS", 5_000)
    monkeypatch.setattr(guard, "STEP_BASE", 20_000)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(toml_files())
def test_a_generated_scenario_file_gets_one_line_or_a_verdict(small_guard, tmp_path_factory, text):
    path = tmp_path_factory.mktemp("p") / "s.toml"
    path.write_text(text)
    began = time.process_time()              # CPU time: bounded work, whatever else the machine runs
    try:
        run = simkit.simulate(simkit.load(path))
    except simkit.SimkitError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ") and message.isprintable() and len(message) < 600, message
        return
    assert time.process_time() - began < 30
    d = run.as_dict()
    assert isinstance(d["ok"], bool) and (d["stopped"] is None or d["completed"] is False)
