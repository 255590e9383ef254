-- The tokens a run used, as its agent reported them (input, output, cache read, cache write); null
-- for a run whose agent reported none. Set once, when the run completes.
ALTER TABLE runs ADD COLUMN usage_input INTEGER;
ALTER TABLE runs ADD COLUMN usage_output INTEGER;
ALTER TABLE runs ADD COLUMN usage_cache_read INTEGER;
ALTER TABLE runs ADD COLUMN usage_cache_write INTEGER;
