#!/usr/bin/env node
// Round 55 (tests/judge/test_hostile_round55.py): seed 000's procedure over protocol 1, written from
// docs/protocol.md alone (not from examples/consumers/), with the one bug argv[2] names ('none': no bug):
//   in_outcomes         an event whose id is a key of the receipts object is a replay: `id in outcomes`, which
//                       is also true of toString, constructor and __proto__ (step 4: a durable receipt proves
//                       the replay; invariants 1, 2)
//   null_is_true        a commit answered anything but false is done: `lost` (null) too (invariant 1)
//   truthy_settle       a settlement state that is a non-empty string is committed: provisional too (seed 001
//                       step 5)
//   timeout_budget      an effect unsettled twice in this life is given up and committed as ignored (invariant 5:
//                       an ignore the handler never ordered)
//   settle_under_reply  a reply is settled under the identity it carries, not the reservation (seed 001 step 6;
//                       absorbed by fenced settlement, which rejects it)
//   result_means_done   a record holding a result is committed (harmless: only a committed record holds one)
//   token_trim          the barrier publishes the next cursor trim()med, "sanitised" (step 5: the returned next
//                       cursor, never parsed; invariant 3)
'use strict';
const fs = require('fs');
const BUG = process.argv[2] || 'none';
let buf = Buffer.alloc(0);
const chunk = Buffer.alloc(65536);
function readLine() {
  for (;;) {
    const i = buf.indexOf(10);
    if (i >= 0) { const line = buf.slice(0, i).toString('utf8'); buf = buf.slice(i + 1); return line; }
    let n;
    try { n = fs.readSync(0, chunk, 0, chunk.length, null); } catch (e) { if (e.code === 'EAGAIN') continue; throw e; }
    if (n === 0) process.exit(0);
    buf = Buffer.concat([buf, chunk.slice(0, n)]);
  }
}
function rpc(req) { fs.writeSync(1, JSON.stringify(req) + '\n'); return JSON.parse(readLine()); }
const hello = JSON.parse(readLine());
if (hello.value.protocol !== 1) { process.stderr.write('unknown protocol\n'); process.exit(3); }
const contract = hello.value.contract;
const TERMINAL = new Set(['applied', 'ignored', 'quarantined']);
const tries = {};

function settle(e) {
  const op = rpc({op: 'reserve', event: e}).value;
  if (op.state === 'committed') return 'committed';
  if (BUG === 'result_means_done' && op.result !== null) return 'committed';
  const r = rpc({op: 'call', event: e, reservation: op.reservation});
  let res = op.reservation;
  if (BUG === 'settle_under_reply' && r.type === 'reply') res = r.value.identity;
  const st = rpc({op: 'settle', event: e, reservation: res, observation: r.value}).value;
  if (BUG === 'truthy_settle') return st ? 'committed' : 'blocked';
  if (BUG === 'timeout_budget' && st !== 'committed') {
    tries[e.id] = (tries[e.id] || 0) + 1;
    if (tries[e.id] >= 2) return 'give_up';
  }
  return st === 'committed' ? 'committed' : 'blocked';
}

function validate(cp, page, idsAt) {
  let prev = null; const seen = new Set();
  for (const e of page.events) {
    if (prev !== null && e.position <= prev) return 'regression';
    if (seen.has(e.id)) return 'regression (id twice)';
    seen.add(e.id); prev = e.position;
    const holder = idsAt[String(e.position)];
    if (holder !== undefined && holder !== e.id) return 'conflicting identity';
    if (holder === undefined && !contract.backfills && e.position <= cp.applied_position) return 'gap';
  }
  return null;
}

function attempt() {
  const cp = rpc({op: 'load'}).value;
  const f = rpc({op: 'fetch', cursor: cp.resume_cursor});
  if (f.type === 'lost') return 'lost';
  if (f.type === 'none') { rpc({op: 'halt', reason: 'provider refused cursor'}); process.exit(0); }
  const page = f.value;
  const rc = rpc({op: 'lookup', events: page.events}).value;
  const why = validate(cp, page, rc.ids_at);
  if (why) { rpc({op: 'halt', reason: why}); process.exit(0); }
  if (page.events.length === 0 && page.next_cursor === cp.resume_cursor) return 'caught_up';
  let prefix = cp.applied_position;
  for (const e of page.events) {
    const out = rc.outcomes[e.id];
    const done = BUG === 'in_outcomes' ? (e.id in rc.outcomes) : TERMINAL.has(out);
    if (done || (!contract.backfills && e.position <= cp.applied_position)) {
      rpc({op: 'skip', event: e}); prefix = Math.max(prefix, e.position); continue;
    }
    const d = rpc({op: 'handle', event: e}).value;
    const target = Math.max(prefix, e.position);
    let outcome;
    if (d === 'apply') outcome = 'applied';
    else if (d === 'ignore') outcome = 'ignored';
    else if (d === 'quarantine') outcome = 'quarantined';
    else return 'blocked';
    if (d === 'apply' && contract.external_sink) {
      const s = settle(e);
      if (s === 'give_up') { outcome = 'ignored'; }
      else if (s !== 'committed') return 'blocked';
    }
    const c = rpc({op: 'commit', event: e, outcome, applied_position: target,
                   with_effect: d === 'apply' && !contract.external_sink});
    if (BUG === 'null_is_true') { if (c.value === false) return 'lost'; }
    else if (c.type === 'lost') return 'lost';
    prefix = target;
  }
  if (page.next_cursor === cp.resume_cursor) return 'caught_up';
  const nextVersion = cp.checkpoint_version + 1;
  const target = BUG === 'token_trim' ? page.next_cursor.trim() : page.next_cursor;
  const b = rpc({op: 'barrier', cursor: cp.resume_cursor, version: cp.checkpoint_version,
                 next_cursor: target, next_version: nextVersion, applied_position: prefix});
  if (b.type === 'lost') return 'lost';
  return b.value ? 'advanced' : 'rejected';
}

for (;;) {
  const s = attempt();
  if (s === 'caught_up' || s === 'blocked') rpc({op: 'wait', reason: s});
}
