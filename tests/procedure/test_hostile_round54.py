"""Round 54: mutation testing of the plugin runtime, the code between a consumer and the world
(simkit/procedure/driver.py, wire.py, external.py, lives.py, programs.py and simkit/requests.py).

Method: a script (stdlib ``ast``) made every one-token mutant of the six modules: comparisons flipped,
``and``/``or``, ``not`` dropped, a condition made ``True``/``False``, an int off by one, a bool flipped, a
float doubled, a short string changed, ``min``/``max``, ``+``/``-``, ``continue``/``break`` made ``pass``, a
statement dropped: 1,291 mutants (53 of them ``__all__`` entries, set aside). Each ran in a subprocess on a
patched copy of the tree (``PYTHONPATH``), under ``nice``, one at a time: first its module's own fast tests
(driver and requests: tests/procedure/test_driver.py and tests/judge/test_golden.py; wire and external:
tests/exec/test_wire.py and test_exec_consumers.py; lives: tests/procedure/test_hostile_round34.py and
test_hooks.py; programs: tests/exec/test_hostile_round25.py and 33), ``-x``. At about 20 s a mutant on a
shared machine, 148 were run: every driver.py mutant (88) and a random sample of the rest (35 wire, 13
external, 4 each of requests, lives and programs). Besides, all 374 wire.py mutants were run in-process
against main's ``wire`` on a corpus of good and malformed lines and results (each key dropped, renamed, added,
retyped).

Score, of the 148: 91 killed by the filter's first stage; 13 by existing tests beyond it (12 by
tests/vocabulary/test_requests.py, outside the filter: the driver table's checks; 1 by
tests/exec/test_hostile_round25.py); 20 equivalent; 20 killed by the tests below; 4 left. Equivalent:
annotations under ``from __future__ import annotations`` (5), ``__all__`` dropped,
``super().__init_subclass__()`` with no arguments, the base driver's ``NotImplementedError`` guards (every
driver overrides ``principal`` and ``finish``), ``return None`` made ``pass``, ``tables``' default ``check``
(Driver's own methods agree), ``max(left, -1)`` under ``left > 0``, ``_TRANSCRIBE[-1]`` of a one-item list,
the quick reading of a request failing over to the strict one (5: the same value or refusal, slower), and
``self.end()`` dropped before a raise (``run()``'s ``finally`` ends the life).

Found: ``decode_result`` promises :class:`WireError`; a ``receipts`` position key ``"--5"`` or of 5,000 digits
was ``int()``'s ``ValueError`` (fixed in ``wire._key``). Most survivors were the base driver's methods that
only the live worker inherits (no test ran ``live`` with ``split_validate_write``, an external ``effect``,
``finish``'s status or a forged reservation), and the words of refusals. A line naming one key twice was
accepted, the last value winning, with ``unique_keys``' raise dropped: the first stage did not see it.

Left: lives.py run again under ``__main__`` (a script's main block would run in each life; its simulations are
passed over all the same); lives.py's ``_let_go`` losing its generator id (the unclosed-generator path);
programs.py's ``PR_SET_PDEATHSIG`` never set (2: a consumer outliving a SIGKILLed simkit, which needs simkit
killed).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import simkit
from simkit.errors import SimkitError, StrategyError
from simkit.live.run import live
from simkit.procedure import wire
from simkit.procedure.driver import Driver
from simkit.procedure.external import LIMIT_ENV, exec_consumer

REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "consumers" / "python"


@pytest.mark.parametrize("key", ["--5", "9" * 5000], ids=["two signs", "5000 digits"])
def test_a_receipts_position_that_int_refuses_is_a_wire_error(key):
    """Found: ``decode_result`` promises :class:`WireError`; a position key with two signs, or past int()'s
    4300 digits, was int()'s ``ValueError``."""
    message = {"type": "receipts", "value": {"outcomes": {}, "ids_at": {key: "e1"}}}
    with pytest.raises(wire.WireError, match="not a position"):
        wire.decode_result(message)



def test_a_result_is_read_with_the_default_kinds():
    """Kills wire.py mutants 97 and 219 (``decode_result`` with no ``kinds`` read ``None``'s); a position with
    one sign is still one."""
    message = {"type": "receipts", "value": {"outcomes": {"e1": "applied"}, "ids_at": {"-5": "e1"}}}
    assert wire.decode_result(message) == ({"e1": "applied"}, {-5: "e1"})

