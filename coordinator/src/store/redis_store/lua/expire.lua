-- Ends every lease whose expiry is <= now. Each one's match goes back to
-- the front of the queue with the next attempt number, the earliest expiry
-- first; a match of a cancelled tournament is dropped instead. A lease
-- entry that no longer belongs to a leased match (which the other scripts
-- never leave behind) is only removed.
--
-- KEYS[1]:  arena:leases            ZSET lease id scored by expiry (ms)
-- KEYS[2]:  arena:lease_match       HASH lease id -> match
-- KEYS[3]:  arena:match_lease       HASH match -> current lease id
-- KEYS[4]:  arena:match_worker      HASH match -> worker holding the lease
-- KEYS[5]:  arena:match_state       HASH match -> state
-- KEYS[6]:  arena:match_attempt     HASH match -> attempt
-- KEYS[7]:  arena:match_tournament  HASH match -> tournament
-- KEYS[8]:  arena:cancelled         SET of cancelled tournament ids
-- KEYS[9]:  arena:queue             LIST of queued match ids
-- KEYS[10]: arena:match_error       HASH match -> last failure reason
-- ARGV[1]: now (ms)
-- ARGV[2]: the reason to record ("lease expired")
-- Returns: the requeued match ids, earliest expiry first.

local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])

-- Validate: decide each lease's fate before touching anything.
-- fate: 'requeue', 'drop' (tournament cancelled) or 'forget' (dangling)
local plan = {}
for _, lease in ipairs(due) do
    local match = redis.call('HGET', KEYS[2], lease)
    local fate = 'forget'
    if match and redis.call('HGET', KEYS[3], match) == lease
        and redis.call('HGET', KEYS[5], match) == 'leased' then
        local tournament = redis.call('HGET', KEYS[7], match)
        if tournament and redis.call('SISMEMBER', KEYS[8], tournament) == 0 then
            fate = 'requeue'
        else
            fate = 'drop'
        end
    end
    table.insert(plan, {lease, match, fate})
end

-- Mutate, latest expiry first so the earliest ends up at the very front.
local requeued = {}
for i = #plan, 1, -1 do
    local lease, match, fate = plan[i][1], plan[i][2], plan[i][3]
    redis.call('ZREM', KEYS[1], lease)
    redis.call('HDEL', KEYS[2], lease)
    if fate ~= 'forget' then
        redis.call('HDEL', KEYS[3], match)
        redis.call('HDEL', KEYS[4], match)
        redis.call('HSET', KEYS[10], match, ARGV[2])
        if fate == 'requeue' then
            redis.call('HSET', KEYS[5], match, 'queued')
            redis.call('HINCRBY', KEYS[6], match, 1)
            redis.call('LPUSH', KEYS[9], match)
            table.insert(requeued, 1, match)
        else
            redis.call('HSET', KEYS[5], match, 'dropped')
        end
    end
end
return requeued
