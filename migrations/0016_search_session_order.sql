-- A session's search documents in id order (newest first read backwards): a search within one
-- session reads its newest documents and stops once a page of them has matched, instead of
-- finding all of the session's documents through the `(session_id, ref, kind)` index and sorting
-- them first.
CREATE INDEX idx_search_docs_session ON search_docs(session_id, id);
