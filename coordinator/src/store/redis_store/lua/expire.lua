-- Ends every lease whose expiry is <= now, earliest expiry first, as
-- end_attempt says; requeued matches go back to the front of the queue with
-- the earliest expiry at the very front. A lease entry that no longer
-- belongs to a leased match (which the other scripts never leave behind) is
-- only removed.
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
-- KEYS[10]: arena:match_failures    HASH match -> JSON array of failures
-- KEYS[11]: arena:match_strikes     HASH match -> failures in a row
-- ARGV[1]: now (ms)
-- ARGV[2]: the reason to record ("lease expired")
-- ARGV[3]: how many failures in a row make a match stuck
-- Returns: a flat array, three entries per ended lease in expiry order:
--   match id, worker, 'requeued' | 'stuck' | 'dropped'.

local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local keys = {
    state = KEYS[5], attempt = KEYS[6], failures = KEYS[10], strikes = KEYS[11],
    tournament = KEYS[7], cancelled = KEYS[8],
}

-- Validate: find each lease's match and holder before touching anything.
local plan = {}
for _, lease in ipairs(due) do
    local match = redis.call('HGET', KEYS[2], lease)
    local worker = false
    if match and redis.call('HGET', KEYS[3], match) == lease
        and redis.call('HGET', KEYS[5], match) == 'leased' then
        worker = redis.call('HGET', KEYS[4], match) or ''
    end
    table.insert(plan, {lease, match, worker})
end

-- Mutate in expiry order; requeued matches are pushed latest first so the
-- earliest expiry ends up at the very front.
local ended = {}
local requeued = {}
for _, entry in ipairs(plan) do
    local lease, match, worker = entry[1], entry[2], entry[3]
    redis.call('ZREM', KEYS[1], lease)
    redis.call('HDEL', KEYS[2], lease)
    if worker then
        redis.call('HDEL', KEYS[3], match)
        redis.call('HDEL', KEYS[4], match)
        local fate = end_attempt(keys, match, worker, ARGV[2], tonumber(ARGV[3]))
        if fate == 'requeued' then
            table.insert(requeued, match)
        end
        table.insert(ended, match)
        table.insert(ended, worker)
        table.insert(ended, fate)
    end
end
for i = #requeued, 1, -1 do
    redis.call('LPUSH', KEYS[9], requeued[i])
end
return ended
