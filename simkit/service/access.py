"""Who may call the checkpoint service: subjects, credentials, exact-scope grants and service-wide roles, and
the 401 and 403 checks of every call (docs/service.md, "simkit serve").

:class:`Access` is a part of :class:`simkit.service.checkpoints.CheckpointService`; it keeps ``subjects``,
``credentials`` and ``revoked``, which the service creates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import contract as C
from .contract import ServiceError

__all__ = ["NEEDS", "Access", "Subject", "bearer", "credential_problem"]

#: The capabilities each operation of :data:`simkit.service.checkpoints.ROUTES` needs on the exact scope.
NEEDS = {"changes": frozenset({C.MEMORY_READ}), "query": frozenset({C.MEMORY_READ}),
         "read": frozenset({C.MEMORY_READ, C.MEMORY_CHECKPOINT}),
         "write": frozenset({C.MEMORY_READ, C.MEMORY_CHECKPOINT})}


def bearer(authorization: str | None) -> str:
    """The token of ``Authorization: Bearer <token>``, or 401. Only HTTP's spaces and tabs around it are
    dropped: a no-break space or NEL is the token's (``Bearer dev\xa0`` acted as ``dev``)."""
    if not authorization:
        raise ServiceError(401, "unauthenticated", "missing credential: send Authorization: Bearer <token>")
    scheme, _, token = authorization.partition(" ")
    token = token.strip(" \t")
    if scheme.lower() != "bearer" or not token:
        raise ServiceError(401, "unauthenticated", "malformed credential: send Authorization: Bearer <token>")
    if re.search(r",\s*bearer\s", token, re.IGNORECASE):     # two headers, joined (simkit.service.http)
        raise ServiceError(401, "unauthenticated", "two credentials: send one Authorization: Bearer <token>")
    return token


def credential_problem(token: str) -> str | None:
    """Why no client could present ``token`` as a credential, or ``None``: it must be one token of visible
    ASCII characters. ``Authorization: Bearer <token>`` (:func:`bearer`) loses spaces
    around the token, a header cannot carry control characters, and the server reads header bytes as Latin-1,
    so a UTF-8 token arrives as other characters: any other token could never authenticate over HTTP."""
    if not token or any(ord(ch) < 0x21 or ord(ch) == 0x7f for ch in token):
        return "a credential is one token without spaces or control characters"
    if not token.isascii():
        return "a credential is ASCII (an Authorization header carries no other characters as sent)"
    return None


@dataclass
class Subject:
    subject_id: str
    tenant: str
    #: exact scope tuple -> capabilities
    grants: dict[tuple, frozenset] = field(default_factory=dict)
    tenant_admin: bool = False
    #: service-wide roles (:data:`simkit.service.contract.ROLES`), held apart from the scoped grants
    roles: frozenset = frozenset()


class Access:
    """Identities and grants of the service, and the checks that use them."""

    subjects: dict[str, Subject]
    credentials: dict[str, str]
    revoked: set[str]

    def add_subject(self, subject_id: str, tenant: str = "tenant", credentials=(), tenant_admin: bool = False,
                    roles=()) -> Subject:
        s = self.subjects.setdefault(subject_id, Subject(subject_id, tenant, tenant_admin=tenant_admin))
        for token in credentials:
            self.add_credential(token, subject_id)
        for role in roles:
            self.give_role(subject_id, role)
        return s

    def give_role(self, subject_id: str, role: str) -> None:
        """A service-wide role: ``operator`` (the ``/_simkit/*``
        routes) or ``inject_faults`` (``X-Simkit-Fault``)."""
        if role not in C.ROLES:
            raise ValueError(f"unknown role {role!r}; one of {', '.join(C.ROLES)}")
        s = self.subjects[subject_id]
        s.roles = s.roles | {role}

    def add_credential(self, token: str, subject_id: str) -> None:
        """Issue (or rotate in) a credential; rotation within one subject preserves its checkpoints."""
        if subject_id not in self.subjects:
            raise KeyError(f"unknown subject {subject_id!r}")
        self.credentials[token] = subject_id
        self.revoked.discard(token)

    def revoke(self, token: str) -> None:
        self.revoked.add(token)

    def grant(self, subject_id: str, scope: dict, capabilities) -> None:
        caps = frozenset(capabilities)
        unknown = caps - set(C.CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown capability {sorted(unknown)[0]!r}; one of {', '.join(C.CAPABILITIES)}")
        s = self.subjects[subject_id]
        key = C.scope(scope)
        s.grants[key] = s.grants.get(key, frozenset()) | caps

    def ungrant(self, subject_id: str, scope: dict) -> None:
        """Withdraw every capability the subject holds on this exact scope."""
        self.subjects[subject_id].grants.pop(C.scope(scope), None)

    def namespace(self, subject_id: str, scope: dict | tuple) -> tuple:
        sc = scope if isinstance(scope, tuple) else C.scope(scope)
        return (self.subjects[subject_id].tenant, sc)

    def authenticate(self, authorization: str | None) -> Subject:
        """The subject of an ``Authorization: Bearer`` header, or 401 (for routes outside :data:`ROUTES`)."""
        return self._authenticate(authorization)

    def require_role(self, subject: Subject, role: str) -> None:
        """403 unless ``subject`` holds the service-wide ``role``."""
        if role not in subject.roles:
            raise ServiceError(403, "forbidden", f"subject lacks the {role} role")

    def _authenticate(self, authorization: str | None) -> Subject:
        """Checked on every call, retries included: unknown or revoked credentials are 401."""
        token = bearer(authorization)
        if token in self.revoked:
            raise ServiceError(401, "revoked_credential", "the credential has been revoked")
        subject_id = self.credentials.get(token)
        if subject_id is None:
            raise ServiceError(401, "invalid_credential", "the credential is not valid")
        return self.subjects[subject_id]

    def _authorize(self, subject: Subject, sc: tuple, op: str) -> tuple:
        """Capabilities for the exact scope; tenant administration alone grants nothing (403)."""
        missing = NEEDS[op] - subject.grants.get(sc, frozenset())
        if missing:
            raise ServiceError(403, "forbidden",
                               f"subject lacks {', '.join(sorted(missing))} on this exact scope")
        return (subject.tenant, sc)

