package ledger

import "fmt"

// schemaVersion is the version this build writes: one per migration.
func schemaVersion() int { return len(migrations) }

// migrations[i] moves the schema from version i to i+1. Append only: a
// released migration is never edited, since ledgers in the field ran it.
var migrations = []string{
	// 1: runs, requests, cells, verdicts.
	`
CREATE TABLE runs (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL DEFAULT '',
	status       TEXT NOT NULL,
	scoring_mode TEXT NOT NULL DEFAULT '',
	config_json  TEXT NOT NULL DEFAULT '',
	scoring_json TEXT NOT NULL DEFAULT '',
	models_json  TEXT NOT NULL DEFAULT 'null',
	tests_json   TEXT NOT NULL DEFAULT 'null',
	repeat       INTEGER NOT NULL DEFAULT 0,
	started_ms   INTEGER,
	ended_ms     INTEGER
);
CREATE INDEX runs_by_start ON runs (started_ms, id);

CREATE TABLE requests (
	id                INTEGER PRIMARY KEY,
	run_id            TEXT NOT NULL,
	purpose           TEXT NOT NULL,
	server            TEXT NOT NULL DEFAULT '',
	model             TEXT NOT NULL DEFAULT '',
	test              TEXT NOT NULL DEFAULT '',
	repeat            INTEGER NOT NULL DEFAULT 0,
	judge             TEXT NOT NULL DEFAULT '',
	sample            INTEGER NOT NULL DEFAULT 0,
	attempt           INTEGER NOT NULL DEFAULT 0,
	input             TEXT NOT NULL DEFAULT '',
	params            TEXT NOT NULL DEFAULT '',
	cache_key         TEXT NOT NULL DEFAULT '',
	batch_id          TEXT NOT NULL DEFAULT '',
	status            TEXT NOT NULL,
	output            TEXT NOT NULL DEFAULT '',
	reasoning         TEXT NOT NULL DEFAULT '',
	tool_calls        TEXT NOT NULL DEFAULT '',
	verdict           TEXT NOT NULL DEFAULT '',
	error_class       TEXT NOT NULL DEFAULT '',
	error             TEXT NOT NULL DEFAULT '',
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	ttft_us           INTEGER NOT NULL DEFAULT 0,
	latency_us        INTEGER NOT NULL DEFAULT 0,
	queued_ms         INTEGER,
	started_ms        INTEGER,
	ended_ms          INTEGER
);
CREATE INDEX requests_by_run ON requests (run_id);
-- Partial: most requests (inference, probes) carry no cache key.
CREATE INDEX requests_by_cache_key ON requests (cache_key, status) WHERE cache_key <> '';

CREATE TABLE cells (
	run_id            TEXT NOT NULL,
	model             TEXT NOT NULL,
	test              TEXT NOT NULL,
	repeat            INTEGER NOT NULL,
	status            TEXT NOT NULL DEFAULT '',
	server            TEXT NOT NULL DEFAULT '',
	output            TEXT NOT NULL DEFAULT '',
	reasoning         TEXT NOT NULL DEFAULT '',
	tool_calls        TEXT NOT NULL DEFAULT '',
	checks            TEXT NOT NULL DEFAULT '',
	error_class       TEXT NOT NULL DEFAULT '',
	error             TEXT NOT NULL DEFAULT '',
	attempts          INTEGER NOT NULL DEFAULT 0,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	ttft_us           INTEGER NOT NULL DEFAULT 0,
	latency_us        INTEGER NOT NULL DEFAULT 0,
	tokens_per_sec    REAL NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, model, test, repeat)
);

CREATE TABLE verdicts (
	run_id     TEXT NOT NULL,
	model      TEXT NOT NULL,
	test       TEXT NOT NULL,
	repeat     INTEGER NOT NULL,
	judge      TEXT NOT NULL,
	verdict    TEXT NOT NULL DEFAULT '',
	score      REAL NOT NULL DEFAULT 0,
	agreement  REAL NOT NULL DEFAULT 0,
	detail     TEXT NOT NULL DEFAULT '',
	error      TEXT NOT NULL DEFAULT '',
	source     TEXT NOT NULL DEFAULT '',
	latency_ms INTEGER NOT NULL DEFAULT 0,
	at_ms      INTEGER,
	PRIMARY KEY (run_id, model, test, repeat, judge)
);
`,
	// 2: why a run ended as it did (a failed run's reason).
	`ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT '';`,
	// 3: the process running a run and its heartbeat, so a run whose
	// process died can be told from one still running (liveness.go).
	`
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN heartbeat_ms INTEGER;
-- Runs left running by earlier builds get their last sign of life as a
-- heartbeat and no owner, so rule 3 of goneWhy can close the dead ones.
UPDATE runs SET heartbeat_ms = nullif(max(coalesce(started_ms, 0), coalesce((
	SELECT max(max(coalesce(q.queued_ms, 0), coalesce(q.started_ms, 0), coalesce(q.ended_ms, 0)))
	FROM requests q WHERE q.run_id = runs.id), 0)), 0)
WHERE status = 'running';
`,
	// 4: a judge request names the cell it judges: the tested model beside
	// test and repeat (model is the judge's), and the judging round.
	`
ALTER TABLE requests ADD COLUMN candidate_model TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
`,
	// 5: the caches answer with the newest output, so the cache key index
	// orders by end time.
	`
DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, status, ended_ms) WHERE cache_key <> '';
`,
	// 6: texts stored once (texts.go). A row written from now on keeps each
	// long text as a list of references into texts (the _ref columns) and
	// its text column empty; rows written before keep their text inline and
	// a NULL reference, and read as they always did.
	`
CREATE TABLE texts (
	id   INTEGER PRIMARY KEY,
	hash INTEGER NOT NULL, -- the first 8 bytes of the body's SHA-256, big-endian
	body TEXT NOT NULL
);

ALTER TABLE requests ADD COLUMN input_ref BLOB;
ALTER TABLE requests ADD COLUMN params_ref BLOB;
ALTER TABLE requests ADD COLUMN output_ref BLOB;
ALTER TABLE requests ADD COLUMN reasoning_ref BLOB;
ALTER TABLE requests ADD COLUMN tool_calls_ref BLOB;
ALTER TABLE cells ADD COLUMN output_ref BLOB;
ALTER TABLE cells ADD COLUMN reasoning_ref BLOB;
ALTER TABLE cells ADD COLUMN tool_calls_ref BLOB;
ALTER TABLE cells ADD COLUMN checks_ref BLOB;
ALTER TABLE verdicts ADD COLUMN detail_ref BLOB;
-- Cache keys that are SHA-256s in lower-case hex become their 32 bytes
-- (keyArg in requests.go).
UPDATE requests SET cache_key = unhex(cache_key)
	WHERE length(cache_key) = 64 AND cache_key NOT GLOB '*[^0-9a-f]*';
`,
	// 7: the exit code the process that ran a run returned (exitcode.go);
	// NULL for runs of earlier builds, and for a run whose end it was not:
	// a run that starts or ends again (resume, retry, reconciling) loses
	// the code its earlier end was given, until its new end is given one.
	`
ALTER TABLE runs ADD COLUMN exit_code INTEGER;
CREATE TRIGGER runs_exit_code_of_its_end AFTER UPDATE OF status, ended_ms ON runs
WHEN NEW.exit_code IS NOT NULL
BEGIN
	UPDATE runs SET exit_code = NULL WHERE id = NEW.id;
END;
`,
	// 8: run ownership as a lease with fencing (liveness.go, fence.go): when
	// the owner's process started, so that a reused pid is not taken for
	// it, and the generation, one more at every take-over, that each of the
	// owner's writes is checked against.
	`
ALTER TABLE runs ADD COLUMN owner_start TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
`,
	// 9: the user the owner's process runs as, so that `runs` on a ledger
	// a team shares says whose each run is; '' for runs of earlier builds.
	`ALTER TABLE runs ADD COLUMN owner_user TEXT NOT NULL DEFAULT '';`,
	// 10: the cache key index leaves the status out. With it, a request's
	// start moved its entry too (a delete and an insert at a random place,
	// the keys being hashes, in a later commit than the insert's). The end
	// time stays, so a cache read still walks a key's rows newest first
	// and stops at the first completed one, however many runs have
	// reused the key.
	`
DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, ended_ms) WHERE cache_key <> '';
`,
	// 11: the cache key index holds completed requests only, the rows a
	// cache read can take. A request's row is written before it is sent
	// and its end after: with every keyed row indexed, it put an entry at
	// a random place (the keys are hashes) as it was queued, then moved it
	// when its end time came, three writes of a page of an index that a
	// large ledger does not keep in its cache; now one, at its end. The
	// cache reads name both terms (requests.go), so they use it.
	`
DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, ended_ms) WHERE cache_key <> '' AND status = 'completed';
`,
}