def test_a_live_run_settles_in_two_transactions_with_nothing_between():
    """Kills driver.py mutants 405 (``Driver.handle`` returns nothing: the live worker's decision is no
    decision, and it backs off for ever), 412 and 413 (``call`` and ``settle`` return nothing), 396 and 397
    (``Driver.between_transactions`` made to yield, its ``return`` dropped, or to be no generator, its
    ``yield`` dropped). The live worker inherits it: under
    ``split_validate_write`` every external effect stopped with "a driver without simulated time was asked to
    wait", or ``yield from None``. No test ran ``live`` with that policy."""
    scenario = simkit.parse({"name": "split", "sink": "idempotent", "settlement": "split_validate_write",
                             "generate": {"events": 4, "page_size": 2}})
    r = live(scenario, "safe", kills=0, seed=1, timeout=30)
    assert r.verdict.ok and r.verdict.completed, r.verdict.as_dict()


CHECKED_EFFECT = """
import json
import sys
sys.path.insert(0, {reference!r})
import consumer


class Stdin:
    def __init__(self, first):
        self.lines, self.rest = [first], sys.stdin

    def readline(self):
        return self.lines.pop() if self.lines else self.rest.readline()


hello = sys.stdin.readline()
if json.loads(hello)["value"]["worker"] != 1:
    sys.exit(f"the handshake names no worker 1: {{hello}}")
sys.stdin = Stdin(hello)


class Checked(consumer.Procedure):
    def apply(self, event, applied_position):
        kind, value = self.ask("effect", event=event)
        if kind != "lost" and (kind, value) != ("bool", True):
            sys.exit(f"effect answered {{kind}} {{value}}: docs/protocol.md says bool (true) or lost")
        return super().apply(event, applied_position)


consumer.main(Checked)
"""


def test_a_live_effect_on_an_external_sink_answers_true(tmp_path):
    """Kills driver.py mutants 407 and 441 (``Driver.effect`` returns nothing, or ``false``): the live
    worker's ``effect`` on an external sink is the base driver's, answered ``none`` where docs/protocol.md
    says ``bool`` (``true``) or ``lost``; a consumer that relies on it was ended in live and not in run. And
    external.py mutant 653 (``_worker_of`` takes the first frame's ``worker``, there or not): the live
    worker's loop has none, so its handshake named worker ``null``."""
    program = tmp_path / "checked.py"
    program.write_text(CHECKED_EFFECT.format(reference=str(REFERENCE)))
    scenario = simkit.parse({"name": "effects", "sink": "idempotent",
                             "generate": {"events": 3, "page_size": 3}})
    live(scenario, f"exec:{sys.executable} {program}", kills=0, seed=1, timeout=30)      # no ConsumerError


@pytest.mark.parametrize("line, problem", [
    # 241, 295: the duplicate named, not the object's first key
    (b'{"op": "fetch", "cursor": "a", "cursor": "b"}', "not JSON (key 'cursor' twice in one object)"),
    # 294: in the line's own terms, not advice to call sys.set_int_max_str_digits()
    (b'{"op": "fetch", "cursor": ' + b"9" * 4301 + b"}", "not JSON (an integer of more than 4300 digits)"),
    # 264, 322: a value of 40 characters is quoted whole; 320: as it was written, not \u-escaped
    (b'{"op": "fetch", "cursor": ' + b"1" * 40 + b"}", f"Fetch.cursor is integer {'1' * 40}, not string"),
    (b'{"op": "fetch", "cursor": ["\xc3\xa9"]}', 'Fetch.cursor is array ["\u00e9"], not string'),
    # 321: one of 41 is cut
    (b'{"op": "fetch", "cursor": ' + b"1" * 41 + b"}", f"Fetch.cursor is integer {'1' * 39}…, not string"),
    # 319: a union's members by their names
    (b'{"op": "settle", "event": {"id": "e1", "position": 1, "behavior": "ok"}, "reservation": '
     b'{"operation_id": "e1", "fingerprint": "f", "binding": "b", "generation": 1}, "observation": 1}',
     "Settle.observation is integer 1, not Reply or string"),
], ids=["duplicate key", "4301 digits", "40 characters", "non-ASCII", "41 characters", "union"])
def test_a_refused_line_says_what_is_wrong_in_its_own_words(line, problem):
    """Kills wire.py mutants 296 (a line naming a key twice accepted, the last value winning), 241, 295, 294,
    264, 322, 321, 320 and 319 (the refusal's words)."""
    with pytest.raises(wire.WireError) as caught:
        wire.decode_request(wire.loads(line))
    assert str(caught.value) == problem or str(caught.value).startswith(problem)


