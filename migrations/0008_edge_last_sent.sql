-- When the centre last acknowledged a batch of this edge (ms since the epoch; null: never), kept
-- with the outbox so `GET /api/edge/status` still says it after the edge restarts.
ALTER TABLE edge_state ADD COLUMN last_sent_at INTEGER;
