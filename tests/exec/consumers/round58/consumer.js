// Round 58: seed 000's procedure over protocol 1 (docs/protocol.md), with one bug picked by argv[2]:
//   retry_cas   : a barrier answered false is retried from the reloaded (cursor, version) with the page's
//                 next_cursor (seed 000 step 5: a stale retry rereads, never overwrites newer progress)
//   sort_page   : the page is sorted by position before validation, "defensively" (step 3: a regression halts)
//   any_receipt : any outcome in `outcomes` counts as a replay, retry_later too (step 4, invariant 5)
//   big_ids     : the ids_at holder compared to the event's id by their digits ("e7" and "E07" match: ids
//                 normalised to a number), so a new identity at a served position passes (step 3)
'use strict';
const readline = require('readline');
const BUG = process.argv[2] || '';
const rl = readline.createInterface({input: process.stdin});
const it = rl[Symbol.asyncIterator]();
async function recv() {
  const r = await it.next();
  if (r.done) process.exit(0);
  return JSON.parse(r.value);
}
async function req(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
  return await recv();
}
const TERMINAL = new Set(['applied', 'ignored', 'quarantined']);
let contract;

function validate(cp, events, idsAt) {
  let prev = null;
  for (const e of events) {
    if (prev !== null && e.position <= prev) return `regression at ${e.position}`;
    prev = e.position;
    const holder = idsAt[String(e.position)];
    if (holder !== undefined) {
      const same = BUG === 'big_ids' ? Number(holder.replace(/\D/g, '')) === Number(e.id.replace(/\D/g, ''))
                                     : holder === e.id;
      if (!same) return `conflicting identity at ${e.position}`;
    }
    if (holder === undefined && !contract.backfills && e.position <= cp.applied_position) return `gap at ${e.position}`;
  }
  return null;
}

async function settle(ev) {
  const op = (await req({op: 'reserve', event: ev})).value;
  if (op.state === 'committed') return 'committed';
  const reply = await req({op: 'call', event: ev, reservation: op.reservation});
  const state = (await req({op: 'settle', event: ev, reservation: op.reservation, observation: reply.value})).value;
  return state;
}

async function attempt() {
  const cp = (await req({op: 'load'})).value;
  const fr = await req({op: 'fetch', cursor: cp.resume_cursor});
  if (fr.type === 'lost') return 'lost';
  if (fr.type === 'none') { await req({op: 'halt', reason: 'refused cursor'}); return 'halt'; }
  const page = fr.value;
  let events = page.events;
  if (BUG === 'sort_page') events = events.slice().sort((a, b) => a.position - b.position);
  const rc = (await req({op: 'lookup', events: page.events})).value;
  const problem = validate(cp, events, rc.ids_at);
  if (problem) { await req({op: 'halt', reason: problem}); return 'halt'; }
  if (events.length === 0 && page.next_cursor === cp.resume_cursor) return 'caught_up';
  let applied = cp.applied_position;
  for (const ev of events) {
    const outcome = rc.outcomes[ev.id];
    const replay = BUG === 'any_receipt' ? outcome !== undefined : TERMINAL.has(outcome);
    if (replay || (!contract.backfills && ev.position <= cp.applied_position)) {
      await req({op: 'skip', event: ev});
      applied = Math.max(applied, ev.position);
      continue;
    }
    const d = (await req({op: 'handle', event: ev})).value;
    const target = Math.max(applied, ev.position);
    let outcomeName;
    if (d === 'apply') outcomeName = 'applied';
    else if (d === 'ignore') outcomeName = 'ignored';
    else if (d === 'quarantine') outcomeName = 'quarantined';
    else return 'blocked';
    let withEffect = false;
    if (d === 'apply') {
      if (contract.external_sink) {
        const s = await settle(ev);
        if (s !== 'committed') return 'blocked';
      } else withEffect = true;
    }
    const r = await req({op: 'commit', event: ev, outcome: outcomeName, applied_position: target, with_effect: withEffect});
    if (r.type === 'lost') return 'lost';
    applied = target;
  }
  if (page.next_cursor === cp.resume_cursor) return 'caught_up';
  const b = await req({op: 'barrier', cursor: cp.resume_cursor, version: cp.checkpoint_version,
                       next_cursor: page.next_cursor, next_version: cp.checkpoint_version + 1,
                       applied_position: applied});
  if (b.type === 'lost') return 'lost';
  if (b.value === false && BUG === 'retry_cas') {
    const now = (await req({op: 'load'})).value;
    const again = await req({op: 'barrier', cursor: now.resume_cursor, version: now.checkpoint_version,
                             next_cursor: page.next_cursor, next_version: now.checkpoint_version + 1,
                             applied_position: Math.max(applied, now.applied_position)});
    if (again.type === 'lost') return 'lost';
    return again.value ? 'advanced' : 'rejected';
  }
  return b.value ? 'advanced' : 'rejected';
}

(async () => {
  const hello = await recv();
  if (hello.type !== 'hello' || hello.value.protocol !== 1) { process.stderr.write('unknown protocol\n'); process.exit(3); }
  contract = hello.value.contract;
  for (;;) {
    const s = await attempt();
    if (s === 'halt') { await recv(); }
    if (s === 'caught_up' || s === 'blocked') await req({op: 'wait', reason: s});
  }
})();
