"""The exercises of notebook 09: each ``exercise_N`` runs the learner's answer through simkit and says what it
sees; a wrong answer gets a hint that points at the evidence, not at the solution."""
from __future__ import annotations

import copy
import numbers
from pathlib import Path

import simkit
from simkit.ops import LOST
from simkit.procedure.shortcuts import scenario_of
from simkit.tools.explore import fault_free, replay
from simkit.viz import widgets

from .conflict import Recording, checkpoint_of, service_409
from .reply import (
    HOOKS,
    WATERMARK_RULE,
    Check,
    Refused,
    as_whole,
    is_consumer,
    is_number,
    never_raises,
    run_checked,
    say,
    verdict_text,
)

__all__ = ["Impatient", "Suspect", "Teammate", "exercise_1", "exercise_2", "exercise_3", "exercise_4",
           "exercise_5", "exercise_6", "exercise_7", "exercise_7_explain", "fencing_stream", "service_409"]

# -- exercise 1: which hook? ---------------------------------------------------------------------------------
class Suspect(simkit.Consumer):
    """A teammate's consumer in review. One hook differs
    from simkit.Consumer; find which from what it does."""

    def is_caught_up(self, checkpoint, page):
        return not page.events


def _overridden(cls) -> list[str]:
    """The hooks of simkit.Consumer that ``cls`` overrides."""
    return [h for h in HOOKS if getattr(cls, h) is not getattr(simkit.Consumer, h)]


def _hook_name(hook):
    """The hook a learner names, however written: ``" Is_Caught_Up() "``, ``"Suspect.is_caught_up"``, or the
    function itself (``check.Suspect.is_caught_up``); anything else as it is."""
    name = getattr(hook, "__name__", hook) if callable(hook) else hook
    return name.strip().lower().removesuffix("()").rsplit(".", 1)[-1] if isinstance(name, str) else name


@never_raises
def exercise_1(hook) -> Check:
    """``hook``: the name of the one hook :class:`Suspect` overrides, found from its verdict and trace."""
    if (hook := _hook_name(hook)) not in HOOKS:
        return say(False, f"name one hook as a string: one of {', '.join(map(repr, HOOKS))}")
    if [hook] == _overridden(Suspect):
        return say(True, "is_caught_up. It takes every empty page for the end of the stream, so an empty "
                         "page with a new token (a zero-item page the provider uses to move on) stops it "
                         "for good: nothing lost, no invariant broken, the events after it pending and the "
                         "run not completed. "
                          'Seed 000, step 7: "Do not equate emptiness with end of stream."')
    hints = {
        "is_replay": "a wrong is_replay skips events (they would be lost) or repeats them; this verdict has "
        "neither",
        "resulting_applied_position": "a wrong resulting_applied_position writes an applied_position no "
        "receipt proves: invariant 2 would be broken, and it is not",
        "is_terminal": "a wrong is_terminal lets a non-terminal outcome close the page: events would be lost "
        "and invariant 5 broken",
        "apply": "a wrong apply loses or repeats effects, or breaks invariant 2 or 4; none of those here",
        "quarantine": "a wrong quarantine loses poison events or breaks invariant 1; none of those here",
        "ignore": "no event here is ignored by the handler; look at what the run stopped on",
        "settle_effect": "the default scenario's sink is idempotent and no settlement violation is reported",
        "page_barrier": "a wrong page_barrier would regress the checkpoint or break invariant 3",
        "barrier_target": "a wrong barrier_target publishes a token the provider never returned "
        "(invariant 3)",
        "after_fetch": "a wrong after_fetch publishes the token early (invariant 1) or never; this one "
        "fetches and processes pages as safe does, until it stops",
    }
    return say(False, hints.get(hook, "look again")
               + ". Nothing is lost and no invariant is broken, yet the run "
                       "never completes: what did the worker fetch just before it stopped for good?")


