"""Hostile input, thirtieth round (a fresh tester): the notebooks, the workshop and the figures, as a learner in
a workshop and a facilitator use them.

Found: exercise 5 took for right an answer that acknowledged a page twice whenever the situation was not
``same`` (worker 2 ahead: saving its sequence 5 again under a new key; behind: saving 4 twice), although its
rules and its own ✓ say "acknowledged no page twice".

Each: a check's ✓ exactly when the answer keeps the exercise's rules (judged from the service's committed
commands, not from the replies), or one line naming the parameter and the problem.
"""
import simkit  # noqa: F401
from simkit import workshop as check
from simkit.service import DEV_SCOPE
from simkit.service.clients import READ, WRITE


def _read(api):
    return api.post(READ, {"contract_version": 1, "scope": DEV_SCOPE, "consumer_id": "context-cache"})["checkpoint"]


def _save(api, key, revision, cursor):
    return api.post(WRITE, {"scope": DEV_SCOPE, "command": {
        "contract_version": 1, "idempotency_key": key, "consumer_id": "context-cache",
        "expected_revision": revision, "cursor": cursor}})


def _refused(result, *words):
    text = repr(result)
    assert not result and text.startswith("✗ not yet: "), text
    assert all(word in text for word in words), text


# -- exercise 5: a page acknowledged twice is refused in every situation -------------------------------------
def test_exercise_5_refuses_saving_worker_2s_newer_cursor_again():
    """Ahead: rewriting the server's own sequence 5 under a new key acknowledges worker 2's page twice."""
    def write_the_newest(api, mine, key):
        current = _read(api)
        if current["cursor"]["sequence"] == mine["sequence"]:
            return mine
        newest = max(current["cursor"], mine, key=lambda c: c["sequence"])
        _save(api, key + "-again", current["revision"], newest)
        return newest

    _refused(check.exercise_5(write_the_newest), "worker 2 already saved sequence 5",
             "acknowledged sequence 5 a second time")


def test_exercise_5_refuses_saving_ones_own_page_twice():
    def save_twice(api, mine, key):
        current = _read(api)
        if current["cursor"]["sequence"] >= mine["sequence"]:
            return current["cursor"]
        first = _save(api, key + "-a", current["revision"], mine)["receipt"]["checkpoint"]
        _save(api, key + "-b", first["revision"], mine)
        return mine

    _refused(check.exercise_5(save_twice), "re-saved sequence 2", "acknowledged sequence 4 a second time")


def test_exercise_5_accepts_an_identical_retry_which_commits_nothing():
    """A right answer that retries its own command identically (seed 004, step 4) acknowledges nothing twice."""
    def retry_identically(api, mine, key):
        current = _read(api)
        if current["cursor"]["sequence"] >= mine["sequence"]:
            return current["cursor"]
        for _ in range(2):
            _save(api, key + "-retry", current["revision"], mine)
        return mine

    assert check.exercise_5(retry_identically)
