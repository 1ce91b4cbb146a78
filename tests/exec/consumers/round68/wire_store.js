// Seed 000 over the wire, keeping no progress in memory: every fact it acts on is read from the store the
// protocol gives it just before it acts. Before each event it reads the checkpoint again (`load`: the
// attempt is given up if the cursor or version moved, step 5's "reread state") and that event's receipt
// (`lookup` of the one event: a terminal receipt proves replay, step 4); each commit writes the larger of the
// durable applied_position just read and the event's position (invariant 2: every earlier event of the page
// is durable, since it stops at the first non-terminal outcome); the barrier's applied_position is the durable
// one read last, raised through the page's last event, after a fresh lookup of the whole page shows every
// event terminal (invariant 1). No skip notes. With an external sink, a timeout is called again with the same
// reservation (seed 001 step 2: reserved again
// before each call, which gives the same tuple back unless the context changed) up to `--calls N` times.
"use strict";
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin, terminal: false });
const lines = [];
let waiting = null;
rl.on("line", (l) => { if (waiting) { const w = waiting; waiting = null; w(l); } else lines.push(l); });
rl.on("close", () => process.exit(0));
function nextLine() {
  if (lines.length) return Promise.resolve(lines.shift());
  return new Promise((res) => { waiting = res; });
}
class Lost extends Error {}
async function ask(op, fields) {
  process.stdout.write(JSON.stringify(Object.assign({ op }, fields || {})) + "\n");
  const msg = JSON.parse(await nextLine());
  if (msg.type === "lost") throw new Lost();
  return msg.value;
}
const TERMINAL = new Set(["applied", "ignored", "quarantined"]);
const OUTCOME = { apply: "applied", ignore: "ignored", quarantine: "quarantined" };
const callsArg = process.argv.indexOf("--calls");
const CALLS = callsArg > 0 ? parseInt(process.argv[callsArg + 1], 10) : 1;

function validate(cp, page, idsAt, backfills) {
  let last = null;
  const seen = new Set();
  for (const e of page.events) {
    if (last !== null && e.position <= last) return "regression";
    if (seen.has(e.id)) return "id twice";
    seen.add(e.id);
    last = e.position;
    const holder = idsAt[String(e.position)];
    if (holder !== undefined && holder !== e.id) return "conflicting identity";
    if (!backfills && e.position <= cp.applied_position && holder === undefined) return "gap";
  }
  return null;
}

async function settle(e) {
  for (let i = 0; i < CALLS; i++) {
    // reserve before every call: the same tuple comes back unless the authorization context changed, which
    // requires a new reservation (seed 001 step 2)
    const op = await ask("reserve", { event: e });
    if (op.state === "committed") return true;
    const obs = await ask("call", { event: e, reservation: op.reservation });
    const state = await ask("settle", { event: e, reservation: op.reservation, observation: obs });
    if (state === "committed") return true;
    if (obs !== "timeout") return false;
  }
  return false;
}

function same(a, b) {
  return a.resume_cursor === b.resume_cursor && a.checkpoint_version === b.checkpoint_version;
}

async function attempt(contract) {
  const cp = await ask("load");
  const page = await ask("fetch", { cursor: cp.resume_cursor });
  if (page === null) await ask("halt", { reason: "refused cursor" });
  const rec = await ask("lookup", { events: page.events });
  const reason = validate(cp, page, rec.ids_at, contract.backfills);
  if (reason) await ask("halt", { reason });
  if (page.events.length === 0 && page.next_cursor === cp.resume_cursor) return "caught_up";
  for (const e of page.events) {
    const now = await ask("load");
    if (!same(now, cp)) return "rejected";
    const mine = (await ask("lookup", { events: [e] })).outcomes[e.id];
    if (TERMINAL.has(mine)) continue;
    if (!contract.backfills && e.position <= cp.applied_position) continue;
    const d = await ask("handle", { event: e });
    if (!(d in OUTCOME)) return "blocked";
    if (d === "apply" && contract.external_sink && !(await settle(e))) return "blocked";
    await ask("commit", {
      event: e, outcome: OUTCOME[d], applied_position: Math.max(now.applied_position, e.position),
      with_effect: d === "apply" && !contract.external_sink,
    });
  }
  if (page.next_cursor === cp.resume_cursor) return "caught_up";
  const fresh = (await ask("lookup", { events: page.events })).outcomes;
  for (const e of page.events) {
    if (!TERMINAL.has(fresh[e.id]) && !(!contract.backfills && e.position <= cp.applied_position)) return "blocked";
  }
  const now = await ask("load");
  if (!same(now, cp)) return "rejected";
  let prefix = now.applied_position;
  for (const e of page.events) prefix = Math.max(prefix, e.position);
  await ask("barrier", {
    cursor: cp.resume_cursor, version: cp.checkpoint_version, next_cursor: page.next_cursor,
    next_version: cp.checkpoint_version + 1, applied_position: prefix,
  });
  return "advanced";
}

async function main() {
  const hello = JSON.parse(await nextLine());
  if (hello.value.protocol !== 1) { process.stderr.write("unknown protocol\n"); process.exit(3); }
  const contract = hello.value.contract;
  for (;;) {
    let status;
    try { status = await attempt(contract); } catch (err) { if (err instanceof Lost) continue; throw err; }
    if (status === "caught_up" || status === "blocked") await ask("wait", { reason: status });
  }
}
main().catch((err) => { process.stderr.write(String(err && err.stack) + "\n"); process.exit(1); });
