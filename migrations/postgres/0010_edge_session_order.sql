-- On a centre: the newest read of each edge session applied so far (the edge database's id and its
-- outbox's highest position when it read the batch). A batch read before it, arriving late, is
-- skipped whole instead of writing older rows over newer ones (server/store/ingest.ts).
ALTER TABLE edge_sessions ADD COLUMN database_id TEXT;
ALTER TABLE edge_sessions ADD COLUMN read_seq BIGINT;
