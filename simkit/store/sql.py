"""The durable store of seed 000 in SQL you can take home: the schema and the handful of statements that
implement its steps 1, 4 and 5 (executed by :class:`simkit.store.sqlite.SQLiteStore`).

Every write runs inside ``BEGIN IMMEDIATE ... COMMIT`` (the receipt lookup reads one snapshot inside a plain
``BEGIN``) on a database in WAL mode with ``synchronous = FULL`` (a simulated run, which no power cut can hit,
turns it ``OFF``). ``LOAD`` uses ``RETURNING`` (SQLite 3.35 or newer). Named parameters (``:seq``, ``:time``,
``:worker``) stamp each durable write with the run's clock, so that the checker can order it against the
provider's and the sink's logs. ``time`` columns carry no declared type: a value comes back exactly as the
clock gave it (an int stays an int).

Ground truth is kept by the database itself: a trigger copies every checkpoint change, before and after, into
``checkpoint_history`` in the same transaction; another copies every receipt into ``receipt_log``. A worker
killed with SIGKILL cannot write half of it, and cannot forget to write it.
"""

__all__ = ["PRAGMAS", "SCHEMA", "LOAD", "LOOKUP_BY_ID", "LOOKUP_BY_POSITION", "RECEIPT_IS_TERMINAL",
           "WRITE_RECEIPT", "RAISE_APPLIED", "RECORD_EFFECT", "BARRIER", "OVERWRITE", "INIT_CHECKPOINT",
           "INIT_RECEIPT", "CHECKPOINT", "HISTORY", "RECEIPTS", "RECEIPT_LOG", "READS", "EFFECTS"]

PRAGMAS = """
PRAGMA journal_mode = WAL;      -- readers never block the writer; a killed writer leaves no torn page
PRAGMA synchronous = FULL;      -- COMMIT returns only after the WAL is fsynced
PRAGMA busy_timeout = 10000;    -- concurrent workers wait for the write lock instead of failing
"""

SCHEMA = """
-- Seed 000, "Keep two kinds of progress": one row. The cursor says where to fetch, the applied position
-- what work is durably complete, the version fences late retries. seq/time/worker/kind say who wrote it last.
CREATE TABLE checkpoint (
    id                 INTEGER PRIMARY KEY CHECK (id = 1),
    resume_cursor      TEXT    NOT NULL,
    applied_position   INTEGER NOT NULL,
    checkpoint_version INTEGER NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0, time NOT NULL DEFAULT 0, worker INTEGER NOT NULL DEFAULT 0,
    kind TEXT NOT NULL DEFAULT 'initial'            -- commit | barrier | overwrite
);

-- Every durable checkpoint change, written by the database in the writer's own transaction.
CREATE TABLE checkpoint_history (
    seq INTEGER, time, worker INTEGER, kind TEXT,
    before_cursor TEXT, before_applied INTEGER, before_version INTEGER,
    after_cursor  TEXT, after_applied  INTEGER, after_version  INTEGER
);
CREATE TRIGGER checkpoint_history AFTER UPDATE ON checkpoint BEGIN
    INSERT INTO checkpoint_history VALUES (NEW.seq, NEW.time, NEW.worker, NEW.kind,
        OLD.resume_cursor, OLD.applied_position, OLD.checkpoint_version,
        NEW.resume_cursor, NEW.applied_position, NEW.checkpoint_version);
END;

-- Invariant 4: one receipt per stable event identity. Terminal outcomes are final.
CREATE TABLE receipts (
    event_id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    outcome  TEXT NOT NULL CHECK (outcome IN ('applied', 'ignored', 'quarantined', 'retry_later',
                                              'dead_letter', 'operator_review', 'reversible_hold')),
    terminal INTEGER GENERATED ALWAYS AS (outcome IN ('applied', 'ignored', 'quarantined')) VIRTUAL,
    seq INTEGER NOT NULL, time NOT NULL, worker INTEGER NOT NULL
);
CREATE INDEX receipts_at ON receipts (position) WHERE terminal;

-- Every receipt as it became durable.
CREATE TABLE receipt_log (seq INTEGER, time, worker INTEGER, event_id TEXT, outcome TEXT);
CREATE TRIGGER receipt_written AFTER INSERT ON receipts BEGIN
    INSERT INTO receipt_log VALUES (NEW.seq, NEW.time, NEW.worker, NEW.event_id, NEW.outcome);
END;
CREATE TRIGGER receipt_rewritten AFTER UPDATE ON receipts BEGIN
    INSERT INTO receipt_log VALUES (NEW.seq, NEW.time, NEW.worker, NEW.event_id, NEW.outcome);
END;

-- Every checkpoint read (step 1): the attempt identity a later barrier must still match.
CREATE TABLE reads (seq INTEGER, time, worker INTEGER,
                    resume_cursor TEXT, applied_position INTEGER, checkpoint_version INTEGER);

-- The transactional sink: its effects commit in the same transaction as their receipt.
CREATE TABLE effects (seq INTEGER, time, worker INTEGER, event_id TEXT);

-- Seed 001: the operation record of each external call (simkit.store.settlement.Ledger, one transaction
-- per method). A reservation is (operation_id, fingerprint, binding, generation); a reply is JSON
-- [identity..., request, outcome].
CREATE TABLE operations (
    key TEXT PRIMARY KEY,                            -- the operation id (the event id)
    operation_id TEXT, fingerprint TEXT, binding TEXT, generation INTEGER,
    state TEXT CHECK (state IN ('pending', 'provisional', 'committed')),
    result TEXT                                      -- the reply whose result it holds, or NULL
);
-- Every transition, rejection and no-op of an operation record; rejected replies also in the quarantine.
CREATE TABLE operation_history (seq INTEGER, time, worker INTEGER, operation_id TEXT, action TEXT,
    before TEXT, after TEXT, fingerprint TEXT, binding TEXT, generation INTEGER, reply TEXT, detail TEXT);
-- SQLiteLedger.reserve reads the greatest generation ever reserved in every reservation: a scan of the whole
-- history without this index (quadratic in the external calls: 4 workers, 5,000 events took minutes).
CREATE INDEX operation_history_generation ON operation_history (generation);
CREATE TABLE operation_quarantine (seq INTEGER, time, worker INTEGER, operation_id TEXT, action TEXT,
    before TEXT, after TEXT, fingerprint TEXT, binding TEXT, generation INTEGER, reply TEXT, detail TEXT);
"""

