"""Round 28: ``simkit live``, the SQLite store and the Python API, attacked (CHANGELOG, "Fixed")."""
import pytest

import simkit
from simkit.errors import SimkitError, described
from simkit.live.run import live

RETRY = simkit.load("retry_walkthrough")


@pytest.mark.parametrize("param, value", [
    ("kills", "2"), ("kills", 1.5), ("kills", True), ("kills", None),
    ("seed", 2**100), ("seed", "3"), ("seed", 1.0), ("seed", True),
    ("timeout", "3"), ("timeout", True), ("timeout", None),
    ("max_delay", "3"), ("max_delay", False),
    ("at", "after_fetch"), ("at", ("after_fetch", 5)), ("at", 5),
    ("folder", 5), ("folder", b"somewhere"),
])
def test_live_of_an_argument_of_the_wrong_kind_is_one_line_naming_it(tmp_path, monkeypatch, param, value):
    """docs/cli.md: ``simkit.live.run.live`` checks what ``simkit live`` checks and names the parameter.
    ``kills="2"``, ``timeout="3"``, ``max_delay="3"`` and ``folder=5`` were TypeError tracebacks; ``seed`` of
    2**100 or ``"3"`` and ``kills=1.5`` ran (a seed ``--seed`` and ``simulate`` refuse; "1.5 asked"); ``at``
    as one string was read a character at a time (``at a: not a crash point``). Nothing is left behind."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SimkitError) as refused:
        live(RETRY, simkit.Consumer, **{"kills": 1, param: value})
    said = str(refused.value)
    assert refused.value.param == param and said.startswith(f"{param} {described(value)}: ") or \
        said.startswith("at 5: not a crash point")
    assert "\n" not in str(refused.value) and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("strategy", ["safe", "persist_token_on_fetch"])
def test_live_takes_a_strategy_by_name_as_simulate_does(strategy):
    """``live(sc, "safe")`` was ``live worker 1: AttributeError: 'str' object has no attribute
    '__qualname__'``; ``simulate`` takes a name (:func:`simkit.resolve`), and so does ``live`` now."""
    run = live(RETRY, strategy, kills=0)
    assert run.strategy == strategy and run.verdict.completed and run.kills == 0


@pytest.mark.parametrize("strategy, problem", [
    (object, "is not a Consumer subclass"), (5, "not a Consumer subclass or a strategy's name"),
    ("sfae", "unknown strategy"),
])
def test_live_of_no_strategy_is_one_line_before_any_worker(strategy, problem):
    """``live(sc, object)`` started a worker and stopped with ``live worker 1: strategy builtins:object raised
    TypeError``: the same :class:`~simkit.StrategyError` as ``simulate`` gives, before anything runs."""
    with pytest.raises(simkit.StrategyError, match=problem) as refused:
        live(RETRY, strategy, kills=0)
    assert refused.value.param == "strategy"


@pytest.mark.parametrize("scratch", ["missing/below", "a-file"])
def test_live_with_a_scratch_folder_it_cannot_use_is_one_line(tmp_path, monkeypatch, scratch):
    """``live(scratch=...)`` where no folder can be made was a FileNotFoundError (NotADirectoryError)
    traceback."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SimkitError, match=f"^scratch {scratch}: ") as refused:
        live(RETRY, kills=0, scratch=scratch)
    assert refused.value.param == "scratch" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
