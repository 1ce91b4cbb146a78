"""Seed 001 judged from ground truth (docs/verdict.md, ``settlement_violations``): the history of the store's
operation records against the external service's log of every request (a reply's true identity is read there,
not from the reply) and the authorization binding in force."""
from __future__ import annotations

from simkit.model import COMMITTED
from simkit.world.external import principal_at

__all__ = ["SETTLEMENT_KINDS", "settlement_violations"]

#: Kinds of ``settlement_violations`` (seed 001, "Failure prevented").
SETTLEMENT_KINDS = ("committed_downgraded", "wrong_reservation", "unknown_reply", "stale_binding")


def settlement_violations(ledger, service=None, scenario=None) -> list[dict]:
    """Seed 001 from ground truth: every transition of every operation record, and every request the service
    saw, against the service's log and the binding in force.

    ``committed_downgraded``: a transition took a record from ``committed`` to a weaker state (step 4:
    committed success is absorbing; step 5: a weaker observation must never downgrade it).
    ``wrong_reservation``: a transition committed a record with the reply to a request whose tuple, as the
    service logged it, is not the record's reservation at that moment (step 6: another request's, principal's
    or generation's result). ``unknown_reply``: a transition committed a reply to no request the service ever
    saw (a reply the caller made up: step 6's "do not expose its result"). ``stale_binding``: a reservation,
    or a request that reached the service, bound to a principal that was not in force (step 2: "a changed
    request or authorization context requires a new reservation"; a request is allowed the binding in force
    when its worker issued it: a rotation during its latency, or a pause at its crash point, is after the
    worker's last choice).
    """
    out: list[dict] = []
    if ledger is None:
        return out
    identity = {r.seq: r.identity for r in service.requests} if service is not None else None
    rotations = tuple(getattr(scenario, "rotate_at", ()) or ())
    for t in ledger.history:
        where = {"time": t.time, "worker": t.worker}
        if t.before == COMMITTED and t.after != COMMITTED:
            out.append({"kind": "committed_downgraded", **where,
                        "detail": f"operation {t.operation_id}: committed success of {t.reservation} "
                                  f"overwritten with {t.after} "
                                  f"({t.action}{': ' + t.detail if t.detail else ''})"})
        in_force = principal_at(rotations, t.time) if rotations and t.action in ("reserve", "renew") else None
        if in_force is not None and t.reservation.binding != in_force:
            out.append({"kind": "stale_binding", **where,
                        "detail": f"operation {t.operation_id}: reserved {t.reservation} while {in_force} "
                                  "was in force"})
        if t.action in ("settle", "write") and t.after == COMMITTED and t.reply is not None:
            true = t.reply.identity if identity is None else identity.get(t.reply.request)
            if true is None:
                out.append({"kind": "unknown_reply", **where,
                            "detail": f"operation {t.operation_id}: committed with a reply to request "
                                      f"{t.reply.request}, which the service never saw"})
            elif true != t.reservation:
                out.append({"kind": "wrong_reservation", **where,
                            "detail": f"operation {t.operation_id}: result of request {true} attached to "
                                      f"reservation {t.reservation} (differs in "
                                      f"{', '.join(t.reservation.differs(true))})"})
    if service is not None and rotations:
        for r in service.requests:
            allowed = {principal_at(rotations, r.time), principal_at(rotations, r.sent)}
            if r.worker and r.fate != "foreign" and r.identity.binding not in allowed:
                out.append({"kind": "stale_binding", "time": r.time, "worker": r.worker,
                            "detail": f"operation {r.identity.operation_id}: request {r.seq} bound to "
                                      f"{r.identity.binding} while {principal_at(rotations, r.time)} was in "
                                      f"force (seed 001 step 2: reserve again before each retry, to call "
                                      f"with the tuple in force)"})
    out.sort(key=lambda d: d["time"])
    return out

