"""The shortcuts declared once (``simkit.procedure.shortcuts.DECLARED``): the registry, the scenario lookup
and docs/vocabulary.md's "Unsafe shortcuts" table follow it, and a declaration that disagrees with its class
fails at import. What each shortcut breaks on its scenario is run in tests/seed/test_shortcuts.py."""
from pathlib import Path

import pytest

import simkit
from simkit.procedure.consumer import Consumer
from simkit.procedure.shortcuts import (
    DECLARED,
    Breaks,
    MaxPositionWatermark,
    Shortcut,
    exposing,
    overridden_hooks,
    scenario_of,
)
from simkit.viz.style import run_title

VOCABULARY = Path(__file__).resolve().parents[2] / "docs" / "vocabulary.md"


def table(page: Path, heading: str) -> list[list[str]]:
    """The body rows of the first table under ``heading``, each a list of its cells."""
    lines = page.read_text(encoding="utf-8").split(heading + "\n", 1)[1].splitlines()
    rows = [line for line in lines[:next(i for i, x in enumerate(lines) if x.startswith("## "))]
            if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


def test_the_docs_table_is_the_declaration():
    declared = [[f"`{s.name}`", f'"{s.quote}"', ", ".join(f"`{h}`" for h in s.hooks), s.why,
                 f"`{s.scenario}`", str(s.breaks)] for s in DECLARED.values()]
    assert table(VOCABULARY, "## Unsafe shortcuts") == declared


def test_the_registry_is_safe_then_the_declared_shortcuts():
    assert simkit.SHORTCUTS == tuple(DECLARED)
    assert simkit.STRATEGIES == {"safe": Consumer, **{n: s.consumer for n, s in DECLARED.items()}}
    assert all(simkit.resolve(n) is s.consumer for n, s in DECLARED.items())


def test_each_declared_scenario_is_bundled_and_names_its_shortcut_back():
    scenarios = [s.scenario for s in DECLARED.values()]
    assert set(scenarios) <= set(simkit.bundled()) and len(set(scenarios)) == len(scenarios)
    assert all(exposing(scenario_of(name)) == name for name in DECLARED)
    assert exposing("retry_walkthrough") is None


def test_an_unknown_shortcut_has_no_scenario():
    with pytest.raises(simkit.StrategyError, match="shortcut safe: not a shortcut"):
        scenario_of("safe")


def test_a_figure_titles_a_shortcut_scenario_by_what_it_exposes():
    run = simkit.simulate(simkit.load("shortcut_no_version_check"), Consumer)
    assert run_title(run) == "safe · the input built to expose no_version_check"


def test_the_declared_hooks_are_the_ones_the_class_overrides():
    assert all(set(s.hooks) == overridden_hooks(s.consumer) for s in DECLARED.values())
    with pytest.raises(TypeError, match=r"declares hooks \['is_replay'\] but overrides "
                                        r"\['resulting_applied_position'\]"):
        Shortcut(MaxPositionWatermark, "shortcut_max_position_watermark", ("is_replay",), Breaks((2,)), "why")


def test_a_declaration_needs_a_named_consumer_seed_invariants_and_one_line():
    class Unnamed(Consumer):
        pass

    with pytest.raises(TypeError, match="a name of its own"):
        Shortcut(Unnamed, "retry_walkthrough", (), Breaks((1,)), "why")
    with pytest.raises(ValueError, match="one or more of seed 000's 1..5"):
        Breaks((6,))
    with pytest.raises(ValueError, match="one line"):
        Shortcut(MaxPositionWatermark, "s", ("resulting_applied_position",), Breaks((2,)), "two\nlines")


@pytest.mark.parametrize("breaks, text", [
    (Breaks((4,), duplicated=("e7",)), "e7 duplicated; invariant 4"),
    (Breaks((3,), regressions=2, unjustified_halt=True), "2 regressions; invariant 3; an unjustified halt"),
])
def test_what_it_breaks_reads_as_the_docs_write_it(breaks, text):
    assert str(breaks) == text
