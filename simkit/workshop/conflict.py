"""Exercise 5's service: a fresh in-process service (the one ``simkit serve`` starts with) in which worker 1's
compare-and-set save has just been refused with 409, in each of the three situations the exercise checks
(seed 004, step 5: reread and reconcile)."""
from __future__ import annotations

import copy

from simkit.errors import SimkitError, described

__all__ = ["Recording", "SITUATIONS", "checkpoint_of", "service_409"]


class Recording:
    """A transport that records every request the learner's function sends."""

    def __init__(self, api):
        self.api, self.sent = api, []

    def post(self, route, body, *args, **kw):
        reply = self.api.post(route, body, *args, **kw)
        self.sent.append((route, copy.deepcopy(body), reply))
        return reply


#: what worker 2 saved before worker 1's refused save, by situation: (key, expected revision, sequence)
SITUATIONS = {"ahead": [("w2-page-2", 1, 4), ("w2-page-3", 2, 5)], "behind": [("w2-resave", 1, 2)],
              "same": [("w2-page-2", 1, 4)]}


def _situation(situation) -> str:
    """``situation`` as a key of :data:`SITUATIONS`, case and spaces aside; else one line naming it (09
    invites trying ``"behind"`` and ``"same"``: ``"Behind"`` was a bare ``KeyError: 'Behind'``)."""
    name = situation.strip().lower() if isinstance(situation, str) else None
    if name not in SITUATIONS:
        raise SimkitError(f"situation {described(situation)}: one of {', '.join(map(repr, SITUATIONS))}",
                          param="situation")
    return name


def service_409(situation: str = "ahead"):
    """A fresh service (the one ``simkit serve`` starts with) in which worker 1's save has just been refused.

    Worker 1 read the checkpoint at revision 1 (sequence 2), applied the next page and saved sequence 4 with
    ``expected_revision`` 1 and the key ``w1-page-2``: 409 ``revision_conflict``, because worker 2 wrote
    first. What worker 2 wrote depends on ``situation``: ``ahead`` (it saved sequences 4 and 5: revision 3,
    sequence 5), ``behind`` (it saved sequence 2 again under a new key: revision 2, sequence 2) or ``same``
    (it saved sequence 4: revision 2, sequence 4).

    Returns ``(api, refused, my_cursor, my_key)``: the transport,
    worker 1's refused reply, and what it tried to save."""
    from simkit.service import DEV_SCOPE, ManualClock, dev_service
    from simkit.service.clients import CHANGES, WRITE
    from simkit.service.transport import ModelTransport
    clock = ManualClock()
    api = ModelTransport(dev_service(clock))
    journal = api.post(CHANGES, {"contract_version": 1, "scope": DEV_SCOPE,
                                 "query": {"after": None, "through": None,
                                           "limit": 2}})["next_cursor"]["journal_id"]

    def at(seq):
        return {"journal_id": journal, "sequence": seq}

    def save(key, revision, seq):
        clock.advance(1_000)
        return api.post(WRITE, {"scope": DEV_SCOPE, "command": {
            "contract_version": 1, "idempotency_key": key, "consumer_id": "context-cache",
            "expected_revision": revision, "cursor": at(seq)}})

    assert save("w1-page-1", 0, 2).status == 200                   # worker 1 created progress: revision 1
    worker_2 = SITUATIONS[_situation(situation)]
    for key, revision, seq in worker_2:
        assert save(key, revision, seq).status == 200
    refused = save("w1-page-2", 1, 4)
    assert refused.status == 409 and refused["error"]["code"] == "revision_conflict"
    return api, refused, at(4), "w1-page-2"


def checkpoint_of(api):
    """The dev consumer's checkpoint as the service holds it now (a READ)."""
    from simkit.service import DEV_SCOPE
    from simkit.service.clients import READ
    return api.post(READ, {"contract_version": 1, "scope": DEV_SCOPE,
                           "consumer_id": "context-cache"})["checkpoint"]
