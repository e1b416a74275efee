-- Records a match's result if it is the first valid one: the match is not
-- done and the reporting lease is its current one. Repeats of an accepted
-- report, and reports under a lease that expired or failed, change nothing.
-- A current lease may only be reported on by the worker it was granted to.
--
-- KEYS[1]: arena:match_tournament  HASH match -> tournament (existence)
-- KEYS[2]: arena:match_state       HASH match -> state
-- KEYS[3]: arena:match_lease       HASH match -> current lease id
-- KEYS[4]: arena:match_worker      HASH match -> worker holding the lease
-- KEYS[5]: arena:lease_match       HASH lease id -> match
-- KEYS[6]: arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[7]: arena:results           HASH match -> MatchRecord JSON
-- KEYS[8]: arena:replay:{match}    STRING, the replay
-- ARGV[1]: match id
-- ARGV[2]: lease id
-- ARGV[3]: MatchRecord JSON
-- ARGV[4]: "1" if ARGV[5] holds a replay, "0" if there is none
-- ARGV[5]: replay bytes (empty when ARGV[4] is "0")
-- ARGV[6]: the reporting worker
-- Returns: 0 accepted, 1 duplicate (already done), 2 stale lease,
--          3 unknown match, 4 current lease held by another worker. Only 0
--          wrote anything.

local match, lease = ARGV[1], ARGV[2]

-- Validate.
if redis.call('HEXISTS', KEYS[1], match) == 0 then
    return 3
end
local state = redis.call('HGET', KEYS[2], match)
if state == 'done' then
    return 1
end
if state ~= 'leased' or redis.call('HGET', KEYS[3], match) ~= lease then
    return 2
end
if redis.call('HGET', KEYS[4], match) ~= ARGV[6] then
    return 4
end

-- Mutate.
redis.call('HSET', KEYS[7], match, ARGV[3])
if ARGV[4] == '1' then
    redis.call('SET', KEYS[8], ARGV[5])
end
redis.call('HSET', KEYS[2], match, 'done')
redis.call('HDEL', KEYS[3], match)
redis.call('HDEL', KEYS[4], match)
redis.call('HDEL', KEYS[5], lease)
redis.call('ZREM', KEYS[6], lease)
return 0
