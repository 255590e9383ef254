-- Lines added and deleted over every stored row of a change, counted when it is stored, so a
-- change's heading can total a change listed a page at a time. Null in a change stored before:
-- its totals are summed from its rows when read.
ALTER TABLE workspace_run_changes ADD COLUMN total_additions INTEGER;
ALTER TABLE workspace_run_changes ADD COLUMN total_deletions INTEGER;
