-- A session's search documents in id order (the SQLite migration of the same number says why).
CREATE INDEX idx_search_docs_session ON search_docs(session_id, id);
