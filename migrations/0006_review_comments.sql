-- Review comments on a change's lines, and the reviews that send them back to the agent.
-- Both belong to a session and go with it (ON DELETE CASCADE). A comment keeps its own copy of
-- where it was written (path, side, lines and their text) and of its change's place in the
-- session's order, so it still reads (and can be found again) after retention removed the change.
-- Nothing here refers to tables added after 0004.

CREATE TABLE reviews (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  note TEXT NOT NULL DEFAULT '',
  mode TEXT NOT NULL CHECK (mode IN ('next_prompt', 'now')),
  state TEXT NOT NULL CHECK (state IN ('pending', 'delivered')),
  -- What the agent receives: rebuilt while pending, frozen once delivered (exactly as sent).
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER,
  delivered_via TEXT CHECK (delivered_via IN ('hook', 'mcp', 'rest')),
  delivered_to TEXT
);
CREATE INDEX idx_reviews_session ON reviews(session_id, seq);
CREATE INDEX idx_reviews_pending ON reviews(state, session_id) WHERE state = 'pending';

CREATE TABLE review_comments (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  change_id TEXT NOT NULL,
  file_id TEXT NOT NULL,
  path TEXT NOT NULL,
  side TEXT NOT NULL CHECK (side IN ('before', 'after')),
  start_line INTEGER NOT NULL CHECK (start_line >= 1),
  end_line INTEGER NOT NULL CHECK (end_line >= start_line),
  -- The anchored lines' text, a JSON array of strings.
  lines TEXT NOT NULL,
  -- The anchored change's place in the session's order (its finish, then its seq).
  change_finished_at INTEGER NOT NULL,
  change_seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('draft', 'pending', 'delivered', 'addressed')),
  review_id TEXT REFERENCES reviews(id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  delivered_at INTEGER,
  delivered_via TEXT CHECK (delivered_via IN ('hook', 'mcp', 'rest')),
  addressed_at INTEGER
);
CREATE INDEX idx_review_comments_session ON review_comments(session_id, seq);
CREATE INDEX idx_review_comments_review ON review_comments(review_id);
-- Re-anchoring looks for later changes that renamed a path away.
CREATE INDEX idx_workspace_run_change_files_session_old_path ON workspace_run_change_files(session_id, old_path)
  WHERE old_path IS NOT NULL;
