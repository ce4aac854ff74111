-- 7: the exit code the process that ran a run returned (exitcode.go);
-- NULL for runs of earlier builds, and for a run whose end it was not:
-- a run that starts or ends again (resume, retry, reconciling) loses
-- the code its earlier end was given, until its new end is given one.

ALTER TABLE runs ADD COLUMN exit_code INTEGER;
CREATE TRIGGER runs_exit_code_of_its_end AFTER UPDATE OF status, ended_ms ON runs
WHEN NEW.exit_code IS NOT NULL
BEGIN
	UPDATE runs SET exit_code = NULL WHERE id = NEW.id;
END;
