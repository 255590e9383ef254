-- rundiff schema, version 1. Everything hangs off a session and is removed with it (ON DELETE CASCADE).
-- Ids sent by agent runtimes are scoped to their session: two sessions may reuse a run or message id.

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  title TEXT,
  workspace TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX idx_sessions_updated ON sessions(updated_at DESC, id DESC);

-- seq keeps arrival order for messages that share a created_at.
CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
  content TEXT NOT NULL,
  run_id TEXT,
  tool_call_id TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (session_id, id)
);
CREATE INDEX idx_messages_session_time ON messages(session_id, created_at, seq);

-- start_response / complete_response keep the exact JSON answered the first time, so a repeated
-- start or completion answers the same (also across a restart).
CREATE TABLE runs (
  seq INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  run_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  source TEXT NOT NULL,
  workspace TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  error TEXT,
  change_id TEXT NOT NULL,
  tracking INTEGER NOT NULL DEFAULT 0,
  reason TEXT,
  start_response TEXT,
  complete_response TEXT,
  UNIQUE (session_id, run_id)
);
CREATE INDEX idx_runs_session ON runs(session_id, started_at, seq);

CREATE TABLE tool_calls (
  seq INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  tool_call_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  name TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  workspace TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  error TEXT,
  change_id TEXT NOT NULL,
  tracking INTEGER NOT NULL DEFAULT 0,
  reason TEXT,
  start_response TEXT,
  complete_response TEXT,
  UNIQUE (session_id, tool_call_id)
);
CREATE INDEX idx_tool_calls_session ON tool_calls(session_id, started_at, seq);

-- The design document's table, keyed by (session_id, change_id) instead of change_id alone.
-- AUTOINCREMENT: a seq is never reused, so readers may cache a stored change's summary by it
-- (stored changes never change; they are only deleted).
CREATE TABLE workspace_run_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  change_id TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  run_id TEXT NOT NULL DEFAULT '',
  tool_call_id TEXT,
  source TEXT NOT NULL DEFAULT 'run',
  workspace TEXT,
  workspace_kind TEXT NOT NULL DEFAULT 'unknown',
  started_at INTEGER,
  finished_at INTEGER,
  changed_count INTEGER NOT NULL DEFAULT 0,
  added_count INTEGER NOT NULL DEFAULT 0,
  modified_count INTEGER NOT NULL DEFAULT 0,
  deleted_count INTEGER NOT NULL DEFAULT 0,
  renamed_count INTEGER NOT NULL DEFAULT 0,
  binary_count INTEGER NOT NULL DEFAULT 0,
  truncated INTEGER NOT NULL DEFAULT 0,
  truncated_reasons TEXT NOT NULL DEFAULT '[]',
  total_patch_bytes INTEGER NOT NULL DEFAULT 0,
  overlapping INTEGER NOT NULL DEFAULT 0,
  omitted_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  UNIQUE (session_id, change_id)
);
CREATE INDEX idx_workspace_run_changes_session ON workspace_run_changes(session_id, created_at, seq);
CREATE INDEX idx_workspace_run_changes_run ON workspace_run_changes(session_id, run_id);
CREATE INDEX idx_workspace_run_changes_created ON workspace_run_changes(created_at);

-- ord is the file's position in path order within its change.
CREATE TABLE workspace_run_change_files (
  id TEXT PRIMARY KEY,
  change_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  ord INTEGER NOT NULL,
  path TEXT NOT NULL,
  old_path TEXT,
  path_base64 TEXT,
  old_path_base64 TEXT,
  change_type TEXT NOT NULL CHECK (change_type IN ('added', 'modified', 'deleted', 'renamed')),
  additions INTEGER NOT NULL DEFAULT 0,
  deletions INTEGER NOT NULL DEFAULT 0,
  size_before INTEGER,
  size_after INTEGER,
  patch TEXT,
  patch_bytes INTEGER NOT NULL DEFAULT 0,
  truncated INTEGER NOT NULL DEFAULT 0,
  binary INTEGER NOT NULL DEFAULT 0,
  omitted_reason TEXT,
  created_at INTEGER NOT NULL,
  FOREIGN KEY (session_id, change_id) REFERENCES workspace_run_changes(session_id, change_id) ON DELETE CASCADE
);
CREATE INDEX idx_workspace_run_change_files_change ON workspace_run_change_files(session_id, change_id, ord);
