-- A run's own title (`rundiff run --title`, the bridge's run.started `title`), apart from its
-- session's title; null for a run given none.
ALTER TABLE runs ADD COLUMN title TEXT COLLATE "C";
