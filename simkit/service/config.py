"""Who may call the service, what is in it at start-up, and which faults to inject: defaults, flags, config
file. The config file is read and applied here, and :func:`build_service` puts the three together; the dev
service, the flags and the fault specs are :mod:`simkit.service.options` (their names still import from here).

``simkit serve`` starts with subject ``dev`` (bearer credential ``dev``) granted ``memory_read`` and
``memory_checkpoint`` on :data:`DEV_SCOPE`, with the ``inject_faults`` role (it may send ``X-Simkit-Fault``)
and no other, and that namespace's journal active with a few changes. The namespace also holds three records
from before its journal (:data:`DEV_RECORDS`): a deleted one and one private to another subject sort first, so
a memory query with ``scan_limit`` 2 answers an empty first page that still has a ``next_after``. A TOML
config file adds
subjects, credentials, grants, roles, journals and faults::

    faults = ["lose-reply@write#2"]       # top level (before any [[table]]), like --fault

    [[subjects]]
    id = "alice"
    tenant = "tenant"                     # default "tenant"
    credentials = ["alice-token"]
    revoked = ["alice-old-token"]
    tenant_admin = false
    roles = ["operator"]                  # service-wide: "operator", "inject_faults"; default none

    [[subjects.grants]]
    scope = {project_id = "project", agent_id = "agent", visibility = "shared"}   # absent ids are null
    capabilities = ["memory_read", "memory_checkpoint"]

    [[journals]]
    tenant = "tenant"
    scope = {project_id = "other", visibility = "shared"}
    changes = 3                           # 0 activates an empty journal

A credential belongs to one subject: giving one a subject already holds (``dev``'s included) to another, in
the file or with ``--credential``, is an error, as is a subject added twice (``dev`` included: the service
already has it, so extend it with ``--credential``/``--grant``) or a value of the wrong type; so is a
credential the file revokes given again by ``--credential`` or ``--operator`` (one in both a subject's
``credentials`` and ``revoked`` is revoked).

At most 1000 ``[[subjects]]``, 100 grants each, 100 ``[[journals]]`` and 100,000 changes in all journals
together (:data:`MAX_CONFIG_SUBJECTS`, :data:`MAX_CONFIG_GRANTS`, :data:`MAX_CONFIG_JOURNALS`,
:data:`MAX_CONFIG_CHANGES`); above, one line names the key and the limit.

Roles are service-wide, not scoped: ``operator`` may call the ``/_simkit/*`` operator routes (back up,
restore, append to any namespace's journal), which exist only when some subject holds it; ``inject_faults``
may send the ``X-Simkit-Fault`` header. ``--operator TOKEN`` is short for a subject ``operator`` with
credential TOKEN and the ``operator`` role. No subject is an operator by default.

Faults are ``KIND[@ROUTE][#N]``: KIND one of :data:`FAULT_KINDS`, ROUTE one of ``changes``, ``query``,
``read``, ``write`` that can honour it (:data:`simkit.service.contract.FAULT_OPS`: ``corrupt-checkpoint``
``read`` and ``write``, ``corrupt-journal`` ``changes``, ``crash-mid-write`` ``write``; default every such
route), N the n-th matching request (default 1, ``*`` every one); a request counts only once it has passed
authentication and authorization, and a rejected one gets no fault.
"""
from __future__ import annotations

import os
import stat
import tomllib

from simkit.errors import long_integer
from simkit.scenario.keydepth import too_deep
from simkit.scenario.read import read_bytes

from . import contract as C
from .checkpoints import STORES, CheckpointService
from .options import (
    DEV_CHANGES,
    DEV_RECORDS,
    DEV_SCOPE,
    DEV_TENANT,
    FAULT_KINDS,
    FAULT_ROUTES,
    FaultSpec,
    ServiceConfigError,
    add_operator,
    check_name,
    check_token,
    dev_service,
    has_operator,
    issue_token,
    parse_credential_flag,
    parse_fault,
    parse_grant_flag,
)

