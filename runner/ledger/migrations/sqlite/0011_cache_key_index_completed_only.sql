-- 11: the cache key index holds completed requests only, the rows a
-- cache read can take. A request's row is written before it is sent
-- and its end after: with every keyed row indexed, it put an entry at
-- a random place (the keys are hashes) as it was queued, then moved it
-- when its end time came, three writes of a page of an index that a
-- large ledger does not keep in its cache; now one, at its end. The
-- cache reads name both terms (requests.go), so they use it.

DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, ended_ms) WHERE cache_key <> '' AND status = 'completed';
