"""Protocol 1 (docs/protocol.md, simkit.procedure.wire): every request and every result of simkit.ops has one
JSON form, derived from its record's fields, and a line goes back to exactly the value it came from."""
import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simkit.model import TIMEOUT, Checkpoint, Event, Page, Reply, Reservation
from simkit.ops import (
    BLOCKED,
    LOST,
    Barrier,
    Call,
    Commit,
    Effect,
    Fetch,
    Halt,
    Handle,
    Load,
    Lookup,
    Overwrite,
    Reserve,
    Settle,
    Skip,
    Wait,
)
from simkit.procedure import wire
from simkit.procedure.consumer import Contract
from simkit.procedure.driver import REQUESTS
from simkit.store.settlement import Operation

E = Event("e106", 106)
R = Reservation("e106", "9f" * 32, "principal-1", 3)
#: one request of each kind (Settle twice: a reply observed, and a timeout)
REQUESTS_SEEN = [Load(), Fetch("C7"), Lookup((Event("e104", 104), E, Event("x", 107, "poison"))), Skip(E),
                 Handle(E),
                 Effect(E), Reserve(E), Call(E, R), Settle(E, R, Reply(R, 4)), Settle(E, R, TIMEOUT),
                 Commit(E, "applied", 106, True), Commit(E, "quarantined", 106),
                 Barrier("C7", 1, "C8", 2, 107),
                 Overwrite("C8", 2, 107), Wait("caught_up"), Halt("source-order regression")]
#: one result of each kind a driver returns
RESULTS_SEEN = [Checkpoint("C7", 105, 1), Page("C7", (Event("e104", 104), E), "C8"), Page("C8", (), "C8"),
                None,
                LOST, BLOCKED, True, False, "apply", "committed", TIMEOUT,
                ({"e104": "applied"}, {104: "e104"}),
                ({}, {}), Operation(R), Operation(R, "committed", Reply(R, 4)), Reply(R, 4)]
KINDS = {**wire.RESULT_TYPES, "operation": Operation}


def line_of(message: dict) -> bytes:
    return wire.dumps(message)


def test_every_request_of_the_vocabulary_is_covered_here():
    assert {type(op) for op in REQUESTS_SEEN} == set(REQUESTS)
    assert set(wire.REQUEST_TYPES.values()) == set(REQUESTS)


@pytest.mark.parametrize("op", REQUESTS_SEEN, ids=lambda op: type(op).__name__)
def test_a_request_goes_there_and_back(op):
    line = line_of(wire.encode_request(op))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = wire.decode_request(wire.loads(line))
    assert back == op and type(back) is type(op)


@pytest.mark.parametrize("value", RESULTS_SEEN, ids=repr)
def test_a_result_goes_there_and_back(value):
    message = wire.encode_result(value)
    assert set(message) == {"type", "value"}
    back = wire.decode_result(wire.loads(line_of(message)), KINDS)
    assert back == value and type(back) is type(value)
    if value is None or value is LOST or value is BLOCKED:
        assert back is value


def test_the_forms_are_the_records_fields():
    """Nothing is spelled by hand: a request's keys are ``op``
    and its record's fields, a record's value its fields."""
    for op in REQUESTS_SEEN:
        assert list(wire.encode_request(op)) == ["op"] + [f.name for f in dataclasses.fields(op)]
    page = wire.encode_result(RESULTS_SEEN[1])
    assert page["type"] == "page" and list(page["value"]) == [f.name for f in dataclasses.fields(Page)]
    assert list(page["value"]["events"][0]) == [f.name for f in dataclasses.fields(Event)]
    hello = wire.hello(2, Contract(backfills=True, external_sink=True))
    assert hello == {"type": "hello", "value": {"protocol": wire.PROTOCOL, "worker": 2,
                                                "contract": {"backfills": True, "external_sink": True}}}


def test_lookup_positions_are_object_keys():
    message = wire.encode_result(({"e104": "applied"}, {104: "e104"}))
    assert message == {"type": "receipts", "value": {"outcomes": {"e104": "applied"},
                                                     "ids_at": {"104": "e104"}}}


def test_settle_takes_back_what_call_returned():
    """A consumer passes a call's result value on as the settlement's observation, unchanged."""
    reply = wire.encode_result(Reply(R, 4))["value"]
    op = wire.decode_request({"op": "settle", "event": wire.encode_request(Skip(E))["event"],
                              "reservation": wire.encode_result(Operation(R))["value"]["reservation"],
                              "observation": reply})
    assert op == Settle(E, R, Reply(R, 4))