__all__ = [
    "DEV_CHANGES", "DEV_RECORDS", "DEV_SCOPE", "DEV_TENANT", "FAULT_KINDS", "FAULT_ROUTES",
    "MAX_CONFIG_BYTES", "MAX_CONFIG_CHANGES", "MAX_CONFIG_GRANTS", "MAX_CONFIG_JOURNALS",
    "MAX_CONFIG_SUBJECTS", "FaultSpec", "ServiceConfigError", "apply_config", "build_service", "dev_service",
    "has_operator", "load_config", "parse_credential_flag", "parse_fault", "parse_grant_flag",
]

MAX_CONFIG_CHANGES = 100_000
#: The most ``[[journals]]``, ``[[subjects]]`` and grants of one subject a config file may hold; with
#: :data:`MAX_CONFIG_CHANGES` changes in all journals together, what a config builds stays bounded (200
#: journals of 100,000 changes each were 20 million appends at start-up).
MAX_CONFIG_JOURNALS, MAX_CONFIG_SUBJECTS, MAX_CONFIG_GRANTS = 100, 1000, 100
#: The largest config file read (a config of a few subjects is a few KiB; scenario files may be 64 MiB).
MAX_CONFIG_BYTES = 1024 * 1024


def _scope(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ServiceConfigError(f"{where}: scope must be a table")
    sc = {"project_id": value.get("project_id"), "mission_id": value.get("mission_id"),
          "agent_id": value.get("agent_id"), "visibility": value.get("visibility", "shared")}
    extra = set(value) - set(sc)
    if extra:
        raise ServiceConfigError(f"{where}: unknown scope key {C.show(sorted(extra)[0])}")
    try:
        C.scope(sc)
    except C.ServiceError as exc:
        raise ServiceConfigError(f"{where}: {exc.message}") from None
    return sc


def _tables(data: dict, key: str, where: str, at_most: int, header: str | None = None) -> list[dict]:
    """``data[key]`` as an array of at most ``at_most`` tables, or one clear error naming the header they are
    written under (``header``, default ``key``: ``[[subjects.grants]]``, not ``[[grants]]``, no key)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise ServiceConfigError(f"{where}: {key}: expected an array of tables ([[{header or key}]]), "
                                 f"got {type(value).__name__} {C.show(value)}")
    if len(value) > at_most:
        raise ServiceConfigError(f"{where}: {key}: {len(value)} tables; at most {at_most}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ServiceConfigError(f"{where}: {key}[{i}]: expected a table, got {type(item).__name__} "
                                     f"{C.show(item)}")
    return value


def _only(table: dict, allowed: tuple, where: str) -> None:
    extra = sorted(set(table) - set(allowed))
    if extra:
        raise ServiceConfigError(f"{where}: unknown key {C.show(extra[0])}; one of {', '.join(allowed)}")


def _name(table: dict, key: str, default, where: str) -> str:
    """A subject id or a tenant: a non-empty string, and an identity (:func:`check_name`)."""
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise ServiceConfigError(f"{where}.{key}: expected a non-empty string, "
                                 f"got {type(value).__name__} {C.show(value)}")
    return check_name(value, f"{where}.{key}")


def _strings(table: dict, key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        raise ServiceConfigError(
            f"{where}.{key}: expected an array of non-empty strings, got {C.show(value)}"
        )
    return value


def _add_config_subject(svc: CheckpointService, s: dict, w: str, seen: dict, i: int) -> None:
    """One ``[[subjects]]`` table (``w`` names it in errors):
    the subject, its credentials, roles and grants."""
    _only(s, ("id", "tenant", "credentials", "revoked", "tenant_admin", "roles", "grants"), w)
    if not isinstance(s.get("id"), str) or not s["id"]:
        raise ServiceConfigError(f"{w}: needs a non-empty string 'id'")
    sid = check_name(s["id"], f"{w}.id")
    if sid in seen:
        raise ServiceConfigError(f"{w}.id: duplicate subject {C.show(sid)} ({seen[sid]})")
    seen[sid] = f"subjects[{i}] already adds it"
    tenant = _name(s, "tenant", DEV_TENANT, w)
    admin = s.get("tenant_admin", False)
    if not isinstance(admin, bool):
        raise ServiceConfigError(f"{w}.tenant_admin: expected true or false, "
                                 f"got {type(admin).__name__} {C.show(admin)}")
    credentials, revoked = _strings(s, "credentials", w), _strings(s, "revoked", w)
    roles = _strings(s, "roles", w)
    if not set(roles) <= set(C.ROLES):
        raise ServiceConfigError(f"{w}.roles: unknown role {C.show(sorted(set(roles) - set(C.ROLES))[0])}; "
                                 f"one of {', '.join(C.ROLES)}")
    grants = _tables(s, "grants", w, MAX_CONFIG_GRANTS, "subjects.grants")
    svc.add_subject(sid, tenant, tenant_admin=admin, roles=roles)
    for key, tokens in (("credentials", credentials), ("revoked", revoked)):
        for k, token in enumerate(tokens):
            check_token(token, f"{w}.{key}[{k}]")
            issue_token(svc, token, sid, f"{w}.{key}")
    for token in revoked:
        svc.revoke(token)
    for j, g in enumerate(grants):
        wg = f"{w}.grants[{j}]"
        _only(g, ("scope", "capabilities"), wg)
        caps = g.get("capabilities", [])
        if not isinstance(caps, list) or not all(isinstance(c, str) and c in C.CAPABILITIES for c in caps):
            raise ServiceConfigError(f"{wg}: capabilities must be a list of {', '.join(C.CAPABILITIES)}")
        svc.grant(sid, _scope(g.get("scope"), wg), caps)


def apply_config(svc: CheckpointService, data: dict, where: str) -> list[FaultSpec]:
    """Add the subjects, grants and journals of a parsed config; return its start-up faults.

    Each malformed value is one :class:`ServiceConfigError` naming ``where`` (the file) and the key.
    """
    known = {"subjects", "journals", "faults"}
    extra = set(data) - known
    if extra:
        raise ServiceConfigError(f"{where}: unknown key {C.show(sorted(extra)[0])}; one of "
                                 f"{', '.join(sorted(known))}")
    # A subject added twice is an error, one the service already has (``dev``) included: add_subject keeps the
    # first, so a second [[subjects]] entry's tenant and tenant_admin would be silently ignored.
    seen = {sid: "simkit serve already has it; extend it with --credential or --grant"
            for sid in svc.subjects}
    for i, s in enumerate(_tables(data, "subjects", where, MAX_CONFIG_SUBJECTS)):
        _add_config_subject(svc, s, f"{where}: subjects[{i}]", seen, i)
    total = 0
    for i, j in enumerate(_tables(data, "journals", where, MAX_CONFIG_JOURNALS)):
        w = f"{where}: journals[{i}]"
        _only(j, ("tenant", "scope", "changes"), w)
        sc = _scope(j.get("scope"), w)
        tenant = _name(j, "tenant", DEV_TENANT, w)
        n = j.get("changes", 0)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_CONFIG_CHANGES:
            raise ServiceConfigError(f"{w}: changes must be an integer 0-{MAX_CONFIG_CHANGES}")
        if (total := total + n) > MAX_CONFIG_CHANGES:
            raise ServiceConfigError(f"{w}: changes: {total} in journals[0..{i}]; at most "
                                     f"{MAX_CONFIG_CHANGES} in all journals together")
        svc.activate_journal(tenant, sc)
        for k in range(n):
            kind, record = DEV_CHANGES[k % len(DEV_CHANGES)]
            svc.append(tenant, sc, kind, record, author="config")
    faults = data.get("faults", [])
    if not isinstance(faults, list) or not all(isinstance(f, str) for f in faults):
        raise ServiceConfigError(f"{where}: faults: expected an array of strings like "
                                 f"\"lose-reply@write#2\", got {C.show(faults)}")
    return [parse_fault(f, f"{where}: faults") for f in faults]


_FILE_KINDS = {"d": "a directory", "p": "a FIFO", "c": "a character device", "b": "a block device",
               "s": "a socket"}


def _read_config(path: str) -> bytes:
    """The bytes of a regular file of at most :data:`MAX_CONFIG_BYTES`, else one :class:`ServiceConfigError`.
    Checked before it is opened: a FIFO waits for a writer, ``/dev/zero`` never ends."""
    try:
        mode = os.stat(path).st_mode            # asked before opening: a FIFO's open waits for a writer
        if not stat.S_ISREG(mode):
            raise ServiceConfigError(f"{path}: is "
                                     f"{_FILE_KINDS.get(stat.filemode(mode)[0], 'a special file')}, not a "
                                      "regular file; a config is a TOML file")
        raw = read_bytes(path, MAX_CONFIG_BYTES)     # without blocking: /proc/kmsg waited for ever
    except OSError as exc:
        raise ServiceConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ServiceConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes (1 MiB), the limit of a "
                                 f"config file")
    return raw


def load_config(path: str) -> dict:
    """The parsed TOML file, or one :class:`ServiceConfigError` line naming the file and the problem."""
    raw = _read_config(path)
    try:
        text = raw.decode("utf-8-sig")  # a UTF-8 byte order mark is no error, as in a scenario
    except UnicodeDecodeError as exc:
        raise ServiceConfigError(f"{path}: not a UTF-8 text file (byte {exc.start} is "
                                 f"{raw[exc.start]:#04x}); "
                                 f"a config is TOML text") from None
    if (problem := too_deep(text)) is not None:    # tomllib's time is quadratic in a key's depth
        raise ServiceConfigError(f"{path}: {problem}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ServiceConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ServiceConfigError(
            f"{path}: arrays or inline tables nested too deeply to read (a config nests a few levels at most)"
        ) from None
    except ValueError:  # Python's 4,300-digit limit on int(): tomllib raises it bare
        raise ServiceConfigError(
            f"{path}: {long_integer(text)}; a config's numbers are small counts"
        ) from None


def build_service(
    clock=None,
    config: str | None = None,
    credentials=(),
    grants=(),
    faults=(),
    operator: str | None = None,
    store: str = "batched",
) -> tuple[CheckpointService, list[FaultSpec]]:
    """The dev service plus a config file and the options of ``simkit serve``; the start-up faults.

    ``credentials``: ``TOKEN=SUBJECT`` items (the subject created if new); ``grants``:
    ``SUBJECT=CAP[,CAP...][@SCOPE_JSON]`` items; ``faults``: ``KIND[@ROUTE][#N]`` items (:func:`parse_fault`).
    ``operator`` issues that credential to subject ``operator`` (created if new) with the ``operator`` role.
    ``store``: one of :data:`simkit.service.checkpoints.STORES`. An error names the parameter (or the config
    file).
    """
    if store not in STORES:
        raise ServiceConfigError(f"store {C.show(store)}: one of {', '.join(STORES)}", param="store")
    svc = dev_service(clock, store=store)
    specs: list[FaultSpec] = []
    if config == "":        # ``--config "$UNSET"`` started the service without the file's subjects and faults
        raise ServiceConfigError("config '': names no file; give one, or leave the option out",
                                 param="config")
    if config is not None:
        specs += apply_config(svc, load_config(config), config)
    for text in credentials:
        token, subject = parse_credential_flag(text)
        check_token(token, f"credentials {C.show(text)}", "credentials")
        svc.add_subject(subject, DEV_TENANT)
        issue_token(svc, token, subject, f"credentials {C.show(text)}", "credentials")
    for text in grants:
        subject, caps, sc = parse_grant_flag(text)
        if subject not in svc.subjects:
            raise ServiceConfigError(f"grants {C.show(text)}: unknown subject {C.show(subject)}; give it a "
                                     f"credential first", param="grants")
        svc.grant(subject, sc, caps)
    if operator is not None:
        add_operator(svc, operator)
    specs += [parse_fault(f, "faults") for f in faults]
    return svc, specs
