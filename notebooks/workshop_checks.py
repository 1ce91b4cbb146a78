"""Check cells for 09_workshop.ipynb: each check runs your answer through simkit and says what it sees.

A check never raises: a wrong, unfinished or ill-typed answer, or a consumer whose own code raises, gives a
``✗ not yet:`` message that says what went wrong, so a notebook of unfinished exercises still runs top to bottom.
It returns a :class:`Check`, which shows as its message and is true exactly when the exercise is solved (the
solutions notebook asserts it).
"""
import functools
import numbers

import simkit
from simkit import widgets

#: the methods that carry seed 000's procedure itself; an exercise changes hooks, never these
PROCEDURE = ("run", "attempt", "process", "validate")

#: seed 000, procedure step 4, word for word
WATERMARK_RULE = ("A high-water mark alone may prove replay only when positions are immutable and the stored "
                  "prefix is known complete.")


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


class _Refused(Exception):
    """Raised inside a check to end it with a ✗ and this text."""


def _never_raises(check):
    """Turn every exception inside a check, the learner's own included, into a ✗ message naming it."""
    @functools.wraps(check)
    def checked(answer) -> Check:
        try:
            return check(answer)
        except _Refused as refused:
            return _say(False, str(refused))
        except Exception as error:      # a check reports, it does not stop the notebook
            return _say(False, f"the check could not use your answer: {type(error).__name__}: {error}")
    return checked


def _consumer(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, simkit.Consumer)


