"""What ``simkit serve`` starts with before its config file
(:mod:`simkit.service.config`): the dev service, the faults, credentials, grants and
operator given as options, and the one error a start-up option or config raises.

``dev_service`` is subject ``dev`` with its grants, :data:`DEV_RECORDS` and an active journal (the module
docstring of :mod:`simkit.service.config` says what a config file adds). A fault is ``KIND[@ROUTE][#N]``
(:func:`parse_fault`), a credential ``TOKEN=SUBJECT``, a grant ``SUBJECT=CAP[,CAP...][@SCOPE_JSON]``; a
credential belongs to one subject (:func:`issue_token`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from simkit.errors import SimkitError
from simkit.procedure.wire import DuplicateKey, unique_keys

from . import contract as C
from .access import credential_problem
from .checkpoints import CheckpointService, ManualClock

__all__ = [
    "DEV_CHANGES", "DEV_RECORDS", "DEV_SCOPE", "DEV_TENANT", "FAULT_KINDS", "FAULT_ROUTES", "FaultSpec",
    "ServiceConfigError", "add_operator", "check_name", "check_token", "dev_service", "has_operator",
    "issue_token", "parse_credential_flag", "parse_fault", "parse_grant_flag",
]

DEV_SCOPE = {"project_id": "project", "mission_id": None, "agent_id": "agent", "visibility": "shared"}
DEV_TENANT = "tenant"
DEV_CHANGES = (("created", "note-1"), ("created", "note-2"), ("updated", "note-1"), ("derived", "summary-1"),
               ("reviewed", "note-2"))
#: Records from before the dev journal, (record id, state): ``deleted`` a tombstone, ``private`` private to
#: subject ``archivist``, ``visible`` visible to ``dev``. In record id order they come before the journal's
#: records.
DEV_RECORDS = (("archive-1", "deleted"), ("archive-2", "private"), ("archive-3", "visible"))
FAULT_KINDS = C.FAULT_KINDS
FAULT_ROUTES = ("changes", "query", "read", "write")



class ServiceConfigError(SimkitError, ValueError):
    """A start-up option of the service (a parameter of :func:`build_service`) or a config file is malformed.

    ``param``: the parameter the message starts with, if any; the command line names its flag there instead
    (:func:`simkit.service.cli.flagged`)."""

    def __init__(self, message: str, param: str | None = None):
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class FaultSpec:
    """Inject ``kind`` into the ``nth`` request on ``route`` (``None``: any route that can honour ``kind``,
    :data:`simkit.service.contract.FAULT_OPS`; ``nth`` 0: every one)."""

    kind: str
    route: str | None = None
    nth: int = 1


def parse_fault(text: str, where: str = "faults") -> FaultSpec:
    """A fault spec ``KIND[@ROUTE][#N]``; errors start with ``where`` (a parameter, or a config file's key).

    ROUTE must be one that can honour KIND (:data:`simkit.service.contract.FAULT_OPS`), and is that one when
    only one can (``crash-mid-write``: ``write``; ``corrupt-journal``: ``changes``)."""
    spec, hashed, nth = text.strip().partition("#")
    kind, at, route = spec.partition("@")
    shown = f"{where} {C.show(text)}"
    if kind not in FAULT_KINDS:
        raise ServiceConfigError(f"{shown}: unknown fault {C.show(kind)}; one of {', '.join(FAULT_KINDS)}",
                                 param=where)
    if at and not route:        # "lose-reply@$ROUTE", ROUTE unset: it struck every route
        raise ServiceConfigError(f"{shown}: no route after '@'; one of {', '.join(FAULT_ROUTES)}, or no '@'",
                                 param=where)
    if route and route not in FAULT_ROUTES:
        raise ServiceConfigError(f"{shown}: unknown route {C.show(route)}; one of {', '.join(FAULT_ROUTES)}",
                                 param=where)
    if nth == "*":
        n = 0
    else:
        # ASCII digits only, and some after a '#' ("lose-reply#$N", N unset, struck the 1st request): int()
        # also read ' 2', '+2', '1_0' and full-width digits
        n = int(nth) if nth.isascii() and nth.isdigit() else 1 if not hashed else -1
        if n < 1:
            raise ServiceConfigError(f"{shown}: occurrence after '#' must be a positive integer or '*'",
                                     param=where)
    ops = C.FAULT_OPS[kind]
    if route and route not in ops:
        raise ServiceConfigError(f"{shown}: {kind} cannot strike @{route}; it applies to "
                                 f"{' or '.join('@' + op for op in ops)} only", param=where)
    return FaultSpec(kind, route or (ops[0] if len(ops) == 1 else None), n)


def dev_service(clock=None, changes: int = len(DEV_CHANGES), records=DEV_RECORDS,
                store: str = "batched") -> CheckpointService:
    """The service ``simkit serve`` starts with: subject ``dev``, its grants, ``records`` from before the
    journal (:data:`DEV_RECORDS`; ``()`` for none), then an active journal with changes. ``store``: one of
    :data:`simkit.service.checkpoints.STORES`."""
    svc = CheckpointService(clock or ManualClock(), store)
    svc.add_subject("dev", DEV_TENANT, credentials=["dev"], roles=[C.INJECT_FAULTS])
    svc.grant("dev", DEV_SCOPE, [C.MEMORY_READ, C.MEMORY_CHECKPOINT])
    for record_id, state in records:
        svc.import_record(DEV_TENANT, DEV_SCOPE, record_id, private_to="archivist" if state == "private"
                          else None,
                          deleted=state == "deleted")
    svc.activate_journal(DEV_TENANT, DEV_SCOPE)
    for i in range(changes):
        kind, record = DEV_CHANGES[i % len(DEV_CHANGES)]
        svc.append(DEV_TENANT, DEV_SCOPE, kind, record, author="dev-writer")
    return svc


def check_token(token: str, where: str, param: str | None = None) -> None:
    """One :class:`ServiceConfigError` for a credential no
    client could present (:func:`credential_problem`)."""
    problem = credential_problem(token)
    if problem:
        raise ServiceConfigError(f"{where}: {problem}", param=param)


def issue_token(svc: CheckpointService, token: str, subject: str, where: str,
                param: str | None = None) -> None:
    """Give ``token`` to ``subject``; a credential names one subject, so one held by another is an error
    (issuing it again would silently take it from its holder)."""
    holder = svc.credentials.get(token)
    if token in svc.revoked:        # a flag after the file's ``revoked`` put it back in service, silently
        raise ServiceConfigError(f"{where}: credential {C.show(token)} is revoked in the config file "
                                 f"(subject {C.show(holder)}); a credential is issued or revoked, not both",
                                 param=param)
    if holder is not None and holder != subject:
        raise ServiceConfigError(f"{where}: credential {C.show(token)} already belongs to subject "
                                 f"{C.show(holder)}",
                                 param=param)
    svc.add_credential(token, subject)


def parse_credential_flag(text: str) -> tuple[str, str]:
    """``TOKEN=SUBJECT`` (``--credential``; an item of :func:`build_service`'s ``credentials``)."""
    token, sep, subject = text.partition("=")
    if not sep or not token or not subject:
        raise ServiceConfigError(f"credentials {C.show(text)}: expected TOKEN=SUBJECT", param="credentials")
    return token, check_name(subject, f"credentials {C.show(text)}: subject", "credentials")


def check_name(name: str, where: str, param: str | None = None) -> str:
    """A subject id or tenant held to the identity rule (1-128 UTF-8 bytes, no control characters, not blank),
    as a request's ``private_to`` and ``tenant`` are: a subject or tenant with a control character or 200
    bytes was taken, and no operator request could name it. In NFC too, as a consumer id
    (:func:`simkit.service.contract.consumer_id`): both name checkpoints, and ``"cafe\u0301"`` and
    ``"caf\u00e9"`` were two subjects that print alike."""
    try:
        return C.consumer_id(name, where)
    except C.ServiceError as exc:
        raise ServiceConfigError(exc.message, param=param) from None


def parse_grant_flag(text: str) -> tuple[str, list[str], dict]:
    """``SUBJECT=CAP[,CAP...][@SCOPE_JSON]`` (``--grant``; an item of :func:`build_service`'s ``grants``); the
    scope defaults to the dev scope."""
    subject, sep, rest = text.partition("=")
    caps_text, at, scope_text = rest.partition("@")
    caps = caps_text.split(",")                     # "a,,b" or "a,": an empty CAP is refused, not skipped
    shown = f"grants {C.show(text)}"                 # the value cut short: a scope may be any length
    if not sep or not subject or not set(caps) <= set(C.CAPABILITIES):
        raise ServiceConfigError(f"{shown}: expected SUBJECT=CAP[,CAP...][@SCOPE_JSON] with CAP one of "
                                 f"{', '.join(C.CAPABILITIES)}", param="grants")
    if at and not scope_text.strip():       # "alice=memory_read@$SCOPE", SCOPE unset: it granted dev's scope
        raise ServiceConfigError(f"{shown}: no scope after '@' (a JSON object; without '@', the dev scope)",
                                 param="grants")
    if not scope_text:
        return subject, caps, dict(DEV_SCOPE)
    try:                                        # a key named twice, or NaN: refused as a request body's are
        sc = json.loads(scope_text, object_pairs_hook=unique_keys, parse_constant=C.not_json)
    except DuplicateKey as exc:
        raise ServiceConfigError(f"{shown}: scope names {C.show(exc.args[0])} twice",
                                 param="grants") from None
    except ValueError:
        raise ServiceConfigError(f"{shown}: scope is not JSON", param="grants") from None
    except RecursionError:
        raise ServiceConfigError(f"{shown}: scope nests arrays or objects too deeply to read (a scope is one "
                                 f"flat object)", param="grants") from None
    try:
        C.scope(sc)
    except C.ServiceError as exc:
        raise ServiceConfigError(f"{shown}: {exc.message}", param="grants") from None
    return subject, caps, sc


def add_operator(svc: CheckpointService, token: str) -> None:
    """Subject ``operator`` with credential ``token`` and the ``operator`` role."""
    check_token(token, f"operator {C.show(token)}", "operator")
    svc.add_subject("operator", DEV_TENANT)
    issue_token(svc, token, "operator", f"operator {C.show(token)}", "operator")
    svc.give_role("operator", C.OPERATOR)


def has_operator(svc: CheckpointService) -> bool:
    """Whether some subject holds the ``operator`` role (``simkit serve`` then adds the operator routes)."""
    return any(C.OPERATOR in s.roles for s in svc.subjects.values())
