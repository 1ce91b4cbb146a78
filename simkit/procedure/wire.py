"""The requests of :mod:`simkit.ops` and their results as JSON lines: protocol 1 of docs/protocol.md.

Rule 1: every JSON form of the protocol is derived here, from the one declaration of the vocabulary (the
requests of :mod:`simkit.requests` and their records in :mod:`simkit.ops`, the records of :mod:`simkit.model`
they carry and return, and :class:`Contract`), by their fields. Nothing else spells a key. A request is
``{"op": NAME, FIELD: VALUE, ...}`` with every field of the record, ``NAME`` its declared name (its class name
in lower case); what simkit writes is ``{"type": KIND, "value": VALUE}``, a record's ``KIND`` its class name
in lower case and its value an object of every field. :func:`decode_request` is strict: a
missing or unknown key, or a value its field's annotation does not admit, is refused with a :class:`WireError`
that says which.
"""
from __future__ import annotations

import dataclasses
import json
import types
import typing
from typing import Any

from simkit.errors import a_or_an, listed
from simkit.model import Checkpoint, Page, Reply
from simkit.ops import BLOCKED, DECLARED, LOST

from .consumer import Contract

__all__ = ["PROTOCOL", "REQUEST_TYPES", "RESULT_TYPES", "DuplicateKey", "Receipts", "WireError", "hello",
           "encode_request", "unique_keys", "decode_request", "encode_result", "decode_result", "dumps",
           "loads", "shown"]

#: The protocol's version: the handshake's ``protocol``. A change of any form below is a new version.
PROTOCOL = 1
#: request name (``op``, its row's in :mod:`simkit.requests`) -> its record
REQUEST_TYPES: dict[str, type] = {r.name: cls for cls, r in DECLARED.items()}


@dataclasses.dataclass(frozen=True, slots=True)
class Receipts:
    """The result of ``Lookup`` on the wire: receipts' outcomes by event id, and the id holding a terminal
    receipt at each position (``(outcomes, ids_at)``, the pair the driver returns; positions are object keys,
    so strings of digits)."""

    outcomes: dict[str, str]
    ids_at: dict[int, str]


#: result kind (``type``) -> the Python type of its value; ``None``, ``LOST`` and ``BLOCKED`` have value
#: ``null``. Seed 001's operation record (``operation``, :class:`simkit.store.settlement.Operation`) is
#: encoded by its fields like these; it lives in a layer beside this one, so a decoder of results is given it
#: (:func:`decode_result`).
RESULT_TYPES: dict[str, Any] = {
    "checkpoint": Checkpoint, "page": Page, "receipts": Receipts, "reply": Reply,
    "bool": bool, "str": str, "none": None, "lost": LOST, "blocked": BLOCKED,
}
_SENTINELS = {id(None): "none", id(LOST): "lost", id(BLOCKED): "blocked"}


class WireError(ValueError):
    """A line that is not a valid message; ``args[0]`` says what is wrong, as one line."""