# -- exercise 2: break it on purpose -------------------------------------------------------------------------
@never_raises
def exercise_2(cls) -> Check:
    """Your consumer must lose e105 on shortcut_watermark_only_dedup and pass retry_walkthrough."""
    if not is_consumer(cls):
        return say(False, "define a class that subclasses simkit.Consumer, and pass the class itself")
    scenario = scenario_of("watermark_only_dedup")
    backfill = run_checked(scenario, cls)
    if backfill.verdict.lost != ["e105"]:
        lost = ", ".join(backfill.verdict.lost) or "nothing"
        return say(False, f"on {scenario} it lost {lost}; the goal is to lose exactly e105. "
                           "Which hook decides that an event is a replay?")
    walkthrough = run_checked("retry_walkthrough", cls)
    if not walkthrough.verdict.ok:
        return say(False, f"it loses e105 but also fails retry_walkthrough "
                          f"({verdict_text(walkthrough.verdict)}); "
                           "change only replay detection")
    if (changed := _overridden(cls)) != ["is_replay"]:
        return say(False, f"it loses e105, but by overriding {', '.join(changed) or 'no hook'}: override "
                          "only is_replay, the hook that decides that an event is already done")
    yours, rule = (run_checked("default", c) for c in (cls, simkit.resolve("watermark_only_dedup")))
    if yours.verdict.lost != rule.verdict.lost:     # the rule, not one event: e105 named in the code
        return say(False, f"it loses e105 here, but on default it loses {len(yours.verdict.lost)} events "
                          f"where trusting the watermark loses {len(rule.verdict.lost)}: take every event at "
                           "or below applied_position for a replay, not one event you know")
    return say(True, "it loses e105 behind the watermark, yet passes the retry walkthrough, where nothing is "
                      f'backfilled. Seed 000, step 4: "{WATERMARK_RULE}"')


# -- exercise 3: quarantine, write the test ------------------------------------------------------------------
class Impatient(simkit.Consumer):
    """A teammate's consumer: 'an outcome that can be undone later need not block the stream now'."""

    def is_terminal(self, decision):
        return decision == "reversible_hold"


def _scenario(answer) -> simkit.Scenario:
    """A learner's scenario: a dict as simkit.parse takes it, a TOML path, a Scenario, or what
    ``simkit.tools.shrink.shrink`` returned (its ``.data``: exercise 7 was refused "not Shrunk")."""
    from simkit.tools.shrink import Shrunk
    if isinstance(answer, simkit.Scenario):
        return answer
    if isinstance(answer, Shrunk):
        answer = answer.data
    if isinstance(answer, (str, Path)) and str(answer).lower().endswith(".toml"):
        return simkit.load(answer)
    if isinstance(answer, dict):
        try:
            return simkit.parse(copy.deepcopy(answer), source="your scenario")
        except simkit.ScenarioError as error:
            raise Refused(f"simkit.parse refuses it: {error}") from None
    raise Refused("give a scenario as a dict (as simkit.parse takes it) or the path of a .toml file, "
                   f"not {type(answer).__name__}")


@never_raises
def exercise_3(scenario) -> Check:
    """``scenario``: a small scenario on which :class:`Impatient` loses an event and ``safe`` is ok."""
    sc = _scenario(scenario)
    safe, impatient = run_checked(sc, simkit.Consumer), run_checked(sc, Impatient)
    if not safe.verdict.ok:
        return say(False, f"safe fails on your scenario too ({verdict_text(safe.verdict)}), so it tests the "
                           "scenario, not Impatient. A review or hold must resolve within the time limit "
                           "(resolve_after, release_after), a transient event must stop failing.")
    if impatient.verdict.lost:
        return say(True, f"Impatient loses {', '.join(impatient.verdict.lost)} and safe passes: a reversible "
                          "hold is not a terminal outcome, and Impatient published the page's token past it. "
                          'Seed 000, invariant 5: "a failed item, retryable dead-letter outcome, '
                          'operator-review '
                          'hold, or reversible quarantine blocks the page barrier".')
    answers = {o for r in (impatient,) for o in r.trace.to_frame().query("step == 'handle'").outcome}
    if not answers - {"quarantine", "apply", "ignore"}:
        hint = ("every event of your scenario got a final answer from the handler (apply or quarantine), "
                "and Impatient treats those right. Give an event a behaviour whose answer is not final: "
                "transient, review or hold (notebook 03, 'Non-terminal outcomes keep the barrier closed').")
    else:
        seen = ", ".join(sorted(answers - {"quarantine", "apply", "ignore"}))
        hint = (f"the handler answered {seen}, and Impatient waited for it as safe does. Which of the "
                 "non-terminal outcomes does it take for final? Try the others.")
    return say(False, f"Impatient passes your scenario ({verdict_text(impatient.verdict)}): {hint}")


