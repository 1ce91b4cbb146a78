"""Who may call the service, what is in it at start-up, and which faults to inject: defaults, flags, config file.

``simkit serve`` starts with subject ``dev`` (bearer credential ``dev``) granted ``memory_read`` and
``memory_checkpoint`` on :data:`DEV_SCOPE`, and that namespace's journal active with a few changes. A TOML
config file adds subjects, credentials, grants and journals::

    [[subjects]]
    id = "alice"
    tenant = "tenant"                     # default "tenant"
    credentials = ["alice-token"]
    revoked = ["alice-old-token"]
    tenant_admin = false

    [[subjects.grants]]
    scope = {project_id = "project", agent_id = "agent", visibility = "shared"}   # absent ids are null
    capabilities = ["memory_read", "memory_checkpoint"]

    [[journals]]
    tenant = "tenant"
    scope = {project_id = "other", visibility = "shared"}
    changes = 3                           # 0 activates an empty journal

    faults = ["lose-reply@write#2"]       # top level, like --fault

Faults are ``KIND[@ROUTE][#N]``: KIND one of :data:`FAULT_KINDS`, ROUTE one of ``changes``, ``read``,
``write`` (default any), N the n-th matching request (default 1, ``*`` every one).
"""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import SimkitError
from . import contract as C
from .checkpoints import CheckpointService, ManualClock

DEV_SCOPE = {"project_id": "project", "mission_id": None, "agent_id": "agent", "visibility": "shared"}
DEV_TENANT = "tenant"
DEV_CHANGES = (("created", "note-1"), ("created", "note-2"), ("updated", "note-1"), ("derived", "summary-1"),
               ("reviewed", "note-2"))
FAULT_KINDS = ("lose-reply", "corrupt-checkpoint", "corrupt-journal")
FAULT_ROUTES = ("changes", "read", "write")


class ServiceConfigError(SimkitError, ValueError):
    """A ``simkit serve`` flag or config file is malformed."""


@dataclass(frozen=True)
class FaultSpec:
    """Inject ``kind`` into the ``nth`` request on ``route`` (``None``: any route; ``nth`` 0: every one)."""

    kind: str
    route: str | None = None
    nth: int = 1


def parse_fault(text: str, where: str = "--fault") -> FaultSpec:
    spec, _, nth = text.strip().partition("#")
    kind, _, route = spec.partition("@")
    if kind not in FAULT_KINDS:
        raise ServiceConfigError(f"{where} {text!r}: unknown fault {kind!r}; one of {', '.join(FAULT_KINDS)}")
    if route and route not in FAULT_ROUTES:
        raise ServiceConfigError(f"{where} {text!r}: unknown route {route!r}; one of {', '.join(FAULT_ROUTES)}")
    if nth == "*":
        n = 0
    else:
        try:
            n = int(nth) if nth else 1
        except ValueError:
            n = -1
        if n < 1:
            raise ServiceConfigError(f"{where} {text!r}: occurrence after '#' must be a positive integer or '*'")
    return FaultSpec(kind, route or None, n)