# -- encoding: any record by its fields ----------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """``value`` as JSON data: a record as an object of its
    fields, a tuple as an array, a dict as an object."""
    if type(value) in _SCALARS:
        return value
    names = _NAMES.get(type(value))
    if names is not None:
        return {n: _plain(getattr(value, n)) for n in names}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))
        return _plain(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


#: a record's field names by its class, as :func:`_plain` meets it (``dataclasses.fields`` on every value was
#: a fifth of a request's cost to simkit under ``exec:``)
_NAMES: dict[type, tuple[str, ...]] = {}
_SCALARS = frozenset((str, int, bool, float, type(None)))


def dumps(message: dict) -> bytes:
    """One line of the protocol: compact JSON, UTF-8, a newline."""
    return _ENCODER.encode(message).encode() + b"\n"


def shown(line: bytes) -> str:
    """A line as a message quotes it: printable (escapes for the rest), at most 120 characters."""
    text = line.decode("utf-8", "replace").rstrip("\n")
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return repr(text if len(text) <= 120 else text[:119] + "…")


def loads(line: bytes | str) -> dict:
    """A line as a JSON object. Raises :class:`WireError`."""
    try:        # json.loads, without making a decoder per line, and UTF-8 only (RFC 8259, 8.1): json.loads
        # also read UTF-16, UTF-32 and a byte order mark, which the same line as text was refused for
        if isinstance(line, (bytes, bytearray)):
            line = line.decode("utf-8", "surrogatepass")
        if line.startswith("\ufeff"):     # json.loads' words, less their advice for Python ("decode using
            raise json.JSONDecodeError(     # utf-8-sig"): a consumer is a program in any language
                "Unexpected UTF-8 BOM: a line is JSON in UTF-8 with no byte order mark", line, 0)
        message = _DECODER.decode(line)
    except UnicodeDecodeError as exc:
        raise WireError(f"not UTF-8 ({exc.reason} at byte {exc.start}): a line is JSON in UTF-8") from None
    except ValueError as exc:
        # Python's limit on int(), in the line's own terms: not advice to call sys.set_int_max_str_digits()
        why = "an integer of more than 4300 digits" if "integer string conversion" in str(exc) else exc
        raise WireError(f"not JSON ({why})") from None
    except RecursionError:                  # arrays in arrays past the stack: still the line's fault
        raise WireError("not JSON (nested too deep to read)") from None
    if not isinstance(message, dict):
        raise WireError(f"a JSON {_kind(message)}, not an object")
    return message


class DuplicateKey(ValueError):
    """A JSON object naming one key twice (``args[0]``): the last would win, so one line or body could say two
    things at once."""

    def __str__(self) -> str:
        return f"key {self.args[0]!r} twice in one object"


def unique_keys(pairs: list) -> dict:
    """``json.loads``' ``object_pairs_hook`` for the protocol's lines and the service's bodies (seed 004:
    malformed requests are 400): an object as a dict, :class:`DuplicateKey` when it names a key twice."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


#: one of each, made once: ``json.dumps`` and ``json.loads`` with arguments make a new one per call
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_DECODER = json.JSONDecoder(object_pairs_hook=unique_keys)


def hello(worker: int, contract: Contract) -> dict:
    """The handshake, the first line a consumer reads: the protocol, its worker and its contract."""
    return {"type": "hello", "value": {"protocol": PROTOCOL, "worker": worker, "contract": _plain(contract)}}


def encode_request(op: Any) -> dict:
    """A request of :mod:`simkit.ops` as its one JSON form."""
    return {"op": DECLARED[type(op)].name, **_plain(op)}


def encode_result(value: Any) -> dict:
    """A driver's result as its one JSON form: ``{"type": KIND, "value": VALUE}``."""
    if id(value) in _SENTINELS:
        return {"type": _SENTINELS[id(value)], "value": None}
    if type(value) is bool or type(value) is str:
        return {"type": type(value).__name__, "value": value}
    if type(value) is tuple:                # Lookup's (outcomes by id, ids by position)
        value = Receipts(*value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__.lower(), "value": _plain(value)}
    raise WireError(f"no JSON form for a result of type {type(value).__name__}")


# -- decoding: by the annotations of the fields --------------------------------------------------------------
_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _kind(v: Any) -> str:
    return "null" if v is None else {bool: "boolean", int: "integer", float: "number", str: "string",
                                     list: "array", dict: "object"}.get(type(v), type(v).__name__)


def _value(hint: Any, v: Any, where: str) -> Any:
    """``v`` (JSON data) as a value of type ``hint``. Raises :class:`WireError` naming ``where``."""
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        for member in typing.get_args(hint):
            try:
                return _value(member, v, where)
            except WireError:
                pass
        names = " or ".join(_name(m) for m in typing.get_args(hint))
        raise WireError(f"{where} is {_kind(v)} {_short(v)}, not {names}")
    if origin is tuple:
        if type(v) is not list:
            raise WireError(f"{where} is {_kind(v)} {_short(v)}, not an array")
        item = typing.get_args(hint)[0]
        return tuple(_value(item, x, f"{where}[{i}]") for i, x in enumerate(v))
    if origin is dict:
        key, item = typing.get_args(hint)
        if type(v) is not dict:
            raise WireError(f"{where} is {_kind(v)} {_short(v)}, not an object")
        return {_key(key, k, where): _value(item, x, f"{where}[{k!r}]") for k, x in v.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _record(hint, v, where)
    if hint is type(None):
        if v is not None:
            raise WireError(f"{where} is {_kind(v)} {_short(v)}, not null")
        return None
    if type(v) is not hint:                 # exact: true is no integer, 2.0 no integer, 2 no boolean
        raise WireError(f"{where} is {_kind(v)} {_short(v)}, not {_name(hint)}")
    return v


def _key(hint: Any, k: str, where: str) -> Any:
    if hint is int:
        # one sign at most, and within int()'s 4300 digits: "--5" and 5,000 nines were its ValueError
        digits = k[1:] if k.startswith("-") else k
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 4300) or str(int(k)) != k:
            raise WireError(f"{where} has key {k!r}, not a position (an integer in a string)")
        return int(k)
    return k


