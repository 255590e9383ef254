-- Search filters without joins, and runs found by their own titles. Each search document now
-- carries the run it belongs to with that run's status, and a changed file's path, so `status:` and
-- `path:` are a look at the document's own row instead of a join through messages, tool calls,
-- changes and runs for every candidate (the joins cost most of such a search). The triggers below
-- keep them: a document gets them when written, a run's status change reaches its documents, a
-- message moved to another run moves its document. A run's title (migration 0012) is a `title`
-- document whose ref is the run's id (a session's title keeps ref '').

ALTER TABLE search_docs ADD COLUMN run_id TEXT;
ALTER TABLE search_docs ADD COLUMN run_status TEXT;
ALTER TABLE search_docs ADD COLUMN path TEXT;

-- What was stored before this migration: each document's run, status and path.
UPDATE search_docs SET run_id = CASE
    WHEN kind IN ('prompt', 'reply', 'tool') THEN
      (SELECT m.run_id FROM messages m WHERE m.session_id = search_docs.session_id AND m.id = search_docs.ref)
    WHEN kind = 'command' THEN
      (SELECT t.run_id FROM tool_calls t WHERE t.session_id = search_docs.session_id AND t.tool_call_id = search_docs.ref)
    WHEN kind IN ('path', 'patch') THEN
      (SELECT c.run_id FROM workspace_run_change_files f
        JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
        WHERE f.id = search_docs.ref)
  END,
  path = CASE WHEN kind IN ('path', 'patch') THEN
      (SELECT f.path FROM workspace_run_change_files f WHERE f.id = search_docs.ref) END
  WHERE kind <> 'title';
UPDATE search_docs SET run_status =
  (SELECT r.status FROM runs r WHERE r.session_id = search_docs.session_id AND r.run_id = search_docs.run_id)
  WHERE run_id IS NOT NULL;
CREATE INDEX idx_search_docs_run ON search_docs(session_id, run_id);

-- The runs' titles, as documents of their own (oldest first, as migration 0011 filled the rest).
INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
  SELECT session_id, 'title', run_id, title, run_id, status FROM runs WHERE title IS NOT NULL ORDER BY started_at;

-- A message's, tool call's and file row's document, written with its run, status and path.
DROP TRIGGER search_message_added;
CREATE TRIGGER search_message_added AFTER INSERT ON messages BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status) VALUES (
    NEW.session_id, CASE NEW.role WHEN 'user' THEN 'prompt' WHEN 'assistant' THEN 'reply' ELSE 'tool' END,
    NEW.id, NEW.content, NEW.run_id,
    (SELECT status FROM runs WHERE session_id = NEW.session_id AND run_id = NEW.run_id));
END;
DROP TRIGGER search_message_edited;
CREATE TRIGGER search_message_edited AFTER UPDATE OF content, role ON messages
  WHEN OLD.content IS NOT NEW.content OR OLD.role IS NOT NEW.role BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.id AND kind IN ('prompt', 'reply', 'tool');
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status) VALUES (
    NEW.session_id, CASE NEW.role WHEN 'user' THEN 'prompt' WHEN 'assistant' THEN 'reply' ELSE 'tool' END,
    NEW.id, NEW.content, NEW.run_id,
    (SELECT status FROM runs WHERE session_id = NEW.session_id AND run_id = NEW.run_id));
END;
CREATE TRIGGER search_message_moved AFTER UPDATE OF run_id ON messages WHEN OLD.run_id IS NOT NEW.run_id BEGIN
  UPDATE search_docs SET run_id = NEW.run_id,
    run_status = (SELECT status FROM runs WHERE session_id = NEW.session_id AND run_id = NEW.run_id)
    WHERE session_id = NEW.session_id AND ref = NEW.id AND kind IN ('prompt', 'reply', 'tool');
END;

DROP TRIGGER search_tool_call_added;
CREATE TRIGGER search_tool_call_added AFTER INSERT ON tool_calls WHEN NEW.name IS NOT NULL BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status) VALUES (
    NEW.session_id, 'command', NEW.tool_call_id, NEW.name, NEW.run_id,
    (SELECT status FROM runs WHERE session_id = NEW.session_id AND run_id = NEW.run_id));