@pytest.mark.parametrize("line, problem", [
    (b"not json", "not JSON"),
    (b"[1, 2]", "a JSON array, not an object"),
    (b'{"cursor": "C7"}', "'op' is missing"),
    (b'{"op": "jump"}', "'op' is \"jump\", not one of load, fetch"),
    (b'{"op": "fetch"}', "Fetch: missing 'cursor'"),
    (b'{"op": "fetch", "cursor": "C7", "page": 2}', "Fetch: unknown 'page'"),
    (b'{"op": "fetch", "cursor": 7}', "Fetch.cursor is integer 7, not string"),
    (b'{"op": "commit", "event": {"id": "e1", "position": 1.5, "behavior": "ok"}, "outcome": "applied", '
     b'"applied_position": 1, "with_effect": false}', "Commit.event.position is number 1.5, not integer"),
    (b'{"op": "barrier", "cursor": "C7", "version": true, "next_cursor": "C8", "next_version": 2, '
     b'"applied_position": 1}', "Barrier.version is boolean true, not integer"),
    (b'{"op": "commit", "event": {"id": "e1", "position": 1}, "outcome": "applied", "applied_position": 1, '
     b'"with_effect": false}', "Commit.event: missing 'behavior'"),
    (b'{"op": "load", "x": 1}', "Load: unknown 'x' (a Load has no field)"),
    (b'{"op": "fetch", "page": 2}', "(a Fetch has the field 'cursor')"),
    (b'{"op": "effect", "event": {"id": "e1", "position": 1, "behavior": "ok", "x": 0}}',
     "Effect.event: unknown 'x' (an Event has the fields 'id', 'position', 'behavior')"),
    # UTF-8 only (RFC 8259, 8.1): json.loads also read these, while the same line as text was refused
    ('{"op": "load"}'.encode("utf-16"), "not UTF-8 (invalid start byte at byte 0)"),
    ('{"op": "load"}'.encode("utf-32"), "not UTF-8 (invalid start byte at byte 0)"),
    (b'\xef\xbb\xbf{"op": "load"}', "not JSON (Unexpected UTF-8 BOM"),
])
def test_a_bad_request_is_refused_with_what_is_wrong(line, problem):
    with pytest.raises(wire.WireError) as caught:
        wire.decode_request(wire.loads(line))
    assert problem in str(caught.value) and "\n" not in str(caught.value)


def test_a_result_line_is_compact_json():
    line = line_of(wire.encode_result(Checkpoint("C7", 105, 1)))
    assert json.loads(line) == {"type": "checkpoint",
                                "value": {"resume_cursor": "C7", "applied_position": 105,
                                          "checkpoint_version": 1}}
    assert b" " not in line


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 200) | st.floats(allow_nan=False)
                     | st.sampled_from(["", "e106", "C7", "106", "-1", "01", "applied", "poison"]),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["id", "position", "behavior", "106", "x"]), inner,
                                       max_size=3),
                     max_leaves=8)
#: values just beside what a field admits (true for an integer, 1.0, "1"), and then any
NEAR = [True, False, None, 0, 1, 1.0, -1, 2 ** 63, "1", "", [], {}, {"id": "e1", "position": 1}]
_NEAR = st.one_of(st.sampled_from(NEAR), _JSON)


def _mutated(data, value):
    """``value`` (JSON data) with one place somewhere in it replaced, removed or given a key more."""
    if isinstance(value, (dict, list)) and value and data.draw(st.booleans()):
        keys = list(value) if isinstance(value, dict) else list(range(len(value)))
        k = data.draw(st.sampled_from(keys))
        value = dict(value) if isinstance(value, dict) else list(value)
        how = data.draw(st.sampled_from(["deeper", "drop", "replace"]))
        if how == "drop" and isinstance(value, dict):
            del value[k]
        else:
            value[k] = _mutated(data, value[k]) if how == "deeper" else data.draw(_NEAR)
        return value
    if isinstance(value, dict) and data.draw(st.booleans()):
        return {**value, data.draw(st.sampled_from(["x", "id", "cursor"])): data.draw(_NEAR)}
    return data.draw(_NEAR)


def _read(read, message):
    try:
        value = read(message)
        return "read", value, type(value)
    except wire.WireError as exc:
        return "refused", str(exc)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_quick_reading_of_a_request_reads_as_the_strict_one(data):
    """decode_request reads a well-formed request by a reader compiled per record, and falls back to the
    strict reading (which words the problem) at anything else: whatever the line, the two agree."""
    op = data.draw(st.sampled_from(REQUESTS_SEEN))
    message = wire.encode_request(op)
    fields = {k: v for k, v in message.items() if k != "op"}
    if fields and data.draw(st.booleans()):
        fields = _mutated(data, fields)
    message = {"op": message["op"], **fields} if isinstance(fields, dict) else message
    assert _read(wire.decode_request, message) == _strictly(message)


def _strictly(message: dict):
    cls = wire.REQUEST_TYPES[message["op"]]
    return _read(lambda m: wire._record(cls, {k: v for k, v in m.items() if k != "op"}, cls.__name__),
                 message)


@pytest.mark.parametrize("op", REQUESTS_SEEN, ids=lambda op: type(op).__name__)
def test_the_quick_reading_agrees_at_every_near_miss_of_every_field(op):
    """Each field of each request, and of the event it carries, given each value of NEAR in turn."""
    message = wire.encode_request(op)
    places = [(message, k) for k in message if k != "op"]
    places += [(message[k], f) for k in message if isinstance(message[k], dict) for f in message[k]]
    for holder, key in places:
        for value in NEAR:
            was, holder[key] = holder[key], value
            assert _read(wire.decode_request, message) == _strictly(message), (key, value)
            holder[key] = was
