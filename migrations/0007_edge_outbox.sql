-- Edge to centre. On an edge (a `rundiff serve --upstream` database) every stored result is noted in
-- `edge_outbox` by triggers, inside the transaction that stored it: nothing committed can be
-- missing from the outbox, and a crash loses neither. The shipper sends an entry's row as it is
-- when sent (or its absence, which the centre applies as a delete) and removes the entry once the
-- centre acknowledged it. The triggers are created when the database is first attached to an
-- upstream (`edge_state.enabled`, server/store/outbox.ts), so a single-user database stores, and
-- spends, exactly what it did before.
-- On a centre, `edge_sessions` records which edge owns each session it received.

CREATE TABLE edge_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  enabled INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
  -- This database's own id, sent with every batch (a recreated database is a new one).
  database_id TEXT NOT NULL DEFAULT (lower(hex(randomblob(16))))
);
INSERT INTO edge_state (id) VALUES (1);

-- item: the row's key within its session (run_id, message id, change_id, a viewed mark's
-- JSON [path, path_base64], ...). One 'contents' entry per change at a time: a newer write replaces
-- it (a new seq), so an entry acknowledged while a later write was pending never hides that write.
CREATE TABLE edge_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN
    ('session', 'session_deleted', 'message', 'run', 'tool_call', 'change', 'contents', 'viewed')),
  item TEXT NOT NULL
);
CREATE INDEX idx_edge_outbox_session ON edge_outbox(session_id, seq);
CREATE UNIQUE INDEX idx_edge_outbox_contents ON edge_outbox(session_id, item) WHERE kind = 'contents';

-- Contents the centre is believed to hold (a hint: the centre names the ones it lacks).
CREATE TABLE edge_blobs_sent (sha256 TEXT PRIMARY KEY);

CREATE TABLE edge_sessions (
  session_id TEXT PRIMARY KEY,
  edge TEXT NOT NULL,
  first_seen_at INTEGER NOT NULL
);
