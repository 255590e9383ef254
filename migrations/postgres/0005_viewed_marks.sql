-- Viewed marks: a reviewer's "I have looked at this file", one per session and path. A mark names
-- the file row it was made on (and that change's seq, so it covers the path's rows of that change
-- and of earlier ones). A later change touching the path deletes the mark in its storing
-- transaction; the mark also goes with its session and with the row it was made on.
-- path_base64 is '' for a name that is valid UTF-8 (a key column cannot be NULL and still be unique).
CREATE TABLE viewed_marks (
  session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  path TEXT COLLATE "C" NOT NULL,
  path_base64 TEXT COLLATE "C" NOT NULL DEFAULT '',
  change_id TEXT COLLATE "C" NOT NULL,
  change_seq BIGINT NOT NULL,
  file_id TEXT COLLATE "C" NOT NULL REFERENCES workspace_run_change_files(id) ON DELETE CASCADE,
  viewed_at BIGINT NOT NULL,
  PRIMARY KEY (session_id, path, path_base64)
);
-- The cascade from a deleted file row finds its mark without scanning the table.
CREATE INDEX idx_viewed_marks_file ON viewed_marks(file_id);
-- A rename resets the mark of its old path: found by index, and only renamed rows are indexed,
-- so storing an ordinary change costs nothing more.
CREATE INDEX idx_workspace_run_change_files_old_path ON workspace_run_change_files(session_id, old_path, change_id)
  WHERE old_path IS NOT NULL;