# -- exercise 4: fencing a late retry ------------------------------------------------------------------------
def fencing_stream() -> simkit.Scenario:
    """Two workers on one checkpoint, three pages of three events, no faults: late_retry without its pause."""
    return fault_free(simkit.load("late_retry"))


def _pause(answer) -> simkit.Fault:
    if isinstance(answer, simkit.Fault):
        if answer.kind != "pause":
            raise Refused(f"a pause is kind 'pause', not {answer.kind!r}")
        return answer
    if not (isinstance(answer, (tuple, list)) and len(answer) == 3):
        raise Refused('set pause = ("<crash point>", <worker 1 or 2>, <duration>), e.g. '
                      '("after_page_barrier", 1, 5.0)')
    point, worker, duration = answer[0], as_whole(answer[1]), answer[2]
    if point not in simkit.CRASH_POINTS:
        raise Refused(f"{point!r} is not a crash point; a pause strikes at one of simkit.CRASH_POINTS")
    if worker not in (1, 2) or isinstance(worker, bool):
        raise Refused(f"this stream has workers 1 and 2, not {worker!r}")
    if not (isinstance(duration, numbers.Real) and not isinstance(duration, bool) and float(duration) > 0):
        raise Refused(f"the duration is a positive number of time units such as 10, not {duration!r}")
    return simkit.Fault("pause", point, worker=worker, duration=float(duration))


@never_raises
def exercise_4(pause) -> Check:
    """``pause = (point, worker, duration)``: on :func:`fencing_stream`, ``no_version_check``'s checkpoint
    goes backwards and ``safe`` is fenced (ok)."""
    fault = _pause(pause)
    sc = fencing_stream()
    shortcut = replay(sc, "no_version_check", (fault,))
    safe = replay(sc, "safe", (fault,))
    df = shortcut.trace.to_frame()
    paused = df[df.step == "pause"] if "pause" in set(df.step) else df.iloc[0:0]
    if not safe.verdict.ok:
        return say(False, f"safe fails with that pause ({verdict_text(safe.verdict)}); pick another")
    if shortcut.verdict.regressions:
        return say(True, f"worker {fault.worker} held its attempt identity through the pause while the "
                          "other worker passed a barrier; waking, no_version_check wrote its stale page's "
                          "token over newer progress and the checkpoint went backwards. safe's barrier is "
                          "a compare-and-swap on the attempt's (cursor, version): it was rejected, and the "
                          "worker reread the checkpoint (seed 000, step 5).")
    if paused.empty:
        return say(False, f"the pause never struck: worker {fault.worker} never reaches {fault.point} on "
                           "this stream (its sink is transactional, so no effect points, and it has no "
                           "poison event, so no quarantine points)")
    if fault.point == "after_page_barrier":
        return say(
            False,
            "a worker paused after its barrier holds nothing stale: its next attempt loads the "
            "checkpoint afresh. Pause it while it holds a page it fetched, before its barrier.",
        )
    return say(False, "no regression: while it slept, the other worker did not pass a barrier that the "
                      "sleeper's stale write could undo. Look at the swimlane: how long does a page take? "
                      "Pause longer, between a fetch and its barrier.")


# -- exercise 5: the checkpoint service's 409 ----------------------------------------------------------------
def _refused(where: str, recording: Recording) -> Check | None:
    """The ✗ for the first request of the learner's that the service refused, if any."""
    refusals = [(reply.status, reply["error"]["code"]) for route, _r, reply in recording.sent
                if reply.status >= 400]
    if not refusals:
        return None
    status, code = refusals[0]
    if code == "idempotency_conflict":
        return say(False, f"{where}, and your save got {status} {code}: that key already names a "
                           "command the service committed (another cursor, consumer or expected "
                           "revision). A new command needs a key of its own.")
    if code == "cursor_backward":
        return say(False, f"{where}: your save tried to move the checkpoint backwards and got "
                          f"{status} {code}. Compare the cursor you reread with yours before writing.")
    return say(False, f"{where}, and one of your requests got {status} {code}. Reread first, then decide.")


