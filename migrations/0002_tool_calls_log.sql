-- The git tools' call log (CONTRACT section 5, "every call is recorded"): one row per call over REST
-- or MCP. Not tied to a session (a tool call need not belong to one); the newest rows are kept.
CREATE TABLE tool_call_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  repository TEXT,
  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
  error_code TEXT,
  duration_ms REAL NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX idx_tool_call_log_created ON tool_call_log(created_at DESC, seq DESC);
