"""The wire contract of seed 004 ("Durable consumer
checkpoints"): limits, request validation, digests, errors.

Everything here is pure: no clock, no I/O. A request body is validated into plain tuples and dicts before any
state is touched, so a malformed request (400) can never change state. The checks follow the seed's
"Recovery and limits" table:

- malformed identities or contracts → 400;
- invalid or revoked credentials → 401;
- missing capability or grant → 403;
- absent progress → 404;
- stale compare-and-set revisions, nonmonotonic, foreign or ahead cursors, idempotency conflicts → 409;
- a request above the standard 64 KiB limit → 413;
- detected integrity failures → 500.

Error messages that echo a caller's value show it shortened (:func:`show`), so a 64 KiB field name or a deeply
nested value gives a one-line message, never a huge one or a ``RecursionError``.
"""
from __future__ import annotations

import json
import re
import unicodedata

from simkit.procedure.wire import DuplicateKey, unique_keys

from .canonical import canonical, digest, show

__all__ = [
    "CAPABILITIES", "CONTRACT_VERSIONS", "DEFAULT_LIMIT", "DEFAULT_SCAN_LIMIT", "FAULT_KINDS", "FAULT_OPS",
    "INJECT_FAULTS", "KINDS", "LOST_REPLY_FAULTS", "MAX_IDENTITY_BYTES", "MAX_JSON_DEPTH", "MAX_LIMIT",
    "MAX_REQUEST_BYTES", "MAX_SCAN_LIMIT", "MAX_SEQUENCE", "MEMORY_CHECKPOINT", "MEMORY_READ", "MEMORY_WRITE",
    "MIN_LIMIT", "MIN_SCAN_LIMIT", "NO_STORE", "OPERATOR", "ROLES", "SCOPE_KEYS", "TENANT_ADMIN",
    "VISIBILITIES", "ServiceError", "append_request", "backup_request", "bad", "canonical",
    "changes_request", "conflict", "consumer_id", "contract_version", "cursor", "digest", "identity",
    "json_media_type", "not_json", "parse_body", "query_request", "read_request", "restore_request", "scope",
    "scope_dict", "show", "too_large", "write_request",
]

#: The version 1 contract (seed 004) and the verified version 2 ("Verified progress in version 2").
CONTRACT_VERSIONS = (1, 2)
#: "Standard 64 KiB request limits" (seed 004, "Recovery and limits").
MAX_REQUEST_BYTES = 64 * 1024
#: Feed page size bounds ("limit 1–256", docs/service.md "The change feed"); the memory query's
#: ``filter.limit`` has the same bounds.
MIN_LIMIT, MAX_LIMIT, DEFAULT_LIMIT = 1, 256, 100
#: The memory query's ``filter.scan_limit``: candidates a page may examine, available or not (simkit's bounds;
#: seed 004 asks only that it be set independently of ``filter.limit``).
MIN_SCAN_LIMIT, MAX_SCAN_LIMIT, DEFAULT_SCAN_LIMIT = 1, 4096, 1024
#: "an unsigned 64-bit sequence" (docs/service.md, "The change feed").
MAX_SEQUENCE = 2**64 - 1
#: Identity rule of seed 004: "1–128 UTF-8 bytes with no control characters or blank value".
MAX_IDENTITY_BYTES = 128
#: Capabilities a grant can carry. Both checkpoint routes need READ and CHECKPOINT for the exact scope.
MEMORY_READ, MEMORY_CHECKPOINT = "memory_read", "memory_checkpoint"
MEMORY_WRITE, TENANT_ADMIN = "memory_write", "tenant_admin"
CAPABILITIES = (MEMORY_READ, MEMORY_CHECKPOINT, MEMORY_WRITE, TENANT_ADMIN)
#: Scope visibilities simkit accepts (seed 004 only shows "shared"; "private" is simkit's assumption).
VISIBILITIES = ("private", "shared")
#: Entry kinds (docs/service.md, "The change feed").
KINDS = ("created", "derived", "updated", "deleted", "embedding_attached", "reviewed")
SCOPE_KEYS = ("project_id", "mission_id", "agent_id", "visibility")
NO_STORE = {"Cache-Control": "no-store"}
#: Arrays and objects nested deeper than this are a 400 (seed 004's bodies nest four levels at most).
MAX_JSON_DEPTH = 32
#: Faults ``simkit serve`` can inject (``X-Simkit-Fault`` or ``--fault``). ``crash-mid-write`` (checkpoint
#: writes only): the server dies between its checkpoint write and its receipt write, which only a store that
#: splits them has (:data:`simkit.service.checkpoints.STORES`); the reply is lost either way.
FAULT_KINDS = ("lose-reply", "corrupt-checkpoint", "corrupt-journal", "crash-mid-write")
#: The operations (of :data:`simkit.service.checkpoints.ROUTES`) that can honour each fault; asked of any
#: other, it is a 400 ``bad_fault`` (a start-up fault naming one is refused, one naming none strikes only
#: these): ``corrupt-checkpoint`` alters the caller's stored checkpoint, which only the checkpoint routes
#: read; ``corrupt-journal`` a journal entry, which only a feed page reads; ``crash-mid-write`` kills a
#: checkpoint write.
FAULT_OPS = {"lose-reply": ("changes", "query", "read", "write"), "corrupt-checkpoint": ("read", "write"),
             "corrupt-journal": ("changes",), "crash-mid-write": ("write",)}
