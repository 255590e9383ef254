-- Viewed marks on the Session changes view (a session's net change over a range of its runs): one
-- per session, range start and path. A mark keeps the net patch's content hash it was made on
-- (`net_hash`, docs/contract.md): it counts as viewed while the path's net change for a range from
-- the same start has that hash, and reads as stale (viewed before a later change) once it has
-- another. The range end it was made on (`to_change_id`) is kept to say so. Marks go with their
-- session. path_base64 is '' for a name that is valid UTF-8 (a key column cannot be NULL and still
-- be unique).
CREATE TABLE net_viewed_marks (
  session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  from_change_id TEXT COLLATE "C" NOT NULL,
  path TEXT COLLATE "C" NOT NULL,
  path_base64 TEXT COLLATE "C" NOT NULL DEFAULT '',
  net_hash TEXT COLLATE "C" NOT NULL,
  to_change_id TEXT COLLATE "C" NOT NULL,
  viewed_at BIGINT NOT NULL,
  PRIMARY KEY (session_id, from_change_id, path, path_base64)
);
