"""The committed golden explorations (tests/golden/explore.json) still hold: every schedule count,
deduplication, violation kind and first violation of the explorations listed in tests/golden/explore.py is as
reviewed. A deliberate change regenerates them: ``python tests/golden/explore.py``."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "golden"))
import explore as golden  # noqa: E402


def test_every_golden_exploration_is_as_committed(shared):
    """Each exploration is computed once in the run, shared with the tests that explore alike (conftest)."""
    committed = json.loads(golden.FILE.read_text())
    fresh = golden.compute(shared.explore)
    assert sorted(fresh) == sorted(committed), "explorations listed changed: regenerate and review"
    changed = [k for k in fresh if fresh[k] != committed[k]]
    assert not changed, (f"{len(changed)} explorations differ from tests/golden/explore.json, e.g. "
                         f"{changed[:5]}; if deliberate, run python tests/golden/explore.py and review the "
                          "diff")