@pytest.mark.parametrize("line, quoted", [
    (b"a\xffb", "a\ufffdb"),            # 335: an undecodable byte shown as U+FFFD ('replace')
    (b"a\\b'", "a\\b'"),                # 288: printable characters kept as they are, not escaped again
    (b"c" * 120, "c" * 120),            # 289, 337: 120 characters shown whole
    (b"c" * 121, "c" * 119 + "…"),      # 336: past 120, cut
    (b"endsX", "endsX"),                # 231: only the newline stripped
], ids=["undecodable", "backslash", "120", "121", "trailing X"])
def test_a_line_is_quoted_printable_and_at_most_120_characters(line, quoted):
    """Kills wire.py mutants 335, 288, 289, 337, 336 and 231: ``shown``, which quotes a consumer's line in
    every refusal (a line of invalid UTF-8 was a ``LookupError`` under 335)."""
    assert wire.shown(line) == repr(quoted)


def test_a_driver_method_of_the_wrong_kind_is_told_why():
    """Kills driver.py mutants 460 and 461 (a key of ``_MUST`` swapped): a driver without simulated time whose
    method is a generator function, and one with it whose untimed request's method is one, are each refused
    with their own reason (the declaration's test matched only "plain function")."""
    with pytest.raises(TypeError, match=r"Plain\.lookup must be a plain function: a driver without"):
        class Plain(Driver):
            def lookup(self, worker, op):
                yield
    with pytest.raises(TypeError, match=r"Timed\.load must be a plain function, run at once: the request "
                                        r"takes no simulated time"):
        class Timed(Driver):
            simulated = True

            def load(self, worker, op):
                yield


SAYS_ITS_WORKER = """
import json
import sys
sys.path.insert(0, {reference!r})
import consumer

hello = sys.stdin.readline()
print("handshake of worker", json.loads(hello)["value"]["worker"], file=sys.stderr, flush=True)
consumer.Procedure(json.loads(hello)["value"]["contract"]).run()
"""


def test_each_worker_of_two_is_named_in_its_handshake(tmp_path, capfd):
    """Kills external.py mutant 617 (``_worker_of`` looks at no frame: every life is worker 1's): with two
    workers, the second one's handshake, and the label of what it writes on stderr, named worker 1."""
    program = tmp_path / "says.py"
    program.write_text(SAYS_ITS_WORKER.format(reference=str(REFERENCE)))
    scenario = simkit.parse({"name": "two", "workers": 2, "generate": {"events": 4, "page_size": 2}})
    simkit.simulate(scenario, f"exec:{sys.executable} {program}")
    err = capfd.readouterr().err
    assert "[worker 1] handshake of worker 1\n" in err and "[worker 2] handshake of worker 2\n" in err


def test_a_silence_limit_past_a_million_seconds_is_refused(monkeypatch):
    """Kills external.py mutant 845 (the bound of ``SIMKIT_EXEC_TIMEOUT`` doubled): docs and message say at
    most 10^6 seconds."""
    monkeypatch.setenv(LIMIT_ENV, "1500000")
    with pytest.raises(StrategyError, match=r"SIMKIT_EXEC_TIMEOUT='1500000': must be a number of seconds "
                                            r"above 0 and at most 10\^6"):
        exec_consumer("true")


FORGED_CALL = """
import sys
sys.path.insert(0, {reference!r})
import consumer


class Forged(consumer.Procedure):
    def settle_effect(self, event):
        self.ask("call", event=event, reservation={{"operation_id": event["id"], "fingerprint": "0" * 64,
                                                    "binding": "nobody", "generation": 7}})
        return "pending"


consumer.main(Forged)
"""


def test_a_live_call_with_a_reservation_no_reserve_gave_is_the_consumers_line(tmp_path):
    """Kills driver.py mutant 411 (``Driver.call``'s ``record_of`` dropped): only the live worker runs the
    base ``call``, and a reservation no ``reserve`` gave went to its service, where ``run`` refuses it."""
    program = tmp_path / "forged.py"
    program.write_text(FORGED_CALL.format(reference=str(REFERENCE)))
    scenario = simkit.parse({"name": "forged", "sink": "idempotent",
                             "generate": {"events": 2, "page_size": 2}})
    with pytest.raises(SimkitError, match="which no Reserve gave"):
        live(scenario, f"exec:{sys.executable} {program}", kills=0, seed=1, timeout=30)
