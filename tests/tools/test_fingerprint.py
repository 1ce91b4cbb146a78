"""Explore's state fingerprints (docs/exploring.md, "Deduplication"): built from the public accessors of the
world's parts, equal for equal durable states, ``None`` where a state has no stable value; and the shared
process-pool map of explore and sweep."""
import ast
import dataclasses
from pathlib import Path

import simkit
from simkit.procedure.consumer import Consumer
from simkit.tools import fingerprint as fingerprints
from simkit.tools.explore import explore
from simkit.tools.fingerprint import fingerprint
from simkit.tools.pool import pool_map
from simkit.world.simulation import World

TOOLS = Path(fingerprints.__file__).parent


def _reach_ins(path: Path) -> list[str]:
    """``x._name`` where ``x`` is not ``self`` or ``cls``: another object's private name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", "os"))):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_fingerprint_and_the_tools_that_run_worlds_read_no_private_names():
    names = ("fingerprint.py", "explore.py", "exploration.py", "shrink.py", "scenario_toml.py", "sweep.py",
             "pool.py")
    assert [hit for name in names for hit in _reach_ins(TOOLS / name)] == []


def test_equal_states_have_equal_fingerprints_and_a_different_one_another():
    sc = simkit.load("retry_walkthrough")
    a, b = World(sc, Consumer, 0).run(), World(sc, Consumer, 0).run()
    assert fingerprint(a) == fingerprint(b) is not None
    shorter = dataclasses.replace(sc, timing=dataclasses.replace(sc.timing, time_limit=3.0))
    assert fingerprint(World(shorter, Consumer, 0).run()) != fingerprint(a)


def test_a_store_on_sqlite_has_the_fingerprint_of_the_same_state_in_memory():
    """The store answers through its port, the same on either (round 41: SQLite had none, and an exploration
    on it skipped nothing)."""
    for name in ("retry_walkthrough", "late_response"):
        sc = simkit.load(name)
        world = World(dataclasses.replace(sc, store="sqlite"), Consumer, 0).run()
        assert fingerprint(world) == fingerprint(World(sc, Consumer, 0).run()) is not None
        world.store.close()


def test_deduplication_still_skips_equivalent_schedules():
    x = explore(simkit.load("retry_walkthrough"), "safe", max_crashes=2, share_prefixes=False)
    assert x.deduplicated > 0 and x.violations == 0


def test_pool_map_keeps_the_order_and_reports_each_result():
    seen = []
    assert list(pool_map(abs, [-3, 2, -1], 1, seen.append)) == [3, 2, 1] and seen == [3, 2, 1]
    seen.clear()
    assert list(pool_map(abs, list(range(-9, 0)), 2, seen.append, chunksize=1)) == list(range(9, 0, -1))
    assert seen == list(range(9, 0, -1))
