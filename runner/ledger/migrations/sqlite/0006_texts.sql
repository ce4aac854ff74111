-- 6: texts stored once (texts.go). A row written from now on keeps each
-- long text as a list of references into texts (the _ref columns) and
-- its text column empty; rows written before keep their text inline and
-- a NULL reference, and read as they always did.

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