# -- Step 1: load the checkpoint; remember cursor and version as the attempt identity (and log the read).
LOAD = """
INSERT INTO reads (seq, time, worker, resume_cursor, applied_position, checkpoint_version)
SELECT :seq, :time, :worker, resume_cursor, applied_position, checkpoint_version FROM checkpoint
RETURNING resume_cursor, applied_position, checkpoint_version
"""

# -- Step 4: a durable receipt proves replay; a terminal receipt at a position proves its identity.
LOOKUP_BY_ID = "SELECT event_id, outcome FROM receipts WHERE event_id IN (SELECT value FROM json_each(:ids))"
LOOKUP_BY_POSITION = """
SELECT position, event_id FROM receipts
WHERE terminal AND position IN (SELECT value FROM json_each(:positions)) ORDER BY seq
"""
RECEIPT_IS_TERMINAL = "SELECT terminal FROM receipts WHERE event_id = :event_id"

# -- Step 4, invariant 4: the receipt. A second terminal receipt for one event id changes nothing.
WRITE_RECEIPT = """
INSERT INTO receipts (event_id, position, outcome, seq, time, worker)
VALUES (:event_id, :position, :outcome, :seq, :time, :worker)
ON CONFLICT (event_id) DO UPDATE
    SET position = excluded.position, outcome = excluded.outcome,
        seq = excluded.seq, time = excluded.time, worker = excluded.worker
    WHERE NOT receipts.terminal
"""

# -- Step 4, invariant 2: in the receipt's transaction, the applied prefix grows (never shrinks).
RAISE_APPLIED = """
UPDATE checkpoint SET applied_position = :applied_position,
                      seq = :seq, time = :time, worker = :worker, kind = 'commit'
WHERE applied_position < :applied_position
"""

# -- The transactional sink's effect, in the same transaction as WRITE_RECEIPT and RAISE_APPLIED.
RECORD_EFFECT = "INSERT INTO effects (seq, time, worker, event_id) VALUES (:seq, :time, :worker, :event_id)"

# -- Step 5, invariant 3: the page barrier. It swaps only if cursor and version are still the attempt's;
#    zero rows changed means a newer attempt won, and the loser rereads instead of overwriting.
BARRIER = """
UPDATE checkpoint SET resume_cursor = :next_cursor, checkpoint_version = :next_version,
                      applied_position = max(applied_position, :applied_position),
                      seq = :seq, time = :time, worker = :worker, kind = 'barrier'
WHERE resume_cursor = :cursor AND checkpoint_version = :version
"""

# -- The no_version_check shortcut's unconditional write (unsafe; kept to show what BARRIER prevents).
OVERWRITE = """
UPDATE checkpoint SET resume_cursor = :next_cursor, checkpoint_version = :next_version,
                      applied_position = max(applied_position, :applied_position),
                      seq = :seq, time = :time, worker = :worker, kind = 'overwrite'
"""

# -- Setting up a fresh store.
INIT_CHECKPOINT = """
INSERT INTO checkpoint (id, resume_cursor, applied_position, checkpoint_version)
VALUES (1, :resume_cursor, :applied_position, :checkpoint_version)
"""
INIT_RECEIPT = """
INSERT INTO receipts (event_id, position, outcome, seq, time, worker)
VALUES (:event_id, :position, :outcome, 0, 0.0, 0)
"""

# -- Reading ground truth back, for the checker.
CHECKPOINT = "SELECT resume_cursor, applied_position, checkpoint_version FROM checkpoint"
HISTORY = "SELECT * FROM checkpoint_history ORDER BY rowid"
RECEIPTS = "SELECT event_id, outcome, position FROM receipts ORDER BY rowid"
RECEIPT_LOG = "SELECT seq, time, worker, event_id, outcome FROM receipt_log ORDER BY rowid"
READS = "SELECT * FROM reads ORDER BY rowid"
EFFECTS = "SELECT seq, time, worker, event_id FROM effects ORDER BY rowid"
