-- Search filters without joins, and runs found by their own titles (the SQLite migration of the
-- same number says what and why): each document carries its run, that run's status and a changed
-- file's path, kept by the same triggers; a run's title is a `title` document whose ref is its id.

ALTER TABLE search_docs ADD COLUMN run_id TEXT COLLATE "C";
ALTER TABLE search_docs ADD COLUMN run_status TEXT COLLATE "C";
ALTER TABLE search_docs ADD COLUMN path TEXT COLLATE "C";

-- What was stored before this migration: each document's run, status and path.
UPDATE search_docs d SET run_id = m.run_id FROM messages m
  WHERE d.kind IN ('prompt', 'reply', 'tool') AND m.session_id = d.session_id AND m.id = d.ref;
UPDATE search_docs d SET run_id = t.run_id FROM tool_calls t
  WHERE d.kind = 'command' AND t.session_id = d.session_id AND t.tool_call_id = d.ref;
UPDATE search_docs d SET run_id = c.run_id, path = f.path
  FROM workspace_run_change_files f JOIN workspace_run_changes c ON c.session_id = f.session_id AND c.change_id = f.change_id
  WHERE d.kind IN ('path', 'patch') AND f.id = d.ref;
UPDATE search_docs d SET run_status = r.status FROM runs r WHERE r.session_id = d.session_id AND r.run_id = d.run_id;
CREATE INDEX idx_search_docs_run ON search_docs(session_id, run_id);

-- The runs' titles, as documents of their own (oldest first, as migration 0011 filled the rest).
INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
  SELECT session_id, 'title', run_id, title, run_id, status FROM runs WHERE title IS NOT NULL ORDER BY started_at;

CREATE FUNCTION search_run_status_of(session TEXT, run TEXT) RETURNS TEXT LANGUAGE sql STABLE AS $$
  SELECT status FROM runs WHERE session_id = session AND run_id = run
$$;

-- A message's, tool call's and file row's document, written with its run, status and path.
CREATE OR REPLACE FUNCTION search_message_doc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.content IS NOT DISTINCT FROM NEW.content AND OLD.role IS NOT DISTINCT FROM NEW.role THEN
    IF OLD.run_id IS DISTINCT FROM NEW.run_id THEN
      UPDATE search_docs SET run_id = NEW.run_id, run_status = search_run_status_of(NEW.session_id, NEW.run_id)
        WHERE session_id = NEW.session_id AND ref = NEW.id AND kind IN ('prompt', 'reply', 'tool');
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.id AND kind IN ('prompt', 'reply', 'tool');
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
      VALUES (NEW.session_id, search_message_kind(NEW.role), NEW.id, NEW.content, NEW.run_id,
        search_run_status_of(NEW.session_id, NEW.run_id));
  END IF;
  RETURN NULL;
END
$$;
DROP TRIGGER search_message_edited ON messages;
CREATE TRIGGER search_message_edited AFTER UPDATE OF content, role, run_id ON messages
  FOR EACH ROW EXECUTE FUNCTION search_message_doc();

CREATE OR REPLACE FUNCTION search_tool_call_doc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.name IS NOT DISTINCT FROM NEW.name THEN RETURN NULL; END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.tool_call_id AND kind = 'command';
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.name IS NOT NULL THEN
    INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status) VALUES (
      NEW.session_id, 'command', NEW.tool_call_id, NEW.name, NEW.run_id, search_run_status_of(NEW.session_id, NEW.run_id));
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION search_file_doc() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  run TEXT;
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.id AND kind IN ('path', 'patch');
    RETURN NULL;
  END IF;
  SELECT run_id INTO run FROM workspace_run_changes WHERE session_id = NEW.session_id AND change_id = NEW.change_id;
  INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status, path) VALUES (
    NEW.session_id, 'path', NEW.id, CASE WHEN NEW.old_path IS NULL THEN NEW.path ELSE NEW.path || ' ' || NEW.old_path END,
    run, search_run_status_of(NEW.session_id, run), NEW.path);
  IF NEW.patch IS NOT NULL AND NEW.patch <> '' THEN
    INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status, path) VALUES (
      NEW.session_id, 'patch', NEW.id, substr(NEW.patch, 1, (SELECT patch_chars FROM search_settings WHERE id = 1)),
      run, search_run_status_of(NEW.session_id, run), NEW.path);
  END IF;
  RETURN NULL;
END
$$;

-- A run: its status reaches every document of it (a document may be written before its run is);
-- its title is a document of its own.
CREATE FUNCTION search_run_doc() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM search_docs WHERE session_id = OLD.session_id AND ref = OLD.run_id AND kind = 'title';
    UPDATE search_docs SET run_status = NULL WHERE session_id = OLD.session_id AND run_id = OLD.run_id;
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
    UPDATE search_docs SET run_status = NEW.status WHERE session_id = NEW.session_id AND run_id = NEW.run_id;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.title IS DISTINCT FROM NEW.title THEN
    DELETE FROM search_docs WHERE session_id = NEW.session_id AND ref = NEW.run_id AND kind = 'title';
  END IF;
  IF NEW.title IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.title IS DISTINCT FROM NEW.title) THEN
    INSERT INTO search_docs (session_id, kind, ref, body, run_id, run_status)
      VALUES (NEW.session_id, 'title', NEW.run_id, NEW.title, NEW.run_id, NEW.status);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER search_run_added AFTER INSERT ON runs FOR EACH ROW EXECUTE FUNCTION search_run_doc();
CREATE TRIGGER search_run_changed AFTER UPDATE OF status, title ON runs FOR EACH ROW EXECUTE FUNCTION search_run_doc();
CREATE TRIGGER search_run_removed AFTER DELETE ON runs FOR EACH ROW EXECUTE FUNCTION search_run_doc();

-- The changed files' path documents in a text index of their own (a partial pg_trgm index): a path
-- alone (`path:` without words, `kind:path`) is otherwise looked for among every patch, whose
-- header names its path three times.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX idx_search_docs_paths ON search_docs USING gin (lower(body) gin_trgm_ops) WHERE kind = ''path''';
  END IF;
END
$$;
