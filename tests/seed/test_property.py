"""Property: for generated scenarios and random crash / lost-reply / pause schedules, `safe` with a
transactional or idempotent sink is always ok. And the honest limit: with an unsafe sink it can duplicate."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simkit

rate = st.sampled_from([0.0, 0.1, 0.3])


@st.composite
def scenarios(draw):
    backfills = draw(st.booleans())
    return {
        "name": "generated",
        "sink": draw(st.sampled_from(["transactional", "idempotent"])),
        "backfills": backfills,
        "workers": draw(st.integers(1, 2)),
        "generate": {
            "events": draw(st.integers(1, 30)), "page_size": draw(st.integers(1, 6)),
            "overlap": draw(rate), "backfill": draw(rate) if backfills else 0.0, "empty_pages": draw(rate),
            "stuck": draw(rate), "lost_fetch": draw(st.sampled_from([0.0, 0.05])),
            "poison": draw(rate), "transient": draw(rate), "review": draw(st.sampled_from([0.0, 0.1])),
            "hold": draw(st.sampled_from([0.0, 0.1])),
        },
        "random_faults": {
            "crash": draw(st.sampled_from([0.0, 0.05, 0.15])),
            "lost_response": draw(st.sampled_from([0.0, 0.05])),
            "pause": draw(st.sampled_from([0.0, 0.05])),
        },
    }


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(scenarios(), st.integers(0, 10**6))
def test_safe_is_always_ok(data, seed):
    run = simkit.simulate(simkit.parse(data), seed=seed)
    assert run.verdict.ok, (data, seed, run.verdict)


def test_honest_limit_unsafe_sink_duplicates_after_crash_at_after_effect():
    data = {"name": "limit", "sink": "unsafe", "initial": {"resume_cursor": "C1"},
            "pages": [{"cursor": "C1", "positions": [1, 2], "next_cursor": "C2"},
                      {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
            "faults": [{"kind": "crash", "point": "after_effect", "position": 2}]}
    run = simkit.simulate(simkit.parse(data))
    assert run.verdict.duplicated == ["e2"]
    assert run.verdict.invariants_broken == [4]
    assert run.verdict.lost == []
    data["sink"] = "idempotent"
    assert simkit.simulate(simkit.parse(data)).verdict.ok
