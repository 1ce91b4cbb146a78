"""Hostile input, fortieth round (a fresh tester): the notebooks as a workshop learner reads them and runs
their cells again, round 30's leftovers.

Found: notebook 07's service story was one state across cells, so a cell run twice in a row showed something
else the second time or raised: 1a's feed pages saw a sixth change appended by the first run and a seventh by
the second (high watermark 0001:6, not 0001:5), 1b's read of a missing checkpoint answered 200, 1c's lost
reply committed nothing, 4a's restore by hand raised ``KeyError: 'receipt'``, and the proofs under them
failed. Every cell that changes the service now starts from ``service_before(step)``: a fresh service with
what the cells above did done again (the proofs check that it is exactly that). Read in order, answers stood
before their questions: 01 said, just above "how many times is 30 delivered?", that after the crash the worker
starts again from ``C2`` (the step readers miss, so the count); 06's "You will learn" that a worker that lost
its barrier reply "finds out from durable state" (the answer to "does it fetch C1 again?") and its question
that the stale worker "goes on ... until it is caught up" (``C4``); 07 that the new key is "the
``new_key_retry`` client's mistake in section 2" above "which client acknowledges a page twice?", and quoted
seed 004's "an empty query page with next_after still requires continuation" above "the first page is empty:
is the scan done?". 08's three sweep figures had nine legend entries each (eight strategies and the band): now
the first and the last are small multiples, one panel per kind of curve beside ``safe``'s
(``plot.sweep_panels``), and the second draws ``safe`` and ``success_before_effect`` in colour and the rest
grey (``highlight``); curves that coincide are one line whose label names each strategy on it. At most four
entries to a legend.

Held: every code cell of 00 to 06, 08 and 09 run twice in a row in one kernel (round 30's check, again, by
hand: the same outputs, no error; 09 under simkit's sliced polling, since plain nbclient waited for ever after
a widget cell, issue 29's known ipykernel hang); 07's sections 2, 3, 4b and 4c (each makes its runs in the
cell that shows them) and 5c's feed writes (idempotent by design). The timeline legends of 01 to 05 (six to
eight entries, the reading key each notebook's legend table explains) were left as they are.
"""
import copy
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from test_hostile_round30 import _read_in_order  # noqa: E402

from simkit.tools.notebook_run import executed  # noqa: E402
from simkit.viz import plot  # noqa: E402
from simkit.workshop.service import SECTION_1, service_before  # noqa: E402

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


# -- 07: every code cell shows the same when run twice in a row ----------------------------------------------
def _shown(cell) -> str:
    """What a cell shows as text: streams and each output's text/plain (addresses folded, as nbval's
    sanitizer does)."""
    parts = [o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
             for o in cell.outputs]
    return re.sub(r"0x[0-9a-fA-F]{6,16}", "0xADDRESS", "\n".join(parts))


#: The parts of 07 whose cells use a service that lives across cells (section 1, 4a, section 5's ``svc5``),
#: and the imports above them. Sections 2, 3, 4b and 4c make their runs in the cell that shows them, from the
#: scenario alone: each ran twice in a row by hand in this round, and is left out here for time.
STATEFUL = {"sections": ("", "## 1.", "## 5."), "parts": ("### 4a.",)}


def _sections_run_twice(nb):
    """The cells of ``nb`` under the headings of :data:`STATEFUL`, each code cell followed by a copy of it,
    each marked with its index in the notebook."""
    cells, section, part = [], "", ""
    for index, cell in enumerate(nb.cells):
        text = cell.source if cell.cell_type == "markdown" else ""
        for heading in re.findall(r"^(#{2,3}) (\S+)", text, re.M):
            section, part = (" ".join(heading), "") if heading[0] == "##" else (section, " ".join(heading))
        cell.metadata["r40"] = index
        if section in STATEFUL["sections"] or part in STATEFUL["parts"]:
            cells += [cell, copy.deepcopy(cell)] if cell.cell_type == "code" else [cell]
    return cells


def test_every_code_cell_of_07_shows_the_same_when_run_twice():
    """Each code cell run, then at once again (a double Shift-Enter), in one kernel, in reading order: the
    second run shows what the first did and raises nothing, and the proof cells below still hold (a hang
    fails at the cell timeout)."""
    nb = nbformat.read(NOTEBOOKS / "07_checkpoint_service.ipynb", as_version=4)
    nb.cells = _sections_run_twice(nb)
    assert {c.metadata["r40"] for c in nb.cells} >= {3, 5, 11, 16, 20, 23, 26, 47, 49, 72, 86}
    executed(nb, NOTEBOOKS, timeout=600)
    differ = [(a.metadata["r40"], _shown(a), _shown(b)) for a, b in zip(nb.cells, nb.cells[1:])
              if a.cell_type == "code" and a.metadata["r40"] == b.metadata["r40"] and _shown(a) != _shown(b)]
    assert differ == []


