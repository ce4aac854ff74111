-- 10: the cache key index leaves the status out. With it, a request's
-- start moved its entry too (a delete and an insert at a random place,
-- the keys being hashes, in a later commit than the insert's). The end
-- time stays, so a cache read still walks a key's rows newest first
-- and stops at the first completed one, however many runs have
-- reused the key.

DROP INDEX requests_by_cache_key;
CREATE INDEX requests_by_cache_key ON requests (cache_key, ended_ms) WHERE cache_key <> '';