def _number(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _simulate(scenario: str, cls) -> simkit.Run:
    """``cls`` on a bundled scenario; an exception from the learner's hooks becomes a ✗ naming the scenario."""
    try:
        return simkit.simulate(simkit.load(scenario), cls)
    except Exception as error:          # the learner's hooks may raise anything
        raise _Refused(f"on {scenario} your consumer raised {type(error).__name__}: {error}") from error


def verdict_text(verdict) -> str:
    """A verdict in one line: the fields that decide ``ok`` (lost, invariants and completed always; duplicated,
    regressions and settlement violations when there are any), and halted and pending, which say why."""
    parts = [f"lost {len(verdict.lost)}", f"invariants {verdict.invariants_broken}"]
    if verdict.duplicated:
        parts.append(f"duplicated {len(verdict.duplicated)}")
    if verdict.regressions:
        parts.append(f"regressions {verdict.regressions}")
    if verdict.settlement_violations:
        parts.append(f"settlement violations {len(verdict.settlement_violations)}")
    parts += [f"completed {verdict.completed}", f"halted {verdict.halted}", f"pending {len(verdict.pending)}"]
    return ", ".join(parts)


@_never_raises
def exercise_1(answer) -> Check:
    """``answer = {"lost": <how many events>, "invariants": [<numbers>]}`` for max_position_watermark on default."""
    if not isinstance(answer, dict) or set(answer) != {"lost", "invariants"}:
        return _say(False, 'set answer = {"lost": <a number>, "invariants": [<invariant numbers>]}')
    lost, invariants = answer["lost"], answer["invariants"]
    if not _number(lost):
        return _say(False, f'answer["lost"] is how many events it loses, a number such as 3, not {lost!r}')
    if not (isinstance(invariants, (list, tuple, set)) and all(_number(i) for i in invariants)):
        return _say(False, f'answer["invariants"] is a list of invariant numbers such as [1, 3], not {invariants!r}')
    run = simkit.simulate(simkit.load("default"), simkit.resolve("max_position_watermark"))
    expected = {"lost": len(run.verdict.lost), "invariants": run.verdict.invariants_broken}
    if lost != expected["lost"]:
        return _say(False, f"it does not lose {lost} events; count watermark.verdict.lost again (the 'lost' "
                           "column of the table)")
    if sorted(set(invariants)) != expected["invariants"]:
        return _say(False, "look at watermark.verdict.invariants_broken (the 'invariants broken' column), or "
                           "widgets.violations_frame(watermark)")
    return _say(True, f"it loses {expected['lost']} events and still breaks invariant "
                      f"{', '.join(map(str, expected['invariants']))}: the checker judges every durable write, not "
                      "only the final result. A false claim of progress is a bug even when it costs nothing yet.")


@_never_raises
def exercise_2(cls) -> Check:
    """Your consumer must lose e105 on shortcut_watermark_only_dedup and pass retry_walkthrough."""
    if not _consumer(cls):
        return _say(False, "define a class that subclasses simkit.Consumer, and pass the class itself")
    backfill = _simulate("shortcut_watermark_only_dedup", cls)
    if backfill.verdict.lost != ["e105"]:
        lost = ", ".join(backfill.verdict.lost) or "nothing"
        return _say(False, f"on shortcut_watermark_only_dedup it lost {lost}; the goal is to lose exactly e105. "
                           "Which hook decides that an event is a replay?")
    walkthrough = _simulate("retry_walkthrough", cls)
    if not walkthrough.verdict.ok:
        return _say(False, f"it loses e105 but also fails retry_walkthrough ({verdict_text(walkthrough.verdict)}); "
                           "change only replay detection")
    return _say(True, "it loses e105 behind the watermark, yet passes the retry walkthrough, where nothing is "
                      f'backfilled. Seed 000, step 4: "{WATERMARK_RULE}"')


REPAIR_INPUTS = ("shortcut_persist_token_on_fetch", "retry_walkthrough", "quarantine_boundary", "gauntlet")


@_never_raises
def exercise_3(cls) -> Check:
    """Your repaired consumer, a subclass of persist_token_on_fetch that changes hooks only, must pass every
    input in :data:`REPAIR_INPUTS`."""
    shortcut = simkit.resolve("persist_token_on_fetch")
    if not (isinstance(cls, type) and issubclass(cls, shortcut)):
        return _say(False, "keep Repaired a subclass of PersistTokenOnFetch and repair it by overriding hooks; "
                           "a fresh simkit.Consumer subclass is the safe procedure copied, not a repair")
    copied = [name for name in PROCEDURE if getattr(cls, name) is not getattr(simkit.Consumer, name)]
    if copied:
        return _say(False, f"Repaired overrides {', '.join(copied)}: that is the procedure itself. Change hooks "
                           "only (after_fetch, page_barrier, ...)")
    runs = [_simulate(name, cls) for name in REPAIR_INPUTS]
    failing = [r for r in runs if not r.verdict.ok]
    if not failing:
        return _say(True, f"ok on {', '.join(REPAIR_INPUTS)}: the token is published by the page barrier again, "
                          "after every event of the page has a durable outcome.")
    verdicts: dict[str, list[str]] = {}     # one verdict line, the inputs that gave it
    for r in failing:
        verdicts.setdefault(verdict_text(r.verdict), []).append(r.scenario)
    what = "; ".join(f"{', '.join(names)}: {text}" for text, names in verdicts.items())
    if any(not r.verdict.completed for r in failing):
        hint = ("completed False: its workers never caught up with the stream before the time limit, a consumer "
                "that stalls or spins. Does anything still publish the returned token? persist_token_on_fetch "
                "changed two hooks: look at PersistTokenOnFetch.page_barrier too.")
    elif any(r.verdict.lost or 1 in r.verdict.invariants_broken for r in failing):
        hint = "When does it publish the returned token?"
    else:
        hint = "Compare it with simkit.Consumer hook by hook: which of its hooks differ?"
    return _say(False, f"{what}. {hint}")


@_never_raises
def exercise_4(crash) -> Check:
    """``crash = (point, position)``: success_before_effect loses an event there on an unsafe sink; safe does not."""
    if not (isinstance(crash, (tuple, list)) and len(crash) == 2):
        return _say(False, 'set crash = ("<crash point>", <position>), e.g. ("after_fetch", 70)')
    point, position = crash
    if point not in simkit.CRASH_POINTS:
        return _say(False, f"{point!r} is not a crash point; pick one of simkit.CRASH_POINTS")
    if not _number(position):
        return _say(False, f"the position is an event's position, a number such as 70, not {position!r}")
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