// migrate brings the schema to schemaVersion in one transaction, so a crash
// mid-migration leaves the old version intact and the next Open retries.
func (l *Ledger) migrate() error {
	// A lock held longer than a commit takes (a pitwall stopped mid-write)
	// is said in seconds, not after a writer's full wait.
	if _, err := l.w.Exec(fmt.Sprintf("PRAGMA busy_timeout = %d", openBusyMS)); err != nil {
		return l.wrap("open", err)
	}
	defer l.w.Exec(fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeoutMS)) //nolint:errcheck // the DSN's value, set again
	tx, err := l.w.Begin()
	if err != nil {
		return l.wrap("open", l.explain(err))
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var v int
	if err := tx.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		return l.wrap("read schema version", err)
	}
	if v > schemaVersion() {
		return l.wrap("migrate", fmt.Errorf("schema version %d is newer than this pitwall's %d; upgrade pitwall", v, schemaVersion()))
	}
	if v == schemaVersion() {
		return nil
	}
	for i := v; i < schemaVersion(); i++ {
		if _, err := tx.Exec(migrations[i]); err != nil {
			return l.wrap(fmt.Sprintf("migrate to schema version %d", i+1), err)
		}
	}
	// user_version lives in the database header, which the transaction
	// covers: the tables and the version commit together or not at all.
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion())); err != nil {
		return l.wrap("set schema version", err)
	}
	if err := tx.Commit(); err != nil {
		return l.wrap("migrate", err)
	}
	return nil
}
