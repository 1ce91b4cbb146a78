// Round 65: seed 000's procedure over the wire (docs/protocol.md), with one bug chosen by argv[2]:
//   worker4   - from worker 4 on, a non-terminal decision counts as done (seed 000 invariant 5)
//   lives     - a life counter in a file under /tmp: every 25th life trusts the watermark with backfills
//               (seed 000 step 4)
//   sameseen  - a token seen non-advancing twice in this life is the end of the stream: stop (step 7)
//   bigpos    - none on purpose: positions are JavaScript numbers (JSON.parse), exact only to 2**53
//               (invariant 2: the applied_position written must be the event's own)
//   none      - no bug (except bigpos's numbers, which every variant shares)
'use strict';
const fs = require('fs');
const readline = require('readline');

const BUG = process.argv[2] || 'none';
const rl = readline.createInterface({ input: process.stdin, terminal: false });
const it = rl[Symbol.asyncIterator]();

async function ask(req) {
  process.stdout.write(JSON.stringify(req) + '\n');
  const { value, done } = await it.next();
  if (done) process.exit(0);
  return JSON.parse(value);
}

const TERMINAL = new Set(['applied', 'ignored', 'quarantined']);

async function main() {
  const first = await it.next();
  if (first.done) return;
  const hello = JSON.parse(first.value);
  if (hello.type !== 'hello' || hello.value.protocol !== 1) {
    process.stderr.write('unknown protocol\n');
    process.exit(3);
  }
  const worker = hello.value.worker;
  const contract = hello.value.contract;
  let trustWatermark = !contract.backfills;
  if (BUG === 'lives') {
    const f = '/tmp/r65-node-lives-' + process.ppid;
    let n = 0;
    try { n = parseInt(fs.readFileSync(f, 'utf8'), 10) || 0; } catch (e) { n = 0; }
    n += 1;
    fs.writeFileSync(f, String(n));
    if (n % 25 === 0) trustWatermark = true;
  }
  const nonAdvancing = {};
  for (;;) {
    const status = await attempt();
    if (status === 'caught_up' || status === 'blocked') {
      await ask({ op: 'wait', reason: status });
    }
    if (status === 'stop') return;
  }

  async function attempt() {
    const cp = (await ask({ op: 'load' })).value;
    const res = await ask({ op: 'fetch', cursor: cp.resume_cursor });
    if (res.type === 'lost') return 'lost';
    if (res.type === 'none') {
      await ask({ op: 'halt', reason: 'provider refused cursor ' + cp.resume_cursor });
      return 'stop';
    }
    const page = res.value;
    const rec = (await ask({ op: 'lookup', events: page.events })).value;
    const outcomes = rec.outcomes, idsAt = rec.ids_at;
    let prev = null;
    for (const e of page.events) {
      if (prev !== null && e.position <= prev) {
        await ask({ op: 'halt', reason: 'source-order regression at ' + e.position });
        return 'stop';
      }
      prev = e.position;
      const key = String(e.position);
      const holder = Object.prototype.hasOwnProperty.call(idsAt, key) ? idsAt[key] : null;
      if (holder !== null && holder !== e.id) {
        await ask({ op: 'halt', reason: 'conflicting identity at ' + e.position });
        return 'stop';
      }
      if (holder === null && !contract.backfills && e.position <= cp.applied_position) {
        await ask({ op: 'halt', reason: 'gap at ' + e.position });
        return 'stop';
      }
    }
    if (page.events.length === 0 && page.next_cursor === cp.resume_cursor) {
      if (BUG === 'sameseen') {
        nonAdvancing[cp.resume_cursor] = (nonAdvancing[cp.resume_cursor] || 0) + 1;
        if (nonAdvancing[cp.resume_cursor] >= 2) return 'stop';
      }
      return 'caught_up';
    }
    let applied = cp.applied_position;
    for (const e of page.events) {
      const o = Object.prototype.hasOwnProperty.call(outcomes, e.id) ? outcomes[e.id] : null;
      if (TERMINAL.has(o) || (trustWatermark && e.position <= cp.applied_position)) {
        await ask({ op: 'skip', event: e });
        applied = Math.max(applied, e.position);
        continue;
      }
      const decision = (await ask({ op: 'handle', event: e })).value;
      const target = Math.max(applied, e.position);
      let outcome;
      if (decision === 'apply') outcome = 'applied';
      else if (decision === 'ignore') outcome = 'ignored';
      else if (decision === 'quarantine') outcome = 'quarantined';
      else if (BUG === 'worker4' && worker >= 4) { applied = target; continue; }
      else return 'blocked';
      let withEffect = outcome === 'applied';
      if (outcome === 'applied' && contract.external_sink) {
        withEffect = false;
        const op = (await ask({ op: 'reserve', event: e })).value;
        if (op.state !== 'committed') {
          const reply = (await ask({ op: 'call', event: e, reservation: op.reservation })).value;
          const st = (await ask({ op: 'settle', event: e, reservation: op.reservation, observation: reply })).value;
          if (st !== 'committed') return 'blocked';
        }
      }
      const c = await ask({ op: 'commit', event: e, outcome: outcome, applied_position: target,
        with_effect: withEffect });
      if (c.type === 'lost') return 'lost';
      applied = target;
    }
    if (page.next_cursor === cp.resume_cursor) return 'caught_up';
    const b = await ask({ op: 'barrier', cursor: cp.resume_cursor, version: cp.checkpoint_version,
      next_cursor: page.next_cursor, next_version: cp.checkpoint_version + 1, applied_position: applied });
    if (b.type === 'lost') return 'lost';
    return b.value ? 'advanced' : 'rejected';
  }
}

main().then(() => process.exit(0), (err) => { process.stderr.write(String(err) + '\n'); process.exit(4); });