def _acked_twice(where: str, commands: list) -> Check | None:
    """The ✗ for a command the service committed (ground truth, not a reply) that left the cursor where it
    was: it acknowledges a page the checkpoint already acknowledged. An identical retry commits nothing."""
    if not (twice := [c for c in commands if c.before and c.after["cursor"] == c.before["cursor"]]):
        return None
    was, now = twice[0].before, twice[0].after
    return say(False, f"{where}: your save acknowledged sequence {now['cursor']['sequence']} a second time "
                      f"(revision {was['revision']} → {now['revision']}). That is allowed, but it "
                       "acknowledges one page twice and makes worker 2's next command conflict. Write only "
                       "when the server is behind you.")


@never_raises
def exercise_5(on_409) -> Check:
    """``on_409(api, my_cursor, my_key)``: worker 1's reaction to the 409, in each :func:`service_409`
    situation. It must reread and reconcile (seed 004, step 5), never overwrite newer progress, acknowledge no
    page twice, get no 409 of its own, and return the cursor worker 1 reads the feed from next."""
    from simkit.service.clients import WRITE
    if not callable(on_409):
        return say(False, "pass your function itself: check.exercise_5(on_409)")
    for situation, expect in (("ahead", 5), ("behind", 4), ("same", 4)):
        api, _, mine, key = service_409(situation)
        committed = len(api.svc.writes)
        recording = Recording(api)
        try:
            result = on_409(recording, copy.deepcopy(mine), key)
        except Exception as error:      # the learner's code may raise anything
            return say(False, f"when worker 2 is {situation}, your function raised {type(error).__name__}: "
                              f"{error}")
        after = checkpoint_of(api)
        where = {"ahead": "worker 2 already saved sequence 5", "behind": "worker 2 only re-saved sequence 2",
                 "same": "worker 2 already saved sequence 4, yours"}[situation]
        if (refused := _refused(where, recording)) is not None:      # a Check is false when not solved
            return refused
        if not any(route != WRITE for route, _, _ in recording.sent):
            return say(False, f"{where}, but your function never reread the checkpoint: step 5, \"On a "
                               "revision conflict, reread current progress and reconcile concurrent work.\"")
        if after["cursor"]["sequence"] != expect:
            return say(False, f"{where}; afterwards the checkpoint is at sequence "
                              f"{after['cursor']['sequence']}, "
                               f"and it should be at {expect}: the furthest progress either worker made.")
        if (twice := _acked_twice(where, api.svc.writes[committed:])) is not None:
            return twice
        if not (isinstance(result, dict) and result.get("sequence") == expect
                and result.get("journal_id") == mine["journal_id"]):
            return say(False, f"{where}; the server is right, but your function returned {result!r}. "
                              f"Return the cursor worker 1 reads the feed from next (sequence {expect}).")
    return say(True, "in all three situations you reread, adopted newer progress without writing, wrote "
                     "yours under the current revision only when the server was behind, and acknowledged no "
                     "page twice. "
                      'Seed 004, step 5: "On a revision conflict, reread current progress and reconcile '
                      "concurrent work. Do not overwrite another worker's newer progress.\" (Comparing "
                      "sequences is allowed here: seed 004's cursors are ordered inside one journal. Seed "
                      "000's tokens are opaque and are never compared.)")


