"""Check cells for 09_workshop.ipynb: each check runs your answer through simkit and says what it sees.

A check never raises: a notebook of unfinished exercises still runs top to bottom. It returns a :class:`Check`,
which shows as its message and is true exactly when the exercise is solved (the solutions notebook asserts it).
"""
import simkit
from simkit import widgets


class Check:
    """The outcome of one check: ``bool(check)`` says solved, ``repr`` is the message."""

    def __init__(self, solved: bool, text: str):
        self.solved, self.text = solved, text

    def __bool__(self) -> bool:
        return self.solved

    def __repr__(self) -> str:
        return ("✓ " if self.solved else "✗ not yet: ") + self.text


def _say(solved: bool, text: str) -> Check:
    return Check(solved, text)


def _consumer(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, simkit.Consumer)


def exercise_1(answer) -> Check:
    """``answer = {"lost": <how many events>, "invariants": [<numbers>]}`` for max_position_watermark on default."""
    run = simkit.simulate(simkit.load("default"), simkit.resolve("max_position_watermark"))
    expected = {"lost": len(run.verdict.lost), "invariants": run.verdict.invariants_broken}
    if not isinstance(answer, dict) or set(answer) != {"lost", "invariants"}:
        return _say(False, 'set answer = {"lost": <a number>, "invariants": [<invariant numbers>]}')
    if answer["lost"] != expected["lost"]:
        return _say(False, f"it does not lose {answer['lost']} events; count run.verdict.lost again")
    if sorted(answer["invariants"]) != expected["invariants"]:
        return _say(False, "look at run.verdict.invariants_broken (or widgets.violations_frame(run))")
    return _say(True, f"it loses {expected['lost']} events and still breaks invariant "
                      f"{', '.join(map(str, expected['invariants']))}: the checker judges every durable write, not "
                      "only the final result. A false claim of progress is a bug even when it costs nothing yet.")


def exercise_2(cls) -> Check:
    """Your consumer must lose e105 on shortcut_watermark_only_dedup and pass retry_walkthrough."""
    if not _consumer(cls):
        return _say(False, "define a class that subclasses simkit.Consumer")
    backfill = simkit.simulate(simkit.load("shortcut_watermark_only_dedup"), cls)
    if backfill.verdict.lost != ["e105"]:
        lost = ", ".join(backfill.verdict.lost) or "nothing"
        return _say(False, f"on shortcut_watermark_only_dedup it lost {lost}; the goal is to lose exactly e105. "
                           "Which hook decides that an event is a replay?")
    walkthrough = simkit.simulate(simkit.load("retry_walkthrough"), cls)
    if not walkthrough.verdict.ok:
        return _say(False, "it loses e105 but also fails retry_walkthrough; change only replay detection")
    return _say(True, "it loses e105 behind the watermark, yet passes the retry walkthrough, where nothing is "
                      "backfilled. A watermark is a proof of replay only when positions can't be backfilled.")


REPAIR_INPUTS = ("shortcut_persist_token_on_fetch", "retry_walkthrough", "quarantine_boundary", "gauntlet")


def exercise_3(cls) -> Check:
    """Your repaired consumer must pass every input in :data:`REPAIR_INPUTS`."""
    if not _consumer(cls):
        return _say(False, "define a class that subclasses simkit.Consumer")
    runs = [simkit.simulate(simkit.load(name), cls) for name in REPAIR_INPUTS]
    failing = [r for r in runs if not r.verdict.ok]
    if failing:
        what = "; ".join(f"{r.scenario}: lost {len(r.verdict.lost)}, invariants {r.verdict.invariants_broken}"
                         for r in failing)
        return _say(False, f"{what}. When does it publish the returned token?")
    return _say(True, f"ok on {', '.join(REPAIR_INPUTS)}: the token is published by the page barrier again, "
                      "after every event of the page has a durable outcome.")


def exercise_4(crash) -> Check:
    """``crash = (point, position)``: success_before_effect loses an event there on an unsafe sink; safe does not."""
    if not (isinstance(crash, tuple) and len(crash) == 2 and crash[0] in simkit.CRASH_POINTS):
        return _say(False, 'set crash = ("<crash point>", <position>), e.g. ("after_fetch", 70)')
    point, position = crash
    shortcut = widgets.explorer_run(strategy="success_before_effect", sink="unsafe", crash_point=point,
                                    crash_position=position)
    safe = widgets.explorer_run(strategy="safe", sink="unsafe", crash_point=point, crash_position=position)
    note = widgets.crash_note(shortcut)
    if not shortcut.verdict.lost:
        return _say(False, f"success_before_effect lost nothing ({note}). Where is its receipt durable while "
                           "the effect is not?")
    if safe.verdict.lost:
        return _say(False, "safe loses an event there too; pick a crash only the shortcut is exposed to")
    return _say(True, f"success_before_effect loses {', '.join(shortcut.verdict.lost)}; safe loses nothing on "
                      f"the same input ({note}).")
