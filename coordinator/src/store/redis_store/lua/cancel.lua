-- Cancels a tournament: marks it cancelled and drops its queued matches.
-- Leased matches keep their leases (results under them are still
-- accepted) but can no longer extend them; recorded results stay.
-- Cancelling twice is harmless.
--
-- KEYS[1]: arena:tournaments        SET of tournament ids
-- KEYS[2]: arena:cancelled          SET of cancelled tournament ids
-- KEYS[3]: arena:queue              LIST of queued match ids
-- KEYS[4]: arena:match_tournament   HASH match -> tournament
-- KEYS[5]: arena:match_state        HASH match -> state
-- ARGV[1]: tournament id
-- Returns: -1 for an unknown tournament (nothing written), else the number
--          of queued matches dropped.

local tournament = ARGV[1]

-- Validate.
if redis.call('SISMEMBER', KEYS[1], tournament) == 0 then
    return -1
end

-- Mutate.
redis.call('SADD', KEYS[2], tournament)
local queue = redis.call('LRANGE', KEYS[3], 0, -1)
local kept = {}
local dropped = 0
for _, match in ipairs(queue) do
    if redis.call('HGET', KEYS[4], match) == tournament then
        redis.call('HSET', KEYS[5], match, 'dropped')
        dropped = dropped + 1
    else
        table.insert(kept, match)
    end
end
if dropped > 0 then
    -- Rebuild the queue in order; RPUSH in chunks because Lua's unpack
    -- has a small argument limit.
    redis.call('DEL', KEYS[3])
    for i = 1, #kept, 1000 do
        redis.call('RPUSH', KEYS[3], unpack(kept, i, math.min(i + 999, #kept)))
    end
end
return dropped
