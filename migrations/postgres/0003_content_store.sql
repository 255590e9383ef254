-- The content store: the before and after bytes of changed files, kept so a run can be undone.
-- Contents are addressed by the sha256 of their raw bytes (a content repeated across files, runs or
-- sessions is kept once) and compressed. A change's file rows reference them; a content goes when
-- the last reference does (the triggers below), so deleting a session, the retention sweeps and the
-- budget's evictions free space without a separate collection pass.

CREATE TABLE content_blobs (
  sha256 TEXT COLLATE "C" PRIMARY KEY,
  -- Raw size; stored_bytes is what the budget counts (the compressed or raw data's length).
  size BIGINT NOT NULL,
  stored_bytes BIGINT NOT NULL,
  codec TEXT COLLATE "C" NOT NULL CHECK (codec IN ('raw', 'deflate')),
  data BYTEA NOT NULL,
  created_at BIGINT NOT NULL
);

-- One row: the running totals, kept by triggers so the budget check is a single read.
CREATE TABLE content_usage (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  bytes BIGINT NOT NULL,
  blobs BIGINT NOT NULL
);
INSERT INTO content_usage (id, bytes, blobs) VALUES (1, 0, 0);

CREATE FUNCTION content_blobs_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE content_usage SET bytes = bytes + NEW.stored_bytes, blobs = blobs + 1 WHERE id = 1;
  ELSE
    UPDATE content_usage SET bytes = bytes - OLD.stored_bytes, blobs = blobs - 1 WHERE id = 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER content_blobs_added AFTER INSERT ON content_blobs
  FOR EACH ROW EXECUTE FUNCTION content_blobs_count();
CREATE TRIGGER content_blobs_removed AFTER DELETE ON content_blobs
  FOR EACH ROW EXECUTE FUNCTION content_blobs_count();

-- Each side: mode NULL = the path did not exist on that side; sha256 NULL with a mode = the content
-- was not kept, and reason says why. change_seq orders evictions (oldest change first).
CREATE TABLE change_file_contents (
  file_id TEXT COLLATE "C" PRIMARY KEY REFERENCES workspace_run_change_files(id) ON DELETE CASCADE,
  session_id TEXT COLLATE "C" NOT NULL,
  change_id TEXT COLLATE "C" NOT NULL,
  change_seq BIGINT NOT NULL,
  before_mode TEXT COLLATE "C",
  before_sha256 TEXT COLLATE "C" REFERENCES content_blobs(sha256),
  before_reason TEXT COLLATE "C",
  after_mode TEXT COLLATE "C",
  after_sha256 TEXT COLLATE "C" REFERENCES content_blobs(sha256),
  after_reason TEXT COLLATE "C"
);
CREATE INDEX idx_change_file_contents_before ON change_file_contents(before_sha256);
CREATE INDEX idx_change_file_contents_after ON change_file_contents(after_sha256);
CREATE INDEX idx_change_file_contents_seq ON change_file_contents(change_seq);
CREATE INDEX idx_change_file_contents_change ON change_file_contents(session_id, change_id);

-- A content no file references any more is removed (cascaded deletes fire these too). A content
-- another transaction is taking a new reference to holds a row lock (the writer upserts it), and is
-- skipped here rather than waited for: that writer keeps it.
CREATE FUNCTION change_file_contents_release() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM content_blobs WHERE sha256 IN (
    SELECT b.sha256 FROM content_blobs b
    WHERE b.sha256 IN (OLD.before_sha256, OLD.after_sha256)
      AND NOT EXISTS (SELECT 1 FROM change_file_contents c WHERE c.before_sha256 = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM change_file_contents c WHERE c.after_sha256 = b.sha256)
    FOR UPDATE SKIP LOCKED);
  RETURN NULL;
END $$;
CREATE TRIGGER change_file_contents_deleted AFTER DELETE ON change_file_contents
  FOR EACH ROW EXECUTE FUNCTION change_file_contents_release();
CREATE TRIGGER change_file_contents_released AFTER UPDATE OF before_sha256, after_sha256 ON change_file_contents
  FOR EACH ROW EXECUTE FUNCTION change_file_contents_release();
