-- 3: the process running a run and its heartbeat, so a run whose
-- process died can be told from one still running (liveness.go).

ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN heartbeat_ms INTEGER;
-- Runs left running by earlier builds get their last sign of life as a
-- heartbeat and no owner, so rule 3 of goneWhy can close the dead ones.
UPDATE runs SET heartbeat_ms = nullif(max(coalesce(started_ms, 0), coalesce((
	SELECT max(max(coalesce(q.queued_ms, 0), coalesce(q.started_ms, 0), coalesce(q.ended_ms, 0)))
	FROM requests q WHERE q.run_id = runs.id), 0)), 0)
WHERE status = 'running';
