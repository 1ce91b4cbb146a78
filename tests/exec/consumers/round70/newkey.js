// Round 70, over the wire in Node: examples/consumers/javascript/consumer.js with one bug. Seed 001 step 2:
// "Reuse that exact tuple for every retry of the same logical request." After a call of this life timed out,
// every retry of that event goes out under a fresh idempotency key (the fingerprint, reversed), as a client
// library that "regenerates the key when the first one is burnt" does: the service runs the effect again.
//
//     simkit audit exec:tests/exec/consumers/round70/newkey
"use strict";
const fs = require("fs");

const TERMINAL = ["applied", "ignored", "quarantined"];
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
    this.publishTokenOnFetch = publishTokenOnFetch;
    this.timedOut = new Set();   // events whose call timed out in this life
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
    const [k, swapped] = ask("barrier", { cursor, version, next_cursor: page.next_cursor,
      next_version: version + 1, applied_position: applied });
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
    let reservation = operation.reservation;
    if (this.timedOut.has(event.id)) {   // the bug: a new key for the retry
      reservation = { ...reservation, fingerprint: [...reservation.fingerprint].reverse().join("") };
    }
    const [, reply] = ask("call", { event, reservation });
    if (reply === "timeout") this.timedOut.add(event.id);
    const [, state] = ask("settle", { event, reservation: operation.reservation, observation: reply });
    return state === COMMITTED ? COMMITTED : BLOCKED;
  }
}

const hello = JSON.parse(readLine());
if (hello.type !== "hello" || hello.value.protocol !== 1) {
  process.stderr.write(`expected simkit's protocol 1 handshake, got ${JSON.stringify(hello)}\n`);
  process.exit(1);
}
new Procedure(hello.value.contract, false).run();