def _record(cls: type, v: Any, where: str) -> Any:
    """An object with exactly the fields of record ``cls``, as that record."""
    if type(v) is not dict:
        raise WireError(f"{where} is {_kind(v)} {_short(v)}, not an object ({cls.__name__})")
    names = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in names if n not in v]
    unknown = [k for k in v if k not in names]
    if missing or unknown:
        parts = ([f"missing {', '.join(map(repr, missing))}"] if missing else []) + \
                ([f"unknown {', '.join(map(repr, unknown))}"] if unknown else [])
        raise WireError(f"{where}: {'; '.join(parts)} ({a_or_an(cls.__name__)} has {listed(names)})")
    hints = _hints(cls)
    return cls(**{n: _value(hints[n], v[n], f"{where}.{n}") for n in names})


def _name(hint: Any) -> str:
    if hint is type(None):
        return "null"
    return {bool: "boolean", int: "integer", str: "string"}.get(hint, getattr(hint, "__name__", str(hint)))


def _short(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def decode_request(message: dict) -> Any:
    """A request object as the record of :mod:`simkit.ops` it names. Raises :class:`WireError`."""
    name = message.get("op")
    cls = REQUEST_TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise WireError(f"'op' is {_short(name) if 'op' in message else 'missing'}, not one of "
                        f"{', '.join(REQUEST_TYPES)}")
    try:
        return _FAST[cls](message)
    except _Slow:                           # not well formed: the reading above says exactly why
        return _record(cls, {k: v for k, v in message.items() if k != "op"}, cls.__name__)


# -- decoding, the quick way: well-formed lines only ---------------------------------------------------------
class _Slow(Exception):
    """Not a well-formed value: :func:`_value` reads it again, and words what is wrong."""


def _fast(hint: Any, extra: int = 0):
    """A reader of JSON data as a value of type ``hint`` that admits exactly what :func:`_value` admits and
    returns the same, and raises :class:`_Slow` at anything else; compiled once per type. ``extra``: keys an
    object has besides its fields (a request's ``op``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        members = [_fast(m) for m in args]

        def either(v):
            for member in members:
                try:
                    return member(v)
                except _Slow:
                    pass
            raise _Slow
        return either
    if origin is tuple:
        item = _fast(args[0])
        return lambda v: tuple(item(x) for x in v) if type(v) is list else _raise()
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _fast_record(hint, extra)
    if origin is not None or not isinstance(hint, type):  # no request holds one: the strict reading reads it
        return lambda v: _raise()
    return lambda v: v if type(v) is hint else _raise()


def _fast_record(cls: type, extra: int):
    hints = _hints(cls)
    fields = [(f.name, _fast(hints[f.name])) for f in dataclasses.fields(cls)]
    size = len(fields) + extra

    def record(v):
        if type(v) is not dict or len(v) != size:
            raise _Slow
        try:
            return cls(**{name: read(v[name]) for name, read in fields})
        except KeyError:
            raise _Slow from None
    return record


def _raise() -> typing.NoReturn:
    raise _Slow


#: request record -> its quick reader, of the whole request object (``op`` beside the fields)
_FAST = {cls: _fast(cls, extra=1) for cls in REQUEST_TYPES.values()}


def decode_result(message: dict, kinds: dict[str, Any] | None = None) -> Any:
    """A result object as the value the driver returned (``receipts`` as Lookup's pair). ``kinds``: the result
    kinds known (default :data:`RESULT_TYPES`; add ``operation`` to decode seed 001's records). Raises
    :class:`WireError`."""
    kinds = RESULT_TYPES if kinds is None else kinds
    kind, value = message.get("type"), message.get("value")
    if not isinstance(kind, str) or kind not in kinds or set(message) != {"type", "value"}:
        raise WireError(f"not a result: {_short(message)}")
    hint = kinds[kind]
    if hint is None or hint is LOST or hint is BLOCKED:
        if value is not None:
            raise WireError(f"{kind} has value {_short(value)}, not null")
        return hint
    decoded = _value(hint, value, kind)
    return (decoded.outcomes, decoded.ids_at) if isinstance(decoded, Receipts) else decoded
