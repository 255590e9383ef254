-- Search over everything recorded: session titles, prompts and replies, tool calls' summaries (the
-- command of a shell call), changed files' paths and their patch text. One document per thing
-- found, kept by triggers on the tables that store them, so a document is written in the very
-- transaction that stores its row (whichever code stores it: the recorder, an edge's batch) and
-- goes with it. `ref` names the row: a message's id, a tool call's id, a file row's id ('' for a
-- session's title). The text index is FTS5's trigram tokenizer: case-insensitive substrings of
-- three characters or more, the same matching PostgreSQL's pg_trgm gives the same table there.

-- How much of a file's patch is indexed (characters; the server writes its setting here at start).
CREATE TABLE search_settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  patch_chars INTEGER NOT NULL
);
INSERT INTO search_settings (id, patch_chars) VALUES (1, 65536);

CREATE TABLE search_docs (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('title', 'prompt', 'reply', 'tool', 'command', 'path', 'patch')),
  ref TEXT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX idx_search_docs_ref ON search_docs(session_id, ref, kind);

CREATE VIRTUAL TABLE search_fts USING fts5(body, content = 'search_docs', content_rowid = 'id', tokenize = 'trigram');
CREATE TRIGGER search_docs_added AFTER INSERT ON search_docs BEGIN
  INSERT INTO search_fts (rowid, body) VALUES (NEW.id, NEW.body);
END;
CREATE TRIGGER search_docs_removed AFTER DELETE ON search_docs BEGIN
  INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
END;

CREATE TRIGGER search_session_added AFTER INSERT ON sessions WHEN NEW.title IS NOT NULL BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body) VALUES (NEW.id, 'title', '', NEW.title);
END;
CREATE TRIGGER search_session_titled AFTER UPDATE OF title ON sessions WHEN OLD.title IS NOT NEW.title BEGIN
  DELETE FROM search_docs WHERE session_id = NEW.id AND ref = '' AND kind = 'title';
  INSERT INTO search_docs (session_id, kind, ref, body) SELECT NEW.id, 'title', '', NEW.title WHERE NEW.title IS NOT NULL;
END;

CREATE TRIGGER search_message_added AFTER INSERT ON messages BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body) VALUES (
    NEW.session_id, CASE NEW.role WHEN 'user' THEN 'prompt' WHEN 'assistant' THEN 'reply' ELSE 'tool' END,
    NEW.id, NEW.content);
END;
CREATE TRIGGER search_message_edited AFTER UPDATE OF content, role ON messages
  WHEN OLD.content IS NOT NEW.content OR OLD.role IS NOT NEW.role BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.id AND kind IN ('prompt', 'reply', 'tool');
  INSERT INTO search_docs (session_id, kind, ref, body) VALUES (
    NEW.session_id, CASE NEW.role WHEN 'user' THEN 'prompt' WHEN 'assistant' THEN 'reply' ELSE 'tool' END,
    NEW.id, NEW.content);
END;
CREATE TRIGGER search_message_removed AFTER DELETE ON messages BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.id AND kind IN ('prompt', 'reply', 'tool');
END;

CREATE TRIGGER search_tool_call_added AFTER INSERT ON tool_calls WHEN NEW.name IS NOT NULL BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body) VALUES (NEW.session_id, 'command', NEW.tool_call_id, NEW.name);
END;
CREATE TRIGGER search_tool_call_named AFTER UPDATE OF name ON tool_calls WHEN OLD.name IS NOT NEW.name BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.tool_call_id AND kind = 'command';
  INSERT INTO search_docs (session_id, kind, ref, body)
    SELECT NEW.session_id, 'command', NEW.tool_call_id, NEW.name WHERE NEW.name IS NOT NULL;
END;
CREATE TRIGGER search_tool_call_removed AFTER DELETE ON tool_calls BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.tool_call_id AND kind = 'command';
END;

-- A file row: its path (and a rename's old path), and the first `patch_chars` characters of its patch.
CREATE TRIGGER search_file_added AFTER INSERT ON workspace_run_change_files BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body) VALUES (
    NEW.session_id, 'path', NEW.id, CASE WHEN NEW.old_path IS NULL THEN NEW.path ELSE NEW.path || ' ' || NEW.old_path END);
  INSERT INTO search_docs (session_id, kind, ref, body)
    SELECT NEW.session_id, 'patch', NEW.id, substr(NEW.patch, 1, (SELECT patch_chars FROM search_settings WHERE id = 1))
    WHERE NEW.patch IS NOT NULL AND NEW.patch <> '';
END;
CREATE TRIGGER search_file_removed AFTER DELETE ON workspace_run_change_files BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.id AND kind IN ('path', 'patch');
END;

-- What was stored before this migration, oldest first (so newer rows keep larger ids).
INSERT INTO search_docs (session_id, kind, ref, body)
SELECT session_id, kind, ref, body FROM (
  SELECT id AS session_id, 'title' AS kind, '' AS ref, title AS body, created_at AS at, 0 AS n
    FROM sessions WHERE title IS NOT NULL
  UNION ALL
  SELECT session_id, CASE role WHEN 'user' THEN 'prompt' WHEN 'assistant' THEN 'reply' ELSE 'tool' END,
    id, content, created_at, seq FROM messages
  UNION ALL
  SELECT session_id, 'command', tool_call_id, name, started_at, seq FROM tool_calls WHERE name IS NOT NULL
  UNION ALL
  SELECT session_id, 'path', id, CASE WHEN old_path IS NULL THEN path ELSE path || ' ' || old_path END, created_at, ord
    FROM workspace_run_change_files
  UNION ALL
  SELECT session_id, 'patch', id, substr(patch, 1, 65536), created_at, ord
    FROM workspace_run_change_files WHERE patch IS NOT NULL AND patch <> ''
) ORDER BY at, n;
