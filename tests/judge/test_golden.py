"""The committed golden verdicts (tests/golden/verdicts.json) still hold: every bundled scenario × strategy
judges and traces as reviewed. A deliberate change regenerates them: ``python tests/golden/verdicts.py``."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "golden"))
import verdicts  # noqa: E402


def test_every_bundled_verdict_and_trace_is_as_committed():
    committed = json.loads(verdicts.FILE.read_text())
    fresh = verdicts.compute()
    assert sorted(fresh) == sorted(committed), "scenarios or strategies changed: regenerate and review"
    changed = [k for k in fresh if fresh[k] != committed[k]]
    assert not changed, (f"{len(changed)} runs differ from tests/golden/verdicts.json, e.g. {changed[:5]}; "
                         "if deliberate, run python tests/golden/verdicts.py and review the diff")
