-- Takes back every lease of a tournament's matches, because whatever held
-- them is gone for good (a resumed `arena run` whose workers died with the
-- run before it). Each leased match gets a failure on record with the
-- reason given, but no strike: the match did nothing wrong. It goes back
-- to the front of the queue with the next attempt number, in schedule
-- order, or is dropped if the tournament is cancelled.
--
-- KEYS[1]:  arena:matches:{tournament}  LIST the tournament's match ids
-- KEYS[2]:  arena:tournaments           SET of tournament ids (existence)
-- KEYS[3]:  arena:cancelled             SET of cancelled tournament ids
-- KEYS[4]:  arena:match_state           HASH match -> state
-- KEYS[5]:  arena:match_lease           HASH match -> current lease id
-- KEYS[6]:  arena:match_worker          HASH match -> worker holding the lease
-- KEYS[7]:  arena:lease_match           HASH lease id -> match
-- KEYS[8]:  arena:leases                ZSET lease id scored by expiry (ms)
-- KEYS[9]:  arena:match_attempt         HASH match -> attempt
-- KEYS[10]: arena:match_failures        HASH match -> JSON array of failures
-- KEYS[11]: arena:queue                 LIST of queued match ids
-- ARGV[1]: tournament id
-- ARGV[2]: the reason to record
-- Returns: how many leases were taken back, or -1 for an unknown
--          tournament (nothing written).

-- Validate.
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
    return -1
end
local cancelled = redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 1
local leased = {}
for _, match in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    if redis.call('HGET', KEYS[4], match) == 'leased' then
        table.insert(leased, match)
    end
end

-- Mutate, the last match first so the first ends up at the very front.
for i = #leased, 1, -1 do
    local match = leased[i]
    local lease = redis.call('HGET', KEYS[5], match)
    local worker = redis.call('HGET', KEYS[6], match) or ''
    if lease then
        redis.call('HDEL', KEYS[7], lease)
        redis.call('ZREM', KEYS[8], lease)
    end
    redis.call('HDEL', KEYS[5], match)
    redis.call('HDEL', KEYS[6], match)
    local failures = {}
    local stored = redis.call('HGET', KEYS[10], match)
    if stored then
        failures = cjson.decode(stored)
    end
    table.insert(failures, {
        attempt = tonumber(redis.call('HGET', KEYS[9], match)),
        worker = worker,
        reason = ARGV[2],
    })
    redis.call('HSET', KEYS[10], match, cjson.encode(failures))
    if cancelled then
        redis.call('HSET', KEYS[4], match, 'dropped')
    else
        redis.call('HSET', KEYS[4], match, 'queued')
        redis.call('HINCRBY', KEYS[9], match, 1)
        redis.call('LPUSH', KEYS[11], match)
    end
end
return #leased
