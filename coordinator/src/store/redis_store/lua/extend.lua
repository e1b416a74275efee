-- Moves a live lease's expiry to ARGV[3], if the lease is still its
-- match's current one, the match is not done, the tournament is not
-- cancelled, and the lease has not expired yet (expired means
-- expiry <= now, even if `expire` has not swept it). A current lease may
-- only be extended by the worker it was granted to.
--
-- KEYS[1]: arena:lease_match       HASH lease id -> match
-- KEYS[2]: arena:match_lease       HASH match -> current lease id
-- KEYS[3]: arena:match_state       HASH match -> state
-- KEYS[4]: arena:match_tournament  HASH match -> tournament
-- KEYS[5]: arena:cancelled         SET of cancelled tournament ids
-- KEYS[6]: arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[7]: arena:match_worker      HASH match -> worker holding the lease
-- ARGV[1]: lease id
-- ARGV[2]: now (ms)
-- ARGV[3]: new expiry (ms)
-- ARGV[4]: the calling worker
-- Returns: 1 if extended, 0 if not, -1 if the lease is current but held by
--          another worker (nothing written unless 1).

local lease = ARGV[1]

-- Validate.
local match = redis.call('HGET', KEYS[1], lease)
if not match then
    return 0
end
if redis.call('HGET', KEYS[2], match) ~= lease then
    return 0
end
if redis.call('HGET', KEYS[3], match) ~= 'leased' then
    return 0
end
if redis.call('HGET', KEYS[7], match) ~= ARGV[4] then
    return -1
end
local tournament = redis.call('HGET', KEYS[4], match)
if not tournament or redis.call('SISMEMBER', KEYS[5], tournament) == 1 then
    return 0
end
local expiry = redis.call('ZSCORE', KEYS[6], lease)
if not expiry or tonumber(expiry) <= tonumber(ARGV[2]) then
    return 0
end

-- Mutate.
redis.call('ZADD', KEYS[6], ARGV[3], lease)
return 1
