-- Moves a live lease's expiry to ARGV[3], if the lease is still its
-- match's current one, the match is not done, the tournament is not
-- cancelled, and the lease has not expired yet (expired means
-- expiry <= now, even if `expire` has not swept it).
--
-- KEYS[1]: arena:lease_match       HASH lease id -> match
-- KEYS[2]: arena:match_lease       HASH match -> current lease id
-- KEYS[3]: arena:match_state       HASH match -> state
-- KEYS[4]: arena:match_tournament  HASH match -> tournament
-- KEYS[5]: arena:cancelled         SET of cancelled tournament ids
-- KEYS[6]: arena:leases            ZSET lease id scored by expiry (ms)
-- ARGV[1]: lease id
-- ARGV[2]: now (ms)
-- ARGV[3]: new expiry (ms)
-- Returns: 1 if extended, 0 if not (nothing written).

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
