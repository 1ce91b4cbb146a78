// Round 47 (built from examples/consumers/javascript/consumer.js with one change): the standby worker (any
// worker but 1) "knows" it is behind and writes its barrier without the compare-and-swap (seed 000 invariant
// 3: a barrier replaces resume_cursor only with a compare-and-swap that still matches the request cursor and
// version; step 5: a stale retry must reread).
// Seed 000's procedure (steps 1-7, with seed 001's settlement of an external effect) as a process speaking
// simkit's protocol 1 (docs/protocol.md): JSON lines on stdin and stdout, Node's standard library only.
//
// A port of simkit/procedure/consumer.py, method for method. simkit starts one process per worker life and kills
// it at a crash, so nothing here needs to survive one: durable state is the store's, behind the requests.
//
//     simkit run retry_walkthrough --strategy exec:examples/consumers/javascript/run
"use strict";
const fs = require("fs");

const TERMINAL = ["applied", "ignored", "quarantined"];
let WORKER = 1;
const LOST = "lost", BLOCKED = "blocked", COMMITTED = "committed";

// -- the protocol: one request line out, one result line in (synchronous: the procedure is sequential) ---------
let pending = Buffer.alloc(0);
const chunk = Buffer.alloc(65536);
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

function readLine() {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl).toString("utf8");
      pending = pending.subarray(nl + 1);
      return line;
    }
    let n;
    try {
      n = fs.readSync(0, chunk, 0, chunk.length, null);
    } catch (e) {
      if (e.code === "EAGAIN") {              // a non-blocking stdin: wait a millisecond rather than spin
        Atomics.wait(PAUSE, 0, 0, 1);
        continue;
      }
      if (e.code === "EOF") n = 0; else throw e;
    }
    if (n === 0) process.exit(0);             // stdin closed: simkit is done with this life
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}

function ask(op, fields = {}) {
  fs.writeSync(1, JSON.stringify({ op, ...fields }) + "\n");
  const result = JSON.parse(readLine());
  return [result.type, result.value];
}

function halt(reason) {
  ask("halt", { reason });                    // never answered: simkit ends this life
  process.exit(0);
}

// -- the procedure ----------------------------------------------------------------------------------------------
class Procedure {
  constructor(contract, publishTokenOnFetch) {
    this.backfills = contract.backfills;
    this.externalSink = contract.external_sink;
    this.publishTokenOnFetch = publishTokenOnFetch;   // seed 000's first unsafe shortcut, on purpose
  }

  run() {
    for (;;) {
      const status = this.attempt();
      if (status === "caught_up" || status === "blocked") ask("wait", { reason: status });
    }
  }

  attempt() {
    // Step 1: load the checkpoint; its cursor and version are the attempt identity.
    const [, checkpoint] = ask("load");
    const cursor = checkpoint.resume_cursor, version = checkpoint.checkpoint_version;
    // Step 2: fetch with that cursor; the next cursor stays in memory.
    const [kind, page] = ask("fetch", { cursor });
    if (kind === "lost") return "lost";
    if (kind === "none") halt(`provider refused cursor '${cursor}'`);
    if (this.publishTokenOnFetch && !this.isCaughtUp(checkpoint, page)) {
      const [k, swapped] = ask("barrier", { cursor, version, next_cursor: page.next_cursor,
        next_version: version + 1, applied_position: checkpoint.applied_position });
      if (k === "lost") return "lost";
      if (!swapped) return "rejected";
    }
    const [, receipts] = ask("lookup", { events: page.events });
    // Step 3: validate source order and identities before any effect.
    const problem = this.validate(checkpoint, page, receipts.ids_at);
    if (problem) halt(problem);
    // Step 7: an empty page with the request token back is no progress: back off, don't spin.
    if (this.isCaughtUp(checkpoint, page)) return "caught_up";
    // Step 4: process events in source order; stop at the first outcome that is not durable and terminal.
    const [status, applied] = this.process(checkpoint, page, receipts.outcomes);
    if (status !== "done") return status;
    if (page.next_cursor === cursor) return "caught_up";
    if (this.publishTokenOnFetch) return "advanced";
    // Step 5: every event has a durable outcome: compare-and-swap the page barrier.
    const [k, swapped] = WORKER === 1 ? ask("barrier", { cursor, version, next_cursor: page.next_cursor,
      next_version: version + 1, applied_position: applied }) : ask("overwrite", { next_cursor: page.next_cursor, next_version: version + 1, applied_position: applied });
    if (k === "lost") return "lost";
    return swapped ? "advanced" : "rejected";
  }