def _scope(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ServiceConfigError(f"{where}: scope must be a table")
    sc = {"project_id": value.get("project_id"), "mission_id": value.get("mission_id"),
          "agent_id": value.get("agent_id"), "visibility": value.get("visibility", "shared")}
    extra = set(value) - set(sc)
    if extra:
        raise ServiceConfigError(f"{where}: unknown scope key {sorted(extra)[0]!r}")
    try:
        C.scope(sc)
    except C.ServiceError as exc:
        raise ServiceConfigError(f"{where}: {exc.message}") from None
    return sc


def dev_service(clock=None, changes: int = len(DEV_CHANGES)) -> CheckpointService:
    """The service ``simkit serve`` starts with: subject ``dev``, its grants, an active journal with changes."""
    svc = CheckpointService(clock or ManualClock())
    svc.add_subject("dev", DEV_TENANT, credentials=["dev"])
    svc.grant("dev", DEV_SCOPE, [C.MEMORY_READ, C.MEMORY_CHECKPOINT])
    svc.activate_journal(DEV_TENANT, DEV_SCOPE)
    for i in range(changes):
        kind, record = DEV_CHANGES[i % len(DEV_CHANGES)]
        svc.append(DEV_TENANT, DEV_SCOPE, kind, record, author="dev-writer")
    return svc


def apply_config(svc: CheckpointService, data: dict, where: str) -> list[FaultSpec]:
    """Add the subjects, grants and journals of a parsed config; return its start-up faults."""
    known = {"subjects", "journals", "faults"}
    extra = set(data) - known
    if extra:
        raise ServiceConfigError(f"{where}: unknown key {sorted(extra)[0]!r}; one of {', '.join(sorted(known))}")
    for i, s in enumerate(data.get("subjects", [])):
        w = f"{where}: subjects[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("id"), str) or not s["id"]:
            raise ServiceConfigError(f"{w}: needs a non-empty string 'id'")
        svc.add_subject(s["id"], s.get("tenant", DEV_TENANT), tenant_admin=bool(s.get("tenant_admin", False)))
        for token in s.get("credentials", []) + s.get("revoked", []):
            if not isinstance(token, str) or not token:
                raise ServiceConfigError(f"{w}: credentials must be non-empty strings")
            svc.add_credential(token, s["id"])
        for token in s.get("revoked", []):
            svc.revoke(token)
        for j, g in enumerate(s.get("grants", [])):
            caps = g.get("capabilities", []) if isinstance(g, dict) else None
            if not isinstance(caps, list) or not set(caps) <= set(C.CAPABILITIES):
                raise ServiceConfigError(f"{w}.grants[{j}]: capabilities must be a list of {', '.join(C.CAPABILITIES)}")
            svc.grant(s["id"], _scope(g.get("scope"), f"{w}.grants[{j}]"), caps)
    for i, j in enumerate(data.get("journals", [])):
        w = f"{where}: journals[{i}]"
        sc = _scope(j.get("scope") if isinstance(j, dict) else None, w)
        tenant = j.get("tenant", DEV_TENANT)
        svc.activate_journal(tenant, sc)
        n = j.get("changes", 0)
        if not isinstance(n, int) or n < 0:
            raise ServiceConfigError(f"{w}: changes must be a non-negative integer")
        for k in range(n):
            kind, record = DEV_CHANGES[k % len(DEV_CHANGES)]
            svc.append(tenant, sc, kind, record, author="config")
    faults = data.get("faults", [])
    if not isinstance(faults, list):
        raise ServiceConfigError(f"{where}: faults must be a list of strings")
    return [parse_fault(f, f"{where}: faults") for f in faults]


def load_config(path: str) -> dict:
    p = Path(path)
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ServiceConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ServiceConfigError(f"{path}: not valid TOML: {exc}") from None


def parse_credential_flag(text: str) -> tuple[str, str]:
    """``--credential TOKEN=SUBJECT``."""
    token, sep, subject = text.partition("=")
    if not sep or not token or not subject:
        raise ServiceConfigError(f"--credential {text!r}: expected TOKEN=SUBJECT")
    return token, subject


def parse_grant_flag(text: str) -> tuple[str, list[str], dict]:
    """``--grant SUBJECT=CAP[,CAP...][@SCOPE_JSON]`` (scope defaults to the dev scope)."""
    subject, sep, rest = text.partition("=")
    caps_text, _, scope_text = rest.partition("@")
    caps = [c for c in caps_text.split(",") if c]
    if not sep or not subject or not caps or not set(caps) <= set(C.CAPABILITIES):
        raise ServiceConfigError(f"--grant {text!r}: expected SUBJECT=CAP[,CAP...][@SCOPE_JSON] with CAP one of "
                                 f"{', '.join(C.CAPABILITIES)}")
    if not scope_text:
        return subject, caps, dict(DEV_SCOPE)
    try:
        sc = json.loads(scope_text)
    except ValueError:
        raise ServiceConfigError(f"--grant {text!r}: scope is not JSON") from None
    try:
        C.scope(sc)
    except C.ServiceError as exc:
        raise ServiceConfigError(f"--grant {text!r}: {exc.message}") from None
    return subject, caps, sc


def build_service(clock=None, config: str | None = None, credentials=(), grants=(), faults=()) -> tuple[CheckpointService, list[FaultSpec]]:
    """The dev service plus a config file and flags; the start-up faults."""
    svc = dev_service(clock)
    specs: list[FaultSpec] = []
    if config:
        specs += apply_config(svc, load_config(config), config)
    for text in credentials:
        token, subject = parse_credential_flag(text)
        svc.add_subject(subject, DEV_TENANT)
        svc.add_credential(token, subject)
    for text in grants:
        subject, caps, sc = parse_grant_flag(text)
        if subject not in svc.subjects:
            raise ServiceConfigError(f"--grant {text!r}: unknown subject {subject!r}; add a --credential for it first")
        svc.grant(subject, sc, caps)
    specs += [parse_fault(f) for f in faults]
    return svc, specs