END;
DROP TRIGGER search_tool_call_named;
CREATE TRIGGER search_tool_call_named AFTER UPDATE OF name ON tool_calls WHEN OLD.name IS NOT NEW.name BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.tool_call_id AND kind = 'command';
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
    SELECT NEW.session_id, 'command', NEW.tool_call_id, NEW.name, NEW.run_id,
      (SELECT status FROM runs WHERE session_id = NEW.session_id AND run_id = NEW.run_id)
    WHERE NEW.name IS NOT NULL;
END;

DROP TRIGGER search_file_added;
CREATE TRIGGER search_file_added AFTER INSERT ON workspace_run_change_files BEGIN
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status, path)
    SELECT NEW.session_id, 'path', NEW.id,
      CASE WHEN NEW.old_path IS NULL THEN NEW.path ELSE NEW.path || ' ' || NEW.old_path END, c.run_id, r.status, NEW.path
    FROM workspace_run_changes c LEFT JOIN runs r ON r.session_id = c.session_id AND r.run_id = c.run_id
    WHERE c.session_id = NEW.session_id AND c.change_id = NEW.change_id;
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status, path)
    SELECT NEW.session_id, 'patch', NEW.id, substr(NEW.patch, 1, (SELECT patch_chars FROM search_settings WHERE id = 1)),
      c.run_id, r.status, NEW.path
    FROM workspace_run_changes c LEFT JOIN runs r ON r.session_id = c.session_id AND r.run_id = c.run_id
    WHERE c.session_id = NEW.session_id AND c.change_id = NEW.change_id AND NEW.patch IS NOT NULL AND NEW.patch <> '';
END;

-- A run: its status reaches every document of it (a document may be written before its run is);
-- its title is a document of its own.
CREATE TRIGGER search_run_added AFTER INSERT ON runs BEGIN
  UPDATE search_docs SET run_status = NEW.status WHERE session_id = NEW.session_id AND run_id = NEW.run_id;
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
    SELECT NEW.session_id, 'title', NEW.run_id, NEW.title, NEW.run_id, NEW.status WHERE NEW.title IS NOT NULL;
END;
CREATE TRIGGER search_run_status AFTER UPDATE OF status ON runs WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE search_docs SET run_status = NEW.status WHERE session_id = NEW.session_id AND run_id = NEW.run_id;
END;
CREATE TRIGGER search_run_titled AFTER UPDATE OF title ON runs WHEN OLD.title IS NOT NEW.title BEGIN
  DELETE FROM search_docs WHERE session_id = NEW.session_id AND ref = NEW.run_id AND kind = 'title';
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
    SELECT NEW.session_id, 'title', NEW.run_id, NEW.title, NEW.run_id, NEW.status WHERE NEW.title IS NOT NULL;
END;
CREATE TRIGGER search_run_removed AFTER DELETE ON runs BEGIN
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.run_id AND kind = 'title';
  UPDATE search_docs SET run_status = NULL WHERE session_id = OLD.session_id AND run_id = OLD.run_id;
END;

-- The changed files' path documents (a path and a rename's old path) in a text index of their own:
-- a path alone (`path:` without words, `kind:path`) is otherwise looked for among every patch,
-- whose header names its path three times.
CREATE VIRTUAL TABLE search_paths_fts USING fts5(body, content = 'search_docs', content_rowid = 'id', tokenize = 'trigram');
CREATE TRIGGER search_docs_path_added AFTER INSERT ON search_docs WHEN NEW.kind = 'path' BEGIN
  INSERT INTO search_paths_fts (rowid, body) VALUES (NEW.id, NEW.body);
END;
CREATE TRIGGER search_docs_path_removed AFTER DELETE ON search_docs WHEN OLD.kind = 'path' BEGIN
  INSERT INTO search_paths_fts (search_paths_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
END;
INSERT INTO search_paths_fts (rowid, body) SELECT id, body FROM search_docs WHERE kind = 'path' ORDER BY id;
