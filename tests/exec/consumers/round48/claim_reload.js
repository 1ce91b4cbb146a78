// Seed 000's procedure over the consumer protocol in Node.js (standard library only), with three liberties:
// it claims the page by a compare-and-swap that keeps the cursor and raises only the version before any
// effect (seed 004: "Writing the same cursor with a new idempotency key and correct expected revision is
// allowed and advances the checkpoint revision"); a commit whose reply was lost is looked up and retried
// with the identical command, never passed over (seed 004: "On a lost response, retry the identical command";
// seed 000 step 4: a durable receipt proves the outcome); and it backs off twice when caught up or blocked
// (seed 000 step 7: "stop or back off", no length given).
"use strict";
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin });
const lines = [];
let waiting = null;
rl.on("line", (l) => { if (waiting) { const w = waiting; waiting = null; w(l); } else lines.push(l); });
rl.on("close", () => process.exit(0));
function next() {
  return new Promise((res) => { if (lines.length) res(lines.shift()); else waiting = res; });
}
async function ask(req) {
  process.stdout.write(JSON.stringify(req) + "\n");
  const a = JSON.parse(await next());
  return [a.type, a.value];
}
const TERMINAL = new Set(["applied", "ignored", "quarantined"]);
const OUTCOME = { apply: "applied", ignore: "ignored", quarantine: "quarantined" };

function invalid(cp, events, idsAt, backfills) {
  let prev = null;
  for (const e of events) {
    if (prev !== null && e.position <= prev) return `regression at ${e.position}`;
    prev = e.position;
    const holder = idsAt[String(e.position)];
    if (holder !== undefined && holder !== e.id) return `two ids at ${e.position}`;
    if (holder === undefined && !backfills && e.position <= cp.applied_position) return `gap at ${e.position}`;
  }
  return null;
}

async function settle(e) {
  const [, op] = await ask({ op: "reserve", event: e });
  if (op.state === "committed") return true;
  const [, reply] = await ask({ op: "call", event: e, reservation: op.reservation });
  const [, state] = await ask({ op: "settle", event: e, reservation: op.reservation, observation: reply });
  return state === "committed";
}

async function durable(e, outcome, applied, withEffect) {
  for (let i = 0; i < 3; i++) {
    const [kind] = await ask({ op: "commit", event: e, outcome, applied_position: applied, with_effect: withEffect });
    if (kind !== "lost") return true;
    const [, r] = await ask({ op: "lookup", events: [e] });
    if (TERMINAL.has(r.outcomes[e.id])) return true;
  }
  return false;
}

async function attempt(contract) {
  const [, cp] = await ask({ op: "load" });
  const [kind, page] = await ask({ op: "fetch", cursor: cp.resume_cursor });
  if (kind === "lost") return "lost";
  if (kind === "none") await ask({ op: "halt", reason: "provider refused the cursor" });
  const [, receipts] = await ask({ op: "lookup", events: page.events });
  const problem = invalid(cp, page.events, receipts.ids_at, contract.backfills);
  if (problem) await ask({ op: "halt", reason: problem });
  if (page.next_cursor === cp.resume_cursor && page.events.length === 0) return "caught_up";
  let version = cp.checkpoint_version;
  if (page.next_cursor !== cp.resume_cursor) {
    const [k, ok] = await ask({ op: "barrier", cursor: cp.resume_cursor, version, next_cursor: cp.resume_cursor,
                               next_version: version + 1, applied_position: cp.applied_position });
    if (k === "lost") return "lost";
    if (!ok) return "rejected";
    version += 1;
  }
  let applied = cp.applied_position;
  for (const e of page.events) {
    if (TERMINAL.has(receipts.outcomes[e.id]) || (!contract.backfills && e.position <= cp.applied_position)) {
      await ask({ op: "skip", event: e });
      applied = Math.max(applied, e.position);
      continue;
    }
    const [, decision] = await ask({ op: "handle", event: e });
    if (!(decision in OUTCOME)) return "blocked";
    if (decision === "apply" && contract.external_sink && !(await settle(e))) return "blocked";
    const target = Math.max(applied, e.position);
    const withEffect = decision === "apply" && !contract.external_sink;
    if (!(await durable(e, OUTCOME[decision], target, withEffect))) return "lost";
    applied = target;
  }
  if (page.next_cursor === cp.resume_cursor) return "caught_up";
  const [k] = await ask({ op: "barrier", cursor: cp.resume_cursor, version, next_cursor: page.next_cursor,
                         next_version: version + 1, applied_position: applied });
  return k === "lost" ? "lost" : "next";
}

(async () => {
  const hello = JSON.parse(await next()).value;
  if (hello.protocol !== 1) { process.stderr.write("unknown protocol\n"); process.exit(3); }
  for (;;) {
    const status = await attempt(hello.contract);
    if (status === "caught_up" || status === "blocked") {
      await ask({ op: "wait", reason: status });
      await ask({ op: "wait", reason: status });
    }
  }
})();
