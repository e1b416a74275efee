-- Gives up a match's current attempt after an infrastructure failure (not
-- the bots' fault): if the lease is current, the match goes back to the
-- front of the queue with the next attempt number, or is dropped if its
-- tournament was cancelled.
--
-- KEYS[1]:  arena:match_state       HASH match -> state
-- KEYS[2]:  arena:match_lease       HASH match -> current lease id
-- KEYS[3]:  arena:match_worker      HASH match -> worker holding the lease
-- KEYS[4]:  arena:lease_match       HASH lease id -> match
-- KEYS[5]:  arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[6]:  arena:match_attempt     HASH match -> attempt
-- KEYS[7]:  arena:match_tournament  HASH match -> tournament
-- KEYS[8]:  arena:cancelled         SET of cancelled tournament ids
-- KEYS[9]:  arena:queue             LIST of queued match ids
-- KEYS[10]: arena:match_error       HASH match -> last failure reason
-- ARGV[1]: match id
-- ARGV[2]: lease id
-- ARGV[3]: reason
-- Returns: 1 if the lease was current and is now ended, 0 otherwise
--          (nothing written).

local match, lease = ARGV[1], ARGV[2]

-- Validate.
if redis.call('HGET', KEYS[1], match) ~= 'leased' then
    return 0
end
if redis.call('HGET', KEYS[2], match) ~= lease then
    return 0
end
local tournament = redis.call('HGET', KEYS[7], match)
local cancelled = not tournament or redis.call('SISMEMBER', KEYS[8], tournament) == 1

-- Mutate.
redis.call('HDEL', KEYS[2], match)
redis.call('HDEL', KEYS[3], match)
redis.call('HDEL', KEYS[4], lease)
redis.call('ZREM', KEYS[5], lease)
redis.call('HSET', KEYS[10], match, ARGV[3])
if cancelled then
    redis.call('HSET', KEYS[1], match, 'dropped')
else
    redis.call('HSET', KEYS[1], match, 'queued')
    redis.call('HINCRBY', KEYS[6], match, 1)
    redis.call('LPUSH', KEYS[9], match)
end
return 1
