"""Hostile consumers, round 48: correct consumers that differ from ``safe``, written from the seeds alone
(``tests/mutants/round48.py``, ``tests/exec/consumers/round48/``), audited for false positives.

Found:

- a worker that backs off as ``caught_up`` is caught up once its last fetch reached the end of the stream,
  wherever the durable ``resume_cursor`` is: a correct consumer that reads the next page ahead (round 24's
  ``PrefetchBeforeValidating``) and backs off one way whatever the reason (the mirror of round 24's
  ``BackOffAsBlocked``), blocked on the last page before the end, had read the end ahead; its
  ``Wait("caught_up")`` ended the run there with the page's events pending, ``completed`` false, NOT ok on 40
  of the audit's cases (``transient_storm``, ``long_blocks``, ``long_outage``, six ``default`` sweeps, ...).
  docs/hooks.md says the worker is caught up "after its last fetch reached the end of the stream, where the
  durable resume_cursor is ... whichever reason it gives": the world now asks both, whatever the reason.
- a correct consumer backing off exponentially, doubling to a cap of 64 back-offs (``PatientBackoff``), was
  judged incomplete on the wide case ``long_blocks`` (25 and 20 transient failures, each worth an attempt)
  and only there: the run reached its ``time_limit`` of 10,000 before the last event was done. No seed and no
  page of the docs bounds how long a worker may back off. The two cases that take dozens of attempts
  (``long_blocks``, ``long_outage``) now run to 100,000 (docs/verdict.md says so); the gallery is caught as
  before.
- a correct consumer that reserves every event of a page ahead and again before each call (``ReserveAhead``:
  one more timed request an event) was judged incomplete on ``big_page`` of round 47 (4,100 events on an
  external sink, where ``safe`` itself ends at 8,416 of the 10,000 its ``time_limit`` allows). The cases long
  by design, ``wide_pages``, ``long_stream`` and ``big_page`` too, now run to 100,000.

Held (the audit passed each, see the report): a page claimed by a version-only compare-and-swap before any
effect; the checkpoint read again before the barrier; a lost commit looked up and retried in place; a lost
barrier retried, then the checkpoint read; a refetch after a lost reply with the remembered identity; a halt
before reading receipts, and one confirmed by a second fetch; receipts read per event, alone or besides the
page's; the handler asked about replays too, or about the whole page before any commit (``exec:``); a
non-terminal decision retried in place; reservations made ahead; the record read again after a timeout;
settlement retried in the attempt; ``applied_position`` held to the barrier; at most eight outcomes an
attempt; no ``Skip``; no lookup of an empty page; versions raised by two; a heartbeat when caught up; backoff
growing, after a lost reply, after a lost barrier, at the start of each life, as one reason (without
read-ahead); a standby second worker (``exec:``); two pages processed before both barriers; the page fetched
before the load that confirms its cursor; a halt on the page read ahead before any effect of the current one
(bundled scenarios, corners and wide cases).

Left alone: docs/hooks.md's ``StopWhenCaughtUp`` ("a batch job: stop at the end of the stream") stops at the
first token that does not advance, which seed 000 step 7 allows ("stop or back off"); on ``default`` and
``gauntlet`` that is often a stuck token before the end, and the run is incomplete, as docs/verdict.md says
of a stop before the end. Whether the seed's "stop" should count there is the lead's call. A worker of two
that exits once the other is at work makes its run incomplete though the other finishes the stream
(``completed`` asks each worker): documented.
"""
from __future__ import annotations

import sys
from pathlib import Path

import simkit
from simkit.tools.audit_cases import wide

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where the consumers are
from mutants import round48  # noqa: E402


def test_a_worker_that_read_the_end_ahead_is_not_caught_up_while_its_page_is_blocked():
    """``transient_storm``'s last page is blocked for a while; the worker read the end ahead and backs off
    as ``caught_up``. The run goes on until the page is done, as ``safe``'s does, not ended with e4-e6
    pending."""
    v = simkit.simulate(simkit.load("transient_storm"), round48.ReadAheadBacksOffOneWay).verdict
    assert v.ok and v.completed and not v.pending, v


def test_a_patient_back_off_completes_the_cases_of_dozens_of_attempts():
    """``long_blocks`` ends at about 14,000 units for a back-off doubling to 64 (785 for ``safe``);
    ``long_outage`` at about 6,700. Both complete, ok."""
    for name in ("long_blocks", "long_outage"):
        v = simkit.simulate(wide(name), round48.PatientBackoff).verdict
        assert v.ok and v.completed and not v.pending, (name, v)


def test_a_reservation_made_ahead_completes_the_page_of_4100_events():
    """One ``Reserve`` more an event on ``big_page``'s external sink: about 10,250 units where ``safe`` takes
    8,416; ok, not incomplete at 10,000 with 126 events pending."""
    v = simkit.simulate(wide("big_page"), round48.ReserveAhead).verdict
    assert v.ok and v.completed and not v.pending, v