  validate(checkpoint, page, idsAt) {
    let previous = null;
    const applied = checkpoint.applied_position;
    for (const e of page.events) {
      if (previous !== null && e.position <= previous)
        return `source-order regression: position ${e.position} after ${previous}`;
      previous = e.position;
      const holder = idsAt[String(e.position)];
      if (holder !== undefined && holder !== e.id)
        return `conflicting identity at position ${e.position}: ${e.id} but receipt for ${holder}`;
      if (holder === undefined && !this.backfills && e.position <= applied)
        return `gap: ${e.id} at position ${e.position} is behind applied_position ${applied} with no ` +
               `receipt, and the provider contract has no backfills`;
    }
    return null;
  }

  process(checkpoint, page, receipts) {
    let applied = checkpoint.applied_position;
    for (const event of page.events) {
      if (this.isReplay(event, receipts, applied)) {
        ask("skip", { event });
        applied = Math.max(applied, event.position);
        continue;
      }
      const [, decision] = ask("handle", { event });
      const target = Math.max(applied, event.position);
      let result;
      if (decision === "apply") result = this.apply(event, target);
      else if (decision === "ignore") result = this.commit(event, "ignored", target);
      else if (decision === "quarantine") result = this.commit(event, "quarantined", target);
      else return ["blocked", applied];      // invariant 5: a non-terminal outcome blocks the barrier
      if (result === LOST || result === BLOCKED) return [result, applied];
      applied = Math.max(applied, target);
    }
    return ["done", applied];
  }

  isReplay(event, receipts, applied) {
    if (TERMINAL.includes(receipts[event.id])) return true;
    return !this.backfills && event.position <= applied;
  }

  isCaughtUp(checkpoint, page) {
    return page.events.length === 0 && page.next_cursor === checkpoint.resume_cursor;
  }

  commit(event, outcome, appliedPosition, withEffect = false) {
    const [kind, done] = ask("commit", { event, outcome, applied_position: appliedPosition,
      with_effect: withEffect });
    return kind === "lost" ? LOST : done;
  }

  apply(event, appliedPosition) {
    if (!this.externalSink) return this.commit(event, "applied", appliedPosition, true);
    const settled = this.settleEffect(event);
    if (settled !== COMMITTED) return settled;
    return this.commit(event, "applied", appliedPosition);
  }

  // Seed 001: reserve (or reuse) the tuple, call unless already committed, settle the reply or the timeout.
  settleEffect(event) {
    const [, operation] = ask("reserve", { event });
    if (operation.state === COMMITTED) return COMMITTED;
    const [, reply] = ask("call", { event, reservation: operation.reservation });
    const [, state] = ask("settle", { event, reservation: operation.reservation, observation: reply });
    return state === COMMITTED ? COMMITTED : BLOCKED;
  }
}

const hello = JSON.parse(readLine());
if (hello.type !== "hello" || hello.value.protocol !== 1) {
  process.stderr.write(`expected simkit's protocol 1 handshake, got ${JSON.stringify(hello)}\n`);
  process.exit(1);
}
WORKER = hello.value.worker;
new Procedure(hello.value.contract, process.argv.includes("--publish-token-on-fetch")).run();