def test_service_before_names_its_steps():
    assert service_before("1a").digest() == (0, service_before("1a").svc.state_digest(), 0)
    assert [service_before(step).digest()[2] for step in SECTION_1] == [0, 0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="step '1e': not one of '1a', '1b'"):
        service_before("1e")


# -- no hint gives an answer above its question -------------------------------------------------------------
GIVEN_AWAY = {
    "deliveries_of_30": ["the worker starts again from the blue line, still `C2`"],
    "refetch_after_lost_reply": ["finds out from durable state"],
    "final_cursor_without_check": ["until it is caught up"],
    "double_ack_client": ["That is the `new_key_retry` client's mistake"],
    "scan_done": ["An empty query page with `next_after` still requires continuation"],
}


@pytest.mark.parametrize("key", sorted(GIVEN_AWAY))
def test_no_hint_above_a_question_gives_its_answer(key):
    """Each phrase stood between the section's start and its question (01, 06, 07); each now follows the
    reveal, or is gone where the reveal's own text says it."""
    asked = f'check_prediction("{key}"'
    shown = next(shown for shown, source in _read_in_order() if asked in source)
    assert [p for p in GIVEN_AWAY[key] if p in shown] == []


# -- 08: each figure makes its point with a few legend entries ----------------------------------------------
def _figures_of_08():
    """Notebook 08's code cells up to its last figure, run here (``display`` a no-op, magics left out): the
    legend entries of every Axes of every figure each cell draws."""
    nb = json.loads((NOTEBOOKS / "08_sweeps.ipynb").read_text(encoding="utf-8"))
    space = {"display": lambda *a, **k: None}
    legends = []
    plt.close("all")
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code":
            continue
        if re.search(r"\bsweep\(", source):
            break                                           # the live re-runs below the figures: not needed
        exec("\n".join(line for line in source.splitlines() if not line.startswith("%")), space)
        for number in plt.get_fignums():
            legends += [[t.get_text() for t in ax.get_legend().get_texts()]
                        for ax in plt.figure(number).axes if ax.get_legend()]
        plt.close("all")
    return legends


def test_the_sweep_figures_of_08_have_a_few_legend_entries_each():
    """Each of the three figures had one legend of nine entries: eight strategies and the Wilson band."""
    legends = _figures_of_08()
    assert len(legends) == 6 and max(map(len, legends)) <= 4, legends


def _table(curves: dict) -> pd.DataFrame:
    """A sweep's tidy table: per strategy, (crash rate, runs that lost) pairs, of 4 runs each."""
    return pd.DataFrame([{"scenario": "toy", "strategy": s, "crash_rate": rate, "lost": int(i < hits),
                          "duplicated": 0} for s, points in curves.items() for rate, hits in points
                         for i in range(4)])


TOY = _table({"safe": [(0.0, 0), (0.1, 0)], "a": [(0.0, 0), (0.1, 3)], "b": [(0.0, 4), (0.1, 4)],
              "c": [(0.0, 0), (0.1, 0)], "d": [(0.0, 4), (0.1, 4)]})


def test_curve_kinds_sort_strategies_by_their_curve_beside_safes():
    assert plot.curve_kinds(plot.sweep_shares(TOY)) == {plot.CURVE_KINDS[0]: ["b", "d"],
                                                        plot.CURVE_KINDS[1]: ["a"],
                                                        plot.CURVE_KINDS[2]: ["c"]}
    without_safe = TOY[TOY.strategy != "safe"]
    assert plot.curve_kinds(plot.sweep_shares(without_safe)) == {"": ["a", "b", "c", "d"]}


def test_sweep_panels_draw_a_panel_per_kind_and_one_line_per_curve():
    fig = plt.figure()
    axes = plot.sweep_panels(fig, TOY)
    assert [ax.get_title() for ax in axes] == list(plot.CURVE_KINDS)
    assert [[t.get_text() for t in ax.get_legend().get_texts()] for ax in axes] == [
        ["safe", "b\n= d"], ["safe", "a"], ["safe\n= c"]]
    plt.close(fig)


def test_sweep_curves_highlight_greys_the_rest_under_one_entry(ax):
    plot.sweep_curves(ax, TOY, highlight=["a"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "safe\n= c", "a", "other strategies", "95% Wilson interval"]
    assert sorted(x.get_gid() for x in ax.lines if x.get_gid()) == ["grey b", "grey d"]
