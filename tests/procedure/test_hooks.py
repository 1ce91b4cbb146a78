"""The Consumer hooks as docs/hooks.md documents them: every hook has its section, every example on that page
runs, and a hook written as the wrong kind (returning where it must yield, yielding where it must return) is
one line naming the hook and the fix, exit status 2, never a traceback or a misleading "yielded 'a'"."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import simkit
from simkit import Consumer, ConsumerError
from simkit.procedure.consumer import RETURNING, YIELDING

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "hooks.md"
FILES = re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_page_has_a_section_per_hook_of_each_kind():
    text = PAGE.read_text(encoding="utf-8")
    for hook in YIELDING + RETURNING:
        assert f"\n### {hook}\n" in text, hook
        assert callable(getattr(Consumer, hook)), hook
    assert set(YIELDING).isdisjoint(RETURNING)


def _classes(name: str, code: str, folder: Path) -> list[type]:
    path = folder / name
    path.write_text(code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"hooks_page_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return [v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Consumer) and v is not Consumer]


#: the page's consumers (not its wrong ones, nor the test file that uses them)
CONSUMERS = [f for f in FILES if f[0] != "wrong.py" and not f[0].startswith("test_")]


@pytest.mark.parametrize(("name", "code"), CONSUMERS, ids=lambda v: v[:20])
def test_every_example_runs_to_a_verdict(name, code, tmp_path):
    """The examples are consumers the procedure can drive: each gets a verdict (ok or not), no ConsumerError.
    ``default`` has an external sink (settle_effect is reached) and backfills."""
    (cls,) = _classes(name, code, tmp_path)
    for scenario in ("retry_walkthrough", "default"):
        run = simkit.simulate(simkit.load(scenario), cls)
        assert run.verdict.ok in (True, False)


class ApplyReturns(Consumer):
    def apply(self, event, applied_position):
        return "applied"


class BarrierReturns(Consumer):
    def page_barrier(self, checkpoint, page, applied_position):
        return True


class AfterFetchReturns(Consumer):
    def after_fetch(self, checkpoint, page):
        return None


class SettleReturns(Consumer):
    def settle_effect(self, event):
        return "committed"


class IgnoreReturns(Consumer):
    def ignore(self, event, applied_position):
        return True


class TerminalYields(Consumer):
    def is_terminal(self, decision):
        yield decision


class ReplayYields(Consumer):
    def is_replay(self, event, receipts, applied_position):
        yield True


class DelegatesApply(Consumer):
    """Returns a generator without being one: fine."""

    def apply(self, event, applied_position):
        return super().apply(event, applied_position)


@pytest.mark.parametrize(("cls", "hook", "scenario"), [
    (ApplyReturns, "apply", "retry_walkthrough"),
    (BarrierReturns, "page_barrier", "retry_walkthrough"),
    (AfterFetchReturns, "after_fetch", "retry_walkthrough"),
    (SettleReturns, "settle_effect", "default"),
    (IgnoreReturns, "ignore", "ignored_event"),
])
def test_a_yielding_hook_that_returns_is_named_with_its_fix(cls, hook, scenario):
    with pytest.raises(ConsumerError) as raised:
        simkit.simulate(simkit.load(scenario), cls)
    message = str(raised.value)
    assert "\n" not in message
    assert f"hook {hook}() returned" in message and "must be a generator" in message, message
    assert f"docs/hooks.md#{hook}" in message
    assert "not a request" not in message and "consumer.py" not in message


@pytest.mark.parametrize(("cls", "hook"), [(TerminalYields, "is_terminal"), (ReplayYields, "is_replay")])
def test_a_returning_hook_that_yields_is_named_with_its_fix(cls, hook):
    with pytest.raises(ConsumerError) as raised:
        simkit.simulate(simkit.load("retry_walkthrough"), cls)
    assert str(raised.value).endswith(f"hook {hook}() yields but must return its answer at once: remove "
                                      f"its yield statements (docs/hooks.md#{hook})")


def test_a_hook_that_returns_a_generator_is_fine():
    assert simkit.simulate(simkit.load("retry_walkthrough"), DelegatesApply).verdict.ok


@pytest.mark.parametrize("cls", ["ApplyReturns", "BarrierReturns"])
def test_the_command_line_says_it_in_one_line_with_exit_2(cls):
    done = subprocess.run([sys.executable, "-m", "simkit", "run", "retry_walkthrough", "--strategy",
                           f"{__file__}:{cls}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert "must be a generator" in done.stderr and "Traceback" not in done.stderr
