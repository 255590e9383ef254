-- Mirrors the SQLite schema (an edge keeps its outbox, and when it last sent, in its own SQLite
-- file); on a PostgreSQL store the column stays null.
ALTER TABLE edge_state ADD COLUMN last_sent_at BIGINT;
