-- A ledger at schema version 5, as the migrations before the SQL files made it,
-- with rows every version since the first can hold. Loaded by migrate_test.go.

-- migration 1
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

-- migration 2
ALTER TABLE runs ADD COLUMN message TEXT NOT NULL DEFAULT '';

-- migration 3
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN heartbeat_ms INTEGER;
-- Runs left running by earlier builds get their last sign of life as a
-- heartbeat and no owner, so rule 3 of goneWhy can close the dead ones.
UPDATE runs SET heartbeat_ms = nullif(max(coalesce(started_ms, 0), coalesce((
	SELECT max(max(coalesce(q.queued_ms, 0), coalesce(q.started_ms, 0), coalesce(q.ended_ms, 0)))
	FROM requests q WHERE q.run_id = runs.id), 0)), 0)
WHERE status = 'running';

-- migration 4
ALTER TABLE requests ADD COLUMN candidate_model TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN round INTEGER NOT NULL DEFAULT 0;

-- migration 5
DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, status, ended_ms) WHERE cache_key <> '';

-- rows
INSERT INTO runs (id, name, status, models_json, tests_json, repeat, started_ms) VALUES
	('done', 'nightly', 'completed', '["m"]', '["t"]', 1, 1000),
	('live', '', 'running', '["m"]', '["t","u"]', 1, 2000);
INSERT INTO requests (id, run_id, purpose, model, test, input, params, cache_key, status, output, queued_ms, started_ms, ended_ms) VALUES
	(1, 'done', 'inference', 'm', 't', 'What is 2 plus 2?', '{"seed":1}', '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f', 'completed', 'four', 1000, 1100, 1500),
	(2, 'live', 'inference', 'm', 'u', 'Name a colour.', '', 'not-a-hash', 'running', '', 2000, 2500, NULL);
INSERT INTO cells (run_id, model, test, repeat, status, output, checks, attempts) VALUES
	('done', 'm', 't', 0, 'completed', 'four', '[{"name":"contains","pass":true}]', 1);
INSERT INTO verdicts (run_id, model, test, repeat, judge, verdict, score, detail, at_ms) VALUES
	('done', 'm', 't', 0, 'j', 'pass', 1, 'VERDICT: PASS', 1600);
PRAGMA user_version = 5;
