-- 5: the caches answer with the newest output, so the cache key index
-- orders by end time.

DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, status, ended_ms) WHERE cache_key <> '';
