-- The content store: the before and after bytes of changed files, kept so a run can be undone.
-- Contents are addressed by the sha256 of their raw bytes (a content repeated across files, runs or
-- sessions is kept once) and compressed. A change's file rows reference them; a content goes when
-- the last reference does (the triggers below), so deleting a session, the retention sweeps and the
-- budget's evictions free space without a separate collection pass.

CREATE TABLE content_blobs (
  sha256 TEXT PRIMARY KEY,
  -- Raw size; stored_bytes is what the budget counts (the compressed or raw data's length).
  size INTEGER NOT NULL,
  stored_bytes INTEGER NOT NULL,
  codec TEXT NOT NULL CHECK (codec IN ('raw', 'deflate')),
  data BLOB NOT NULL,
  created_at INTEGER NOT NULL
);

-- One row: the running totals, kept by triggers so the budget check is a single read.
CREATE TABLE content_usage (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  bytes INTEGER NOT NULL,
  blobs INTEGER NOT NULL
);
INSERT INTO content_usage (id, bytes, blobs) VALUES (1, 0, 0);

CREATE TRIGGER content_blobs_added AFTER INSERT ON content_blobs BEGIN
  UPDATE content_usage SET bytes = bytes + NEW.stored_bytes, blobs = blobs + 1 WHERE id = 1;
END;
CREATE TRIGGER content_blobs_removed AFTER DELETE ON content_blobs BEGIN
  UPDATE content_usage SET bytes = bytes - OLD.stored_bytes, blobs = blobs - 1 WHERE id = 1;
END;

-- Each side: mode NULL = the path did not exist on that side; sha256 NULL with a mode = the content
-- was not kept, and reason says why. change_seq orders evictions (oldest change first).
CREATE TABLE change_file_contents (
  file_id TEXT PRIMARY KEY REFERENCES workspace_run_change_files(id) ON DELETE CASCADE,
  session_id TEXT NOT NULL,
  change_id TEXT NOT NULL,
  change_seq INTEGER NOT NULL,
  before_mode TEXT,
  before_sha256 TEXT REFERENCES content_blobs(sha256),
  before_reason TEXT,
  after_mode TEXT,
  after_sha256 TEXT REFERENCES content_blobs(sha256),
  after_reason TEXT
);
CREATE INDEX idx_change_file_contents_before ON change_file_contents(before_sha256);
CREATE INDEX idx_change_file_contents_after ON change_file_contents(after_sha256);
CREATE INDEX idx_change_file_contents_seq ON change_file_contents(change_seq);
CREATE INDEX idx_change_file_contents_change ON change_file_contents(session_id, change_id);

-- A content no file references any more is removed (cascaded deletes fire these too).
CREATE TRIGGER change_file_contents_deleted AFTER DELETE ON change_file_contents BEGIN
  DELETE FROM content_blobs WHERE sha256 IN (OLD.before_sha256, OLD.after_sha256)
    AND NOT EXISTS (SELECT 1 FROM change_file_contents c WHERE c.before_sha256 = content_blobs.sha256)
    AND NOT EXISTS (SELECT 1 FROM change_file_contents c WHERE c.after_sha256 = content_blobs.sha256);
END;
CREATE TRIGGER change_file_contents_released AFTER UPDATE OF before_sha256, after_sha256 ON change_file_contents BEGIN
  DELETE FROM content_blobs WHERE sha256 IN (OLD.before_sha256, OLD.after_sha256)
    AND NOT EXISTS (SELECT 1 FROM change_file_contents c WHERE c.before_sha256 = content_blobs.sha256)
    AND NOT EXISTS (SELECT 1 FROM change_file_contents c WHERE c.after_sha256 = content_blobs.sha256);
END;
