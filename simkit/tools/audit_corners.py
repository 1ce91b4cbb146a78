"""The audit's corners (docs/verdict.md, "simkit audit", step 1): scenarios no bundled one has, each where a
consumer that checks or keeps part of what the seed asks shows it. :mod:`simkit.tools.audit_cases` lists them
among its cases (and re-exports :data:`CORNERS`); :func:`chain` and :func:`token_chain` script their pages
(and the wide cases').
"""
from __future__ import annotations

__all__ = ["CORNERS", "chain", "token_chain"]


def chain(*lists: list[int]) -> list[dict]:
    """A scripted chain C1, C2, … over these position lists, then an empty page at the end of the stream."""
    pages = [{"cursor": f"C{i}", "positions": ps, "next_cursor": f"C{i + 1}"}
             for i, ps in enumerate(lists, 1)]
    end = f"C{len(lists) + 1}"
    return pages + [{"cursor": end, "positions": [], "next_cursor": end}]


def token_chain(*tokens: str, step: int = 1) -> list[dict]:
    """A scripted chain through these tokens, then the end: an event (positions 1, 2, ...) on every
    ``step``-th page, the pages between empty (each with a new token)."""
    pages = [{"cursor": t, "positions": [] if i % step else [i // step + 1], "next_cursor": n}
             for i, (t, n) in enumerate(zip(tokens, tokens[1:]))]
    return pages + [{"cursor": tokens[-1], "positions": [], "next_cursor": tokens[-1]}]


#: Corners no bundled scenario has, as scenario files, by name: step 3's breaches inside a page, each where a
#: validator checking part of the page misses it (against the first event, only one pair, ``<`` for ``<=``, a
#: gap at the page's first event only, nothing before the first checkpoint write, a page's head only, a page
#: of one event, one worker of two, a page wholly behind the prefix at its cursor's second answer); step 4's
#: backfill, lost by a watermark trusted at version 0, past a window or past a large position (round 65); a
#: checkpoint_version ahead of every position, where one counter taken for the other shows; and what the
#: other streams never reach (round 47): positions past 32 bits, ids that only a byte-exact comparison tells
#: apart, a third worker, a dead letter; and an eighth worker, a stale worker at large versions, tokens a
#: query string would decode and step 3's breaches at large positions (round 65).
CORNERS: dict[str, dict] = {
    "page_out_of_order": {
        "description": "Step 3: the second page serves position 4 after 5, a regression inside the page",
        "sink": "idempotent", "pages": chain([1, 2, 3], [5, 4, 6])},
    "regression_mid_page": {
        "description": "Step 3: the second page serves 4, 6, 5, 7: a regression in its middle, no event "
                       "below its first",
        "sink": "transactional", "pages": chain([1, 2, 3], [4, 6, 5, 7])},
    "regression_last_pair": {
        "description": "Step 3: the first page serves 1, 2, 4, 3: a regression in its last pair, before any "
                       "checkpoint write",
        "sink": "transactional", "pages": chain([1, 2, 4, 3], [5, 6])},
    "two_ids_one_position": {
        "description": "Step 3: the second page serves e5 and x5, two ids at one position inside the page",
        "sink": "transactional",
        "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
                  {"cursor": "C2", "positions": [4, 5, 5, 6], "ids": ["e4", "e5", "x5", "e6"],
                   "next_cursor": "C3"},
                  {"cursor": "C3", "positions": [], "next_cursor": "C3"}]},
    "gap_mid_page": {
        "description": "Step 3, no backfills: the second page serves 2 again (a replay), then 3, behind "
                       "applied_position 5 with no receipt: a gap after the page's first event",
        "sink": "transactional", "pages": chain([1, 2, 5], [2, 3, 6])},
    "regression_deep_in_page": {
        "description": "Step 3: the second page serves 1,000 events, 4 to 1,003, its last pair swapped: a "
                       "regression past where a check of the page's head looks",
        "sink": "transactional", "pages": chain([1, 2, 3], [*range(4, 1002), 1003, 1002])},
    "gap_single_event": {
        "description": "Step 3, no backfills: the second page is one event, 3, behind applied_position 5 "
                       "with no receipt: a gap on a page too short for an order check",
        "sink": "transactional", "pages": chain([1, 2, 5], [3], [6])},
    "gap_two_workers": {
        "description": "Step 3, no backfills, two workers on one checkpoint: the second page serves 3 behind "
                       "applied_position 5 with no receipt, to each worker; each must halt",
        "sink": "transactional", "workers": 2, "pages": chain([1, 2, 5], [3, 6])},
    "overlap_page_new_identity": {
        "description": "Step 3 on every page fetched, a page wholly behind the prefix too: C2 first answers "
                       "its own token (stuck), then serves 2 and 3 again, at or below applied_position 3, "
                       "with a new id x3 where e3 holds the receipt: a consumer that takes a page of "
                       "receipted positions for a replay, or validates a cursor's page only once, loses x3",
        "sink": "transactional",
        "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "C2"},
                  {"cursor": "C2", "positions": [2, 3], "ids": ["e2", "x3"], "next_cursor": "C3", "stuck": 1},
                  {"cursor": "C3", "positions": [4], "next_cursor": "C4"},
                  {"cursor": "C4", "positions": [], "next_cursor": "C4"}]},
    "backfill_behind_start": {
        "description": "Step 4, backfills: the checkpoint starts at applied_position 1,000,000, version 0 "
                       "(as a migration seeds it), and the first page serves e4, a backfill a million "
                       "positions behind it, with no receipt: only a receipt proves a replay",
        "sink": "transactional", "backfills": True,
        "initial": {"applied_position": 1_000_000, "receipts": [1_000_000]},
        "pages": chain([4, 1_000_001])},
    "versions_outrun_positions": {
        "description": "Keep two kinds of progress: three empty pages advance the token, and "
                       "checkpoint_version to 3, before the first events, at positions 1 to 3: a consumer "
                       "that takes one counter for the other skips them as replays or claims them "
                       "unprocessed",
        "sink": "transactional", "pages": chain([], [], [], [1, 2, 3])},
    "positions_past_32_bits": {
        "description": "Positions and versions as a long-lived stream's are: positions across 2**31 and "
                       "2**32 and up to 2**53, checkpoint_version across 2**32, a crash after a commit on "
                       "each page: a consumer that keeps either in 32 bits (or 16, or a float of fewer than "
                       "53) leaves applied_position behind, skips events as replays or lowers the version",
        "sink": "transactional",
        "initial": {"applied_position": 2**31 - 3, "receipts": [2**31 - 3], "checkpoint_version": 2**32 - 2},
        "pages": chain([2**31 - 2, 2**31 - 1, 2**31], [2**32 - 1, 2**32, 2**32 + 1],
                        [2**53 - 2, 2**53 - 1, 2**53]),
        "faults": [{"kind": "crash", "point": "after_event_commit", "position": p}
                   for p in (2**31 - 1, 2**32, 2**53 - 1)]},
    "ids_compared_exactly": {
        "description": "Step 4's receipt is keyed by stable event identity, compared byte for byte: ids "
                       "that differ only in case, in a trailing space, in Unicode normalisation, or past a "
                       "shared prefix of 35 or of 300 characters (a VARCHAR(255) cuts both to one), one of "
                       "each pair committed before a crash and the other after it, on one page",
        "sink": "transactional",
        "pages": [{"cursor": "C1", "positions": list(range(1, 11)), "next_cursor": "C2",
                   "ids": ["order-AB", "item", "caf\u00e9", f"evt-{1:032d}", f"doc/{'a' * 296}/1",
                           "order-ab", "item ", "cafe\u0301", f"evt-{2:032d}", f"doc/{'a' * 296}/2"]},
                  {"cursor": "C2", "positions": [], "next_cursor": "C2"}],
        "faults": [{"kind": "crash", "point": "after_event_commit", "position": 5}]},
    "dead_letter_blocks": {
        "description": "Invariant 5, the quarantine boundary's page with a dead letter: e3 is durable "
                       "already, and the handler dead-letters e2 twice (a retryable dead letter, redriven) "
                       "before it applies it: the barrier waits for e2, \"even when later items were "
                       "visible\"",
        "sink": "transactional", "initial": {"receipts": [3]}, "pages": chain([1, 2, 3], [4]),
        "events": [{"position": 2, "behavior": "dead_letter", "failures": 2}]},
    "three_workers": {
        "description": "Three workers on one checkpoint (the others have at most two), an event that fails "
                       "three times, a review and a crash: every worker meets the failure, and none may "
                       "pass the barrier over it",
        "sink": "idempotent", "workers": 3, "pages": chain([1, 2, 3], [4, 5], [6]),
        "events": [{"position": 2, "behavior": "transient", "failures": 3},
                   {"position": 5, "behavior": "review", "resolve_after": 10.0, "resolution": "apply"}],
        "faults": [{"kind": "crash", "point": "before_event_commit", "position": 4, "worker": 3}]},
    "tokens_compared_exactly": {
        "description": "Seed 000: a cursor is stored and sent back as it came, never parsed: tokens that "
                       "differ only in a trailing space, in case or in Unicode normalisation, one of 256 "
                       "characters (past a VARCHAR(255)) and one of 4,100 (past a buffer of 4,096), a "
                       "page of one event behind each: a consumer that trims, folds or cuts a token "
                       "publishes one the provider never issued, or another page's, and skips a page",
        "sink": "transactional",
        "pages": token_chain("C1", "tok ", "tok", "Tok", "caf\u00e9", "cafe\u0301", f"v1.{'A' * 252}x",
                              f"v2.{'B' * 4096}x")},
    "positions_across_digit_widths": {
        "description": "Pages that start at each power of ten 10**k up to 10**15, behind applied_position "
                       "10**k - 1: positions compared as text (zero-padded to any width) skip 10**k",
        "sink": "transactional", "pages": chain(*([10**k, 10**(k + 1) - 1] for k in range(15)), [10**15])},
    "regression_with_backfills": {
        "description": "Step 3 with backfills, after step 4's e20 behind e30 at a multiple of 10, as "
                       "generated backfills never are: a page out of its own order, which they never excuse",
        "sink": "transactional", "backfills": True, "pages": chain([10, 30], [20, 40], [90, 80, 100])},
    "empty_pages_tokens_compared_exactly": {
        "description": "Step 7: empty pages whose new token differs from their own only in case, a "
                       "trailing space, Unicode normalisation or past 300 characters: compared folded, "
                       "trimmed or cut, it reads as the request's own, the end, and the consumer stalls",
        "sink": "transactional",
        "pages": token_chain("C1", "page", "PAGE", "tok", "tok ", "caf\u00e9", "cafe\u0301",
                              f"{'x' * 300}1", f"{'x' * 300}2", "end", step=2)},
    "falsy_or_builtin_strings": {
        "description": "Ids and tokens as a language may take them: 0 (false in Perl and PHP), and toString, "
                       "constructor and __proto__ (names every JavaScript object answers to); the overlap "
                       "re-serves id 0 behind applied_position, with its receipt, under token 0: a receipt "
                       "looked up by the id's truth halts without cause, one looked up by a key test proves "
                       "three replays that never were, and a next_cursor taken for absent when false stalls",
        "sink": "transactional",
        "pages": [{"cursor": "C1", "positions": [1, 2, 3], "next_cursor": "0",
                   "ids": ["0", "toString", "constructor"]},
                  {"cursor": "0", "positions": [1, 4], "next_cursor": "__proto__", "ids": ["0", "__proto__"]},
                  {"cursor": "__proto__", "positions": [], "next_cursor": "__proto__"}]},
    "backfills_at_large_positions": {
        "description": "Step 4, backfills, in a long-lived stream: the second page, of 1,101 events, "
                       "backfills 65,536, 2**32 + 6 and 2**53 - 1,100 to 2**53 - 2 behind applied_position "
                       "2**53 - 1: a consumer that trusts the watermark past a position (\"old history "
                       "is never backfilled\"), further behind the prefix than a window, or on a page too "
                       "big to look up, loses them (the other backfills are below 20,000, on pages of 50)",
        "sink": "transactional", "backfills": True,
        "pages": chain([70_000, 2**32 + 5, 2**53 - 1],
                       [65_536, 2**32 + 6, *range(2**53 - 1_100, 2**53 - 1)])},
    "eight_workers": {
        "description": "Eight workers on one checkpoint (over the wire each learns its number from the "
                       "handshake): a review every worker meets, an event that fails eight times and a crash "
                       "of the eighth: a consumer that keeps a step for workers 1 to 3 only, or a table of "
                       "workers sized for them, shows it past the third (round 65)",
        "sink": "idempotent", "workers": 8, "pages": chain([1, 2, 3], [4, 5], [6]),
        "events": [{"position": 2, "behavior": "review", "resolve_after": 20.0, "resolution": "apply"},
                   {"position": 5, "behavior": "transient", "failures": 8}],
        "faults": [{"kind": "crash", "point": "before_event_commit", "position": 4, "worker": 8}]},
    "late_retry_at_large_versions": {
        "description": "Invariant 3 where a long-lived checkpoint's versions are: late_retry's two workers, "
                       "the first paused for 40 after its fetch, from checkpoint_version 2**53 - 100 (the "
                       "largest a scenario holds is 2**53): a consumer that stops comparing past a "
                       "version (a signed 32-bit column, 2**31 - 1) overwrites the second worker's progress",
        "sink": "transactional", "workers": 2, "initial": {"checkpoint_version": 2**53 - 100},
        "pages": chain([1, 2, 3], [4, 5, 6], [7, 8, 9]),
        "faults": [{"kind": "pause", "point": "after_fetch", "worker": 1, "duration": 40.0}]},
    "tokens_as_base64_and_escapes": {
        "description": "Seed 000: tokens are opaque transport state: a base64 token with + and / and its "
                       "padding, and tokens holding a URL escape (%2F, %25) and a &: a consumer that "
                       "decodes or encodes a token as a query string's value publishes one the provider "
                       "never issued (the other tokens are letters, digits, spaces and Unicode)",
        "sink": "transactional",
        "pages": token_chain("C1", "eyJwIjo0Mn0+/A==", "next%2Fpage", "a=1&b=2", "100%25", "end")},
    "gap_at_large_positions": {
        "description": "Step 3, no backfills, where a long-lived stream's positions are: the second page "
                       "serves 2**40 + 1 behind applied_position 2**53 - 1 with no receipt (every other "
                       "breach is below 1,004): a validator that gives up on a position past a table or a "
                       "bitmap (65,536 slots) lets the gap through",
        "sink": "transactional", "pages": chain([2**40, 2**53 - 1], [2**40 + 1, 2**53])},
    "regression_at_large_positions": {
        "description": "Step 3 where a long-lived stream's positions are: the second page serves 2**53 - 1, "
                       "then 2**53 - 2, a regression inside the page past every position a small table holds",
        "sink": "transactional", "pages": chain([2**40, 2**40 + 2], [2**53 - 1, 2**53 - 2, 2**53])},
}
