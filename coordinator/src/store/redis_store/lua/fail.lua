-- Gives up a match's current attempt after an infrastructure failure (not
-- the bots' fault): if the lease is current and the caller holds it, the
-- attempt ends as end_attempt says.
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
-- KEYS[10]: arena:match_failures    HASH match -> JSON array of failures
-- KEYS[11]: arena:match_strikes     HASH match -> failures in a row
-- ARGV[1]: match id
-- ARGV[2]: lease id
-- ARGV[3]: reason
-- ARGV[4]: the calling worker
-- ARGV[5]: how many failures in a row make the match stuck
-- Returns: 0 if the lease is not current, -1 if it is held by another
--          worker (nothing written for either); else 1 requeued, 2 stuck,
--          3 dropped.

local match, lease, worker = ARGV[1], ARGV[2], ARGV[4]

-- Validate.
if redis.call('HGET', KEYS[1], match) ~= 'leased' then
    return 0
end
if redis.call('HGET', KEYS[2], match) ~= lease then
    return 0
end
if redis.call('HGET', KEYS[3], match) ~= worker then
    return -1
end

-- Mutate.
redis.call('HDEL', KEYS[2], match)
redis.call('HDEL', KEYS[3], match)
redis.call('HDEL', KEYS[4], lease)
redis.call('ZREM', KEYS[5], lease)
local keys = {
    state = KEYS[1], attempt = KEYS[6], failures = KEYS[10], strikes = KEYS[11],
    tournament = KEYS[7], cancelled = KEYS[8],
}
local ended = end_attempt(keys, match, worker, ARGV[3], tonumber(ARGV[5]))
if ended == 'requeued' then
    redis.call('LPUSH', KEYS[9], match)
    return 1
elseif ended == 'stuck' then
    return 2
end
return 3