# -- exercise 6: find the crash ------------------------------------------------------------------------------
@never_raises
def exercise_6(crash) -> Check:
    """``crash = (point, position)``: success_before_effect
    loses an event there on an unsafe sink; safe does not."""
    if not (isinstance(crash, (tuple, list)) and len(crash) == 2):
        return say(False, 'set crash = ("<crash point>", <position>), e.g. ("after_fetch", 70)')
    point, position = crash[0], as_whole(crash[1])
    if point not in simkit.CRASH_POINTS:
        return say(False, f"{point!r} is not a crash point; pick one of simkit.CRASH_POINTS")
    if not is_number(position):
        return say(False, f"the position is an event's position, a number such as 70, not {position!r}")
    shortcut = widgets.explorer_run(strategy="success_before_effect", sink="unsafe", crash_point=point,
                                    crash_position=position)
    safe = widgets.explorer_run(strategy="safe", sink="unsafe", crash_point=point, crash_position=position)
    note = widgets.crash_note(shortcut)
    if not shortcut.verdict.lost:
        return say(False, f"success_before_effect lost nothing ({note}). Where is its receipt durable while "
                           "the effect is not?")
    if safe.verdict.lost:
        return say(False, "safe loses an event there too; pick a crash only the shortcut is exposed to")
    return say(True, f"success_before_effect loses {', '.join(shortcut.verdict.lost)}; safe loses nothing on "
                      f"the same input ({note}).")


# -- exercise 7: from a failing audit to a minimal counterexample --------------------------------------------
class Teammate(simkit.Consumer):
    """A teammate's consumer: 'a commit that times out almost always went through; don't redo the page for
    it'. It passes every bundled scenario."""

    def apply(self, event, applied_position):
        done = yield from super().apply(event, applied_position)
        return True if done is LOST else done

    def quarantine(self, event, applied_position):
        done = yield from super().quarantine(event, applied_position)
        return True if done is LOST else done


def _size(sc: simkit.Scenario) -> tuple[int, int]:
    if sc.pages is None:
        raise Refused("that is a generated scenario; a counterexample to read is a scripted one ([[pages]])")
    events = {p for page in sc.pages for p in page["positions"]}
    return len(events), len(sc.faults)


@never_raises
def exercise_7(counterexample) -> Check:
    """``counterexample``: a scenario (dict or .toml path) on which :class:`Teammate` fails and ``safe``
    passes, with at most one event and one fault."""
    sc = _scenario(counterexample)
    teammate, safe = run_checked(sc, Teammate), run_checked(sc, simkit.Consumer)
    if teammate.verdict.ok:
        return say(False, "Teammate passes this scenario; a counterexample is one it fails. Start from the "
                          "audit's failing case (result.failures[0].scenario).")
    if not safe.verdict.ok:
        return say(False, f"safe fails here too ({verdict_text(safe.verdict)}): that is the scenario's "
                           "fault, not Teammate's")
    events, faults = _size(sc)
    if events > 1 or faults > 1:
        plural = "s" if faults != 1 else ""
        return say(False, f"it fails, but with {events} events and {faults} fault{plural} it is not "
                           "minimal yet. Shrink it: simkit.tools.shrink.shrink(scenario, Teammate, seed), "
                           "or use the audit's result.shrunk.")
    return say(True, f"{events} event and {faults} fault: {verdict_text(teammate.verdict)}. Now read it "
                      "(question below).")


@never_raises
def exercise_7_explain(answer) -> Check:
    """What went wrong in the counterexample: ``'a'``, ``'b'`` or ``'c'``."""
    choices = {"a": "the fetch was lost and Teammate skipped the page",
               "b": "the commit's request never reached the store; Teammate took the timeout for a commit "
                    "and published the page's token",
               "c": "the commit ran twice"}
    if not isinstance(answer, str) or answer.strip().lower() not in choices:
        return say(False, "answer 'a', 'b' or 'c'")
    if answer.strip().lower() == "b":
        return say(True, "a lost request and a lost reply look the same to the caller: a timeout. Only a "
                         "reread of durable state tells them apart. safe treats a commit without a reply as "
                         "not done and retries the page from the durable cursor; Teammate's apply returns "
                         "True for LOST. "
                          'Seed 000, step 4: "Stop at the first outcome that is not durable and terminal."')
    return say(False, f"not '{answer.strip().lower()}': {choices[answer.strip().lower()]}? Read the "
                       "counterexample's [[faults]] entry and the trace of Teammate's run on it: which "
                       "request was lost, and what did Teammate do next?")
