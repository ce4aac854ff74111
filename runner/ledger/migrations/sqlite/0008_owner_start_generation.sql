-- 8: run ownership as a lease with fencing (liveness.go, fence.go): when
-- the owner's process started, so that a reused pid is not taken for
-- it, and the generation, one more at every take-over, that each of the
-- owner's writes is checked against.

ALTER TABLE runs ADD COLUMN owner_start TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
