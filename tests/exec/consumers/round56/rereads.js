// Round 56, a correct consumer over exec: (docs/protocol.md) in Node.js, standard library only: seed 000's
// procedure with different timing. It loads the checkpoint again just before each page barrier and skips the
// barrier when the checkpoint already moved (seed 000 step 5: "A stale retry that loses this comparison must
// reread state"; it reread sooner); after a lost reply it backs off once before the next attempt (step 6 sets no
// pace); and when caught up it backs off twice (step 7: "stop or back off instead of spinning").
"use strict";
const fs = require("fs");

const TERMINAL = ["applied", "ignored", "quarantined"];
let pending = Buffer.alloc(0);
const chunk = Buffer.alloc(65536);

function readLine() {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl).toString("utf8");
      pending = pending.subarray(nl + 1);
      return line;
    }
    let n;
    try { n = fs.readSync(0, chunk, 0, chunk.length, null); } catch (e) { if (e.code === "EOF") n = 0; else throw e; }
    if (n === 0) process.exit(0);
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

function ask(op, fields = {}) {
  fs.writeSync(1, JSON.stringify({ op, ...fields }) + "\n");
  const result = JSON.parse(readLine());
  return [result.type, result.value];
}

const hello = JSON.parse(readLine());
if (hello.type !== "hello" || hello.value.protocol !== 1) {
  process.stderr.write(`expected protocol 1, got ${JSON.stringify(hello)}\n`);
  process.exit(1);
}
const { backfills, external_sink: externalSink } = hello.value.contract;

function validate(cp, page, idsAt) {
  let previous = null;
  for (const e of page.events) {
    if (previous !== null && e.position <= previous) return `regression: ${e.position} after ${previous}`;
    previous = e.position;
    const holder = idsAt[String(e.position)];
    if (holder !== undefined && holder !== e.id) return `conflicting identity at ${e.position}`;
    if (holder === undefined && !backfills && e.position <= cp.applied_position) return `gap at ${e.position}`;
  }
  return null;
}

function commit(event, outcome, applied, withEffect) {
  const [kind, done] = ask("commit", { event, outcome, applied_position: applied, with_effect: withEffect });
  return kind === "lost" ? "lost" : done;
}

function settle(event) {
  const [, op] = ask("reserve", { event });
  if (op.state === "committed") return "committed";
  const [, reply] = ask("call", { event, reservation: op.reservation });
  const [, state] = ask("settle", { event, reservation: op.reservation, observation: reply });
  return state === "committed" ? "committed" : "blocked";
}

function processPage(cp, page, outcomes) {
  let applied = cp.applied_position;
  for (const event of page.events) {
    if (TERMINAL.includes(outcomes[event.id]) || (!backfills && event.position <= applied)) {
      ask("skip", { event });
      applied = Math.max(applied, event.position);
      continue;
    }
    const [, decision] = ask("handle", { event });
    const target = Math.max(applied, event.position);
    let result;
    if (decision === "apply") {
      if (externalSink) {
        const s = settle(event);
        result = s === "committed" ? commit(event, "applied", target, false) : s;
      } else result = commit(event, "applied", target, true);
    } else if (decision === "ignore") result = commit(event, "ignored", target, false);
    else if (decision === "quarantine") result = commit(event, "quarantined", target, false);
    else return ["blocked", applied];
    if (result === "lost" || result === "blocked") return [result, applied];
    applied = target;
  }
  return ["done", applied];
}

function attempt() {
  const [, cp] = ask("load");
  const cursor = cp.resume_cursor, version = cp.checkpoint_version;
  const [kind, page] = ask("fetch", { cursor });
  if (kind === "lost") return "lost";
  if (kind === "none") { ask("halt", { reason: `provider refused cursor '${cursor}'` }); process.exit(0); }
  const [, receipts] = ask("lookup", { events: page.events });
  const problem = validate(cp, page, receipts.ids_at);
  if (problem) { ask("halt", { reason: problem }); process.exit(0); }
  if (page.events.length === 0 && page.next_cursor === cursor) return "caught_up";
  const [status, applied] = processPage(cp, page, receipts.outcomes);
  if (status !== "done") return status;
  if (page.next_cursor === cursor) return "caught_up";
  const [, now] = ask("load");
  if (now.resume_cursor !== cursor || now.checkpoint_version !== version) return "rejected";
  const [k, swapped] = ask("barrier", { cursor, version, next_cursor: page.next_cursor,
    next_version: version + 1, applied_position: applied });
  if (k === "lost") return "lost";
  return swapped ? "advanced" : "rejected";
}

for (;;) {
  const status = attempt();
  if (status === "caught_up") { ask("wait", { reason: "caught_up" }); ask("wait", { reason: "caught_up" }); }
  else if (status === "blocked" || status === "lost") ask("wait", { reason: "blocked" });
}
