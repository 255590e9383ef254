-- Edge to centre. On an edge (a `rundiff serve --upstream` database) every stored result is noted in
-- `edge_outbox` by the triggers below, inside the transaction that stored it: nothing committed can
-- be missing from the outbox, and a crash loses neither. The shipper sends an entry's row as it is
-- when sent (or its absence, which the centre applies as a delete) and removes the entry once the
-- centre acknowledged it. The triggers do nothing until the database is attached to an upstream
-- (`edge_state.enabled`), so a single-user database stores exactly what it did before.
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

CREATE TRIGGER edge_session_added AFTER INSERT ON sessions WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.id, 'session', NEW.id);
END;
CREATE TRIGGER edge_session_updated AFTER UPDATE ON sessions WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.id, 'session', NEW.id);
END;
CREATE TRIGGER edge_session_deleted AFTER DELETE ON sessions WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (OLD.id, 'session_deleted', OLD.id);
END;

CREATE TRIGGER edge_message_added AFTER INSERT ON messages WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'message', NEW.id);
END;
CREATE TRIGGER edge_message_updated AFTER UPDATE ON messages WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'message', NEW.id);
END;

CREATE TRIGGER edge_run_added AFTER INSERT ON runs WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'run', NEW.run_id);
END;
CREATE TRIGGER edge_run_updated AFTER UPDATE ON runs WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'run', NEW.run_id);
END;

CREATE TRIGGER edge_tool_call_added AFTER INSERT ON tool_calls WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'tool_call', NEW.tool_call_id);
END;
CREATE TRIGGER edge_tool_call_updated AFTER UPDATE ON tool_calls WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'tool_call', NEW.tool_call_id);
END;

-- A change is stored once (summary and rows together) and only ever deleted afterwards.
CREATE TRIGGER edge_change_added AFTER INSERT ON workspace_run_changes WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'change', NEW.change_id);
END;
CREATE TRIGGER edge_change_deleted AFTER DELETE ON workspace_run_changes WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (OLD.session_id, 'change', OLD.change_id);
END;

CREATE TRIGGER edge_contents_added AFTER INSERT ON change_file_contents WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT OR REPLACE INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'contents', NEW.change_id);
END;
CREATE TRIGGER edge_contents_updated AFTER UPDATE ON change_file_contents WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT OR REPLACE INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'contents', NEW.change_id);
END;

CREATE TRIGGER edge_viewed_added AFTER INSERT ON viewed_marks WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'viewed', json_array(NEW.path, NEW.path_base64));
END;
CREATE TRIGGER edge_viewed_updated AFTER UPDATE ON viewed_marks WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (NEW.session_id, 'viewed', json_array(NEW.path, NEW.path_base64));
END;
CREATE TRIGGER edge_viewed_deleted AFTER DELETE ON viewed_marks WHEN (SELECT enabled FROM edge_state) = 1 BEGIN
  INSERT INTO edge_outbox (session_id, kind, item) VALUES (OLD.session_id, 'viewed', json_array(OLD.path, OLD.path_base64));
END;
