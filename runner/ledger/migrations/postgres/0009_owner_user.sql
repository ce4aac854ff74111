-- 9: the user the owner's process runs as, so that `runs` on a ledger
-- a team shares says whose each run is; '' for runs of earlier builds.

ALTER TABLE runs ADD COLUMN owner_user TEXT NOT NULL DEFAULT '';
