-- What a run's model calls cost in US dollars, as its agent itself priced them (opencode's
-- step-finish parts, a bridge client); null for a run whose agent reported no price. Set once, with
-- the run's tokens, when the run completes.
ALTER TABLE runs ADD COLUMN usage_cost_usd DOUBLE PRECISION;
