//! Seed 000's procedure (steps 1-7, with seed 001's settlement of an external effect) as a process speaking
//! simkit's protocol 1 (docs/protocol.md): JSON lines on stdin and stdout, Rust's standard library only (a small
//! JSON reader and writer included; no crates).
//!
//! A port of simkit/procedure/consumer.py, method for method. simkit starts one process per worker life and kills
//! it at a crash, so nothing here needs to survive one: durable state is the store's, behind the requests.
//!
//!     simkit run retry_walkthrough --strategy exec:examples/consumers/rust/run
use std::io::{self, BufRead, Write};
use std::process::exit;

// -- JSON: just what the protocol needs ------------------------------------------------------------------------
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(i64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> &Json {
        if let Json::Obj(fields) = self {
            for (k, v) in fields {
                if k == key {
                    return v;
                }
            }
        }
        &Json::Null
    }
    fn int(&self) -> i64 {
        match self {
            Json::Num(n) => *n,
            _ => panic!("expected an integer, got {:?}", self),
        }
    }
    fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            _ => panic!("expected a string, got {:?}", self),
        }
    }
    fn truthy(&self) -> bool {
        matches!(self, Json::Bool(true))
    }
    fn items(&self) -> &[Json] {
        match self {
            Json::Arr(items) => items,
            _ => panic!("expected an array, got {:?}", self),
        }
    }
    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(&n.to_string()),
            Json::Str(s) => write_str(s, out),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(k, out);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn parse(text: &'a str) -> Json {
        let mut r = Reader { text: text.as_bytes(), at: 0 };
        let value = r.value();
        r.space();
        assert!(r.at == r.text.len(), "trailing characters in {}", text);
        value
    }
    fn space(&mut self) {
        while self.at < self.text.len() && b" \t\r\n".contains(&self.text[self.at]) {
            self.at += 1;
        }
    }
    fn eat(&mut self, what: &str) {
        assert!(self.text[self.at..].starts_with(what.as_bytes()), "expected {} at {}", what, self.at);
        self.at += what.len();
    }
    fn value(&mut self) -> Json {
        self.space();
        match self.text[self.at] {
            b'n' => { self.eat("null"); Json::Null }
            b't' => { self.eat("true"); Json::Bool(true) }
            b'f' => { self.eat("false"); Json::Bool(false) }
            b'"' => Json::Str(self.string()),
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.text[self.at] == b']' {
                    self.at += 1;
                    return Json::Arr(items);
                }
                loop {
                    items.push(self.value());
                    self.space();
                    let c = self.text[self.at];
                    self.at += 1;
                    if c == b']' {
                        return Json::Arr(items);
                    }
                    assert!(c == b',', "expected , or ] at {}", self.at);
                }
            }
            b'{' => {
                self.at += 1;
                let mut fields = Vec::new();
                self.space();
                if self.text[self.at] == b'}' {
                    self.at += 1;
                    return Json::Obj(fields);
                }
                loop {
                    self.space();
                    let key = self.string();
                    self.space();
                    self.eat(":");
                    fields.push((key, self.value()));
                    self.space();
                    let c = self.text[self.at];
                    self.at += 1;
                    if c == b'}' {
                        return Json::Obj(fields);
                    }
                    assert!(c == b',', "expected , or }} at {}", self.at);
                }
            }
            _ => {
                let start = self.at;
                while self.at < self.text.len() && b"-+0123456789.eE".contains(&self.text[self.at]) {
                    self.at += 1;
                }
                let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap();
                Json::Num(digits.parse().unwrap_or_else(|_| panic!("not an integer: {}", digits)))
            }
        }
    }
    fn hex4(&mut self) -> u32 {
        let digits = std::str::from_utf8(&self.text[self.at..self.at + 4]).unwrap();
        self.at += 4;
        u32::from_str_radix(digits, 16).expect("a \\u escape")
    }
    fn string(&mut self) -> String {
        self.eat("\"");
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.text[self.at];
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(out).expect("UTF-8"),
                b'\\' => {
                    let e = self.text[self.at];
                    self.at += 1;
                    let ch = match e {
                        b'"' => '"', b'\\' => '\\', b'/' => '/', b'b' => '\u{8}', b'f' => '\u{c}',
                        b'n' => '\n', b'r' => '\r', b't' => '\t',
                        b'u' => {
                            let mut code = self.hex4();
                            if (0xD800..0xDC00).contains(&code) {
                                self.eat("\\u");
                                code = 0x10000 + ((code - 0xD800) << 10) + (self.hex4() - 0xDC00);
                            }
                            char::from_u32(code).unwrap_or('\u{fffd}')
                        }
                        _ => panic!("bad escape"),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
    }
}

fn obj(fields: Vec<(&str, Json)>) -> Json {
    Json::Obj(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn s(text: &str) -> Json {
    Json::Str(text.to_string())
}

// -- the protocol: one request line out, one result line in ----------------------------------------------------
struct Wire {
    input: io::StdinLock<'static>,
    output: io::StdoutLock<'static>,
}

impl Wire {
    fn read(&mut self) -> Json {
        let mut line = String::new();
        if self.input.read_line(&mut line).unwrap_or(0) == 0 {
            exit(0); // stdin closed: simkit is done with this life
        }
        Reader::parse(&line)
    }
    /// Send a request; return the result's (type, value).
    fn ask(&mut self, op: &str, mut fields: Vec<(&str, Json)>) -> (String, Json) {
        fields.insert(0, ("op", s(op)));
        let mut line = String::new();
        obj(fields).write(&mut line);
        line.push('\n');
        self.output.write_all(line.as_bytes()).and_then(|_| self.output.flush()).unwrap_or_else(|_| exit(0));
        let result = self.read();
        (result.get("type").str().to_string(), result.get("value").clone())
    }
    fn halt(&mut self, reason: String) -> ! {
        self.ask("halt", vec![("reason", Json::Str(reason))]); // never answered: simkit ends this life
        exit(0)
    }
}

// -- the procedure ---------------------------------------------------------------------------------------------
const TERMINAL: [&str; 3] = ["applied", "ignored", "quarantined"];

#[derive(PartialEq)]
enum Done { Yes, Lost, Blocked }

struct Procedure {
    wire: Wire,
    backfills: bool,
    external_sink: bool,
    publish_token_on_fetch: bool, // seed 000's first unsafe shortcut, on purpose
}

impl Procedure {
    fn run(&mut self) -> ! {
        loop {
            let status = self.attempt();
            if status == "caught_up" || status == "blocked" {
                self.wire.ask("wait", vec![("reason", s(status))]);
            }
        }
    }

    fn barrier(&mut self, cursor: &Json, version: i64, next: &Json, applied: i64) -> (String, Json) {
        self.wire.ask("barrier", vec![("cursor", cursor.clone()), ("version", Json::Num(version)),
            ("next_cursor", next.clone()), ("next_version", Json::Num(version + 1)),
            ("applied_position", Json::Num(applied))])
    }

    fn attempt(&mut self) -> &'static str {
        // Step 1: load the checkpoint; its cursor and version are the attempt identity.
        let (_, checkpoint) = self.wire.ask("load", vec![]);
        let cursor = checkpoint.get("resume_cursor").clone();
        let version = checkpoint.get("checkpoint_version").int();
        // Step 2: fetch with that cursor; the next cursor stays in memory.
        let (kind, page) = self.wire.ask("fetch", vec![("cursor", cursor.clone())]);
        if kind == "lost" {
            return "lost";
        }
        if kind == "none" {
            self.wire.halt(format!("provider refused cursor '{}'", cursor.str()));
        }
        let next = page.get("next_cursor").clone();
        if self.publish_token_on_fetch && !is_caught_up(&checkpoint, &page) {
            let (kind, swapped) = self.barrier(&cursor, version, &next,
                                               checkpoint.get("applied_position").int());
            if kind == "lost" {
                return "lost";
            }
            if !swapped.truthy() {
                return "rejected";
            }
        }
        let (_, receipts) = self.wire.ask("lookup", vec![("events", page.get("events").clone())]);
        // Step 3: validate source order and identities before any effect.
        if let Some(problem) = self.validate(&checkpoint, &page, receipts.get("ids_at")) {
            self.wire.halt(problem);
        }
        // Step 7: an empty page with the request token back is no progress: back off, don't spin.
        if is_caught_up(&checkpoint, &page) {
            return "caught_up";
        }
        // Step 4: process events in source order; stop at the first outcome that is not durable and terminal.
        let (status, applied) = self.process(&checkpoint, &page, receipts.get("outcomes"));
        if status != "done" {
            return status;
        }
        if next == cursor {
            return "caught_up";
        }
        if self.publish_token_on_fetch {
            return "advanced";
        }
        // Step 5: every event has a durable outcome: compare-and-swap the page barrier.
        let (kind, swapped) = self.barrier(&cursor, version, &next, applied);
        if kind == "lost" {
            return "lost";
        }
        if swapped.truthy() { "advanced" } else { "rejected" }
    }

    fn validate(&self, checkpoint: &Json, page: &Json, ids_at: &Json) -> Option<String> {
        let applied = checkpoint.get("applied_position").int();
        let mut previous: Option<i64> = None;
        for e in page.get("events").items() {
            let (position, id) = (e.get("position").int(), e.get("id").str());
            if let Some(p) = previous {
                if position <= p {
                    return Some(format!("source-order regression: position {} after {}", position, p));
                }
            }
            previous = Some(position);
            match ids_at.get(&position.to_string()) {
                Json::Str(holder) if holder != id => {
                    return Some(format!("conflicting identity at position {}: {} but receipt for {}",
                                        position, id, holder));
                }
                Json::Null if !self.backfills && position <= applied => {
                    return Some(format!("gap: {} at position {} is behind applied_position {} with no receipt, \
                                         and the provider contract has no backfills", id, position, applied));
                }
                _ => {}
            }
        }
        None
    }

    fn process(&mut self, checkpoint: &Json, page: &Json, receipts: &Json) -> (&'static str, i64) {
        let mut applied = checkpoint.get("applied_position").int();
        for event in page.get("events").items() {
            let position = event.get("position").int();
            if self.is_replay(event, receipts, applied) {
                self.wire.ask("skip", vec![("event", event.clone())]);
                applied = applied.max(position);
                continue;
            }
            let (_, decision) = self.wire.ask("handle", vec![("event", event.clone())]);
            let target = applied.max(position);
            let done = match decision.str() {
                "apply" => self.apply(event, target),
                "ignore" => self.commit(event, "ignored", target, false),
                "quarantine" => self.commit(event, "quarantined", target, false),
                _ => return ("blocked", applied), // invariant 5: a non-terminal outcome blocks the barrier
            };
            match done {
                Done::Lost => return ("lost", applied),
                Done::Blocked => return ("blocked", applied),
                Done::Yes => applied = applied.max(target),
            }
        }
        ("done", applied)
    }

    fn is_replay(&self, event: &Json, receipts: &Json, applied: i64) -> bool {
        if let Json::Str(outcome) = receipts.get(event.get("id").str()) {
            if TERMINAL.contains(&outcome.as_str()) {
                return true;
            }
        }
        !self.backfills && event.get("position").int() <= applied
    }

    fn commit(&mut self, event: &Json, outcome: &str, applied: i64, with_effect: bool) -> Done {
        let (kind, _) = self.wire.ask("commit", vec![("event", event.clone()), ("outcome", s(outcome)),
            ("applied_position", Json::Num(applied)), ("with_effect", Json::Bool(with_effect))]);
        if kind == "lost" { Done::Lost } else { Done::Yes } // false: a terminal receipt already exists
    }

    fn apply(&mut self, event: &Json, applied: i64) -> Done {
        if !self.external_sink {
            return self.commit(event, "applied", applied, true);
        }
        if !self.settle_effect(event) {
            return Done::Blocked;
        }
        self.commit(event, "applied", applied, false)
    }

    /// Seed 001: reserve (or reuse) the tuple, call unless already committed, settle the reply or the timeout.
    fn settle_effect(&mut self, event: &Json) -> bool {
        let (_, operation) = self.wire.ask("reserve", vec![("event", event.clone())]);
        if operation.get("state").str() == "committed" {
            return true;
        }
        let reservation = operation.get("reservation").clone();
        let (_, reply) = self.wire.ask("call", vec![("event", event.clone()), ("reservation", reservation.clone())]);
        let (_, state) = self.wire.ask("settle", vec![("event", event.clone()), ("reservation", reservation),
                                                       ("observation", reply)]);
        state.str() == "committed"
    }
}

fn is_caught_up(checkpoint: &Json, page: &Json) -> bool {
    page.get("events").items().is_empty() && page.get("next_cursor") == checkpoint.get("resume_cursor")
}

fn main() {
    let mut wire = Wire { input: io::stdin().lock(), output: io::stdout().lock() };
    let hello = wire.read();
    if hello.get("type").str() != "hello" || hello.get("value").get("protocol").int() != 1 {
        eprintln!("expected simkit's protocol 1 handshake, got {:?}", hello);
        exit(1);
    }
    let contract = hello.get("value").get("contract");
    let mut procedure = Procedure {
        backfills: contract.get("backfills").truthy(),
        external_sink: contract.get("external_sink").truthy(),
        publish_token_on_fetch: std::env::args().any(|a| a == "--publish-token-on-fetch"),
        wire,
    };
    procedure.run();
}
