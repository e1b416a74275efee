-- Records that a registered worker is alive and what it has built.
--
-- KEYS[1]: arena:workers        HASH worker -> WorkerInfo JSON
-- KEYS[2]: arena:worker_cached  HASH worker -> JSON array of entrant ids
-- KEYS[3]: arena:worker_seen    ZSET worker scored by last heartbeat (ms)
-- ARGV[1]: worker id
-- ARGV[2]: now (ms)
-- ARGV[3]: JSON array of the entrants it has built
-- Returns: 1, or 0 if the worker never registered (nothing written; it
--          should register again).

local worker = ARGV[1]

-- Validate.
if redis.call('HEXISTS', KEYS[1], worker) == 0 then
    return 0
end

-- Mutate.
redis.call('HSET', KEYS[2], worker, ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[2], worker)
return 1
