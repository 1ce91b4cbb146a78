#!/usr/bin/env node
// Round 62: seed 000's procedure over the wire (docs/protocol.md), with one bug picked by argv[2].
//   overlap-unchecked  step 3: events at or below the loaded applied_position are not validated ("overlap is fine")
//   same-token-idle    step 7: a page whose next_cursor is the request's is "nothing new", events or not
//   crossed-success    seed 001 step 6: a success reply that settled provisional is committed anyway
//   gap-strict         step 3: the gap check compares with < where the rule says "at or below"
//   none               the procedure
'use strict';
const readline = require('readline');
const BUG = process.argv[2] || 'none';
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const lines = rl[Symbol.asyncIterator]();

async function next() {
  const { value, done } = await lines.next();
  if (done) process.exit(0);
  return JSON.parse(value);
}
async function ask(req) {
  process.stdout.write(JSON.stringify(req) + '\n');
  return next();
}
const TERMINAL = new Set(['applied', 'ignored', 'quarantined']);
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
let contract;

function validate(cp, page, idsAt) {
  let prev = null;
  for (const e of page.events) {
    if (prev !== null && e.position <= prev) return `regression at ${e.position}`;
    prev = e.position;
    if (BUG === 'overlap-unchecked' && e.position <= cp.applied_position) continue;
    const key = String(e.position);
    const holder = own(idsAt, key) ? idsAt[key] : null;
    if (holder !== null && holder !== e.id) return `conflicting identity at ${e.position}`;
    const behind = BUG === 'gap-strict' ? e.position < cp.applied_position : e.position <= cp.applied_position;
    if (holder === null && !contract.backfills && behind) return `gap at ${e.position}`;
  }
  return null;
}

async function settle(e) {
  const op = (await ask({ op: 'reserve', event: e })).value;
  if (op.state === 'committed') return true;
  const r = await ask({ op: 'call', event: e, reservation: op.reservation });
  const st = (await ask({ op: 'settle', event: e, reservation: op.reservation, observation: r.value })).value;
  if (st === 'committed') return true;
  if (BUG === 'crossed-success' && r.type === 'reply' && r.value.outcome === 'success') return true;
  return false;
}

async function attempt() {
  const cp = (await ask({ op: 'load' })).value;
  const f = await ask({ op: 'fetch', cursor: cp.resume_cursor });
  if (f.type === 'lost') return 'lost';
  if (f.type === 'none') { await ask({ op: 'halt', reason: 'cursor refused' }); }
  const page = f.value;
  const rec = (await ask({ op: 'lookup', events: page.events })).value;
  const problem = validate(cp, page, rec.ids_at);
  if (problem) await ask({ op: 'halt', reason: problem });
  if (page.next_cursor === cp.resume_cursor && (BUG === 'same-token-idle' || page.events.length === 0)) {
    return 'caught_up';
  }
  let prefix = cp.applied_position;
  for (const e of page.events) {
    const o = own(rec.outcomes, e.id) ? rec.outcomes[e.id] : null;
    if (TERMINAL.has(o) || (!contract.backfills && e.position <= cp.applied_position)) {
      await ask({ op: 'skip', event: e });
      prefix = Math.max(prefix, e.position);
      continue;
    }
    const d = (await ask({ op: 'handle', event: e })).value;
    const outcome = { apply: 'applied', ignore: 'ignored', quarantine: 'quarantined' }[d];
    if (outcome === undefined) return 'blocked';
    const target = Math.max(prefix, e.position);
    if (d === 'apply' && contract.external_sink && !(await settle(e))) return 'blocked';
    const c = await ask({ op: 'commit', event: e, outcome, applied_position: target,
      with_effect: d === 'apply' && !contract.external_sink });
    if (c.type === 'lost') return 'lost';
    prefix = target;
  }
  if (page.next_cursor === cp.resume_cursor) return 'caught_up';
  const b = await ask({ op: 'barrier', cursor: cp.resume_cursor, version: cp.checkpoint_version,
    next_cursor: page.next_cursor, next_version: cp.checkpoint_version + 1, applied_position: prefix });
  if (b.type === 'lost') return 'lost';
  return b.value ? 'advanced' : 'rejected';
}

(async () => {
  const hello = await next();
  if (hello.type !== 'hello' || hello.value.protocol !== 1) {
    process.stderr.write('unknown protocol\n');
    process.exit(3);
  }
  contract = hello.value.contract;
  for (;;) {
    const s = await attempt();
    if (s === 'caught_up' || s === 'blocked') await ask({ op: 'wait', reason: s });
  }
})();
