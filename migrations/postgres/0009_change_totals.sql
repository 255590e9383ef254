-- Mirrors the SQLite schema: a change's line totals over every stored row, null in a change stored
-- before (summed from its rows when read).
ALTER TABLE workspace_run_changes ADD COLUMN total_additions BIGINT;
ALTER TABLE workspace_run_changes ADD COLUMN total_deletions BIGINT;