#: The faults whose call the caller never hears back from.
LOST_REPLY_FAULTS = ("lose-reply", "crash-mid-write")
#: Service-wide roles of a subject (not scoped, unlike grants): ``operator`` may call the ``/_simkit/*``
#: operator routes; ``inject_faults`` may send ``X-Simkit-Fault``. Neither grants any memory capability.
OPERATOR, INJECT_FAULTS = "operator", "inject_faults"
ROLES = (OPERATOR, INJECT_FAULTS)


class ServiceError(Exception):
    """A rejected request: an HTTP status, a stable machine-readable ``code`` and a one-line message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def body(self) -> dict:
        return {"error": {"status": self.status, "code": self.code, "message": self.message}}


def bad(code: str, message: str) -> ServiceError:
    return ServiceError(400, code, message)


def conflict(code: str, message: str) -> ServiceError:
    return ServiceError(409, code, message)


# -- validation ----------------------------------------------------------------------------------------------
def json_media_type(content_type: str | None, raw: bytes, content_encoding: str | None = None) -> None:
    """400 ``malformed_content_type`` unless a body with content says it is JSON (``application/json`` or
    ``application/*+json``, any parameters); an empty body, or ``content_type`` None (no HTTP: the model
    called directly), passes. A ``text/plain`` body is not read as JSON just because it happens to parse.
    400 ``malformed_content_encoding`` for a ``Content-Encoding`` but ``identity``: the service decodes none
    (a gzip body was "not JSON: 'utf-8' codec can't decode byte 0x8b", naming neither header nor fix)."""
    if content_type is None or not raw.strip():
        return
    codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
    if any(c not in ("", "identity") for c in codings):
        raise bad("malformed_content_encoding", f"Content-Encoding is {show((content_encoding or '')[:80])}; "
                                                f"send the body unencoded (identity), as plain JSON")
    media = content_type.split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        shown = show(content_type[:80]) if content_type else "missing"
        raise bad("malformed_content_type", f"Content-Type is {shown}; send the body as application/json")


def parse_body(raw: bytes) -> dict:
    """The JSON object in ``raw``, or 413 (over 64 KiB) / 400 (not a JSON object).

    The 413 names the limit, not the size: the server stops reading a body soon after the limit
    (:func:`simkit.service.web.read_body`), so ``raw`` may be only the start of it. A leading byte order mark
    is ignored, as RFC 8259 (8.1) allows: it was refused, telling the caller to "decode using utf-8-sig"."""
    if len(raw) > MAX_REQUEST_BYTES:
        raise too_large()
    if not raw.strip():             # ``curl -X POST`` without ``-d``, or HTTP/1.0 without a Content-Length
        raise bad("malformed_json", "request body is empty; send a JSON object")
    deep = False
    try:
        body = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=unique_keys, parse_constant=not_json)
    except DuplicateKey as exc:
        raise bad("malformed_json", f"request body names {show(exc.args[0])} twice in one object") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad("malformed_json", f"request body is not JSON: {_why(exc)}") from None
    except RecursionError:
        deep = True                          # nested beyond the parser's stack: the depth check's 400 below
    if deep or not _shallow(body, MAX_JSON_DEPTH):
        raise bad("malformed_json", f"request body nests arrays or objects more than {MAX_JSON_DEPTH} levels "
                                    f"deep")
    if not isinstance(body, dict):
        raise bad("malformed_json", "request body must be a JSON object")
    return body


def too_large() -> ServiceError:
    """The 413 of a body over 64 KiB, whether its ``Content-Length`` says so or its bytes do."""
    return ServiceError(413, "request_too_large",
                        f"request body exceeds the limit of {MAX_REQUEST_BYTES} bytes (64 KiB)")


def not_json(name: str):
    """``NaN``, ``Infinity`` and ``-Infinity``: Python's json reads them, RFC 8259 has no such number."""
    raise ValueError(f"{name} is not a JSON number")


def _why(exc: ValueError) -> str:
    """Why the body is not JSON, in its own terms: an integer past Python's
    4,300 digits is no invitation to call ``sys.set_int_max_str_digits()``."""
    text = str(exc)
    if "integer string conversion" in text:
        return "an integer of more than 4300 digits"
    return text


def _shallow(value, limit: int) -> bool:
    """No array or object in ``value`` is more than ``limit`` levels deep (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limit:
                return False
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return True


def _fields(obj, where: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    if not isinstance(obj, dict):
        raise bad("malformed_request", f"{where} must be a JSON object")
    unknown = sorted(set(obj) - set(required) - set(optional))
    if unknown:
        # "The request cannot select another subject or tenant": unknown fields are refused, never ignored.
        raise bad("unknown_field", f"{where}: unknown field {show(unknown[0])}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise bad("missing_field", f"{where}: missing field {missing[0]!r}")
    return obj


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: Characters an identity may not hold (issue 32): control characters (Cc), and the format characters and
#: separators that act as controls or hide themselves: zero-width spaces and joiners, right-to-left overrides,
#: a byte order mark (Cf), line and paragraph separators (Zl, Zp). Two ids that print alike were two
#: consumers.
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def identity(value, where: str) -> str:
    """Seed 004's identity rule: 1–128 UTF-8 bytes, no control characters, not blank; else 400."""
    if not isinstance(value, str):
        raise bad("malformed_identity", f"{where} must be a string")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise bad("malformed_identity", f"{where} is not valid UTF-8") from None
    if not 1 <= size <= MAX_IDENTITY_BYTES:
        raise bad("malformed_identity", f"{where} must be 1-{MAX_IDENTITY_BYTES} UTF-8 bytes, got {size}")
    if any(unicodedata.category(ch) in _INVISIBLE for ch in value):
        raise bad("malformed_identity", f"{where} contains a control character")
    if not value.strip():
        raise bad("malformed_identity", f"{where} is blank")
    return value


def consumer_id(value, where: str) -> str:
    """An id that names a checkpoint (a consumer id, a scope's project, mission and agent ids): an identity
    (:func:`identity`) in Unicode normalization form C (NFC), else 400 ``malformed_identity``.
    ``"caf\\u00e9"`` and ``"cafe\\u0301"`` print alike and were two consumers with two checkpoints (simkit's
    decision, docs/service.md "Where seed 004 is silent": refused, not normalized, so that no two ids name one
    checkpoint and the id a caller sent is the id it reads back)."""
    identity(value, where)
    if not value.isascii() and not unicodedata.is_normalized("NFC", value):
        nfc = unicodedata.normalize("NFC", value)
        raise bad("malformed_identity", f"{where} is not in Unicode normalization form NFC: "
                                        f"{_code_points(value)} is {_code_points(nfc)} in NFC")
    return value


def _code_points(text: str) -> str:
    """``text`` with every character past ASCII as its escape (``'cafe\\u0301'``), cut short: two forms that
    print alike differ here."""
    shown = ascii(text)
    return shown if len(shown) <= 80 else shown[:79] + "…"


def contract_version(value, where: str, allowed=CONTRACT_VERSIONS) -> int:
    if not _is_int(value) or value not in allowed:
        raise bad("unsupported_contract", f"{where} must be one of {list(allowed)}, got {show(value)}")
    return value


def scope(value) -> tuple:
    """A scope as a hashable tuple in ``SCOPE_KEYS`` order."""
    s = _fields(value, "scope", SCOPE_KEYS)
    out: list[str | None] = [consumer_id(s["project_id"], "scope.project_id")]
    for key in ("mission_id", "agent_id"):
        out.append(None if s[key] is None else consumer_id(s[key], f"scope.{key}"))
    if s["visibility"] not in VISIBILITIES:
        raise bad("malformed_scope", f"scope.visibility must be one of {list(VISIBILITIES)}")
    out.append(s["visibility"])
    return tuple(out)


def scope_dict(scope_tuple: tuple) -> dict:
    return dict(zip(SCOPE_KEYS, scope_tuple))


#: A digest as :func:`~simkit.service.canonical.digest` writes it, and as the OpenAPI document's pattern says.
_DIGEST, _DIGEST_FORM = re.compile("sha256:[0-9a-f]{64}"), "'sha256:' and 64 lower-case hex digits"


def _is_digest(value) -> bool:
    """A digest, not just its prefix and length: 64 of any character (upper-case hex, ``é``) met a 409
    ``divergent_history`` or ``digest_conflict``, a malformed value told as diverged history."""
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def cursor(value, where: str, version: int) -> dict:
    """A cursor ``{journal_id, sequence}``; version 2 adds the exact-history ``history_digest``."""
    keys = ("journal_id", "sequence", "history_digest") if version == 2 else ("journal_id", "sequence")
    c = _fields(value, where, keys)
    identity(c["journal_id"], f"{where}.journal_id")
    if not _is_int(c["sequence"]) or not 0 <= c["sequence"] <= MAX_SEQUENCE:
        raise bad("malformed_cursor", f"{where}.sequence must be an unsigned 64-bit integer")
    if version == 2 and not _is_digest(c["history_digest"]):
        raise bad("malformed_cursor", f"{where}.history_digest must be a digest: {_DIGEST_FORM}")
    return {k: c[k] for k in keys}


def changes_request(body: dict) -> tuple[int, tuple, dict | None, dict | None, int]:
    """``POST /api/v1/memory/changes``: (version, scope, after, through, limit)."""
    _fields(body, "request", ("contract_version", "scope"), ("query",))
    version = contract_version(body["contract_version"], "contract_version")
    sc = scope(body["scope"])
    q = _fields({} if body.get("query") is None else body["query"], "query", (),
                ("after", "through", "limit"))
    after = None if q.get("after") is None else cursor(q["after"], "query.after", version)
    through = None if q.get("through") is None else cursor(q["through"], "query.through", version)
    limit = q.get("limit", DEFAULT_LIMIT)
    if not _is_int(limit) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise bad("malformed_bounds", f"query.limit must be an integer {MIN_LIMIT}-{MAX_LIMIT}")
    if (
        after
        and through
        and after["journal_id"] == through["journal_id"]
        and after["sequence"] > through["sequence"]
    ):
        raise bad("malformed_bounds", "query.after is beyond query.through")
    return version, sc, after, through, limit


def query_request(body: dict) -> tuple[int, tuple, int, int, str | None]:
    """``POST /api/v1/memory/query``: (version, scope, limit, scan_limit, next_after).

    ``filter`` is optional, and each of its fields: ``limit`` 1-256 (default 100), ``scan_limit`` 1-4096
    (default 1024), ``next_after`` a record id (the identity rule) or null (from the first candidate).
    """
    _fields(body, "request", ("contract_version", "scope"), ("filter",))
    version = contract_version(body["contract_version"], "contract_version")
    sc = scope(body["scope"])
    f = _fields({} if body.get("filter") is None else body["filter"], "filter", (),
                ("limit", "scan_limit", "next_after"))
    limit = f.get("limit", DEFAULT_LIMIT)
    if not _is_int(limit) or not MIN_LIMIT <= limit <= MAX_LIMIT:
        raise bad("malformed_bounds", f"filter.limit must be an integer {MIN_LIMIT}-{MAX_LIMIT}")
    scan_limit = f.get("scan_limit", DEFAULT_SCAN_LIMIT)
    if not _is_int(scan_limit) or not MIN_SCAN_LIMIT <= scan_limit <= MAX_SCAN_LIMIT:
        raise bad("malformed_bounds", f"filter.scan_limit must be an integer "
                                      f"{MIN_SCAN_LIMIT}-{MAX_SCAN_LIMIT}")
    after = f.get("next_after")
    return version, sc, limit, scan_limit, None if after is None else identity(after, "filter.next_after")


def read_request(body: dict) -> tuple[int, tuple, str]:
    """``POST /api/v1/memory/checkpoints/read``: (version, scope, consumer_id)."""
    _fields(body, "request", ("contract_version", "scope", "consumer_id"))
    return (contract_version(body["contract_version"], "contract_version"), scope(body["scope"]),
            consumer_id(body["consumer_id"], "consumer_id"))


def write_request(body: dict) -> tuple[tuple, dict]:
    """``POST /api/v1/memory/checkpoints``: (scope, command); version 2 commands carry ``expected_digest``."""
    _fields(body, "request", ("scope", "command"))
    sc = scope(body["scope"])
    common = ("contract_version", "idempotency_key", "consumer_id", "expected_revision", "cursor")
    raw = _fields(body["command"], "command", common[:1], common[1:] + ("expected_digest",))
    version = contract_version(raw["contract_version"], "command.contract_version")
    cmd = _fields(raw, "command", common + (("expected_digest",) if version == 2 else ()))
    identity(cmd["idempotency_key"], "command.idempotency_key")
    consumer_id(cmd["consumer_id"], "command.consumer_id")
    rev = cmd["expected_revision"]
    if not _is_int(rev) or not 0 <= rev <= MAX_SEQUENCE:
        # the bound too: 2**64 "must be a non-negative integer" was told to be what it is
        raise bad("malformed_revision", f"command.expected_revision must be an integer 0-{MAX_SEQUENCE} "
                                        f"(unsigned 64-bit)")
    out = {k: cmd[k] for k in common}
    out["cursor"] = cursor(cmd["cursor"], "command.cursor", version)
    if version == 2:
        d = cmd["expected_digest"]
        if rev == 0 and d is not None:
            raise bad("malformed_revision",
                      "command.expected_digest must be null when expected_revision is 0")
        if rev > 0 and not _is_digest(d):
            raise bad("malformed_revision", f"command.expected_digest must be the current checkpoint_digest: "
                                            f"{_DIGEST_FORM}")
        out["expected_digest"] = d
    return sc, out


# -- the operator routes of ``simkit serve`` (not seed 004) --------------------------------------------------
def append_request(body: dict, default_tenant: str, default_scope: dict) -> dict:
    """``POST /_simkit/append``: a memory mutation, as keyword arguments of
    :meth:`simkit.service.checkpoints.CheckpointService.mutate` (``tenant``, ``scope``, ``kind``,
    ``record_id``, ``idempotency_key``, ``private_to``). Every field optional; ``tenant``, ``record_id``,
    ``idempotency_key`` and ``private_to`` checked like the seed's identities (1–128 UTF-8 bytes, no control
    characters, not blank), ``tenant`` and ``private_to`` (a subject) in NFC as subject ids are."""
    _fields(body, "request", (), ("tenant", "scope", "kind", "record_id", "idempotency_key", "private_to"))
    tenant = consumer_id(body.get("tenant", default_tenant), "tenant")
    sc = scope(body.get("scope", default_scope))
    kind = body.get("kind", "created")
    if kind not in KINDS:
        raise bad("malformed_kind", f"kind must be one of {', '.join(KINDS)}, got {show(kind)}")
    key, private = body.get("idempotency_key"), body.get("private_to")
    return {"tenant": tenant, "scope": scope_dict(sc), "kind": kind,
            "record_id": identity(body.get("record_id", "note"), "record_id"),
            "idempotency_key": None if key is None else identity(key, "idempotency_key"),
            "private_to": None if private is None else consumer_id(private, "private_to")}


def backup_request(body: dict) -> None:
    """``POST /_simkit/backup``: an empty body or ``{}``."""
    _fields(body, "request", ())


def restore_request(body: dict, taken: int) -> int:
    """``POST /_simkit/restore``: ``{"backup": N}``, N one of the ``taken`` backups (1-based)."""
    _fields(body, "request", ("backup",))
    n = body["backup"]
    if not _is_int(n) or not 1 <= n <= taken:
        raise bad("bad_backup", f"backup must be the number of a backup taken (1-{taken})" if taken
                  else "no backup has been taken; POST /_simkit/backup first")
    return n
