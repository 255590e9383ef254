-- The sessions list counts distinct changed paths per session and filters sessions by run status.
-- Distinct paths: read from this index alone instead of every file row of every change.
CREATE INDEX idx_workspace_run_change_files_session_path ON workspace_run_change_files(session_id, path, change_id);
-- Failed and running runs per session, and the status filter, without scanning a session's runs.
CREATE INDEX idx_runs_session_status ON runs(session_id, status);
-- The git tools' log keeps each call's arguments (bounded JSON) and, for a commit, its hash and summary.
ALTER TABLE tool_call_log ADD COLUMN arguments TEXT COLLATE "C";
ALTER TABLE tool_call_log ADD COLUMN commit_hash TEXT COLLATE "C";
ALTER TABLE tool_call_log ADD COLUMN commit_summary TEXT COLLATE "C";
